//! MiniLM run by tract inside headless Chromium matches the reference embeddings, as
//! it does natively (`remind-embedder/tests/embedder_parity.rs`): the wasm build, SIMD
//! kernels included, computes the same function.
//!
//! The model is fetched the way the worker fetches it, from `assets/minilm/`, which
//! wasm-bindgen-test-runner serves from this crate's folder (`scripts/setup-embedder`
//! links the files there).
#![cfg(target_arch = "wasm32")]

use remind_test_support as support;

use remind_app::ports::Embedder;
use remind_core::retrieval::cosine;
use remind_embedder::tract_embedder::{DIMENSIONS, TractEmbedder};
use remind_worker::model_cache;
use support::minilm_reference::{max_abs_diff, reference};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// The int8 graph rounds its weights: against fp32 sentence-transformers the bar is
/// cosine 0.999; against onnxruntime on the same int8 file, 1e-3 per component.
const MIN_COSINE: f32 = 0.999;

async fn bytes(url: &str) -> Vec<u8> {
    model_cache::fetch(None, url, &|_, _| {})
        .await
        .unwrap_or_else(|e| panic!("{e}; run scripts/setup-embedder"))
        .bytes
}

#[wasm_bindgen_test]
async fn embeddings_in_the_browser_match_the_reference() {
    let model = bytes("/assets/minilm/model.onnx").await;
    let vocab = String::from_utf8(bytes("/assets/minilm/vocab.txt").await).expect("UTF-8");
    let embedder = TractEmbedder::new("parity", &model, &vocab).expect("the model loads");
    let reference = reference();
    let (fp32, int8) = (
        &reference.sentence_transformers,
        &reference.onnxruntime_int8,
    );
    assert_eq!(reference.sentences.len(), 3);
    for (i, sentence) in reference.sentences.iter().enumerate() {
        let ours = embedder.embed(sentence).expect("embeds");
        assert_eq!(ours.len(), DIMENSIONS);
        let to_fp32 = cosine(&ours, &fp32[i]);
        let to_int8 = cosine(&ours, &int8[i]);
        let diff_int8 = max_abs_diff(&ours, &int8[i]);
        web_sys::console::log_1(
            &format!(
                "{sentence:?}: cosine {to_fp32:.6} to sentence-transformers; \
                 cosine {to_int8:.6}, max|Δ| {diff_int8:.2e} to onnxruntime int8"
            )
            .into(),
        );
        assert!(to_fp32 >= MIN_COSINE, "{sentence:?}: cosine {to_fp32}");
        assert!(
            to_int8 >= 0.9999 && diff_int8 <= 1e-3,
            "{sentence:?}: tract in wasm and onnxruntime disagree (cosine {to_int8}, max|Δ| {diff_int8})"
        );
    }
}

#[wasm_bindgen_test]
async fn a_missing_model_file_is_a_clear_error_not_a_panic() {
    let missing = model_cache::fetch(None, "/assets/minilm/no-such-model.onnx", &|_, _| {}).await;
    let error = missing.err().expect("a 404 is an error").to_string();
    assert!(error.contains("HTTP 404"), "{error}");
    let garbage = TractEmbedder::new("x", b"not an onnx file", "[PAD]\n");
    assert!(garbage.is_err());
}
