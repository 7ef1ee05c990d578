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
use crate::memory_key::MemoryKey;
use crate::prompt::{
    Example, PromptError, PromptMode, PromptTemplate, RenderedPrompt, ReplyForm, TokenBudget,
    attach_clarification,
};
use crate::prompt_breakdown::{AttachedClarification, ClarificationOrigin, PromptBreakdown};
use crate::record::{MemoryRecord, RecordId};
use crate::request_pattern::{RequestPattern, question_words};
use crate::retrieval::{Decision, Lookup, Query, Retriever, Score, matches};
use crate::verified_examples::{ChosenExample, ExampleBudget, select_examples};

/// One request to a language model.
#[derive(Clone, Debug, PartialEq)]
pub struct CompletionRequest {
    pub prompt: RenderedPrompt,
    pub max_tokens: usize,
    pub temperature: f32,
    pub stop: Vec<String>,
}

/// How many standing preferences ("every question" lessons) go with one turn: the
/// most recently changed ones. The prompt panel says how many were left out.
pub const STANDING_PREFERENCES_PER_TURN: usize = 5;

/// How many retrieved lessons of distinct kinds of question the page attaches to one
/// turn, on top of the standing preferences.
pub const PAGE_LESSONS_PER_TURN: usize = 3;

/// How far below the match threshold τ a lesson's cosine may be and still be offered
/// as a suggestion rather than left out: close enough to be worth one click, not
/// close enough to be applied unasked (the small local model follows any lesson).
pub const SUGGESTION_BAND: f32 = 0.10;

/// Whether a turn consults the stored clarifications, and how it matches them.
#[derive(Clone, Copy)]
pub enum LessonMatching<'a> {
    /// The question is sent as asked (the harness's NO-MEM and GROW-PROMPT arms).
    Off,
    /// Up to `at_most` current clarifications that pass the retriever's gate (the
    /// paper's arms take the best one; the page [`PAGE_LESSONS_PER_TURN`]), and every
    /// standing preference within [`STANDING_PREFERENCES_PER_TURN`].
    By {
        retriever: &'a dyn Retriever,
        at_most: usize,
    },
}

impl<'a> LessonMatching<'a> {
    /// The paper's rule: the best clarification, when it passes the gate.
    pub fn best(retriever: &'a dyn Retriever) -> Self {
        LessonMatching::By {
            retriever,
            at_most: 1,
        }
    }
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
    /// A "just this once" clarification: attached instead of the retrieved lessons
    /// (standing preferences stay), never stored.
    pub one_time_clarification: Option<&'a str>,
}

/// Why a stored lesson went with a turn.
#[derive(Clone, Debug, PartialEq)]
pub enum AppliedBecause {
    /// The question fits the lesson's scope, a pattern the user confirmed: the same
    /// request with other specifics in its slots.
    FitsScope(RequestPattern),
    /// Retrieval found it close enough: the score and the gate's decision.
    Similar { score: Score, decision: Decision },
    /// A standing preference: it goes with every question.
    EveryQuestion,
}

/// A stored lesson attached to this turn's query, and why it was chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct AppliedMemory {
    pub record: MemoryRecord,
    pub because: AppliedBecause,
}

/// The closest lesson when none was close enough to apply: offered to the user, never
/// sent unless they accept it.
#[derive(Clone, Debug, PartialEq)]
pub struct Suggestion {
    pub record: MemoryRecord,
    pub score: Score,
}

/// A turn ready to send: the query as the model will see it, and the whole prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedTurn {
    pub question: String,
    pub query: String,
    /// The retriever's verdict on the closest lesson, attached or not: what the page
    /// shows when nothing was attached.
    pub lookup: Lookup,
    /// Every stored lesson attached, in the order the query carries them: standing
    /// preferences first, then the lessons whose scope the question fits, then the
    /// retrieved lessons best first. Only the standing preferences when a one-time
    /// clarification took the others' place.
    pub applied: Vec<AppliedMemory>,
    /// The closest lesson below the threshold, within [`SUGGESTION_BAND`] of it, when
    /// nothing was retrieved for this turn.
    pub suggestion: Option<Suggestion>,
    /// The verified examples sent with this turn (ids, similarity), most similar last.
    pub examples: Vec<ChosenExample>,
    /// The prompt part by part, for the "show prompt" panel; renders to `request.prompt`.
    pub breakdown: PromptBreakdown,
    pub request: CompletionRequest,
}

