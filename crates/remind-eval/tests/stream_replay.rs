//! Replays the paper's linguistic, Hindi and Punjabi task streams through the feedback
//! memory with each retriever, a scripted model and the seeded simulated user, and pins
//! how often the memory supplied the right lesson, a lesson of another task type, or
//! none at all.
//!
//! The streams are read from `../shared/memprompt-data/` (too big to copy). The counts
//! are deterministic; a change in them means a retriever, the memory or the simulated
//! user changed behaviour, and the printed table (`--nocapture`) shows how.
#![cfg(not(target_arch = "wasm32"))]

use remind_test_support as support;

use remind_core::memory::{FeedbackMemory, Lesson};
use remind_core::memory_key::MemoryKey;
use remind_core::prompt::{ReplyForm, attach_clarification};
use remind_core::record::{RecordId, RecordKind, Source, StoredEmbedding, Timestamp};
use remind_core::reply::parse_reply;
use remind_core::retrieval::{
    HybridRetriever, LevenshteinRetriever, Query, Retriever, SemanticRetriever,
};
use remind_eval::keyword_check::understanding_names_task;
use remind_eval::normalised_retriever::NormalisedLevenshteinRetriever;
use remind_eval::simulated_user::SimulatedUser;
use remind_eval::task_stream::{RenderedTask, TaskType, TemplateSet, parse_task_stream};
use support::memprompt_data::shared_file;

const SEED: u64 = 2021;

/// A stream rendered with its language's templates.
fn stream(language: &str) -> Vec<RenderedTask> {
    let templates = TemplateSet::parse(&shared_file("derived/templates.jsonl"))
        .unwrap_or_else(|e| panic!("derived/templates.jsonl: {e}"));
    let file = format!("tasks/{language}/tasks_300.jsonl");
    parse_task_stream(&shared_file(&file))
        .unwrap_or_else(|e| panic!("{file}: {e}"))
        .iter()
        .map(|task| {
            templates
                .render(language, task)
                .unwrap_or_else(|e| panic!("{file}: {e}"))
        })
        .collect()
}

const STREAMS: [&str; 3] = ["linguistic", "hin", "pun"];

/// Stands in for the LLM: it follows whatever clarification the query carries and,
/// without one, misreads every task as the next lexical relation. So it is right
/// exactly when the memory attached a lesson of the task's own type.
fn scripted_completion(task: &RenderedTask, query: &str) -> String {
    let told = query
        .split_once("| clarification:")
        .and_then(|(_, fb)| TaskType::named_in_clarification(fb));
    let read_as = told.unwrap_or_else(|| {
        let i = TaskType::LEXICAL
            .iter()
            .position(|t| *t == task.task_type)
            .expect("the streams hold lexical tasks only");
        TaskType::LEXICAL[(i + 1) % TaskType::LEXICAL.len()]
    });
    format!(" {} is something END", read_as.understanding_of(&task.word))
}

/// A deterministic bag-of-words stand-in for the sentence embedder, used only here so
/// the semantic and hybrid retrievers can be replayed without model weights: hashed
/// counts of the masked question's words, scaled to unit length.
fn bag_of_words_stand_in_embedding(question: &str) -> Vec<f32> {
    const DIMENSIONS: usize = 256;
    let mut v = vec![0.0f32; DIMENSIONS];
    let key = MemoryKey::of_question(question);
    for word in key.as_str().split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        // FNV-1a: stable across runs and platforms, unlike std's randomised hasher.
        let hash = word.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        v[(hash % DIMENSIONS as u64) as usize] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm.max(f32::MIN_POSITIVE));
    v
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ReplayCounts {
    queries: usize,
    /// Lookups made before any lesson was stored.
    empty_memory: usize,
    /// A lesson of the task's own type was attached.
    hits: usize,
    /// A lesson of another task type was attached.
    wrong_type: usize,
    /// Lessons were stored but none passed the retriever's gate.
    misses: usize,
    /// Acc(u): the model's understanding named the right relation.
    understood: usize,
    feedback_given: usize,
    /// The 0-based position of the first query answered after the first feedback.
    first_after_feedback: Option<usize>,
}

