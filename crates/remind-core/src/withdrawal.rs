//! Taking lessons back: withdraw one, undo a change, or forget a key for good.
//!
//! Withdrawing and undoing keep history (the records stay, marked withdrawn), so the
//! user can always see what the assistant used to believe. Only forgetting erases, and
//! it erases everything of a key, because a half-erased history would be misleading.
//! An undo names its outcome before it runs, so the page can say exactly what will
//! happen and the user never gets a surprise.

use crate::memory::{FeedbackMemory, MemoryError};
use crate::memory_key::MemoryKey;
use crate::record::{
    Actor, ChangeNote, ChangeReason, MemoryRecord, RecordId, RecordState, Timestamp,
};

/// What an undo of a current lesson does; the page offers only the choices that
/// [`FeedbackMemory::undo_choices`] returns, and shows [`UndoOutcome::describe`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UndoOutcome {
    /// The lesson this one replaced becomes current again; this one is withdrawn.
    RestorePredecessor,
    /// This lesson and the one it replaced (if any) are both withdrawn: the key is
    /// left with no current lesson.
    WithdrawBoth,
}

impl UndoOutcome {
    /// The sentence the page shows on the undo button's confirmation.
    pub fn describe(self) -> &'static str {
        match self {
            UndoOutcome::RestorePredecessor => {
                "The earlier lesson becomes current again; this one is withdrawn and kept in history."
            }
            UndoOutcome::WithdrawBoth => {
                "This lesson and the one it replaced are both withdrawn and kept in history; no lesson applies to these questions."
            }
        }
    }
}

/// What an undo changed: the outcome that was asked for, and the records to put.
#[derive(Clone, Debug, PartialEq)]
pub struct Undone {
    pub outcome: UndoOutcome,
    pub withdrawn: Vec<MemoryRecord>,
    pub restored: Option<MemoryRecord>,
}

impl Undone {
    pub fn records(&self) -> Vec<MemoryRecord> {
        self.withdrawn
            .iter()
            .chain(&self.restored)
            .cloned()
            .collect()
    }
}

impl FeedbackMemory {
    /// The undo choices for a current lesson, in the order the page should offer them:
    /// restoring is offered only when the lesson replaced one that can come back.
    pub fn undo_choices(&self, id: &RecordId) -> Vec<UndoOutcome> {
        let Some(record) = self.get(id).filter(|r| r.is_current()) else {
            return Vec::new();
        };
        let mut choices = Vec::new();
        if self.restorable_predecessor(record).is_some() {
            choices.push(UndoOutcome::RestorePredecessor);
        }
        choices.push(UndoOutcome::WithdrawBoth);
        choices
    }

    /// Plans withdrawing a current lesson: it stops applying but stays in history.
    /// The lesson it replaced stays replaced (that is what undo is for).
    pub fn plan_withdraw(
        &self,
        id: &RecordId,
        expected: u32,
        now: Timestamp,
    ) -> Result<MemoryRecord, MemoryError> {
        let record = self.check_current(id, expected)?;
        Ok(withdrawn(record, note(now, ChangeReason::Withdrawn)))
    }

    /// Plans the undo of a current lesson with the outcome the user chose beforehand.
    pub fn plan_undo(
        &self,
        id: &RecordId,
        expected: u32,
        outcome: UndoOutcome,
        now: Timestamp,
    ) -> Result<Undone, MemoryError> {
        let record = self.check_current(id, expected)?;
        let predecessor = self.restorable_predecessor(record);
        let note = note(now, ChangeReason::Undone);
        match outcome {
            UndoOutcome::RestorePredecessor => {
                let predecessor = predecessor.ok_or(MemoryError::NothingToRestore)?;
                Ok(Undone {
                    outcome,
                    withdrawn: vec![withdrawn(record, note)],
                    restored: Some(MemoryRecord {
                        state: RecordState::Current,
                        superseded_by: None,
                        change: Some(note),
                        ..predecessor.clone()
                    }),
                })
            }
            UndoOutcome::WithdrawBoth => Ok(Undone {
                outcome,
                withdrawn: std::iter::once(record)
                    .chain(predecessor)
                    .map(|r| withdrawn(r, note))
                    .collect(),
                restored: None,
            }),
        }
    }

    /// Plans forgetting a key permanently: the ids of every record of it, current and
    /// historical, for the store to erase.
    pub fn plan_forget(&self, key: &MemoryKey) -> Vec<RecordId> {
        self.records()
            .iter()
            .filter(|r| &r.key == key)
            .map(|r| r.id.clone())
            .collect()
    }

    /// The record `record` replaced, if it is still waiting in history to come back.
    fn restorable_predecessor(&self, record: &MemoryRecord) -> Option<&MemoryRecord> {
        let predecessor = self.get(record.supersedes.as_ref()?)?;
        (predecessor.state == RecordState::Superseded
            && predecessor.superseded_by.as_ref() == Some(&record.id))
        .then_some(predecessor)
    }
}

fn note(at: Timestamp, reason: ChangeReason) -> ChangeNote {
    ChangeNote {
        at,
        by: Actor::User,
        reason,
    }
}

fn withdrawn(record: &MemoryRecord, note: ChangeNote) -> MemoryRecord {
    MemoryRecord {
        state: RecordState::Withdrawn,
        change: Some(note),
        ..record.clone()
    }
}
