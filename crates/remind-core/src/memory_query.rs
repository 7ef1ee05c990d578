//! Listing the memory for the memory browser: search text and filters, no I/O.
//!
//! The page re-runs the query on every keystroke over the records it already holds,
//! so the query is a pure function of the memory and the filter.

use crate::memory::FeedbackMemory;
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
    /// Each filter with its name in the page's controls and its label, spelled once.
    pub const NAMES: [(KindFilter, &'static str, &'static str); 3] = [
        (KindFilter::Any, "any", "all kinds"),
        (KindFilter::Clarification, "clarification", "clarifications"),
        (KindFilter::VerifiedExample, "verified", "verified examples"),
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(k, _, _)| *k == self)
            .map_or("any", |(_, n, _)| n)
    }

    /// The filter a control's value names; an unknown name shows every kind.
    pub fn from_name(name: &str) -> Self {
        Self::NAMES
            .iter()
            .find(|(_, n, _)| *n == name)
            .map_or(KindFilter::Any, |(k, _, _)| *k)
    }
}

impl StateFilter {
    /// Each filter with its name in the page's controls and its label, spelled once.
    pub const NAMES: [(StateFilter, &'static str, &'static str); 4] = [
        (StateFilter::Current, "current", "current"),
        (StateFilter::Superseded, "superseded", "replaced"),
        (StateFilter::Withdrawn, "withdrawn", "withdrawn"),
        (StateFilter::Any, "any", "all states"),
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(k, _, _)| *k == self)
            .map_or("current", |(_, n, _)| n)
    }

    /// The filter a control's value names; an unknown name shows current lessons.
    pub fn from_name(name: &str) -> Self {
        Self::NAMES
            .iter()
            .find(|(_, n, _)| *n == name)
            .map_or(StateFilter::Current, |(k, _, _)| *k)
    }
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
            RecordKind::Clarification { text } => [text, ""],
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
        .filter(|r| filter.matches(r))
        .collect();
    found.sort_by(|a, b| b.changed_at().cmp(&a.changed_at()).then(a.id.cmp(&b.id)));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_filter_round_trips_through_its_control_name() {
        for (kind, name, _) in KindFilter::NAMES {
            assert_eq!(KindFilter::from_name(name), kind);
            assert_eq!(kind.name(), name);
        }
        for (state, name, _) in StateFilter::NAMES {
            assert_eq!(StateFilter::from_name(name), state);
            assert_eq!(state.name(), name);
        }
        assert_eq!(KindFilter::from_name("nonsense"), KindFilter::Any);
        assert_eq!(StateFilter::from_name("nonsense"), StateFilter::Current);
    }
}