fn replay(
    tasks: &[RenderedTask],
    retriever: &dyn Retriever,
    p_feedback: f64,
    embed: bool,
) -> ReplayCounts {
    let mut memory = FeedbackMemory::default();
    let mut user = SimulatedUser::new(p_feedback, SEED);
    let mut counts = ReplayCounts::default();
    for (i, task) in tasks.iter().enumerate() {
        counts.queries += 1;
        let embedding = embed.then(|| bag_of_words_stand_in_embedding(&task.question));
        let mut query = Query::new(&task.question);
        if let Some(e) = &embedding {
            query = query.with_embedding(e);
        }
        let candidates: Vec<_> = memory.current().collect();
        let lookup = retriever.lookup(&query, &candidates);
        let sent = match lookup.applied() {
            None if candidates.is_empty() => {
                counts.empty_memory += 1;
                task.question.clone()
            }
            None => {
                counts.misses += 1;
                task.question.clone()
            }
            Some(scored) => {
                let record = memory
                    .get(&scored.record)
                    .expect("a retrieved record exists");
                let lesson_type =
                    TaskType::named_in_clarification(record.clarification().unwrap_or_default());
                if lesson_type == Some(task.task_type) {
                    counts.hits += 1;
                } else {
                    counts.wrong_type += 1;
                }
                attach_clarification(&task.question, record.clarification().unwrap_or_default())
            }
        };
        let reply = parse_reply(
            ReplyForm::Restated,
            &scripted_completion(task, &sent),
            false,
        );
        let understood = reply
            .understanding
            .as_deref()
            .is_some_and(|u| understanding_names_task(task.task_type, u));
        counts.understood += usize::from(understood);
        if let Some(fb) = user.feedback(task, understood) {
            counts.feedback_given += 1;
            if counts.first_after_feedback.is_none() {
                counts.first_after_feedback = Some(i + 1);
            }
            let lesson = Lesson {
                question: task.question.clone(),
                kind: RecordKind::clarification(fb),
                source: Source::UserStated,
            };
            let mut written =
                memory.plan_write(lesson, RecordId(format!("r{i}")), Timestamp(i as i64));
            written.current.embedding = embedding
                .and_then(|vector| StoredEmbedding::new("bag-of-words-stand-in", vector).ok());
            memory.apply(&written);
        }
    }
    counts
}

/// What every replay must satisfy whatever its counts.
fn assert_sane(label: &str, c: &ReplayCounts, p_feedback: f64) {
    assert_eq!(
        c.empty_memory + c.hits + c.wrong_type + c.misses,
        c.queries,
        "{label}: every query is exactly one of empty/hit/wrong-type/miss"
    );
    let first = c.first_after_feedback.expect("some feedback is given");
    assert_eq!(
        c.empty_memory, first,
        "{label}: memory is empty until the first feedback"
    );
    assert_eq!(
        c.hits + c.wrong_type + c.misses,
        c.queries - first,
        "{label}: hits + wrong-type + misses = queries after the first feedback"
    );
    assert_eq!(
        c.understood, c.hits,
        "{label}: the scripted model is right exactly when the right lesson is attached"
    );
    let misreads = c.queries - c.understood;
    if p_feedback >= 1.0 {
        assert_eq!(
            c.feedback_given, misreads,
            "{label}: at P(fb)=1 every misread is clarified"
        );
    } else {
        assert!(
            c.feedback_given < misreads && c.feedback_given > 0,
            "{label}: at P(fb)<1 some misreads go unclarified"
        );
    }
}

