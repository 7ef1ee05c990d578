//! Reflecting on a correction: the model proposes a general rule; only the user's
//! accept (as proposed, or edited) stores it.
//!
//! Proposing writes nothing. Rejecting is simply not accepting, so it has no call and
//! cannot write. Accepting passes the write gate as a user-confirmed proposal and then
//! follows the same plan as a typed correction: the rule becomes the current lesson of
//! the question's key, superseding the one there (the page previews that first), and
//! a stale view is refused with the current lesson.

use thiserror::Error;

use crate::ask::Turn;
use crate::ports::{Clock, CompletionRequest, IdSource, LanguageModel, LlmError, MemoryStore};
use crate::revise::{ReviseError, StoreChange, revise};
use crate::settings::Settings;
use remind_core::memory::{FeedbackMemory, Lesson, PlannedWrite};
use remind_core::memory_key::MemoryKey;
use remind_core::record::{RecordKind, Source};
use remind_core::reflection::{
    NoProposal, REFLECTION_REPLY_TOKENS, REFLECTION_STOP_SEQUENCES, ReflectionCase, RuleProposal,
    parse_rule, reflection_prompt,
};
use remind_core::write_gate::{self, Origin, Refusal, StoredText};

#[derive(Debug, Error, Clone, PartialEq)]
pub enum ReflectError {
    #[error("Say what was wrong first: the rule is proposed from your words.")]
    EmptyWords,
    /// The model answered, but with no usable rule; nothing was proposed or written.
    #[error(transparent)]
    NoProposal(#[from] NoProposal),
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// The accepted (or edited) text was refused by the write gate; nothing was written.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The store failed, or the key's lesson changed since the preview:
    /// `ReviseError::Memory(MemoryError::Stale { current, .. })` names the current one.
    #[error(transparent)]
    Revise(#[from] ReviseError),
}

/// The request that asks the model for a rule: the reflection prompt in the
/// endpoint's mode, a short reply, deterministic.
pub fn reflection_request(settings: &Settings, case: &ReflectionCase<'_>) -> CompletionRequest {
    CompletionRequest {
        prompt: reflection_prompt(case, settings.endpoint.mode),
        max_tokens: REFLECTION_REPLY_TOKENS,
        temperature: 0.0,
        stop: REFLECTION_STOP_SEQUENCES
            .iter()
            .map(|s| s.to_string())
            .collect(),
    }
}

/// The understanding the user rejected: the parsed one, else the whole reply.
pub fn misread(turn: &Turn) -> String {
    turn.reply
        .understanding
        .clone()
        .unwrap_or_else(|| turn.reply.full_text())
}

/// Asks the model for a general rule from the user's words about `turn`. Writes nothing.
pub async fn propose_rule(
    llm: &impl LanguageModel,
    settings: &Settings,
    turn: &Turn,
    user_words: &str,
) -> Result<RuleProposal, ReflectError> {
    let user_words = user_words.trim();
    if user_words.is_empty() {
        return Err(ReflectError::EmptyWords);
    }
    settings
        .endpoint
        .validate()
        .map_err(LlmError::BadSettings)?;
    let question = turn.prepared.question.clone();
    let misread = misread(turn);
    let request = reflection_request(
        settings,
        &ReflectionCase {
            question: &question,
            understanding: &misread,
            user_words,
        },
    );
    let completion = llm.complete(&settings.endpoint, &request).await?;
    let rule = parse_rule(&completion.text)?;
    let proposal = RuleProposal {
        key: MemoryKey::of_question(&question),
        question,
        misread,
        user_words: user_words.to_string(),
        rule,
        applied: crate::correct::retrieved_for(turn),
    };
    Ok(proposal)
}

/// Stores an accepted rule (`edited`, if the user changed it) as the lesson of the
/// proposal's key, if `expected` (the version the preview showed, `None` for "no
/// lesson") still holds. Returns the store's memory as it now stands alongside the
/// outcome (`None` when the gate refused the text or the question before anything was
/// read).
pub async fn accept_rule(
    store: &impl MemoryStore,
    clock: &impl Clock,
    ids: &impl IdSource,
    proposal: &RuleProposal,
    edited: Option<&str>,
    expected: Option<u32>,
) -> (Option<FeedbackMemory>, Result<PlannedWrite, ReflectError>) {
    let text = proposal.text_to_store(edited).to_string();
    // The rule is stored beside the proposal's question: both must pass the gate.
    let admitted = write_gate::admit_text(StoredText::Rule, &text, Origin::UserConfirmedProposal)
        .and_then(|()| write_gate::admit_question(&proposal.question));
    if let Err(refusal) = admitted {
        return (None, Err(refusal.into()));
    }
    let lesson = Lesson {
        question: proposal.question.clone(),
        kind: RecordKind::clarification(text),
        source: Source::UserConfirmedProposal,
    };
    let (id, now) = (ids.next_id(), clock.now());
    let revision = revise(store, |memory| {
        let written = memory.plan_correction(lesson, expected, &proposal.applied, id, now)?;
        let change = StoreChange::put(written.records());
        Ok((written, change))
    })
    .await;
    (
        revision.memory,
        revision.outcome.map_err(ReflectError::from),
    )
}
