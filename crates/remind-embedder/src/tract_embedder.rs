//! The [`Embedder`] port filled by all-MiniLM-L6-v2 run with tract, in the page and natively.
//!
//! The caller hands over the ONNX model's bytes and BERT's `vocab.txt`; this adapter does
//! no file or network I/O, so the same code runs in a browser worker and in native
//! tests. tract optimises best for fixed input shapes, so a question is padded to the
//! smallest of a few sequence-length buckets (padding masked out) and each bucket's
//! optimised plan is built the first time a question needs it, then reused.
//!
//! Parsing, typing and decluttering the ONNX file is most of a load, so the prepared
//! model can be written out once ([`TractEmbedder::converted`], tract's NNEF in a tar)
//! and read back on later loads ([`TractEmbedder::from_converted`]), which skips them.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use tract_nnef::internal::Framework as _;
use tract_onnx::prelude::*;
use tract_onnx::tract_core::ops::array::Gather;
use tract_onnx::tract_core::ops::binary::TypedBinOp;
use tract_onnx::tract_core::ops::cast::{Cast, cast};
use tract_onnx::tract_core::ops::math::{Mul, mul};
use tract_onnx::tract_core::ops::matmul::optimized::OptMatMul;
use tract_onnx::tract_hir::internal::{DimLike, bail, format_err};

use crate::quantized_product::{
    self, QuantizedWeightsProduct, RecoveredWeights, quantize_weight_products,
};
use crate::wordpiece::WordPieceTokenizer;
use remind_core::sentence_embedding::{EmbedError, Embedder};

/// Padded sequence lengths. Questions are short, so most fall in the first three; the
/// last is the longest input the embedder accepts (longer questions are cut). 24 is
/// there for keys of 17 to 24 tokens, which the 32-token plan ran at the cost of 32: with
/// it, 1 000 imported lessons were embedded in the page in 11.7–12.7 s instead of
/// 14.2–14.3 s (`bench/background-embedding.mjs`).
pub const BUCKETS: [usize; 5] = [16, 24, 32, 64, 128];
/// The model's hidden size: the length of every embedding.
pub const DIMENSIONS: usize = 384;

/// The input names of a Hugging Face BERT export, in the order the plan is fed.
const INPUT_NAMES: [&str; 3] = ["input_ids", "attention_mask", "token_type_ids"];

/// The tract this crate builds with, as its NNEF writer names itself in a converted
/// model's properties (`tract_nnef_ser_version`); a test pins it to the tract in use.
pub const TRACT_VERSION: &str = "0.23.9";

/// Names what [`TractEmbedder::converted`] writes: the tract that wrote it and how this
/// crate prepared the graph. Callers key a stored conversion by it (with the model's own
/// id), so a conversion by another tract or an older preparation is never read back;
/// change the last number whenever `prepare` changes what it produces.
pub const CONVERTED_FORMAT: &str = "tract-0.23.9-nnef-1";

/// The property tract's NNEF writer stores its own version under.
const WRITER_VERSION_PROPERTY: &str = "tract_nnef_ser_version";

type Plan = Arc<TypedRunnableModel>;

