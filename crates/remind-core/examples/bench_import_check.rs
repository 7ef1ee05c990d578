//! Times what the page does with an import file before anything is written, natively:
//! reading the file, checking its records (the secret scan of every text among them),
//! checking the history they describe, and previewing it against an empty memory and
//! against a memory that already holds it. The part of `bench/memory-scale.mjs`'s
//! import time that is Remind's own code, without the browser around it.
//!
//! Run in release: `cargo run --release -p remind-core --example bench_import_check
//! [-- --lessons 10000]`. The file is the one `tests/e2e/large-export.mjs` writes:
//! every record a current clarification under its own key, worded alike. Figures are
//! printed (the best of five runs), never asserted.

#[path = "shared/best_of.rs"]
mod best_of;

use best_of::{best_of, ms};

use remind_core::import::ImportCheck;
use remind_core::import_plan::preview;
use remind_core::memory::FeedbackMemory;
use remind_core::write_gate::find_secret;
use serde_json::json;

const RUNS: usize = 5;
const WORDS: [&str; 16] = [
    "river", "garden", "window", "lantern", "meadow", "harbor", "violin", "pepper", "saddle",
    "canyon", "marble", "thistle", "orchard", "compass", "velvet", "glacier",
];

/// A word per number, so each question (and so each key) is its own.
fn phrase(n: usize) -> String {
    let mut rest = n;
    let mut parts = Vec::with_capacity(4);
    for _ in 0..4 {
        parts.push(WORDS[rest % WORDS.len()]);
        rest /= WORDS.len();
    }
    parts.join(" ")
}

/// The key Remind gives a question holding a `< word >` marker, as the file's writer
/// computes it.
fn marked_question_key(question: &str) -> String {
    let masked = question.to_lowercase().replace("< fast >", " < > ");
    masked.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn export_file(lessons: usize) -> Vec<u8> {
    let records: Vec<_> = (0..lessons)
        .map(|n| {
            let question = format!("What is the {} like < fast > in lesson {n}?", phrase(n));
            json!({
                "id": format!("bench-{n}"),
                "key": marked_question_key(&question),
                "question": question,
                "clarification": format!(
                    "when I ask what the {} is like, I mean a short comparison in plain words.",
                    phrase(n)
                ),
                "kind": "clarification",
                "scope": "always",
                "source": "user_stated",
                "created_at": 1_700_000_000_000_i64 + n as i64,
                "version": 1,
                "supersedes": null,
                "superseded_by": null,
                "state": "current",
            })
        })
        .collect();
    serde_json::to_vec(&json!({
        "format": "remind-memory",
        "version": 2,
        "exported_at": 1_700_000_100_000_i64,
        "app_version": "bench",
        "records": records,
    }))
    .expect("a JSON value always encodes")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let lessons = args
        .iter()
        .position(|a| a == "--lessons")
        .and_then(|i| args.get(i + 1))
        .map_or(10_000, |n| n.parse().expect("--lessons takes a number"));
    let bytes = export_file(lessons);

    let (checked, file) = best_of(RUNS, || {
        let mut check = ImportCheck::start(&bytes).expect("the file's header is valid");
        while check.check_next(250).checked < check.progress().total {}
        check.finish().expect("the file is valid")
    });
    let texts: Vec<String> = file
        .records
        .iter()
        .flat_map(|r| [r.question.clone(), r.kind.text()])
        .collect();
    let (scanned, secrets) = best_of(RUNS, || {
        texts.iter().filter(|t| find_secret(t).is_some()).count()
    });
    assert_eq!(secrets, 0, "the file's texts hold no secret");
    let empty = FeedbackMemory::default();
    let (previewed_empty, _) = best_of(RUNS, || preview(&empty, &file));
    let holding = FeedbackMemory::from_records(file.records.clone());
    let (previewed_same, _) = best_of(RUNS, || preview(&holding, &file));

    println!(
        "{lessons} lessons ({:.1} MB): check {} (secret scan of {} texts {}), preview into an empty memory {}, into the same memory {}",
        bytes.len() as f64 / 1e6,
        ms(checked),
        texts.len(),
        ms(scanned),
        ms(previewed_empty),
        ms(previewed_same),
    );
}
