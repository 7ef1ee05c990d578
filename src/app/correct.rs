//! Correcting: the user's clarification passes the write gate, then is stored.
//!
//! A correction is reported as saved only after the store committed it; a refused or
//! failed write leaves both the store and the in-memory view unchanged.

use thiserror::Error;

use crate::app::ask::Turn;
use crate::app::ports::{Clock, IdSource, MemoryStore, StoreError};
use crate::domain::memory::{FeedbackMemory, Lesson, Written};
use crate::domain::record::{RecordKind, Source};
use crate::domain::write_gate::{self, Durability, Origin, Refusal};

/// What the user typed into the correction form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Correction {
    pub clarification: String,
    pub durability: Durability,
}

/// What became of a correction.
#[derive(Clone, Debug, PartialEq)]
pub enum CorrectionOutcome {
    /// Stored; `written.replaced` names the lesson it superseded, if any.
    Saved(Written),
    /// "Just this once": not stored; the caller re-asks with it attached.
    ThisTurnOnly { clarification: String },
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CorrectError {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Plans the lesson for a turn, writes it, and returns what was written. The caller
/// applies the result to its in-memory view only on `Ok`.
pub async fn save_correction(
    store: &impl MemoryStore,
    memory: &FeedbackMemory,
    clock: &impl Clock,
    ids: &impl IdSource,
    turn: &Turn,
    correction: Correction,
) -> Result<CorrectionOutcome, CorrectError> {
    let clarification = correction.clarification.trim().to_string();
    match write_gate::admit(&clarification, Origin::UserTyped, correction.durability) {
        Err(Refusal::OneTime) => return Ok(CorrectionOutcome::ThisTurnOnly { clarification }),
        Err(refusal) => return Err(refusal.into()),
        Ok(()) => {}
    }
    let lesson = Lesson {
        question: turn.prepared.question.clone(),
        clarification,
        kind: RecordKind::Clarification,
        source: Source::UserStated,
    };
    let written = memory.plan_write(lesson, ids.next_id(), clock.now());
    let mut records = vec![written.current.clone()];
    records.extend(written.replaced.clone());
    store.write(&records).await?;
    Ok(CorrectionOutcome::Saved(written))
}
