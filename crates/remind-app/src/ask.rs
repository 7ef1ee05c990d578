//! Asking: the page's turn, built by the one turn pipeline
//! ([`remind_core::turn::build_turn`], which the harness calls too), sent to the model,
//! its reply read.
//!
//! Preparing a turn is pure (so the prompt the user is shown is the prompt that is
//! sent); only [`send`] talks to the model.

use thiserror::Error;

use crate::ports::{Completion, LanguageModel, LlmError, ReplyStream};
use crate::settings::Settings;
use remind_core::learning_curve::TurnId;
use remind_core::prompt::{PromptError, PromptTemplate};
use remind_core::reply::{ParsedReply, parse_reply};
use remind_core::retrieval::Retriever;
use remind_core::turn::{
    ExampleSelection, LessonMatching, PAGE_LESSONS_PER_TURN, TurnConfig, TurnError,
};
use remind_core::verified_examples::ExampleBudget;

pub use remind_core::turn::{AppliedMemory, PreparedTurn};

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

impl From<TurnError> for AskError {
    fn from(error: TurnError) -> Self {
        match error {
            TurnError::EmptyQuestion => AskError::EmptyQuestion,
            TurnError::Prompt(e) => AskError::Prompt(e),
        }
    }
}

/// The page's configuration of the turn pipeline: the settings' prompt mode and token
/// budget, a deterministic temperature, lessons through `retriever`, and the verified
/// examples most similar to the question.
pub fn page_turn_config<'a>(
    settings: &Settings,
    template: &'a PromptTemplate,
    retriever: &'a dyn Retriever,
    examples: ExampleBudget,
) -> TurnConfig<'a> {
    TurnConfig {
        template,
        mode: settings.endpoint.mode,
        budget: settings.budget,
        temperature: 0.0,
        lessons: LessonMatching::By {
            retriever,
            at_most: PAGE_LESSONS_PER_TURN,
        },
        examples: ExampleSelection::Similar(examples),
    }
}

/// Sends a prepared turn, showing the reply through `reply` as it is generated, and
/// parses it. A reply the user stopped is parsed as far as it came.
pub async fn send(
    llm: &impl LanguageModel,
    settings: &Settings,
    prepared: PreparedTurn,
    id: TurnId,
    reply: &ReplyStream<'_>,
) -> Result<Turn, AskError> {
    settings
        .endpoint
        .validate()
        .map_err(LlmError::BadSettings)?;
    let completion = llm
        .complete_streaming(&settings.endpoint, &prepared.request, reply)
        .await?;
    let reply = parse_reply(
        prepared.breakdown.form,
        &completion.text,
        completion.at_stop_sequence(),
    );
    Ok(Turn {
        id,
        prepared,
        completion,
        reply,
    })
}