/// Why a converted model could not be used; the caller falls back to the ONNX file.
#[derive(Debug, thiserror::Error)]
pub enum ConvertedModelError {
    #[error("the converted model does not read as tract NNEF: {0}")]
    Unreadable(String),
    #[error("the converted model was written by tract {found}, not by tract {TRACT_VERSION}")]
    OtherTract { found: String },
    #[error("the converted model is not this sentence encoder: {0}")]
    NotTheEncoder(#[source] EmbedError),
    #[error("the model could not be written as tract NNEF: {0}")]
    Unwritable(String),
}

pub struct TractEmbedder {
    model_id: String,
    tokenizer: WordPieceTokenizer,
    /// The graph with its symbolic batch and sequence sizes, decluttered once (the small
    /// int8 weights dequantised there, the word-embedding lookup moved before its own
    /// dequantisation), then specialised per bucket. [`Self::converted`] writes it out.
    model: TypedModel,
    batch: Symbol,
    sequence: Symbol,
    /// Where each of `INPUT_NAMES` sits among the graph's inputs.
    input_slots: [usize; 3],
    /// Whether plans run the weight products on int8 weights (`quantized_product`), and
    /// the weights recovered for the first plan, shared by the others.
    quantized_products: Cell<bool>,
    recovered_weights: RefCell<RecoveredWeights>,
    /// Each bucket's optimised plan, built the first time a question needs it (and built
    /// again by [`Self::quantize_products`]).
    plans: [RefCell<Option<Plan>>; BUCKETS.len()],
}

impl TractEmbedder {
    /// Parses the model and vocabulary; plans are optimised lazily, per bucket.
    ///
    /// `model_id` tags stored embeddings, so name the file's content (e.g. its SHA-256
    /// prefix): embeddings from a different model must not be compared with these.
    pub fn new(model_id: &str, onnx: &[u8], vocab: &str) -> Result<Self, EmbedError> {
        let tokenizer = WordPieceTokenizer::from_vocab(vocab)
            .map_err(|e| EmbedError::BadVocab(e.to_string()))?;
        let bad_model = |e: TractError| EmbedError::BadModel(format!("{e:#}"));
        let mut reader = onnx;
        let model = tract_onnx::onnx()
            .model_for_read(&mut reader)
            .map_err(bad_model)?;
        // Checked on the parsed graph, so a file that is not BERT says so before typing.
        input_slots(&model)?;
        // The export names its dynamic sizes in every intermediate fact, so fixing them
        // on the inputs alone cannot unify; the symbols are substituted per bucket in the
        // typed graph.
        let model = model.into_typed().and_then(prepare).map_err(bad_model)?;
        Self::with_prepared(model_id, model, tokenizer)
    }

    /// Reads back what [`Self::converted`] wrote (from the same model, by the same tract):
    /// the prepared graph without parsing, typing or decluttering the ONNX file again.
    pub fn from_converted(
        model_id: &str,
        converted: &[u8],
        vocab: &str,
    ) -> Result<Self, ConvertedModelError> {
        let tokenizer = WordPieceTokenizer::from_vocab(vocab)
            .map_err(|e| ConvertedModelError::NotTheEncoder(EmbedError::BadVocab(e.to_string())))?;
        let mut reader = converted;
        let model = nnef()
            .model_for_read(&mut reader)
            .map_err(|e| ConvertedModelError::Unreadable(format!("{e:#}")))?;
        let found = writer_version(&model);
        if found.as_deref() != Some(TRACT_VERSION) {
            return Err(ConvertedModelError::OtherTract {
                found: found.unwrap_or_else(|| "(unnamed)".into()),
            });
        }
        Self::with_prepared(model_id, model, tokenizer).map_err(ConvertedModelError::NotTheEncoder)
    }

    /// The prepared graph as tract NNEF in a plain tar, for [`Self::from_converted`]. The
    /// word-embedding table stays int8 (11.7 MB); the other weights are the f32 the
    /// declutter folded them to, about 55 MB in all.
    pub fn converted(&self) -> Result<Vec<u8>, ConvertedModelError> {
        // `deterministic` also keeps the writer off the clock, which wasm32 has not.
        nnef()
            .write_to_tar_with_config(&self.model, Vec::new(), false, true)
            .map_err(|e| ConvertedModelError::Unwritable(format!("{e:#}")))
    }

    fn with_prepared(
        model_id: &str,
        model: TypedModel,
        tokenizer: WordPieceTokenizer,
    ) -> Result<Self, EmbedError> {
        let input_slots = input_slots(&model)?;
        let batch = model.symbols.sym("batch");
        let sequence = model.symbols.sym("sequence");
        Ok(TractEmbedder {
            model_id: model_id.to_string(),
            tokenizer,
            model,
            batch,
            sequence,
            input_slots,
            quantized_products: Cell::new(false),
            recovered_weights: Default::default(),
            plans: Default::default(),
        })
    }

