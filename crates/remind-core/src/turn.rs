//! One turn pipeline for the page and for every arm of the harness: a question, the
//! memory and a [`TurnConfig`] in, the whole request out.
//!
//! The page (`remind_app::ask`) and the experiment (`remind_eval::arm`) both call
//! [`build_turn`]; they differ only in the configuration they pass (which retriever,
//! which examples, which template), so what the experiment measures is what the page
//! sends. Pure: the request is a value before anything is sent, which is also what makes
//! the prompt the page shows the prompt it sends.

use thiserror::Error;

use crate::memory::FeedbackMemory;
use crate::prompt::{
    Example, PromptError, PromptMode, PromptTemplate, RenderedPrompt, ReplyForm, TokenBudget,
    attach_clarification,
};
use crate::prompt_breakdown::{AttachedClarification, ClarificationOrigin, PromptBreakdown};
use crate::record::MemoryRecord;
use crate::retrieval::{Decision, Lookup, Query, Retriever, Score};
use crate::verified_examples::{ChosenExample, ExampleBudget, select_examples};

/// One request to a language model.
#[derive(Clone, Debug, PartialEq)]
pub struct CompletionRequest {
    pub prompt: RenderedPrompt,
    pub max_tokens: usize,
    pub temperature: f32,
    pub stop: Vec<String>,
}

/// Whether a turn consults the stored clarifications, and how it matches them.
#[derive(Clone, Copy)]
pub enum LessonMatching<'a> {
    /// The question is sent as asked (the harness's NO-MEM and GROW-PROMPT arms).
    Off,
    /// The best current clarification is attached when it passes the retriever's gate.
    By(&'a dyn Retriever),
}

/// Which verified examples join the template's examples, right before the query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ExampleSelection {
    None,
    /// The most similar ones within a budget (the page's rule, [`select_examples`]).
    Similar(ExampleBudget),
    /// The k most recently written, whatever they are about (the harness's control).
    MostRecent(usize),
}

/// Everything about a turn that is not the question: what the page's settings or a
/// harness arm decide.
#[derive(Clone, Copy)]
pub struct TurnConfig<'a> {
    /// The base few-shot examples.
    pub template: &'a PromptTemplate,
    pub mode: PromptMode,
    pub budget: TokenBudget,
    pub temperature: f32,
    pub lessons: LessonMatching<'a>,
    pub examples: ExampleSelection,
}

/// The question of a turn, and what comes with it.
#[derive(Clone, Copy, Debug, Default)]
pub struct TurnInput<'a> {
    pub question: &'a str,
    /// The question's sentence embedding, for retrievers and example selection that
    /// compare embeddings.
    pub question_embedding: Option<&'a [f32]>,
    /// A "just this once" clarification: attached instead of any stored one, never
    /// stored.
    pub one_time_clarification: Option<&'a str>,
}

