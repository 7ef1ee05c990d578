//! Asking: retrieve a lesson, attach it, prompt the model, read its reply.
//!
//! Preparing a turn is pure (so the prompt the user is shown is the prompt that is
//! sent); only [`send`] talks to the model.

use thiserror::Error;

use crate::app::ports::{Completion, CompletionRequest, LanguageModel, LlmError};
use crate::app::settings::Settings;
use crate::domain::memory::FeedbackMemory;
use crate::domain::prompt::{
    PromptError, PromptTemplate, RenderedPrompt, STOP_SEQUENCES, attach_clarification,
};
use crate::domain::record::MemoryRecord;
use crate::domain::reply::{ParsedReply, parse_reply};
use crate::domain::retrieval::{Lookup, Query, Retriever, Score};

/// The stored lesson attached to this turn's query, and why it was chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct AppliedMemory {
    pub record: MemoryRecord,
    pub score: Score,
    pub reason: String,
}

/// A turn ready to send: the query as the model will see it, and the whole prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedTurn {
    pub question: String,
    pub query: String,
    pub lookup: Lookup,
    pub applied: Option<AppliedMemory>,
    pub request: CompletionRequest,
}

/// A finished turn: what was sent and what came back.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    pub prepared: PreparedTurn,
    pub completion: Completion,
    pub reply: ParsedReply,
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum AskError {
    #[error("Type a question first.")]
    EmptyQuestion,
    #[error(transparent)]
    Prompt(#[from] PromptError),
    #[error(transparent)]
    Llm(#[from] LlmError),
}

/// Builds the turn for `question`: the best current lesson (if it passes the
/// retriever's gate) is attached as `x | clarification: fb`.
pub fn prepare(
    memory: &FeedbackMemory,
    retriever: &dyn Retriever,
    template: &PromptTemplate,
    settings: &Settings,
    question: &str,
    extra_clarification: Option<&str>,
) -> Result<PreparedTurn, AskError> {
    let question = question.trim();
    if question.is_empty() {
        return Err(AskError::EmptyQuestion);
    }
    let candidates: Vec<&MemoryRecord> = memory.current().collect();
    let lookup = retriever.lookup(&Query::new(question), &candidates);
    let applied = lookup.applied().and_then(|scored| {
        memory.get(&scored.record).map(|record| AppliedMemory {
            record: record.clone(),
            score: scored.score,
            reason: lookup.reason.clone(),
        })
    });
    // A one-time clarification replaces the stored one for this turn only.
    let query = match (extra_clarification, &applied) {
        (Some(fb), _) => attach_clarification(question, fb),
        (None, Some(applied)) => attach_clarification(question, &applied.record.clarification),
        (None, None) => question.to_string(),
    };
    let applied = if extra_clarification.is_some() {
        None
    } else {
        applied
    };
    let prompt: RenderedPrompt =
        template.render_within(settings.endpoint.mode, &query, settings.budget)?;
    Ok(PreparedTurn {
        question: question.to_string(),
        query,
        lookup,
        applied,
        request: CompletionRequest {
            prompt,
            max_tokens: settings.budget.reply_tokens,
            temperature: 0.0,
            stop: STOP_SEQUENCES.iter().map(|s| s.to_string()).collect(),
        },
    })
}

/// Sends a prepared turn and parses the reply.
pub async fn send(
    llm: &impl LanguageModel,
    settings: &Settings,
    prepared: PreparedTurn,
) -> Result<Turn, AskError> {
    settings
        .endpoint
        .validate()
        .map_err(LlmError::BadSettings)?;
    let completion = llm.complete(&settings.endpoint, &prepared.request).await?;
    let reply = parse_reply(&completion.text, completion.stopped);
    Ok(Turn {
        prepared,
        completion,
        reply,
    })
}
