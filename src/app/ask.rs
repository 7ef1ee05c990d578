//! Asking: retrieve a lesson, attach it, add similar verified examples, prompt the
//! model, read its reply.
//!
//! Preparing a turn is pure (so the prompt the user is shown is the prompt that is
//! sent); only [`send`] talks to the model.

use thiserror::Error;

use crate::app::ports::{Completion, CompletionRequest, LanguageModel, LlmError};
use crate::app::settings::Settings;
use crate::domain::learning_curve::TurnId;
use crate::domain::memory::FeedbackMemory;
use crate::domain::prompt::{
    Example, PromptError, PromptTemplate, STOP_SEQUENCES, attach_clarification,
};
use crate::domain::prompt_breakdown::{
    AttachedClarification, ClarificationOrigin, PromptBreakdown,
};
use crate::domain::record::{MemoryRecord, RecordKind};
use crate::domain::reply::{ParsedReply, parse_reply};
use crate::domain::retrieval::{Lookup, Query, Retriever, Score};
use crate::domain::verified_examples::{ChosenExample, ExampleBudget, select_examples};

/// How a turn finds its lesson: the retriever, and the question's embedding when the
/// retriever compares embeddings.
#[derive(Clone, Copy)]
pub struct Matching<'a> {
    pub retriever: &'a dyn Retriever,
    pub question_embedding: Option<&'a [f32]>,
}

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
    /// The verified examples sent with this turn (ids, similarity), most similar last.
    pub examples: Vec<ChosenExample>,
    /// The prompt part by part, for the "show prompt" panel; renders to `request.prompt`.
    pub breakdown: PromptBreakdown,
    pub request: CompletionRequest,
}

/// A finished turn: what was sent and what came back.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    /// Names the turn in the turn log (corrections and confirmations refer to it).
    pub id: TurnId,
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

/// Builds the turn for `question` with up to the default number of verified examples;
/// see [`prepare_with_examples`].
pub fn prepare(
    memory: &FeedbackMemory,
    retriever: &dyn Retriever,
    template: &PromptTemplate,
    settings: &Settings,
    question: &str,
    extra_clarification: Option<&str>,
) -> Result<PreparedTurn, AskError> {
    prepare_with_examples(
        memory,
        Matching {
            retriever,
            question_embedding: None,
        },
        template,
        settings,
        question,
        extra_clarification,
        &ExampleBudget::default(),
    )
}

/// Builds the turn for `question`: the best current clarification (if it passes the
/// retriever's gate) is attached as `x | clarification: fb`, and the verified examples
/// nearest to the question join the template's examples right before the query.
pub fn prepare_with_examples(
    memory: &FeedbackMemory,
    matching: Matching<'_>,
    template: &PromptTemplate,
    settings: &Settings,
    question: &str,
    extra_clarification: Option<&str>,
    example_budget: &ExampleBudget,
) -> Result<PreparedTurn, AskError> {
    let question = question.trim();
    if question.is_empty() {
        return Err(AskError::EmptyQuestion);
    }
    // Examples are demonstrations, not clarifications: they never attach to a query.
    let (clarifications, examples): (Vec<&MemoryRecord>, Vec<&MemoryRecord>) = memory
        .current()
        .partition(|r| r.kind == RecordKind::Clarification);
    let retrieval_query = match matching.question_embedding {
        Some(vector) => Query::new(question).with_embedding(vector),
        None => Query::new(question),
    };
    let lookup = matching.retriever.lookup(&retrieval_query, &clarifications);
    let applied = lookup.applied().and_then(|scored| {
        memory.get(&scored.record).map(|record| AppliedMemory {
            record: record.clone(),
            score: scored.score,
            reason: lookup.reason.clone(),
        })
    });
    // A one-time clarification replaces the stored one for this turn only.
    let (applied, clarification) = match (extra_clarification, applied) {
        (Some(fb), _) => (
            None,
            Some(AttachedClarification {
                text: fb.trim().to_string(),
                origin: ClarificationOrigin::OneTime,
            }),
        ),
        (None, Some(applied)) => {
            let clarification = AttachedClarification {
                text: applied.record.clarification.clone(),
                origin: ClarificationOrigin::Stored {
                    record: applied.record.id.clone(),
                    version: applied.record.version,
                    score: applied.score,
                    reason: applied.reason.clone(),
                },
            };
            (Some(applied), Some(clarification))
        }
        (None, None) => (None, None),
    };
    let query = match &clarification {
        Some(attached) => attach_clarification(question, &attached.text),
        None => question.to_string(),
    };
    let chosen = select_examples(&retrieval_query, &examples, example_budget);
    let base = template.examples();
    let all_examples: Vec<Example> = base
        .iter()
        .cloned()
        .chain(chosen.iter().map(|c| c.example.clone()))
        .collect();
    let fitted = PromptTemplate::new(all_examples).fit_within(
        settings.endpoint.mode,
        &query,
        settings.budget,
    )?;
    // The budget drops the oldest examples first: the template's, then the least
    // similar verified ones.
    let base_dropped = fitted.dropped_examples.min(base.len());
    let verified_dropped = fitted.dropped_examples - base_dropped;
    let examples: Vec<ChosenExample> = chosen.into_iter().skip(verified_dropped).collect();
    let breakdown = PromptBreakdown {
        mode: settings.endpoint.mode,
        base_examples: base[base_dropped..].to_vec(),
        base_examples_dropped: base_dropped,
        verified_examples: examples.clone(),
        verified_examples_dropped: verified_dropped,
        clarification,
        question: question.to_string(),
        query: query.clone(),
    };
    debug_assert_eq!(breakdown.render(), fitted.prompt);
    Ok(PreparedTurn {
        question: question.to_string(),
        query,
        lookup,
        applied,
        examples,
        breakdown,
        request: CompletionRequest {
            prompt: fitted.prompt,
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
    id: TurnId,
) -> Result<Turn, AskError> {
    settings
        .endpoint
        .validate()
        .map_err(LlmError::BadSettings)?;
    let completion = llm.complete(&settings.endpoint, &prepared.request).await?;
    let reply = parse_reply(&completion.text, completion.stopped);
    Ok(Turn {
        id,
        prepared,
        completion,
        reply,
    })
}
