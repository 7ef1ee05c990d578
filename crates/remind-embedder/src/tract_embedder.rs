//! The [`Embedder`] port filled by all-MiniLM-L6-v2 run with tract, in the page and natively.
//!
//! The caller hands over the ONNX model's bytes and BERT's `vocab.txt`; this adapter does
//! no file or network I/O, so the same code runs in a browser worker and in native
//! tests. tract optimises best for fixed input shapes, so a question is padded to the
//! smallest of a few sequence-length buckets (padding masked out) and each bucket's
//! optimised plan is built the first time a question needs it, then reused.

use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use tract_onnx::prelude::*;
use tract_onnx::tract_core::ops::konst::Const;
use tract_onnx::tract_core::ops::matmul::optimized::OptMatMul;
use tract_onnx::tract_hir::internal::{DimLike, bail, format_err};

use crate::wordpiece::WordPieceTokenizer;
use remind_core::sentence_embedding::{EmbedError, Embedder};

/// Padded sequence lengths. Questions are short, so most fall in the first two; the last
/// is the longest input the embedder accepts (longer questions are cut).
pub const BUCKETS: [usize; 4] = [16, 32, 64, 128];
/// The model's hidden size: the length of every embedding.
pub const DIMENSIONS: usize = 384;

/// The input names of a Hugging Face BERT export, in the order the plan is fed.
const INPUT_NAMES: [&str; 3] = ["input_ids", "attention_mask", "token_type_ids"];

type Plan = Arc<TypedRunnableModel>;

pub struct TractEmbedder {
    model_id: String,
    tokenizer: WordPieceTokenizer,
    /// The graph with its symbolic batch and sequence sizes, decluttered once (the int8
    /// weights dequantised here), then specialised per bucket.
    model: TypedModel,
    batch: Symbol,
    sequence: Symbol,
    /// Where each of `INPUT_NAMES` sits among the graph's inputs.
    input_slots: [usize; 3],
    plans: [OnceCell<Plan>; BUCKETS.len()],
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
        let input_slots = input_slots(&model)?;
        // The export names its dynamic sizes in every intermediate fact, so fixing them
        // on the inputs alone cannot unify; substitute the symbols in the typed graph.
        // The weights are folded before the one declutter (which ends the folding): a
        // declutter before it too cost about a tenth of the load.
        let model = model
            .into_typed()
            .and_then(fold_dequantised_weights)
            .map_err(bad_model)?;
        let batch = model.symbols.sym("batch");
        let sequence = model.symbols.sym("sequence");
        Ok(TractEmbedder {
            model_id: model_id.to_string(),
            tokenizer,
            model,
            batch,
            sequence,
            input_slots,
            plans: Default::default(),
        })
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
        for plan in self.plans.iter().filter_map(OnceCell::get) {
            for node in plan.model().nodes() {
                let name = if let Some(op) = node.op_as::<OptMatMul>() {
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

    fn plan(&self, bucket: usize) -> Result<&Plan, EmbedError> {
        if let Some(plan) = self.plans[bucket].get() {
            return Ok(plan);
        }
        let plan = self
            .optimise_for(BUCKETS[bucket])
            .map_err(|e| EmbedError::BadModel(format!("{e:#}")))?;
        Ok(self.plans[bucket].get_or_init(|| plan))
    }

    fn optimise_for(&self, len: usize) -> TractResult<Plan> {
        let sizes = HashMap::from([
            (self.batch.clone(), TDim::Val(1)),
            (self.sequence.clone(), TDim::Val(len as i64)),
        ]);
        let model = self.model.set_symbols(&sizes)?;
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
        let plan = self.plan(bucket).map_err(|e| format_err!("{e}"))?.clone();
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

/// Replaces every computation on constants alone by its result.
///
/// The int8 file stores each weight as `Cast(q) * scale`. tract folds those only while
/// the result stays small, which leaves the 47 MB fp32 word-embedding table to be
/// rebuilt on every run (about 50 ms of a 57 ms embedding). Folding it once at load
/// trades that for 47 MB of memory, which the run would allocate anyway.
fn fold_dequantised_weights(mut model: TypedModel) -> TractResult<TypedModel> {
    loop {
        let mut patch = None;
        for id in model.eval_order()? {
            let node = model.node(id);
            if node.inputs.is_empty() || node.op_is::<Const>() {
                continue;
            }
            let facts = model.node_input_facts(id)?;
            let Some(inputs) = facts
                .iter()
                .map(|f| f.konst.clone().map(|t| t.into_tvalue()))
                .collect::<Option<TVec<TValue>>>()
            else {
                continue;
            };
            // Shape arithmetic over the symbolic sequence length cannot be evaluated
            // yet; it stays for the per-bucket optimisation to resolve.
            let Ok(Some(outputs)) = node.op.eval_out_of_plan(inputs) else {
                continue;
            };
            let mut folding = TypedModelPatch::default();
            for (slot, output) in outputs.into_iter().enumerate() {
                let name = format!("{}.folded.{slot}", node.name);
                let wire = folding.wire_node(name, Const::new(output.into_arc_tensor())?, &[])?[0];
                folding.shunt_outside(&model, OutletId::new(id, slot), wire)?;
            }
            patch = Some(folding);
            break;
        }
        match patch {
            Some(folding) => folding.apply(&mut model)?,
            None => return model.into_decluttered(),
        }
    }
}

/// Finds BERT's three inputs among the graph's, or says the file is not such a model.
fn input_slots(model: &InferenceModel) -> Result<[usize; 3], EmbedError> {
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
