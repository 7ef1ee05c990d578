//! The converted model (tract's NNEF of the prepared graph, which the worker keeps in
//! the Cache API) against the ONNX it came from: read back, it must embed as the ONNX
//! path does and as sentence-transformers does, and a conversion it cannot trust (another
//! tract's, or not NNEF at all) must be refused so the caller falls back to the ONNX.
//!
//! Needs the model files from `scripts/setup-embedder`, like `embedder_parity.rs`.
#![cfg(not(target_arch = "wasm32"))]

mod support {
    pub mod minilm;
    pub use remind_test_support::minilm_reference;
}

use std::sync::OnceLock;

use remind_app::ports::Embedder;
use remind_core::retrieval::cosine;
use remind_embedder::tract_embedder::{
    CONVERTED_FORMAT, ConvertedModelError, TRACT_VERSION, TractEmbedder,
};
use support::minilm_reference::{max_abs_diff, reference};

/// The bar `embedder_parity.rs` holds the ONNX path to.
const MIN_COSINE: f32 = 0.999;

const MODEL_ID: &str = "all-MiniLM-L6-v2-int8";

/// The ONNX-loaded embedder's conversion, made once for the tests here.
fn converted() -> &'static [u8] {
    static CONVERTED: OnceLock<Vec<u8>> = OnceLock::new();
    CONVERTED.get_or_init(|| {
        support::minilm::load(MODEL_ID)
            .converted()
            .expect("the prepared model writes as NNEF")
    })
}

fn from_converted(bytes: &[u8]) -> Result<TractEmbedder, ConvertedModelError> {
    TractEmbedder::from_converted(MODEL_ID, bytes, &support::minilm::vocab())
}

#[test]
fn the_converted_model_embeds_as_sentence_transformers_and_as_the_onnx_path() {
    let onnx = support::minilm::load(MODEL_ID);
    let reloaded = from_converted(converted()).expect("the conversion reads back");
    assert_eq!(reloaded.model_id(), MODEL_ID);
    let reference = reference();
    let mut texts = reference.sentences.clone();
    // One text longer than 16 tokens, so a second plan of the reloaded graph is checked.
    texts.push("what is similar to fast, and what sounds like it but means something else".into());
    for (i, text) in texts.iter().enumerate() {
        let ours = reloaded.embed(text).expect("the reloaded model embeds");
        let before = onnx.embed(text).expect("the ONNX model embeds");
        let diff = max_abs_diff(&ours, &before);
        println!("{text:?}: converted against ONNX path max|Δ| {diff:.2e}");
        // The same graph and weights, so the same plan and the same arithmetic.
        assert!(
            diff <= 1e-6,
            "{text:?}: the conversion moved the embedding by {diff}"
        );
        if let Some(st) = reference.sentence_transformers.get(i) {
            let to_st = cosine(&ours, st);
            assert!(
                to_st >= MIN_COSINE,
                "{text:?}: cosine {to_st} to sentence-transformers is below {MIN_COSINE}"
            );
        }
    }
}

#[test]
fn the_conversion_keeps_the_word_embedding_table_int8() {
    // 11.7 MB of int8 word embeddings and 43 MB of the f32 weights the declutter
    // folded; the whole table in f32 would add 35 MB.
    let bytes = converted().len();
    println!("converted model: {bytes} bytes");
    assert!(bytes < 60_000_000, "converted model is {bytes} bytes");
}

#[test]
fn the_converted_model_names_the_tract_this_crate_builds_with() {
    // tract's writer stores its own version; a tract upgrade fails here until
    // TRACT_VERSION (and with it CONVERTED_FORMAT, the worker's cache key) is bumped.
    from_converted(converted()).expect("this tract reads its own conversion");
    assert!(
        CONVERTED_FORMAT.contains(TRACT_VERSION),
        "{CONVERTED_FORMAT} must name tract {TRACT_VERSION}"
    );
}

#[test]
fn a_conversion_written_by_another_tract_is_refused() {
    let mut other = converted().to_vec();
    // Same length, so the tar stays well formed; only the writer's version changes.
    let ours = format!("\"{TRACT_VERSION}\"");
    let theirs = format!("\"{}\"", "9".repeat(TRACT_VERSION.len()));
    let at = other
        .windows(ours.len())
        .position(|w| w == ours.as_bytes())
        .expect("the converted model names its tract");
    other[at..at + ours.len()].copy_from_slice(theirs.as_bytes());
    match from_converted(&other) {
        Err(ConvertedModelError::OtherTract { found }) => {
            assert_eq!(found, "9".repeat(TRACT_VERSION.len()))
        }
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("a conversion by another tract was used"),
    }
}

#[test]
fn bytes_that_are_not_a_conversion_are_refused_as_unreadable() {
    let onnx = support::minilm::read("model.onnx");
    for bytes in [&b""[..], b"not a tar", &onnx[..4096]] {
        match from_converted(bytes) {
            Err(ConvertedModelError::Unreadable(_)) => {}
            Err(other) => panic!("refused for another reason: {other}"),
            Ok(_) => panic!("{} bytes of non-NNEF were used as a model", bytes.len()),
        }
    }
}
