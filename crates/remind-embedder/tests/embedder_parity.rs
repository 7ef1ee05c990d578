//! The tract embedder against the reference: the same token ids as Hugging Face's
//! tokeniser and embeddings within the agreed distance of sentence-transformers', so
//! semantic retrieval's τ means in Remind what it means in the literature.
//!
//! Needs the model files from `scripts/setup-embedder`; without them the test fails and
//! says so, because a skipped parity check would let a broken embedder ship.
#![cfg(not(target_arch = "wasm32"))]

mod support {
    pub mod minilm;
    pub use remind_test_support::minilm_reference;
}

use remind_app::ports::Embedder;
use remind_core::retrieval::cosine;
use remind_embedder::quantized_product;
use remind_embedder::tract_embedder::{DIMENSIONS, TractEmbedder};
use support::minilm_reference::{max_abs_diff, reference};

/// Token ids of the fixture's sentences (and of harder text), from `tokenizers` run on
/// the `tokenizer.json` that ships with the vocabulary.
const REFERENCE_IDS: [(&str, &[u32]); 5] = [
    (
        "What is akin to fast?",
        &[101, 2054, 2003, 17793, 2000, 3435, 1029, 102],
    ),
    (
        "What is similar to fast?",
        &[101, 2054, 2003, 2714, 2000, 3435, 1029, 102],
    ),
    (
        "What sounds like fast?",
        &[101, 2054, 4165, 2066, 3435, 1029, 102],
    ),
    (
        "Héllo, wörld! Don't   stop—naïve café 東京 unaffable",
        &[
            101, 7592, 1010, 2088, 999, 2123, 1005, 1056, 2644, 1517, 15743, 7668, 1879, 1755,
            14477, 20961, 3468, 102,
        ],
    ),
    (
        "What is the opposite of < unbelievable > ?",
        &[
            101, 2054, 2003, 1996, 4500, 1997, 1026, 23653, 1028, 1029, 102,
        ],
    ),
];

/// The int8 graph rounds its weights, so it cannot match the fp32 reference to 1e-3;
/// onnxruntime on the same file reaches cosine 0.9993 at worst.
const MIN_COSINE: f32 = 0.999;

fn embedder() -> TractEmbedder {
    support::minilm::load("all-MiniLM-L6-v2-int8")
}

#[test]
fn token_ids_match_the_reference_tokeniser() {
    let embedder = embedder();
    for (text, ids) in REFERENCE_IDS {
        assert_eq!(embedder.token_ids(text), ids, "token ids of {text:?}");
    }
}

#[test]
fn embeddings_match_sentence_transformers() {
    let embedder = embedder();
    let reference = reference();
    assert_eq!(reference.sentences.len(), 3);
    for (i, sentence) in reference.sentences.iter().enumerate() {
        let ours = embedder.embed(sentence).expect("embeds");
        assert_eq!(ours.len(), DIMENSIONS);
        let norm = ours.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "unit length, got {norm}");
        let to_st = cosine(&ours, &reference.sentence_transformers[i]);
        let diff_st = max_abs_diff(&ours, &reference.sentence_transformers[i]);
        let to_ort = cosine(&ours, &reference.onnxruntime_int8[i]);
        let diff_ort = max_abs_diff(&ours, &reference.onnxruntime_int8[i]);
        println!(
            "{sentence:?}: vs sentence-transformers cosine {to_st:.6} max|Δ| {diff_st:.2e}; \
             vs onnxruntime int8 cosine {to_ort:.6} max|Δ| {diff_ort:.2e}"
        );
        assert!(
            to_st >= MIN_COSINE,
            "{sentence:?}: cosine {to_st} to sentence-transformers is below {MIN_COSINE}"
        );
        // Same file, same arithmetic up to summation order: tract must agree with
        // onnxruntime far more closely than either agrees with the fp32 model.
        assert!(
            to_ort >= 0.9999 && diff_ort <= 1e-3,
            "{sentence:?}: tract and onnxruntime disagree on the same int8 model \
             (cosine {to_ort}, max|Δ| {diff_ort})"
        );
    }
}

