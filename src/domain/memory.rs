//! The feedback memory: one current lesson per key, with every earlier one kept.
//!
//! Corrections replace; they never stack. A new clarification for a key that already
//! has a current record supersedes it, so a prompt can only ever carry one lesson per
//! request, and the replaced lesson stays readable in history.

use crate::domain::memory_key::MemoryKey;
use crate::domain::record::{
    MemoryRecord, RecordId, RecordKind, RecordState, RecordStats, Scope, Source, Timestamp,
};

/// What the user taught, before the memory gives it an id, a version and a place.
#[derive(Clone, Debug, PartialEq)]
pub struct Lesson {
    pub question: String,
    pub clarification: String,
    pub kind: RecordKind,
    pub source: Source,
}

/// The records a write produced: the new current one, and the one it replaced.
#[derive(Clone, Debug, PartialEq)]
pub struct Written {
    pub current: MemoryRecord,
    pub replaced: Option<MemoryRecord>,
}

/// All records, current and historical, as one value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FeedbackMemory {
    records: Vec<MemoryRecord>,
}

impl FeedbackMemory {
    pub fn from_records(records: Vec<MemoryRecord>) -> Self {
        FeedbackMemory { records }
    }

    pub fn records(&self) -> &[MemoryRecord] {
        &self.records
    }

    /// The current records in the order they were written (oldest first).
    pub fn current(&self) -> impl Iterator<Item = &MemoryRecord> {
        self.records.iter().filter(|r| r.is_current())
    }

    pub fn current_for(&self, key: &MemoryKey) -> Option<&MemoryRecord> {
        self.current().find(|r| &r.key == key)
    }

    pub fn get(&self, id: &RecordId) -> Option<&MemoryRecord> {
        self.records.iter().find(|r| &r.id == id)
    }

    /// Every record of a key, oldest first.
    pub fn history(&self, key: &MemoryKey) -> Vec<&MemoryRecord> {
        let mut of_key: Vec<&MemoryRecord> =
            self.records.iter().filter(|r| &r.key == key).collect();
        of_key.sort_by_key(|r| (r.version, r.created_at));
        of_key
    }

    /// Plans the write of a lesson without changing the memory: the new record, and
    /// the record it supersedes if its key already had a current one.
    pub fn plan_write(&self, lesson: Lesson, id: RecordId, now: Timestamp) -> Written {
        let key = MemoryKey::of_question(&lesson.question);
        let previous = self.current_for(&key);
        let version = self
            .history(&key)
            .last()
            .map_or(1, |latest| latest.version + 1);
        let current = MemoryRecord {
            id: id.clone(),
            key,
            question: lesson.question,
            clarification: lesson.clarification,
            kind: lesson.kind,
            scope: Scope::Always,
            source: lesson.source,
            created_at: now,
            version,
            supersedes: previous.map(|p| p.id.clone()),
            superseded_by: None,
            state: RecordState::Current,
            stats: RecordStats::default(),
            embedding: None,
        };
        let replaced = previous.map(|p| MemoryRecord {
            state: RecordState::Superseded,
            superseded_by: Some(id),
            ..p.clone()
        });
        Written { current, replaced }
    }

    /// Applies records produced by a plan (or read back from storage), replacing any
    /// stored record with the same id.
    pub fn apply(&mut self, written: &Written) {
        for record in std::iter::once(&written.current).chain(written.replaced.as_ref()) {
            self.upsert(record.clone());
        }
    }

    pub fn upsert(&mut self, record: MemoryRecord) {
        match self.records.iter_mut().find(|r| r.id == record.id) {
            Some(slot) => *slot = record,
            None => self.records.push(record),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lesson(question: &str, clarification: &str) -> Lesson {
        Lesson {
            question: question.into(),
            clarification: clarification.into(),
            kind: RecordKind::Clarification,
            source: Source::UserStated,
        }
    }

    fn write(memory: &mut FeedbackMemory, question: &str, fb: &str, id: &str, at: i64) -> Written {
        let written = memory.plan_write(lesson(question, fb), RecordId(id.into()), Timestamp(at));
        memory.apply(&written);
        written
    }

    #[test]
    fn a_first_lesson_becomes_the_current_record_of_its_key() {
        let mut memory = FeedbackMemory::default();
        let written = write(
            &mut memory,
            "What is like < fast > ?",
            "I want a synonym",
            "a",
            1,
        );
        assert_eq!(written.replaced, None);
        assert_eq!(written.current.version, 1);
        assert_eq!(memory.current().count(), 1);
    }

    #[test]
    fn a_correction_replaces_the_lesson_and_keeps_it_in_history() {
        let mut memory = FeedbackMemory::default();
        write(
            &mut memory,
            "What is like < fast > ?",
            "I want a homonym",
            "a",
            1,
        );
        let written = write(
            &mut memory,
            "what is like < slow > ?",
            "I want a synonym",
            "b",
            2,
        );

        let replaced = written.replaced.expect("the first lesson is replaced");
        assert_eq!(replaced.state, RecordState::Superseded);
        assert_eq!(replaced.superseded_by, Some(RecordId("b".into())));
        assert_eq!(written.current.supersedes, Some(RecordId("a".into())));
        assert_eq!(written.current.version, 2);

        let current: Vec<_> = memory.current().collect();
        assert_eq!(current.len(), 1);
        assert_eq!(current[0].clarification, "I want a synonym");
        let key = MemoryKey::of_question("What is like < x > ?");
        assert_eq!(memory.history(&key).len(), 2);
    }

    #[test]
    fn lessons_about_different_requests_live_side_by_side() {
        let mut memory = FeedbackMemory::default();
        write(&mut memory, "What is like < fast > ?", "synonym", "a", 1);
        write(&mut memory, "What is unlike < fast > ?", "antonym", "b", 2);
        assert_eq!(memory.current().count(), 2);
    }
}