/// The stored lesson attached to this turn's query, and why it was chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct AppliedMemory {
    pub record: MemoryRecord,
    pub score: Score,
    pub decision: Decision,
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

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum TurnError {
    #[error("Type a question first.")]
    EmptyQuestion,
    #[error(transparent)]
    Prompt(#[from] PromptError),
}

/// Builds the turn for `input.question`: the best current clarification (if it passes
/// the retriever's gate) is attached as `x | clarification: fb`, and the chosen verified
/// examples join the template's examples right before the query. The budget drops the
/// oldest examples first: the template's, then the least similar verified ones.
pub fn build_turn(
    memory: &FeedbackMemory,
    config: &TurnConfig<'_>,
    input: &TurnInput<'_>,
) -> Result<PreparedTurn, TurnError> {
    let question = input.question.trim();
    if question.is_empty() {
        return Err(TurnError::EmptyQuestion);
    }
    // Examples are demonstrations, not clarifications: they never attach to a query.
    let (clarifications, examples): (Vec<&MemoryRecord>, Vec<&MemoryRecord>) =
        memory.current().partition(|r| r.kind.is_clarification());
    let retrieval_query = match input.question_embedding {
        Some(vector) => Query::new(question).with_embedding(vector),
        None => Query::new(question),
    };
    let lookup = match config.lessons {
        LessonMatching::Off => Lookup {
            best: None,
            decision: Decision::NotConsulted,
        },
        LessonMatching::By(retriever) => retriever.lookup(&retrieval_query, &clarifications),
    };
    let applied = lookup.applied().and_then(|scored| {
        memory.get(&scored.record).map(|record| AppliedMemory {
            record: record.clone(),
            score: scored.score,
            decision: lookup.decision,
        })
    });
    let (applied, clarification) = match (input.one_time_clarification, applied) {
        (Some(fb), _) => (
            None,
            Some(AttachedClarification {
                text: fb.trim().to_string(),
                origin: ClarificationOrigin::OneTime,
            }),
        ),
        (None, Some(applied)) => {
            let clarification = AttachedClarification {
                text: applied
                    .record
                    .clarification()
                    .unwrap_or_default()
                    .to_string(),
                origin: ClarificationOrigin::Stored {
                    record: applied.record.id.clone(),
                    version: applied.record.version,
                    score: applied.score,
                    decision: applied.decision,
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
    let chosen = match config.examples {
        ExampleSelection::None => Vec::new(),
        ExampleSelection::Similar(budget) => {
            select_examples(&retrieval_query, &examples, &budget, config.template.form())
        }
        ExampleSelection::MostRecent(k) => {
            most_recent_examples(&examples, k, config.template.form())
        }
    };
    let base = config.template.examples();
    let all_examples: Vec<Example> = base
        .iter()
        .cloned()
        .chain(chosen.iter().map(|c| c.example.clone()))
        .collect();
    let fitted = PromptTemplate::new(all_examples, config.template.form()).fit_within(
        config.mode,
        &query,
        config.budget,
    )?;
    let base_dropped = fitted.dropped_examples.min(base.len());
    let verified_dropped = fitted.dropped_examples - base_dropped;
    let examples: Vec<ChosenExample> = chosen.into_iter().skip(verified_dropped).collect();
    let breakdown = PromptBreakdown {
        mode: config.mode,
        form: config.template.form(),
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
            max_tokens: config.budget.reply_tokens,
            temperature: config.temperature,
            stop: config
                .template
                .form()
                .stop_sequences()
                .iter()
                .map(|s| s.to_string())
                .collect(),
        },
    })
}

/// The `k` most recently written verified examples, oldest first so the newest sits
/// next to the query.
fn most_recent_examples(
    candidates: &[&MemoryRecord],
    k: usize,
    form: ReplyForm,
) -> Vec<ChosenExample> {
    use crate::verified_examples::{Similarity, demonstration};
    let mut recent: Vec<&MemoryRecord> = candidates.to_vec();
    recent.sort_by(|a, b| {
        a.created_at
            .cmp(&b.created_at)
            .then_with(|| a.id.cmp(&b.id))
    });
    let from = recent.len().saturating_sub(k);
    recent[from..]
        .iter()
        .filter_map(|record| {
            demonstration(record, form).map(|example| ChosenExample {
                record: record.id.clone(),
                version: record.version,
                example,
                // Recency ranks nothing by likeness; every chosen example counts alike.
                similarity: Similarity::KeySimilarity(1.0),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Lesson;
    use crate::record::{RecordId, RecordKind, Source, Timestamp};
    use crate::retrieval::LevenshteinRetriever;

    fn memory_with(lessons: &[(&str, RecordKind)]) -> FeedbackMemory {
        let mut memory = FeedbackMemory::default();
        for (i, (question, kind)) in lessons.iter().enumerate() {
            let written = memory.plan_write(
                Lesson {
                    question: question.to_string(),
                    kind: kind.clone(),
                    source: Source::UserStated,
                },
                RecordId(format!("r{i}")),
                Timestamp(i as i64),
            );
            memory.apply(&written);
        }
        memory
    }

    fn config<'a>(
        template: &'a PromptTemplate,
        lessons: LessonMatching<'a>,
        examples: ExampleSelection,
    ) -> TurnConfig<'a> {
        TurnConfig {
            template,
            mode: PromptMode::Completion,
            budget: TokenBudget::default(),
            temperature: 0.0,
            lessons,
            examples,
        }
    }

    fn example(question: &str) -> (&str, RecordKind) {
        (
            question,
            RecordKind::VerifiedExample {
                understanding: format!("the reading of {question}"),
                answer: "x".into(),
            },
        )
    }

    #[test]
    fn a_turn_without_lesson_matching_sends_the_question_as_asked() {
        let memory = memory_with(&[(
            "What is like < fast > ?",
            RecordKind::clarification("I want a synonym"),
        )]);
        let template = PromptTemplate::paper_lexical();
        let input = TurnInput {
            question: "What is like < slow > ?",
            ..TurnInput::default()
        };
        let off = build_turn(
            &memory,
            &config(&template, LessonMatching::Off, ExampleSelection::None),
            &input,
        )
        .unwrap();
        assert_eq!(off.query, "What is like < slow > ?");
        assert!(off.applied.is_none());
        let retriever = LevenshteinRetriever::default();
        let on = build_turn(
            &memory,
            &config(
                &template,
                LessonMatching::By(&retriever),
                ExampleSelection::None,
            ),
            &input,
        )
        .unwrap();
        assert_eq!(
            on.query,
            "What is like < slow > ? | clarification: I want a synonym"
        );
    }

    #[test]
    fn a_one_time_clarification_replaces_the_stored_one_for_this_turn() {
        let memory = memory_with(&[(
            "What is like < fast > ?",
            RecordKind::clarification("I want a synonym"),
        )]);
        let template = PromptTemplate::paper_lexical();
        let retriever = LevenshteinRetriever::default();
        let turn = build_turn(
            &memory,
            &config(
                &template,
                LessonMatching::By(&retriever),
                ExampleSelection::None,
            ),
            &TurnInput {
                question: "What is like < slow > ?",
                one_time_clarification: Some(" an antonym "),
                ..TurnInput::default()
            },
        )
        .unwrap();
        assert_eq!(
            turn.query,
            "What is like < slow > ? | clarification: an antonym"
        );
        assert!(turn.applied.is_none());
    }

    #[test]
    fn most_recent_examples_are_the_newest_k_oldest_first_whatever_they_are_about() {
        let memory = memory_with(&[
            example("What is unlike < hot > ?"),
            example("< fog > means what ?"),
            example("what can one confuse with < ring > ?"),
        ]);
        let template = PromptTemplate::paper_lexical();
        let turn = build_turn(
            &memory,
            &config(
                &template,
                LessonMatching::Off,
                ExampleSelection::MostRecent(2),
            ),
            &TurnInput {
                question: "What is unlike < cold > ?",
                ..TurnInput::default()
            },
        )
        .unwrap();
        let questions: Vec<&str> = turn
            .examples
            .iter()
            .map(|c| c.example.query.as_str())
            .collect();
        assert_eq!(
            questions,
            [
                "< fog > means what ?",
                "what can one confuse with < ring > ?"
            ]
        );
    }

    #[test]
    fn an_empty_question_is_refused() {
        let template = PromptTemplate::paper_lexical();
        let result = build_turn(
            &FeedbackMemory::default(),
            &config(&template, LessonMatching::Off, ExampleSelection::None),
            &TurnInput {
                question: "  ",
                ..TurnInput::default()
            },
        );
        assert_eq!(result.unwrap_err(), TurnError::EmptyQuestion);
    }
}