impl PreparedTurn {
    /// The lessons that went with this turn by similarity alone (not by their scope,
    /// not as standing preferences): ids and the versions attached.
    pub fn applied_by_similarity(&self) -> Vec<(RecordId, u32)> {
        self.applied
            .iter()
            .filter(|a| matches!(a.because, AppliedBecause::Similar { .. }))
            .map(|a| (a.record.id.clone(), a.record.version))
            .collect()
    }

    /// The user's clarification for this turn only, when the turn carries one.
    pub fn one_time_clarification(&self) -> Option<&str> {
        self.breakdown
            .clarifications
            .iter()
            .find(|c| c.origin == ClarificationOrigin::OneTime)
            .map(|c| c.text.as_str())
    }
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum TurnError {
    #[error("Type a question first.")]
    EmptyQuestion,
    #[error(transparent)]
    Prompt(#[from] PromptError),
}

/// Builds the turn for `input.question`: the standing preferences and the current
/// clarifications that pass the retriever's gate are attached as
/// `x | clarification: fb`, one after another, and the chosen verified examples join
/// the template's examples right before the query. The budget drops the oldest examples
/// first: the template's, then the least similar verified ones.
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
    // A lesson the user marked "not relevant here" for this kind of question is not a
    // candidate at all, so the next best may take its place.
    let kind_of_question = MemoryKey::of_question(question);
    let (standing, retrievable): (Vec<&MemoryRecord>, Vec<&MemoryRecord>) = clarifications
        .into_iter()
        .filter(|r| !r.kind.is_excluded_from(&kind_of_question))
        .partition(|r| r.kind.is_standing_preference());
    let retrieval_query = match input.question_embedding {
        Some(vector) => Query::new(question).with_embedding(vector),
        None => Query::new(question),
    };
    let (lookup, fitted, found, standing): (_, Vec<AppliedMemory>, _, _) = match config.lessons {
        LessonMatching::Off => (
            Lookup {
                best: None,
                decision: Decision::NotConsulted,
            },
            Vec::new(),
            Vec::new(),
            Vec::new(),
        ),
        LessonMatching::By { retriever, at_most } => {
            // The scope the user confirmed is the first route, retrieval the second:
            // a lesson whose pattern the question fits needs no similarity score, and
            // it and every lesson of its kind of question leave the retriever's
            // candidates, as in `matches`.
            let words = question_words(question);
            let mut fitting: Vec<(&MemoryRecord, &RequestPattern)> = Vec::new();
            for record in &retrievable {
                let Some(pattern) = record.kind.pattern_fitting(&words) else {
                    continue;
                };
                if fitting.len() < at_most && !fitting.iter().any(|(r, _)| r.key == record.key) {
                    fitting.push((record, pattern));
                }
            }
            // A lesson of this very kind of question whose scope the question does not
            // fit was narrowed by the user ("how far is ___ from paris"): retrieval,
            // which finds the same kind of question at distance 0, must not undo that.
            let rest: Vec<&MemoryRecord> = retrievable
                .iter()
                .copied()
                .filter(|r| !fitting.iter().any(|(f, _)| f.key == r.key))
                .filter(|r| r.kind.patterns().is_empty() || r.key != kind_of_question)
                .collect();
            let (lookup, found) =
                matches(retriever, &retrieval_query, &rest, at_most - fitting.len());
            let fitted = fitting.into_iter().map(|(record, pattern)| AppliedMemory {
                record: record.clone(),
                because: AppliedBecause::FitsScope(pattern.clone()),
            });
            (lookup, fitted.collect(), found, standing)
        }
    };
    let suggestion = match (input.one_time_clarification, &lookup.best, lookup.decision) {
        (None, Some(best), Decision::Cosine { cosine, tau })
            if cosine < tau && cosine >= tau - SUGGESTION_BAND =>
        {
            memory.get(&best.record).map(|record| Suggestion {
                record: record.clone(),
                score: best.score,
            })
        }
        _ => None,
    };
    let standing_preferences = standing.len();
    let mut standing = standing;
    standing.sort_by(|a, b| {
        b.changed_at()
            .cmp(&a.changed_at())
            .then_with(|| a.id.cmp(&b.id))
    });
    standing.truncate(STANDING_PREFERENCES_PER_TURN);
    // Oldest first, so the order of the query does not change as preferences are added.
    standing.reverse();
    let standing_left_out = standing_preferences - standing.len();
    // A one-time clarification says how to read this very question, so it takes the
    // place of the retrieved lessons; standing preferences hold for every question.
    let (fitted, retrieved) = match input.one_time_clarification {
        Some(_) => (Vec::new(), Vec::new()),
        None => (fitted, found),
    };
    let applied: Vec<AppliedMemory> = standing
        .into_iter()
        .map(|record| AppliedMemory {
            record: record.clone(),
            because: AppliedBecause::EveryQuestion,
        })
        .chain(fitted)
        .chain(retrieved.into_iter().filter_map(|found| {
            memory
                .get(&found.scored.record)
                .map(|record| AppliedMemory {
                    record: record.clone(),
                    because: AppliedBecause::Similar {
                        score: found.scored.score,
                        decision: found.decision,
                    },
                })
        }))
        .collect();
    let clarifications: Vec<AttachedClarification> = applied
        .iter()
        .map(|applied| AttachedClarification {
            text: applied
                .record
                .clarification()
                .unwrap_or_default()
                .to_string(),
            origin: ClarificationOrigin::Stored {
                record: applied.record.id.clone(),
                version: applied.record.version,
                because: applied.because.clone(),
            },
        })
        .chain(
            input
                .one_time_clarification
                .map(|text| AttachedClarification {
                    text: text.trim().to_string(),
                    origin: ClarificationOrigin::OneTime,
                }),
        )
        .collect();
    let query = clarifications
        .iter()
        .fold(question.to_string(), |query, attached| {
            attach_clarification(&query, &attached.text)
        });
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
        clarifications,
        standing_left_out,
        question: question.to_string(),
        query: query.clone(),
    };
    debug_assert_eq!(breakdown.render(), fitted.prompt);
    Ok(PreparedTurn {
        question: question.to_string(),
        query,
        lookup,
        applied,
        suggestion,
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
    use crate::record::StoredEmbedding;
    use crate::record::{Reach, RecordId, RecordKind, Source, Timestamp};
    use crate::request_pattern::RequestPattern;
    use crate::retrieval::{HybridRetriever, LevenshteinRetriever};

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
        assert!(off.applied.is_empty());
        let retriever = LevenshteinRetriever::default();
        let on = build_turn(
            &memory,
            &config(
                &template,
                LessonMatching::best(&retriever),
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
                LessonMatching::best(&retriever),
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
        assert!(turn.applied.is_empty());
    }

    #[test]
    fn a_one_time_clarification_keeps_the_standing_preferences_and_comes_after_them() {
        let memory = memory_with(&[
            (
                "What is like < fast > ?",
                RecordKind::clarification("I want a synonym"),
            ),
            (
                "What should you call me?",
                RecordKind::clarification_for("call me Sam", Reach::EveryQuestion),
            ),
        ]);
        let template = PromptTemplate::general();
        let retriever = LevenshteinRetriever::default();
        let turn = build_turn(
            &memory,
            &config(&template, page_matching(&retriever), ExampleSelection::None),
            &TurnInput {
                question: "What is like < slow > ?",
                one_time_clarification: Some("an antonym"),
                ..TurnInput::default()
            },
        )
        .unwrap();
        assert_eq!(
            turn.query,
            "What is like < slow > ? | clarification: call me Sam | clarification: an antonym"
        );
        assert_eq!(turn.applied.len(), 1);
        assert_eq!(turn.applied[0].because, AppliedBecause::EveryQuestion);
    }

    #[test]
    fn a_lesson_marked_not_relevant_skips_that_kind_of_question_and_still_reaches_others() {
        let mut memory = memory_with(&[
            (
                "What is like < fast > ?",
                RecordKind::clarification("I want a synonym"),
            ),
            (
                "What should you call me?",
                RecordKind::clarification_for("call me Sam", Reach::EveryQuestion),
            ),
        ]);
        for id in ["r0", "r1"] {
            let record = memory.get(&RecordId(id.into())).unwrap().clone();
            let written = memory
                .plan_not_relevant(
                    &record.id,
                    record.version,
                    "What is like < slow > ?",
                    RecordId(format!("{id}-not-for")),
                    Timestamp(9),
                )
                .unwrap();
            memory.apply(&written);
        }
        let template = PromptTemplate::general();
        let retriever = LevenshteinRetriever::default();
        let ask = |question| {
            build_turn(
                &memory,
                &config(&template, page_matching(&retriever), ExampleSelection::None),
                &TurnInput {
                    question,
                    ..TurnInput::default()
                },
            )
            .unwrap()
        };
        let same_kind = ask("What is like < happy > ?");
        assert!(same_kind.applied.is_empty(), "{:?}", same_kind.applied);
        assert_eq!(same_kind.query, "What is like < happy > ?");
        let other_kind = ask("How far is Lyon from Paris?");
        assert_eq!(other_kind.applied.len(), 1);
        assert_eq!(
            other_kind.applied[0].record.clarification(),
            Some("call me Sam")
        );
    }

    fn page_matching(retriever: &LevenshteinRetriever) -> LessonMatching<'_> {
        LessonMatching::By {
            retriever,
            at_most: PAGE_LESSONS_PER_TURN,
        }
    }

    fn scoped(text: &str, pattern: &str) -> RecordKind {
        RecordKind::clarification_for(
            text,
            Reach::QuestionsLike(vec![RequestPattern::parse(pattern).unwrap()]),
        )
    }

    #[test]
    fn a_question_that_fits_a_lessons_scope_gets_it_with_no_similarity_needed() {
        let memory = memory_with(&[
            (
                "Define entropy",
                scoped("I want a one-line definition", "define ___"),
            ),
            (
                "How far is Lyon from Paris?",
                scoped("in kilometres", "how far is ___ from paris"),
            ),
        ]);
        let template = PromptTemplate::general();
        let retriever = LevenshteinRetriever::default();
        let ask = |question| {
            build_turn(
                &memory,
                &config(&template, page_matching(&retriever), ExampleSelection::None),
                &TurnInput {
                    question,
                    ..TurnInput::default()
                },
            )
            .unwrap()
        };
        let define = ask("Define inflation.");
        assert_eq!(define.applied.len(), 1);
        assert_eq!(
            define.applied[0].because,
            AppliedBecause::FitsScope(RequestPattern::parse("define ___").unwrap())
        );
        assert_eq!(
            define.query,
            "Define inflation. | clarification: I want a one-line definition"
        );
        assert_eq!(ask("How far is Berlin from Paris?").applied.len(), 1);
        // Not the scope the user confirmed, and too many edits away for retrieval.
        assert!(ask("Explain inflation.").applied.is_empty());
        assert!(ask("How far is Berlin from Munich?").applied.is_empty());
        assert!(ask("How old is Lyon?").applied.is_empty());
    }

    #[test]
    fn a_lesson_marked_not_relevant_is_kept_off_even_where_its_scope_fits() {
        let mut memory = memory_with(&[("Define entropy", scoped("one line", "define ___"))]);
        let record = memory.get(&RecordId("r0".into())).unwrap().clone();
        let written = memory
            .plan_not_relevant(
                &record.id,
                record.version,
                "Define Paris",
                RecordId("r0-not-for".into()),
                Timestamp(9),
            )
            .unwrap();
        memory.apply(&written);
        let template = PromptTemplate::general();
        let retriever = LevenshteinRetriever::default();
        let turn = build_turn(
            &memory,
            &config(&template, page_matching(&retriever), ExampleSelection::None),
            &TurnInput {
                question: "Define Rome",
                ..TurnInput::default()
            },
        )
        .unwrap();
        assert!(turn.applied.is_empty(), "{:?}", turn.applied);
    }

    /// One lesson, "Give distances in kilometres", taught on "How far is Lyon from
    /// Paris?" with the embedding (1, 0), and the turn for `question` embedded as
    /// `(cos, sin)`: its cosine to the lesson is `cosine`.
    fn turn_at_cosine(question: &str, cosine: f32) -> PreparedTurn {
        let mut memory = memory_with(&[(
            "How far is Lyon from Paris?",
            RecordKind::clarification("Give distances in kilometres"),
        )]);
        let mut record = memory.get(&RecordId("r0".into())).unwrap().clone();
        record.embedding = Some(StoredEmbedding::new("test", vec![1.0, 0.0]).unwrap());
        memory.apply_records(&[record]);
        let template = PromptTemplate::general();
        let retriever = HybridRetriever { tau: 0.8 };
        let embedding = [cosine, (1.0 - cosine * cosine).sqrt()];
        build_turn(
            &memory,
            &config(
                &template,
                LessonMatching::By {
                    retriever: &retriever,
                    at_most: PAGE_LESSONS_PER_TURN,
                },
                ExampleSelection::None,
            ),
            &TurnInput {
                question,
                question_embedding: Some(&embedding),
                one_time_clarification: None,
            },
        )
        .unwrap()
    }

    #[test]
    fn a_lesson_just_below_the_threshold_is_suggested_not_applied() {
        let turn = turn_at_cosine("What's the distance between Lyon and Paris?", 0.72);
        assert!(turn.applied.is_empty());
        assert_eq!(turn.query, "What's the distance between Lyon and Paris?");
        let suggestion = turn.suggestion.expect("offered");
        assert_eq!(suggestion.record.id, RecordId("r0".into()));
        assert!(matches!(suggestion.score, Score::Cosine(c) if (c - 0.72).abs() < 1e-4));
    }

    #[test]
    fn a_lesson_far_below_the_threshold_or_above_it_is_not_suggested() {
        assert!(turn_at_cosine("How old is Lyon?", 0.5).suggestion.is_none());
        let applied = turn_at_cosine("What is the distance from Lyon to Paris?", 0.9);
        assert_eq!(applied.applied.len(), 1);
        assert!(applied.suggestion.is_none());
    }

    #[test]
    fn a_standing_preference_goes_with_every_question_before_the_retrieved_lessons() {
        let memory = memory_with(&[
            (
                "What is like < fast > ?",
                RecordKind::clarification("I want a synonym"),
            ),
            (
                "What should I call you?",
                RecordKind::clarification_for("Call me Sam.", Reach::EveryQuestion),
            ),
        ]);
        let template = PromptTemplate::general();
        let retriever = LevenshteinRetriever::default();
        let ask = |question| {
            build_turn(
                &memory,
                &config(&template, page_matching(&retriever), ExampleSelection::None),
                &TurnInput {
                    question,
                    ..TurnInput::default()
                },
            )
            .unwrap()
        };
        let unrelated = ask("How far is Lyon from Paris?");
        assert_eq!(
            unrelated.query,
            "How far is Lyon from Paris? | clarification: Call me Sam."
        );
        assert_eq!(unrelated.applied.len(), 1);
        assert_eq!(unrelated.applied[0].because, AppliedBecause::EveryQuestion);
        let lexical = ask("What is like < slow > ?");
        assert_eq!(
            lexical.query,
            "What is like < slow > ? | clarification: Call me Sam. | clarification: I want a synonym"
        );
        assert!(matches!(
            lexical.applied[1].because,
            AppliedBecause::Similar { .. }
        ));
        assert_eq!(lexical.breakdown.render(), lexical.request.prompt);
    }

    #[test]
    fn the_paper_rule_leaves_standing_preferences_and_later_matches_to_the_page() {
        let memory = memory_with(&[
            (
                "What is like < fast > ?",
                RecordKind::clarification("I want a synonym"),
            ),
            (
                "What is like a < fast > ?",
                RecordKind::clarification("I want a simile"),
            ),
        ]);
        let template = PromptTemplate::paper_lexical();
        let retriever = LevenshteinRetriever::default();
        let input = TurnInput {
            question: "What is like < slow > ?",
            ..TurnInput::default()
        };
        let best = build_turn(
            &memory,
            &config(
                &template,
                LessonMatching::best(&retriever),
                ExampleSelection::None,
            ),
            &input,
        )
        .unwrap();
        assert_eq!(best.applied.len(), 1);
        let page = build_turn(
            &memory,
            &config(&template, page_matching(&retriever), ExampleSelection::None),
            &input,
        )
        .unwrap();
        assert_eq!(page.applied.len(), 2);
        assert_eq!(
            page.query,
            "What is like < slow > ? | clarification: I want a synonym | clarification: I want a simile"
        );
    }

    #[test]
    fn standing_preferences_beyond_the_limit_are_left_out_oldest_first_and_counted() {
        // Distinct wordings: questions that differ only by a number share one key.
        let topics = [
            "greetings",
            "units",
            "dates",
            "tone",
            "names",
            "spelling",
            "length",
        ];
        let lessons: Vec<(String, RecordKind)> = topics
            .iter()
            .enumerate()
            .map(|(i, topic)| {
                (
                    format!("How should you handle {topic}?"),
                    RecordKind::clarification_for(format!("preference {i}"), Reach::EveryQuestion),
                )
            })
            .collect();
        let borrowed: Vec<(&str, RecordKind)> = lessons
            .iter()
            .map(|(q, k)| (q.as_str(), k.clone()))
            .collect();
        let memory = memory_with(&borrowed);
        let template = PromptTemplate::general();
        let retriever = LevenshteinRetriever::default();
        let turn = build_turn(
            &memory,
            &config(&template, page_matching(&retriever), ExampleSelection::None),
            &TurnInput {
                question: "Anything?",
                ..TurnInput::default()
            },
        )
        .unwrap();
        assert_eq!(topics.len(), STANDING_PREFERENCES_PER_TURN + 2);
        assert_eq!(turn.applied.len(), STANDING_PREFERENCES_PER_TURN);
        assert_eq!(turn.breakdown.standing_left_out, 2);
        assert!(!turn.query.contains("preference 0") && !turn.query.contains("preference 1 "));
        assert!(turn.query.ends_with("| clarification: preference 6"));
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
