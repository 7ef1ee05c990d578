//! Listing the memory for the memory browser: search text and filters, no I/O.
//!
//! The page re-runs the query on every keystroke over the records it already holds,
//! so the query is a pure function of the memory and the filter.

use std::sync::Arc;

use crate::memory::FeedbackMemory;
use crate::name_table::NameTable;
use crate::record::{MemoryRecord, RecordKind, RecordState};

/// Which kinds of lesson to show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KindFilter {
    #[default]
    Any,
    Clarification,
    VerifiedExample,
}

/// Which states to show. The default read shows current lessons only; history is
/// asked for explicitly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StateFilter {
    #[default]
    Current,
    Superseded,
    Withdrawn,
    Any,
}

impl KindFilter {
    /// The names the page's filter control uses.
    pub const NAMES: NameTable<KindFilter> = NameTable(&[
        (KindFilter::Any, "any"),
        (KindFilter::Clarification, "clarification"),
        (KindFilter::VerifiedExample, "verified"),
    ]);
}

impl StateFilter {
    /// The names the page's filter control uses.
    pub const NAMES: NameTable<StateFilter> = NameTable(&[
        (StateFilter::Current, "current"),
        (StateFilter::Superseded, "superseded"),
        (StateFilter::Withdrawn, "withdrawn"),
        (StateFilter::Any, "any"),
    ]);
}

/// How many current lessons misfire often enough to be shown for review
/// ([`MemoryRecord::is_flagged`]).
pub fn flagged_count(memory: &FeedbackMemory) -> usize {
    memory.current().filter(|r| r.is_flagged()).count()
}

/// A search over the memory; `MemoryFilter::default()` lists every current lesson.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryFilter {
    /// Matched case-insensitively against question, clarification, key, and a
    /// verified example's understanding and answer. Blank matches everything.
    pub text: String,
    pub kind: KindFilter,
    pub state: StateFilter,
    /// Only lessons that misfire often enough to need review ([`MemoryRecord::is_flagged`]).
    pub flagged_only: bool,
}

impl MemoryFilter {
    pub fn matches(&self, record: &MemoryRecord) -> bool {
        self.matches_state(record)
            && self.matches_kind(record)
            && (!self.flagged_only || record.is_flagged())
            && self.matches_text(record)
    }

    fn matches_state(&self, record: &MemoryRecord) -> bool {
        match self.state {
            StateFilter::Any => true,
            StateFilter::Current => record.state == RecordState::Current,
            StateFilter::Superseded => record.state == RecordState::Superseded,
            StateFilter::Withdrawn => record.state == RecordState::Withdrawn,
        }
    }

    fn matches_kind(&self, record: &MemoryRecord) -> bool {
        matches!(
            (self.kind, &record.kind),
            (KindFilter::Any, _)
                | (KindFilter::Clarification, RecordKind::Clarification { .. })
                | (
                    KindFilter::VerifiedExample,
                    RecordKind::VerifiedExample { .. }
                )
        )
    }

    fn matches_text(&self, record: &MemoryRecord) -> bool {
        let needle = self.text.trim().to_lowercase();
        if needle.is_empty() {
            return true;
        }
        let lesson: [&str; 2] = match &record.kind {
            RecordKind::VerifiedExample {
                understanding,
                answer,
            } => [understanding, answer],
            RecordKind::Clarification { text, .. } => [text, ""],
        };
        [record.question.as_str(), record.key.as_str()]
            .into_iter()
            .chain(lesson)
            .any(|text| text.to_lowercase().contains(&needle))
    }
}

/// The records that match `filter`, most recently changed first (ties by id, so the
/// order is stable across reloads).
pub fn list<'m>(memory: &'m FeedbackMemory, filter: &MemoryFilter) -> Vec<&'m MemoryRecord> {
    let mut found: Vec<&MemoryRecord> = memory
        .records()
        .iter()
        .map(Arc::as_ref)
        .filter(|r| filter.matches(r))
        .collect();
    found.sort_by(|a, b| b.changed_at().cmp(&a.changed_at()).then(a.id.cmp(&b.id)));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_filter_has_a_control_name() {
        for kind in [
            KindFilter::Any,
            KindFilter::Clarification,
            KindFilter::VerifiedExample,
        ] {
            assert_eq!(
                KindFilter::NAMES.find(KindFilter::NAMES.name(kind)),
                Some(kind)
            );
        }
        for state in [
            StateFilter::Current,
            StateFilter::Superseded,
            StateFilter::Withdrawn,
            StateFilter::Any,
        ] {
            assert_eq!(
                StateFilter::NAMES.find(StateFilter::NAMES.name(state)),
                Some(state)
            );
        }
    }
}