    /// From now on runs the weight products on the file's int8 weights (they run in f32,
    /// through tract's kernels, until this is called), and builds again the plans built
    /// so far so. The first plan recovers the int8 weights (about 0.1 s
    /// in the worker), so the worker builds its first plan in f32 and calls this once it
    /// has said it is ready. Says whether anything changed.
    pub fn quantize_products(&self) -> Result<bool, EmbedError> {
        if self.quantized_products.replace(true) {
            return Ok(false);
        }
        // All or nothing: a plan that fails to build leaves the f32 ones in place.
        let rebuilt: Result<Vec<(usize, Plan)>, EmbedError> = (0..BUCKETS.len())
            .filter(|&bucket| self.plans[bucket].borrow().is_some())
            .map(|bucket| {
                self.optimise_for(BUCKETS[bucket])
                    .map(|plan| (bucket, plan))
                    .map_err(|e| EmbedError::BadModel(format!("{e:#}")))
            })
            .collect();
        let rebuilt = rebuilt.inspect_err(|_| self.quantized_products.set(false))?;
        for (bucket, plan) in rebuilt {
            *self.plans[bucket].borrow_mut() = Some(plan);
        }
        Ok(true)
    }

    /// Builds every bucket's plan now, so no question waits for an optimisation.
    pub fn warm_up(&self) -> Result<(), EmbedError> {
        self.warm_up_up_to(BUCKETS[BUCKETS.len() - 1])
    }

    /// Builds the plans of the buckets up to `tokens` long now; longer ones are built
    /// when a question first needs them.
    pub fn warm_up_up_to(&self, tokens: usize) -> Result<(), EmbedError> {
        for (bucket, &len) in BUCKETS.iter().enumerate() {
            if len <= tokens {
                self.plan(bucket)?;
            }
        }
        Ok(())
    }

    /// The token ids `embed` feeds the model for `text` (`[CLS]` … `[SEP]`, unpadded).
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text, BUCKETS[BUCKETS.len() - 1]).ids
    }

    /// The matrix-product kernels the plans built so far run, as `name ×count`, sorted
    /// by name: for each optimised matmul, the kernel its mode picker chooses for the
    /// plan's fixed `n` (what `OptMatMul::eval` runs). A product tract left unoptimised
    /// (a generic einsum) is listed as `unoptimised <op>`.
    pub fn matmul_kernels(&self) -> Vec<String> {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for plan in self.plans.iter().filter_map(|plan| plan.borrow().clone()) {
            for node in plan.model().nodes() {
                let name = if node.op_is::<QuantizedWeightsProduct>() {
                    quantized_product::KERNEL_NAME.to_string()
                } else if let Some(op) = node.op_as::<OptMatMul>() {
                    let n = op
                        .c_n_axis
                        .and_then(|axis| op.c_fact.shape[axis].to_usize().ok())
                        .unwrap_or(1);
                    match op.mode_picker.pick(n).ok().and_then(|m| op.mmm.get(m)) {
                        Some(mmm) => mmm.name().to_string(),
                        None => format!("no kernel for n={n}"),
                    }
                } else {
                    // OptMatMulPack only packs an input for an OptMatMul.
                    let op = node.op.name();
                    if !(op.contains("MatMul") || op.contains("EinSum")) || op.contains("Pack") {
                        continue;
                    }
                    format!("unoptimised {op}")
                };
                *counts.entry(name).or_default() += 1;
            }
        }
        counts
            .into_iter()
            .map(|(name, count)| format!("{name} ×{count}"))
            .collect()
    }

    fn plan(&self, bucket: usize) -> Result<Plan, EmbedError> {
        if let Some(plan) = self.plans[bucket].borrow().clone() {
            return Ok(plan);
        }
        let plan = self
            .optimise_for(BUCKETS[bucket])
            .map_err(|e| EmbedError::BadModel(format!("{e:#}")))?;
        *self.plans[bucket].borrow_mut() = Some(plan.clone());
        Ok(plan)
    }

    fn optimise_for(&self, len: usize) -> TractResult<Plan> {
        let sizes = HashMap::from([
            (self.batch.clone(), TDim::Val(1)),
            (self.sequence.clone(), TDim::Val(len as i64)),
        ]);
        let mut model = self.model.set_symbols(&sizes)?;
        if self.quantized_products.get() {
            quantize_weight_products(&mut model, &mut self.recovered_weights.borrow_mut())?;
        }
        for slot in self.input_slots {
            let shape = model
                .input_fact(slot)?
                .shape
                .as_concrete()
                .map(|s| s.to_vec());
            if shape != Some(vec![1, len]) {
                bail!(
                    "input {slot} has shape {shape:?} after fixing its sizes, expected [1, {len}]"
                );
            }
        }
        model.into_optimized()?.into_runnable()
    }

    /// Embeds `text` padded to the bucket of at least `padded_len` tokens rather than the
    /// smallest that fits, so tests can check that padding does not move the embedding.
    pub fn embed_padded(&self, text: &str, padded_len: usize) -> Result<Vec<f32>, EmbedError> {
        self.embed_ids(&self.token_ids(text), padded_len)
    }

    /// Embeds `text` and says how many tokens it took (the benchmark sorts by length),
    /// tokenising once.
    pub fn embed_counting_tokens(&self, text: &str) -> Result<(Vec<f32>, usize), EmbedError> {
        let ids = self.token_ids(text);
        Ok((self.embed_ids(&ids, 0)?, ids.len()))
    }

    fn embed_ids(&self, ids: &[u32], padded_len: usize) -> Result<Vec<f32>, EmbedError> {
        self.run(ids, padded_len)
            .map_err(|e| EmbedError::Failed(format!("{e:#}")))
    }

    fn run(&self, ids: &[u32], padded_len: usize) -> TractResult<Vec<f32>> {
        let wanted = ids.len().max(padded_len);
        let bucket = BUCKETS
            .iter()
            .position(|&b| wanted <= b)
            .unwrap_or(BUCKETS.len() - 1);
        let len = BUCKETS[bucket];
        let pad = i64::from(self.tokenizer.pad_id());
        let mut input_ids = vec![pad; len];
        let mut mask = vec![0i64; len];
        for (i, &id) in ids.iter().take(len).enumerate() {
            input_ids[i] = i64::from(id);
            mask[i] = 1;
        }
        let by_name = [
            Tensor::from_shape(&[1, len], &input_ids)?,
            Tensor::from_shape(&[1, len], &mask)?,
            Tensor::from_shape(&[1, len], &vec![0i64; len])?,
        ];
        let mut inputs: TVec<Option<TValue>> = tvec![None, None, None];
        for (slot, tensor) in self.input_slots.into_iter().zip(by_name) {
            inputs[slot] = Some(tensor.into());
        }
        let inputs = inputs.into_iter().flatten().collect();
        let plan = self.plan(bucket).map_err(|e| format_err!("{e}"))?;
        let outputs = plan.run(inputs)?;
        let hidden = outputs
            .first()
            .ok_or_else(|| format_err!("the model produced no output"))?
            .to_plain_array_view::<f32>()?;
        let shape = hidden.shape();
        if shape.len() != 3 || shape[1] != len || shape[2] != DIMENSIONS {
            bail!("expected last_hidden_state of shape [1, {len}, {DIMENSIONS}], got {shape:?}");
        }
        let hidden = hidden.into_shape_with_order((len, DIMENSIONS))?;
        Ok(mean_pool_and_normalise(&hidden, &mask))
    }
}

