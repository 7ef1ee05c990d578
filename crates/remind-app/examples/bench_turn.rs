//! Times what the page does with its memory when a question is asked: `build_turn`
//! with the page's configuration and retriever over 1 000, 10 000 and 100 000 embedded
//! lessons, natively. The part of a question's overhead that grows with the memory,
//! without the browser, the worker or the model around it.
//!
//! Run in release: `cargo run --release -p remind-app --example bench_turn
//! [-- --sizes 1000,10000,100000]`. Lessons are `What is like < wordN > in question N ?`,
//! each of its own kind, with seeded random unit vectors of 384 values (MiniLM's size);
//! each question is worded like one stored lesson and carries that lesson's vector, so
//! a lesson is applied, as in `bench/memory-scale.mjs --embedded`. Figures are printed,
//! never asserted.

use std::time::Instant;

use remind_app::ask::page_turn_config;
use remind_app::settings::Settings;
use remind_core::memory::{FeedbackMemory, Lesson};
use remind_core::prompt::PromptTemplate;
use remind_core::record::{MemoryRecord, RecordId, RecordKind, Source, StoredEmbedding, Timestamp};
use remind_core::retrieval::HybridRetriever;
use remind_core::turn::{TurnInput, build_turn};
use remind_core::verified_examples::ExampleBudget;

const DIMENSIONS: usize = 384;
const QUESTIONS: usize = 50;

/// A seeded unit vector: the same for the same seed on every machine.
fn unit_vector(seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let values: Vec<f32> = (0..DIMENSIONS)
        .map(|_| {
            // xorshift64*: enough spread for vectors that are not all alike.
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let bits = state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
            bits as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    let length = values.iter().map(|x| x * x).sum::<f32>().sqrt();
    values.into_iter().map(|x| x / length).collect()
}

fn question(i: usize) -> String {
    format!("What is like < word{i} > in question {i} ?")
}

fn memory_of(lessons: usize) -> FeedbackMemory {
    let mut memory = FeedbackMemory::default();
    let records: Vec<_> = (0..lessons)
        .map(|i| {
            let lesson = Lesson {
                question: question(i),
                kind: RecordKind::clarification(format!(
                    "when I ask for like {i}, I want a synonym."
                )),
                source: Source::UserStated,
            };
            let mut record = FeedbackMemory::default()
                .plan_write(lesson, RecordId(format!("r{i}")), Timestamp(i as i64))
                .current;
            record.embedding = Some(
                StoredEmbedding::new("bench-model", unit_vector(i as u64)).expect("a unit vector"),
            );
            record
        })
        .collect();
    memory.apply_records(&records);
    memory
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sizes: Vec<usize> = args
        .iter()
        .position(|a| a == "--sizes")
        .and_then(|at| args.get(at + 1))
        .map_or_else(
            || vec![1_000, 10_000, 100_000],
            |list| list.split(',').filter_map(|n| n.parse().ok()).collect(),
        );
    let settings = Settings::default();
    let template = PromptTemplate::general();
    let retriever = HybridRetriever {
        tau: settings.semantic_tau,
    };
    let config = page_turn_config(&settings, &template, &retriever, ExampleBudget::default());
    for lessons in sizes {
        let memory = memory_of(lessons);
        let asked: Vec<(String, Vec<f32>)> = (0..QUESTIONS)
            .map(|q| {
                let i = q * lessons / QUESTIONS;
                (
                    question(i).replace("What is", "Tell me what is"),
                    unit_vector(i as u64),
                )
            })
            .collect();
        let mut micros: Vec<f64> = Vec::with_capacity(QUESTIONS);
        let mut applied = 0;
        for (text, vector) in &asked {
            let input = TurnInput {
                question: text,
                question_embedding: Some(vector),
                one_time_clarification: None,
            };
            let started = Instant::now();
            let prepared = build_turn(&memory, &config, &input).expect("a turn");
            micros.push(started.elapsed().as_secs_f64() * 1e6);
            applied += usize::from(!prepared.applied.is_empty());
        }
        micros.sort_by(f64::total_cmp);
        // What taking on one changed record costs (a usage count after an answer):
        // the session's next snapshot is the last one with that record replaced.
        let mut adoptions: Vec<f64> = (0..QUESTIONS)
            .map(|q| {
                let mut counted = MemoryRecord::clone(&memory.records()[q * lessons / QUESTIONS]);
                counted.stats.times_applied += 1;
                let started = Instant::now();
                let mut next = memory.clone();
                next.apply_records(&[counted]);
                let elapsed = started.elapsed().as_secs_f64() * 1e6;
                drop(next);
                elapsed
            })
            .collect();
        adoptions.sort_by(f64::total_cmp);
        println!(
            "{lessons} embedded lessons: one changed record taken on, median {:.0} µs",
            adoptions[QUESTIONS / 2]
        );
        println!(
            "{lessons} embedded lessons: build_turn median {:.0} µs, fastest {:.0} µs ({QUESTIONS} questions, {applied} with a lesson applied)",
            micros[QUESTIONS / 2],
            micros[0],
        );
    }
}