#[test]
fn padding_to_a_longer_bucket_leaves_the_embedding_unchanged() {
    let embedder = embedder();
    let text = "What is similar to fast?";
    let smallest = embedder.embed(text).expect("embeds");
    for padded_len in [32, 64, 128] {
        let padded = embedder.embed_padded(text, padded_len).expect("embeds");
        let diff = max_abs_diff(&smallest, &padded);
        assert!(diff <= 1e-5, "padded to {padded_len}: max|Δ| {diff}");
    }
}

#[test]
fn text_longer_than_the_last_bucket_is_cut_and_still_embedded() {
    let embedder = embedder();
    let text = "what is similar to fast ".repeat(60);
    assert_eq!(embedder.token_ids(&text).len(), 128);
    let v = embedder.embed(&text).expect("embeds a long text");
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "unit length, got {norm}");
}

#[test]
fn every_matrix_product_of_the_plans_runs_an_optimised_kernel() {
    let embedder = embedder();
    assert!(
        embedder.matmul_kernels().is_empty(),
        "no plan is built before a question or a warm-up"
    );
    embedder
        .warm_up_up_to(32)
        .expect("builds the 16-, 24- and 32-token plans");
    let kernels = embedder.matmul_kernels();
    println!("matmul kernels of the 16-, 24- and 32-token plans: {kernels:?}");
    assert!(!kernels.is_empty(), "MiniLM is matrix products");
    // A generic einsum would run without tract-linalg's kernels; the worker's report
    // (tests/e2e/worker-embedder.test.mjs) names the wasm ones.
    assert!(
        kernels
            .iter()
            .all(|k| !k.starts_with("unoptimised") && !k.starts_with("no kernel")),
        "{kernels:?}"
    );
}

/// The relaxed-SIMD worker runs the 36 weight products on the file's int8 weights with
/// 14-bit activations (`quantized_product`); natively the same integer arithmetic runs
/// portably, so its precision is held to the same bars here.
#[test]
fn the_weight_products_on_int8_weights_embed_as_the_f32_products_do() {
    let in_f32 = embedder();
    let quantized = embedder();
    assert!(
        quantized
            .quantize_products()
            .expect("no plan to rebuild yet")
    );
    let reference = reference();
    for (i, sentence) in reference.sentences.iter().enumerate() {
        let ours = quantized.embed(sentence).expect("embeds");
        let to_f32 = cosine(&ours, &in_f32.embed(sentence).expect("embeds"));
        let to_st = cosine(&ours, &reference.sentence_transformers[i]);
        println!(
            "{sentence:?}: quantised vs f32 cosine {to_f32:.7}, vs sentence-transformers {to_st:.6}"
        );
        assert!(
            to_f32 >= 0.99999,
            "{sentence:?}: cosine {to_f32} to the f32 products"
        );
        assert!(
            to_st >= MIN_COSINE,
            "{sentence:?}: cosine {to_st} to sentence-transformers"
        );
    }
    let kernels = quantized.matmul_kernels();
    println!("with quantised products, the 16-token plan runs {kernels:?}");
    assert!(
        kernels.contains(&format!("{} ×36", quantized_product::KERNEL_NAME)),
        "every weight product (6 layers × 6) runs on int8 weights: {kernels:?}"
    );
}

/// The worker builds its first plan in f32, says it is ready, then switches: the plans
/// built so far are built again with the weight products on int8 weights, once.
#[test]
fn switching_to_quantised_products_rebuilds_the_plans_built_so_far_once() {
    let embedder = embedder();
    embedder
        .warm_up_up_to(16)
        .expect("builds the 16-token plan");
    let in_f32 = embedder.matmul_kernels();
    assert!(
        !in_f32
            .iter()
            .any(|k| k.starts_with(quantized_product::KERNEL_NAME)),
        "{in_f32:?}"
    );
    let before = embedder.embed("What is similar to fast?").expect("embeds");
    assert!(
        embedder.quantize_products().expect("rebuilds"),
        "it switched"
    );
    assert!(
        embedder
            .matmul_kernels()
            .contains(&format!("{} ×36", quantized_product::KERNEL_NAME)),
        "{:?}",
        embedder.matmul_kernels()
    );
    let after = embedder.embed("What is similar to fast?").expect("embeds");
    assert!(cosine(&before, &after) >= 0.99999);
    assert!(
        !embedder.quantize_products().expect("nothing to do"),
        "the second switch finds nothing to do"
    );
}
