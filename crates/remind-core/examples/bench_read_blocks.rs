//! Times what a reload does with the stored records once IndexedDB has handed over
//! their blocks, natively: decoding the 64 blocks into records, putting them in
//! the store's key order, and making the memory of them. The part of
//! `bench/memory-scale.mjs`'s reload that is Remind's own code and grows with the
//! memory.
//!
//! Run in release: `cargo run --release -p remind-core --example bench_read_blocks
//! [-- --sizes 10000,100000]`. The records are the clarifications of
//! `tests/e2e/large-export.mjs`, each under its own key. Figures are printed (the best
//! of five runs), never asserted.

use std::collections::BTreeMap;
#[path = "shared/best_of.rs"]
mod best_of;

use best_of::{best_of, ms};

use remind_core::memory::{FeedbackMemory, Lesson};
use remind_core::record::{MemoryRecord, RecordId, Timestamp};
use remind_core::record_blocks::{BlockValue, StoreContents, block_bytes, block_of, read_blocks};
use remind_core::stored_rows::StoredMemory;

const RUNS: usize = 5;

fn records(lessons: usize) -> Vec<MemoryRecord> {
    let memory = FeedbackMemory::default();
    (0..lessons)
        .map(|n| {
            let question = format!("What is the lesson {n} like < fast > in lesson {n}?");
            memory
                .plan_write(
                    Lesson::user_clarification(
                        &question,
                        &format!("when I ask what lesson {n} is like, I mean a short comparison in plain words."),
                    ),
                    RecordId(format!("bench-{n}")),
                    Timestamp(1_700_000_000_000 + n as i64),
                )
                .current
        })
        .collect()
}

/// The blocks as the store holds them: each block's number (as its key's JSON text)
/// and its bytes.
fn blocks(records: &[MemoryRecord]) -> Vec<(String, Vec<u8>)> {
    let mut by_block: BTreeMap<u32, Vec<&MemoryRecord>> = BTreeMap::new();
    for record in records {
        by_block
            .entry(block_of(&record.id))
            .or_default()
            .push(record);
    }
    by_block
        .into_iter()
        .map(|(number, held)| {
            let bytes = block_bytes(&held).expect("a record always encodes");
            (number.to_string(), bytes)
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sizes: Vec<usize> = args
        .iter()
        .position(|a| a == "--sizes")
        .and_then(|i| args.get(i + 1))
        .map_or("10000,100000", String::as_str)
        .split(',')
        .map(|n| n.parse().expect("--sizes takes numbers"))
        .collect();
    for lessons in sizes {
        let stored = blocks(&records(lessons));
        let bytes: usize = stored.iter().map(|(_, block)| block.len()).sum();
        let (decoded, read) = best_of(RUNS, || {
            read_blocks(
                stored
                    .iter()
                    .map(|(key, bytes)| (key.clone(), BlockValue::Bytes(bytes.clone()))),
            )
        });
        // Each run orders a copy of the records; the copy is timed alone too, so the
        // ordering is the difference.
        let (copied, _) = best_of(RUNS, || read.clone());
        let (ordered, contents) = best_of(RUNS, || {
            StoreContents::of(read.clone(), StoredMemory::default())
        });
        let (made, _) = best_of(RUNS, || {
            FeedbackMemory::from_records(contents.stored.records.clone())
        });
        println!(
            "{lessons} lessons ({:.1} MB in {} blocks): decode {}, key order {} (a copy of the records {} of it), memory {}",
            bytes as f64 / 1e6,
            stored.len(),
            ms(decoded),
            ms(ordered),
            ms(copied),
            ms(made),
        );
    }
}
