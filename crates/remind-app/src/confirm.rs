//! Confirming a reply: the user says "this is right", and the question with its
//! understanding and answer is kept as a verified example for similar questions.
//!
//! The understanding and answer are the model's words; they are stored only because
//! the user confirmed them, and the write gate is told so explicitly. Removing an
//! example withdraws it (history keeps it), like any lesson.

use thiserror::Error;

use crate::ask::Turn;
use crate::ports::{Clock, IdSource, MemoryStore};
use crate::revise::{self, ReviseError, StoreChange, revise};
use remind_core::memory::{FeedbackMemory, Lesson, PlannedWrite};
use remind_core::record::{MemoryRecord, RecordId, RecordKind, Timestamp};
use remind_core::verified_examples::example_key;
use remind_core::write_gate::Refusal;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum ExampleError {
    #[error(
        "nothing to confirm: the reply has no clear understanding and answer to keep; correct it instead"
    )]
    NothingToConfirm,
    #[error(
        "this reply was stopped before it finished, so it is not the model's whole answer; ask again and confirm the finished reply"
    )]
    StoppedByUser,
    #[error(
        "this lesson is a clarification, not a verified example; withdraw it from the memory list instead"
    )]
    NotAnExample(RecordId),
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The store failed, or the example for this question changed (e.g. in another
    /// tab): `ReviseError::Memory(MemoryError::Stale { current, .. })`.
    #[error(transparent)]
    Revise(#[from] ReviseError),
}

fn non_empty(text: Option<&String>) -> Option<&str> {
    text.map(|t| t.trim()).filter(|t| !t.is_empty())
}

/// What "This is right" wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct Confirmed {
    /// The verified example, and the earlier example of its key it replaced.
    pub example: PlannedWrite,
    /// The lessons that went with the turn by similarity alone, as they now are: they
    /// also apply to questions like this one.
    pub widened: Vec<MemoryRecord>,
}

/// Stores `turn`'s question, understanding and answer as the verified example of the
/// question's key, superseding an earlier example of that key (never its
/// clarification). `view` is the page's memory: the version it holds for the example
/// key is the one the user saw, so a change made in another tab is refused as stale.
pub async fn confirm_answer(
    store: &impl MemoryStore,
    view: &FeedbackMemory,
    clock: &impl Clock,
    ids: &impl IdSource,
    turn: &Turn,
) -> (Option<FeedbackMemory>, Result<Confirmed, ExampleError>) {
    if turn.completion.is_stopped_by_user() {
        return (None, Err(ExampleError::StoppedByUser));
    }
    let (Some(understanding), Some(answer)) = (
        non_empty(turn.reply.understanding.as_ref()),
        non_empty(turn.reply.answer.as_ref()),
    ) else {
        return (None, Err(ExampleError::NothingToConfirm));
    };
    let question = turn.prepared.question.trim();
    let lesson = match Lesson::from_confirmed_reply(question, understanding, answer) {
        Ok(lesson) => lesson,
        Err(refusal) => return (None, Err(refusal.into())),
    };
    let expected = view.current_version(&example_key(question));
    let (id, now) = (ids.next_id(), clock.now());
    let applied_by_similarity = turn.prepared.applied_by_similarity();
    let revision = revise(store, |memory| {
        let example = memory.plan_correction(lesson, expected, &[], id, now)?;
        // The lessons matched by similarity were right here: in the same transaction,
        // each widens to questions like this one (they hold other keys than the
        // example's, so each is planned against the memory as read).
        let widened =
            memory.plan_confirmed_here(question, &applied_by_similarity, || ids.next_id(), now);
        let records = example
            .records()
            .into_iter()
            .chain(widened.iter().flat_map(PlannedWrite::records))
            .collect();
        let confirmed = Confirmed {
            example,
            widened: widened.into_iter().map(|w| w.current).collect(),
        };
        Ok((confirmed, StoreChange::put(records)))
    })
    .await;
    (
        revision.memory,
        revision.outcome.map_err(ExampleError::from),
    )
}

/// Withdraws a verified example (it stays in history). `view` is consulted only to
/// refuse withdrawing a clarification through this call: a record's kind never changes.
pub async fn remove_example(
    store: &impl MemoryStore,
    view: &FeedbackMemory,
    id: &RecordId,
    expected: u32,
    now: Timestamp,
) -> (Option<FeedbackMemory>, Result<MemoryRecord, ExampleError>) {
    if let Some(record) = view.get(id)
        && !matches!(record.kind, RecordKind::VerifiedExample { .. })
    {
        return (None, Err(ExampleError::NotAnExample(id.clone())));
    }
    let revision = revise::withdraw(store, id, expected, now).await;
    (
        revision.memory,
        revision.outcome.map_err(ExampleError::from),
    )
}
