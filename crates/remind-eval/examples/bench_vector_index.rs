//! Measures where the HNSW index starts to pay off against the exact scan, to set
//! `HNSW_FROM_LEN` in `src/vector_index.rs`.
//!
//! Run in release: `cargo run --release --example bench_vector_index [--clustered]
//! [--with-100k]`. Vectors are seeded random unit vectors of dimension 384 (MiniLM's
//! size). Uniform random vectors are the hardest case for HNSW (no structure to
//! navigate); `--clustered` draws them around 100 centres instead, closer to how
//! sentence embeddings of similar questions bunch together.

use std::time::Instant;

use remind_eval::split_mix64::SplitMix64;
use remind_eval::vector_index::{ExactIndex, HnswIndex, VectorIndex};

const DIMENSIONS: usize = 384;
const QUERIES: usize = 200;

fn random_unit_vectors(count: usize, rng: &mut SplitMix64) -> Vec<Vec<f32>> {
    (0..count)
        .map(|_| rng.next_unit_vector(DIMENSIONS))
        .collect()
}

/// Unit vectors scattered around `centres` random directions (noise 0.5 per unit).
fn clustered_unit_vectors(
    count: usize,
    centres: &[Vec<f32>],
    rng: &mut SplitMix64,
) -> Vec<Vec<f32>> {
    (0..count)
        .map(|i| {
            let centre = &centres[i % centres.len()];
            let noise = random_unit_vectors(1, rng).remove(0);
            let v: Vec<f32> = centre
                .iter()
                .zip(&noise)
                .map(|(c, n)| c + 0.5 * n)
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / norm).collect()
        })
        .collect()
}

fn millis(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

fn main() {
    let with_100k = std::env::args().any(|a| a == "--with-100k");
    let mut sizes = vec![500, 1_000, 2_000, 5_000, 10_000, 20_000];
    if with_100k {
        sizes.push(100_000);
    }
    let clustered = std::env::args().any(|a| a == "--clustered");
    let mut rng = SplitMix64::new(384);
    let centres = random_unit_vectors(100, &mut rng);
    let draw = |n: usize, rng: &mut SplitMix64| {
        if clustered {
            clustered_unit_vectors(n, &centres, rng)
        } else {
            random_unit_vectors(n, rng)
        }
    };
    let queries = draw(QUERIES, &mut rng);
    println!(
        "{:>7} | {:>10} {:>12} | {:>10} {:>12} | {:>7} | {:>12}",
        "vectors", "exact bld", "exact q(µs)", "hnsw bld", "hnsw q(µs)", "recall", "break-even q"
    );
    for &n in &sizes {
        let vectors = draw(n, &mut rng);

        let start = Instant::now();
        let exact = ExactIndex::new(vectors.clone());
        let exact_build = millis(start);
        let start = Instant::now();
        let truth: Vec<usize> = queries
            .iter()
            .map(|q| exact.nearest(q).expect("non-empty").position)
            .collect();
        let exact_query_us = millis(start) * 1000.0 / QUERIES as f64;

        let start = Instant::now();
        let hnsw = HnswIndex::build(vectors, 7);
        let hnsw_build = millis(start);
        let start = Instant::now();
        let found: Vec<usize> = queries
            .iter()
            .map(|q| hnsw.nearest(q).expect("non-empty").position)
            .collect();
        let hnsw_query_us = millis(start) * 1000.0 / QUERIES as f64;

        let recall =
            truth.iter().zip(&found).filter(|(t, f)| t == f).count() as f64 / QUERIES as f64;
        // Queries needed before HNSW's extra build time is earned back by faster lookups.
        let saved_us = exact_query_us - hnsw_query_us;
        let break_even = if saved_us > 0.0 {
            format!("{:.0}", (hnsw_build - exact_build) * 1000.0 / saved_us)
        } else {
            "never".to_string()
        };
        println!(
            "{n:>7} | {exact_build:>8.1}ms {exact_query_us:>12.1} | {hnsw_build:>8.1}ms {hnsw_query_us:>12.1} | {recall:>7.3} | {break_even:>12}"
        );
    }
}