impl Embedder for TractEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed_padded(text, 0)
    }
}

/// Sentence-transformers' pooling: the mean of the unmasked token vectors, unit length.
fn mean_pool_and_normalise(hidden: &tract_ndarray::ArrayView2<f32>, mask: &[i64]) -> Vec<f32> {
    let mut sum = vec![0f32; DIMENSIONS];
    let mut count = 0f32;
    for (row, &m) in hidden.outer_iter().zip(mask) {
        if m == 1 {
            count += 1.0;
            for (s, x) in sum.iter_mut().zip(row) {
                *s += x;
            }
        }
    }
    let count = count.max(1e-9);
    let mean: Vec<f32> = sum.iter().map(|s| s / count).collect();
    // The reference clamps the norm at 1e-12 so an all-zero vector stays zero.
    let norm = mean.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    mean.iter().map(|x| x / norm).collect()
}

/// tract's NNEF, both ways. MiniLM's prepared graph holds tract-core operators only,
/// so tract-onnx's extension (`with_onnx`) is left out: it added 20 KB to the worker.
fn nnef() -> tract_nnef::framework::Nnef {
    tract_nnef::nnef()
}

/// The tract version a converted model names as its writer, if it names one.
fn writer_version(model: &TypedModel) -> Option<String> {
    let version = model.properties.get(WRITER_VERSION_PROPERTY)?;
    let version = version.to_plain_array_view::<String>().ok()?;
    version.iter().next().cloned()
}

