//! Correcting: the user's clarification passes the write gate, then is stored.
//!
//! The gate sees both texts a lesson stores: the clarification and the turn's
//! question. A "just this once" clarification is never stored, so its question is
//! not checked. A correction is reported as saved only after the store committed it; a refused or
//! failed write leaves the store unchanged. A correction of a turn whose lesson was
//! applied and still misread supersedes that lesson and counts the failure against it.

use thiserror::Error;

use crate::ask::Turn;
use crate::ports::{Clock, IdSource, MemoryStore};
use crate::revise::{ReviseError, StoreChange, revise};
use remind_core::memory::{AdmittedCorrection, FeedbackMemory, Lesson, PlannedWrite};
use remind_core::record::{Reach, RecordId};
use remind_core::turn::AppliedBecause;
use remind_core::write_gate::{Durability, Refusal};

/// What the user typed into the correction form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Correction {
    pub clarification: String,
    pub durability: Durability,
    /// Which later questions the lesson goes with; ignored for "just this once".
    pub reach: Reach,
}

/// What became of a correction.
#[derive(Clone, Debug, PartialEq)]
pub enum CorrectionOutcome {
    /// Stored; `written.replaced` names the lesson it superseded, if any.
    Saved(Box<PlannedWrite>),
    /// "Just this once": not stored; the caller re-asks with it attached.
    ThisTurnOnly { clarification: String },
}

#[derive(Debug, Error, Clone, PartialEq)]
pub enum CorrectError {
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The store failed, or the lesson for this question changed (e.g. in another
    /// tab) since the turn: `ReviseError::Memory(MemoryError::Stale { current, .. })`.
    #[error(transparent)]
    Revise(#[from] ReviseError),
}

/// The version of the question's lesson the user saw when they decided to correct:
/// the applied lesson's if the turn carried the lesson of this very key, else what the
/// page's view held for the key.
pub fn version_seen(view: &FeedbackMemory, turn: &Turn) -> Option<u32> {
    let key = view.clarification_key(&turn.prepared.question);
    turn.prepared
        .applied
        .iter()
        .find(|applied| applied.record.key == key)
        .map_or_else(
            || view.current_version(&key),
            |applied| Some(applied.record.version),
        )
}

/// The lessons a turn got because they matched its question: its scope or its
/// similarity. Standing preferences ride along with every turn, so a correction says
/// nothing about them.
pub fn retrieved_for(turn: &Turn) -> Vec<RecordId> {
    turn.prepared
        .applied
        .iter()
        .filter(|applied| !matches!(applied.because, AppliedBecause::EveryQuestion))
        .map(|applied| applied.record.id.clone())
        .collect()
}

/// Plans the lesson for a turn, writes it, and returns what was written together with
/// the store's memory as it now stands (`None` if the store could not be read, or
/// nothing was read because the gate refused first).
pub async fn save_correction(
    store: &impl MemoryStore,
    view: &FeedbackMemory,
    clock: &impl Clock,
    ids: &impl IdSource,
    turn: &Turn,
    correction: Correction,
) -> (
    Option<FeedbackMemory>,
    Result<CorrectionOutcome, CorrectError>,
) {
    let lesson = match Lesson::from_correction(
        &turn.prepared.question,
        &correction.clarification,
        correction.durability,
        correction.reach,
    ) {
        Ok(AdmittedCorrection::Lesson(lesson)) => lesson,
        Ok(AdmittedCorrection::ThisTurnOnly { clarification }) => {
            return (None, Ok(CorrectionOutcome::ThisTurnOnly { clarification }));
        }
        Err(refusal) => return (None, Err(refusal.into())),
    };
    let expected = version_seen(view, turn);
    let applied = retrieved_for(turn);
    let (id, now) = (ids.next_id(), clock.now());
    let revision = revise(store, |memory| {
        let written = memory.plan_correction(lesson, expected, &applied, id, now)?;
        let change = StoreChange::put(written.records());
        Ok((written, change))
    })
    .await;
    (
        revision.memory,
        revision
            .outcome
            .map(|written| CorrectionOutcome::Saved(Box::new(written)))
            .map_err(CorrectError::from),
    )
}
