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
    let mut found = matching(memory, filter);
    found.sort_by(listed_before);
    found
}

/// How many records match `filter`, and the first `at_most` of them in [`list`]'s
/// order. Only those are put in order: a page that draws a hundred of 100 000 lessons
/// sorted all of them on every change (80 ms of a reload in the page).
pub fn first_listed<'m>(
    memory: &'m FeedbackMemory,
    filter: &MemoryFilter,
    at_most: usize,
) -> (usize, Vec<&'m MemoryRecord>) {
    let mut found = matching(memory, filter);
    let count = found.len();
    if at_most < count {
        found.select_nth_unstable_by(at_most, listed_before);
        found.truncate(at_most);
    }
    found.sort_by(listed_before);
    (count, found)
}

fn matching<'m>(memory: &'m FeedbackMemory, filter: &MemoryFilter) -> Vec<&'m MemoryRecord> {
    memory
        .records()
        .iter()
        .map(Arc::as_ref)
        .filter(|r| filter.matches(r))
        .collect()
}

/// [`list`]'s order: most recently changed first, ties by id.
fn listed_before(a: &&MemoryRecord, b: &&MemoryRecord) -> std::cmp::Ordering {
    b.changed_at().cmp(&a.changed_at()).then(a.id.cmp(&b.id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Lesson;
    use crate::record::{RecordId, Timestamp};

    #[test]
    fn the_first_listed_records_are_the_start_of_the_whole_list_and_the_count_all_that_match() {
        let mut memory = FeedbackMemory::default();
        // Changed at times that repeat, so ties are decided by id.
        for n in 0..40 {
            let planned = memory.plan_write(
                Lesson::user_clarification(&format!("What is like < w{n} > in {n}?"), "a synonym"),
                RecordId(format!("r{:02}", (n * 7) % 40)),
                Timestamp(i64::from(n % 5)),
            );
            memory.upsert(planned.current);
        }
        let filter = MemoryFilter::default();
        let whole = list(&memory, &filter);
        for at_most in [0, 1, 7, 39, 40, 100] {
            let (count, first) = first_listed(&memory, &filter, at_most);
            assert_eq!(count, whole.len());
            let expected: Vec<&RecordId> = whole.iter().take(at_most).map(|r| &r.id).collect();
            let got: Vec<&RecordId> = first.iter().map(|r| &r.id).collect();
            assert_eq!(got, expected, "the first {at_most}");
        }
    }

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
