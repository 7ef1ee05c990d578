//! What the tract embedder costs natively, single-threaded: model size, load and first
//! embedding, p50/p95 latency at 16, 24 and 32 tokens, peak memory. Prints; asserts nothing.
//!
//! Run: `cargo run --release --example bench_embedder` after `scripts/setup-embedder`.
//! The browser is slower (wasm32 without threads, and SIMD only if enabled), so read
//! these as a lower bound for the page.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use remind_app::ports::Embedder;
use remind_embedder::tract_embedder::{BUCKETS, TractEmbedder};

const RUNS: usize = 200;

fn model_dir() -> PathBuf {
    let cache = std::env::var_os("REMIND_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/remind")
        });
    cache.join("minilm")
}

/// Peak resident memory so far, from Linux's /proc (None elsewhere).
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

/// A question of exactly `tokens` tokens, `[CLS]` and `[SEP]` included.
fn question_of(embedder: &TractEmbedder, tokens: usize) -> String {
    let mut text = String::from("what");
    while embedder.token_ids(&text).len() < tokens {
        text.push_str(" fast");
    }
    text
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = model_dir();
    let onnx = std::fs::read(dir.join("model.onnx")).map_err(|e| {
        format!(
            "{}: {e}; run scripts/setup-embedder first",
            dir.join("model.onnx").display()
        )
    })?;
    let vocab = std::fs::read_to_string(dir.join("vocab.txt"))?;
    println!(
        "model.onnx {:.1} MB, vocab.txt {:.1} kB",
        onnx.len() as f64 / 1e6,
        vocab.len() as f64 / 1e3
    );
    println!(
        "peak RSS with the files read: {:.0} MiB",
        peak_rss_mib().unwrap_or(f64::NAN)
    );

    let start = Instant::now();
    let embedder = TractEmbedder::new("bench", &onnx, &vocab)?;
    let parsed = start.elapsed();
    let first = embedder.embed("What is similar to fast?")?;
    let first_done = start.elapsed();
    println!(
        "load (parse + declutter): {:.0} ms; first embedding (optimise the 16-token plan + run): {:.0} ms; total {:.0} ms ({} dims)",
        millis(parsed),
        millis(first_done - parsed),
        millis(first_done),
        first.len()
    );
    println!(
        "peak RSS after the first embedding: {:.0} MiB",
        peak_rss_mib().unwrap_or(f64::NAN)
    );

    let measured = [16, 24, 32];
    for tokens in measured {
        let text = question_of(&embedder, tokens);
        let plan_start = Instant::now();
        embedder.embed(&text)?;
        println!(
            "{tokens} tokens: first call {:.0} ms",
            millis(plan_start.elapsed())
        );
        let mut times: Vec<Duration> = (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                embedder.embed(&text).map(|_| t.elapsed())
            })
            .collect::<Result<_, _>>()?;
        times.sort();
        println!(
            "{tokens} tokens: p50 {:.2} ms, p95 {:.2} ms over {RUNS} runs",
            millis(percentile(&times, 0.5)),
            millis(percentile(&times, 0.95))
        );
    }
    println!(
        "peak RSS with the plans up to 32 tokens: {:.0} MiB",
        peak_rss_mib().unwrap_or(f64::NAN)
    );

    let warm = Instant::now();
    embedder.warm_up()?;
    println!(
        "building the remaining plans ({:?} tokens): {:.0} ms; peak RSS with all {} plans: {:.0} MiB",
        &BUCKETS[measured.len()..],
        millis(warm.elapsed()),
        BUCKETS.len(),
        peak_rss_mib().unwrap_or(f64::NAN)
    );
    Ok(())
}