/// (stream, P(fb), hits, wrong-type, misses, feedback given)
type Expected = (&'static str, f64, usize, usize, usize, usize);

fn replay_and_pin(retriever: &dyn Retriever, embed: bool, expected: &[Expected]) {
    let mut observed = Vec::new();
    for language in STREAMS {
        let tasks = stream(language);
        for p in [1.0, 0.5] {
            let c = replay(&tasks, retriever, p, embed);
            let label = format!("{}/{language}/P(fb)={p}", retriever.name());
            println!(
                "{label:<40} queries {} empty {} hits {} wrong-type {} misses {} Acc(u) {:.3} feedback {}",
                c.queries,
                c.empty_memory,
                c.hits,
                c.wrong_type,
                c.misses,
                c.understood as f64 / c.queries as f64,
                c.feedback_given
            );
            assert_sane(&label, &c, p);
            observed.push((
                language,
                p,
                c.hits,
                c.wrong_type,
                c.misses,
                c.feedback_given,
            ));
        }
    }
    assert_eq!(
        observed,
        expected,
        "{}: (stream, P(fb), hits, wrong-type, misses, feedback) changed",
        retriever.name()
    );
}

#[test]
fn every_stream_line_renders_and_its_gold_understanding_names_its_task_type() {
    for language in STREAMS {
        let tasks = stream(language);
        assert_eq!(tasks.len(), 300, "{language}");
        for task in &tasks {
            assert_eq!(
                task.gold_understanding,
                task.task_type.understanding_of(&task.word),
                "{language} line {}",
                task.line
            );
            assert!(understanding_names_task(
                task.task_type,
                &task.gold_understanding
            ));
            assert_eq!(
                TaskType::named_in_clarification(&task.clarification),
                Some(task.task_type),
                "{language} line {}: the clarification names the task's own type",
                task.line
            );
        }
    }
}

#[test]
fn the_linguistic_stream_renders_as_the_reference_expansion_does() {
    let expanded = shared_file("derived/streams/linguistic_tasks_1000.expanded.jsonl");
    let tasks = stream("linguistic");
    for (task, line) in tasks.iter().zip(expanded.lines()) {
        let reference: serde_json::Value = serde_json::from_str(line).expect("expanded line");
        let field = |name: &str| reference[name].as_str().unwrap_or_default().to_string();
        assert_eq!(task.question, field("question"), "line {}", task.line);
        assert_eq!(
            task.clarification,
            field("clarification"),
            "line {}",
            task.line
        );
        assert_eq!(
            task.gold_reply,
            field("expected_answer"),
            "line {}",
            task.line
        );
        assert_eq!(
            attach_clarification(&task.question, &task.clarification),
            field("question_with_feedback"),
            "line {}",
            task.line
        );
    }
}

#[test]
fn levenshtein_replay_pins_hits_wrong_type_and_misses_per_stream() {
    replay_and_pin(
        &LevenshteinRetriever::default(),
        false,
        &[
            ("linguistic", 1.0, 285, 1, 13, 15),
            ("linguistic", 0.5, 276, 1, 22, 15),
            ("hin", 1.0, 286, 4, 9, 14),
            ("hin", 0.5, 277, 7, 15, 14),
            ("pun", 1.0, 287, 1, 11, 13),
            ("pun", 0.5, 279, 1, 19, 13),
        ],
    );
}

#[test]
fn normalised_levenshtein_replay_pins_hits_wrong_type_and_misses_per_stream() {
    replay_and_pin(
        &NormalisedLevenshteinRetriever::default(),
        false,
        &[
            ("linguistic", 1.0, 286, 1, 12, 14),
            ("linguistic", 0.5, 277, 1, 21, 14),
            ("hin", 1.0, 286, 5, 8, 14),
            ("hin", 0.5, 277, 9, 13, 14),
            ("pun", 1.0, 287, 3, 9, 13),
            ("pun", 0.5, 279, 5, 15, 13),
        ],
    );
}

#[test]
fn semantic_replay_with_the_bag_of_words_stand_in_pins_its_counts() {
    replay_and_pin(
        &SemanticRetriever { tau: 0.8 },
        true,
        &[
            ("linguistic", 1.0, 285, 0, 14, 15),
            ("linguistic", 0.5, 276, 0, 23, 15),
            ("hin", 1.0, 285, 1, 13, 15),
            ("hin", 0.5, 276, 1, 22, 15),
            ("pun", 1.0, 285, 4, 10, 15),
            ("pun", 0.5, 276, 6, 17, 15),
        ],
    );
}

#[test]
fn hybrid_replay_with_the_bag_of_words_stand_in_pins_its_counts() {
    replay_and_pin(
        &HybridRetriever { tau: 0.8 },
        true,
        &[
            ("linguistic", 1.0, 285, 0, 14, 15),
            ("linguistic", 0.5, 276, 0, 23, 15),
            ("hin", 1.0, 285, 0, 14, 15),
            ("hin", 0.5, 276, 0, 23, 15),
            ("pun", 1.0, 285, 4, 10, 15),
            ("pun", 0.5, 276, 6, 17, 15),
        ],
    );
}
