//! Chooses the semantic retrievers' τ: precision and recall of "same task type" on the
//! MemPrompt retriever pairs (`data/sim/test.jsonl`, all 28 542 pairs) for cosine ≥ τ
//! over MiniLM embeddings, alone and inside the hybrid retriever.
//!
//! Run: `cargo run --release --example calibrate_tau` after `scripts/setup-embedder`,
//! with the data set at ../shared/memprompt-data. Each distinct question is embedded
//! once; both retrievers decide every pair through their real `lookup`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use remind_app::ports::Embedder;
use remind_core::memory::{FeedbackMemory, Lesson};
use remind_core::memory_key::MemoryKey;
use remind_core::record::{MemoryRecord, RecordId, StoredEmbedding, Timestamp};
use remind_core::retrieval::{HybridRetriever, Query, Retriever, SemanticRetriever};
use remind_embedder::tract_embedder::TractEmbedder;
use remind_eval::gate_confusion::GateConfusion;

/// Which text of a question is embedded.
type TextOf<'a> = &'a dyn Fn(&str) -> String;

const TAUS: [f32; 12] = [
    0.30, 0.40, 0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90, 0.95,
];

fn cache_dir() -> PathBuf {
    std::env::var_os("REMIND_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/remind")
        })
}

/// The stored side of a pair: a current record of `question` carrying its embedding.
fn stored(question: &str, vector: &[f32]) -> MemoryRecord {
    let mut memory = FeedbackMemory::default();
    let lesson = Lesson::user_clarification(question, "calibration");
    let written = memory.plan_write(lesson, RecordId("r".into()), Timestamp(0));
    memory.apply(&written);
    let mut record = memory
        .current()
        .next()
        .cloned()
        .expect("the lesson is current");
    record.embedding = StoredEmbedding::new("calibration", vector.to_vec()).ok();
    record
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = cache_dir().join("minilm");
    let onnx = std::fs::read(dir.join("model.onnx")).map_err(|e| {
        format!(
            "{}/model.onnx: {e}; run scripts/setup-embedder",
            dir.display()
        )
    })?;
    let vocab = std::fs::read_to_string(dir.join("vocab.txt"))?;
    let embedder = TractEmbedder::new("calibration", &onnx, &vocab)?;

    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/memprompt-data/data/sim/test.jsonl");
    let text = std::fs::read_to_string(&data)
        .map_err(|e| format!("{}: {e}; put memprompt-data at ../shared", data.display()))?;
    let mut pairs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1))?;
        let field = |f: &str| v[f].as_str().unwrap_or_default().to_string();
        pairs.push((
            field("sentence1"),
            field("sentence2"),
            v["label"].as_f64() == Some(1.0),
        ));
    }

    // The page may embed the question as typed or its masked key (the `< word >`
    // blanked, as the memory stores it); the target word dominates a short question's
    // embedding, so both are measured.
    let as_typed = |q: &str| q.to_string();
    let masked = |q: &str| MemoryKey::of_question(q).as_str().to_string();
    let ways: [(&str, TextOf); 2] = [("question as typed", &as_typed), ("masked key", &masked)];
    for (way, text_of) in ways {
        let start = Instant::now();
        let mut by_text: HashMap<String, Vec<f32>> = HashMap::new();
        let mut embeddings: HashMap<&str, Vec<f32>> = HashMap::new();
        for (a, b, _) in &pairs {
            for q in [a, b] {
                let text = text_of(q);
                if !by_text.contains_key(&text) {
                    let v = embedder.embed(&text)?;
                    by_text.insert(text.clone(), v);
                }
                embeddings.insert(q.as_str(), by_text[&text].clone());
            }
        }
        println!(
            "\n{way}: {} pairs ({} same type), {} distinct texts embedded in {:.1} s",
            pairs.len(),
            pairs.iter().filter(|p| p.2).count(),
            by_text.len(),
            start.elapsed().as_secs_f64()
        );
        let records: HashMap<&str, MemoryRecord> =
            embeddings.iter().map(|(q, v)| (*q, stored(q, v))).collect();
        println!("  τ    | semantic P  R     F1    | hybrid P    R     F1");
        println!("  -----+-------------------------+------------------------");
        for tau in TAUS {
            let mut semantic = GateConfusion::default();
            let mut hybrid = GateConfusion::default();
            for (query_text, stored_text, same) in &pairs {
                let query = Query::new(query_text).with_embedding(&embeddings[query_text.as_str()]);
                let candidates = [&records[stored_text.as_str()]];
                semantic.count(
                    SemanticRetriever { tau }
                        .lookup(&query, &candidates)
                        .passed(),
                    *same,
                );
                hybrid.count(
                    HybridRetriever { tau }.lookup(&query, &candidates).passed(),
                    *same,
                );
            }
            println!(
                "  {tau:.2} | {:.3}  {:.3}  {:.3}     | {:.3}  {:.3}  {:.3}",
                semantic.precision(),
                semantic.recall(),
                semantic.f1(),
                hybrid.precision(),
                hybrid.recall(),
                hybrid.f1()
            );
        }
    }
    Ok(())
}