/// The typed graph as every bucket's plan starts from: decluttered once, which folds the
/// int8 file's small weights (`Cast(q) × scale`) to f32, and with the word-embedding
/// lookup moved before its dequantisation.
fn prepare(model: TypedModel) -> TractResult<TypedModel> {
    let mut model = model.into_decluttered()?;
    gather_before_dequantising(&mut model)?;
    Ok(model)
}

/// Rewrites `Gather(Cast(q) × scale, ids)` over a constant int8 table with one scale per
/// row into `Cast(Gather(q, ids)) × Gather(scale, ids)`.
///
/// The declutter leaves the word-embedding table (30522 × 384) unfolded, as it is too
/// big, so a plan would rebuild all 47 MB of it in f32 on every run (about 50 ms of a
/// 57 ms embedding) to read a few rows; folding it at load cost 130 ms of compute (more
/// in wasm) and 47 MB of memory. Looking the rows up first dequantises only those, with
/// the same product per element, so the embedding is bit for bit the same.
fn gather_before_dequantising(model: &mut TypedModel) -> TractResult<()> {
    let mut patch = TypedModelPatch::default();
    for node in model.nodes() {
        let Some(gather) = node.op_as::<Gather>() else {
            continue;
        };
        let table = node.inputs[0];
        let product = model.node(table.node);
        if gather.axis != 0 || model.outlet_successors(table).len() != 1 {
            continue;
        }
        let Some(TypedBinOp(op, None)) = product.op_as::<TypedBinOp>() else {
            continue;
        };
        if !op.is::<Mul>() {
            continue;
        }
        let [dequantised, scale] = [product.inputs[0], product.inputs[1]];
        let cast_node = model.node(dequantised.node);
        let (Some(to), Some(scale)) = (
            cast_node.op_as::<Cast>().map(|c| c.to),
            model.outlet_fact(scale)?.konst.clone(),
        ) else {
            continue;
        };
        let Some(q) = model.outlet_fact(cast_node.inputs[0])?.konst.clone() else {
            continue;
        };
        let rows = q.shape().first().copied();
        if q.rank() != 2 || scale.shape() != [rows.unwrap_or(0), 1] {
            continue;
        }
        let ids = patch.tap_model(model, node.inputs[1])?;
        let name = &node.name;
        let q = patch.add_const(format!("{name}.table"), q)?;
        let scale = patch.add_const(format!("{name}.row_scale"), scale)?;
        let rows = patch.wire_node(format!("{name}.rows"), gather.clone(), &[q, ids])?;
        let rows = patch.wire_node(format!("{name}.rows_cast"), cast(to), &rows)?;
        let scales = patch.wire_node(format!("{name}.scales"), gather.clone(), &[scale, ids])?;
        let embedded =
            patch.wire_node(format!("{name}.dequantised"), mul(), &[rows[0], scales[0]])?;
        patch.shunt_outside(model, OutletId::new(node.id, 0), embedded[0])?;
    }
    patch.apply(model)?;
    // Drops the f32 tables the lookups no longer read.
    model.compact()?;
    Ok(())
}

/// Finds BERT's three inputs among the graph's, or says the file is not such a model.
fn input_slots<F, O>(model: &Graph<F, O>) -> Result<[usize; 3], EmbedError>
where
    F: Fact + Clone + 'static,
    O: std::fmt::Debug + std::fmt::Display + AsRef<dyn Op> + AsMut<dyn Op> + Clone + 'static,
{
    let names: Vec<String> = model
        .input_outlets()
        .map_err(|e| EmbedError::BadModel(format!("{e:#}")))?
        .iter()
        .map(|outlet| model.node(outlet.node).name.clone())
        .collect();
    let mut slots = [0; 3];
    for (slot, wanted) in slots.iter_mut().zip(INPUT_NAMES) {
        *slot = names.iter().position(|n| n == wanted).ok_or_else(|| {
            EmbedError::BadModel(format!(
                "it has no input `{wanted}` (inputs: {names:?}); expected a BERT sentence encoder export"
            ))
        })?;
    }
    if names.len() != 3 {
        return Err(EmbedError::BadModel(format!(
            "it takes inputs {names:?}; expected exactly {INPUT_NAMES:?}"
        )));
    }
    Ok(slots)
}
