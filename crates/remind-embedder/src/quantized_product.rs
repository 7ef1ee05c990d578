//! MiniLM's weight products run on their int8 weights, in the embedder worker: a tract
//! operator ([`QuantizedWeightsProduct`]) put in place of each product of the activations
//! with a constant weight matrix that was dequantised from int8.
//!
//! Measured in the browser, these 36 products were 83 % of an embedding's time, and
//! tract's f32 kernel streams 42 MB of f32 weights per question. The int8 weights are a
//! quarter of that, and each relaxed dot instruction does 16 multiply-adds where an f32
//! one does 4 (simd128's `i32x4.dot_i16x8_s`: 8). `remind-int8-matmul` holds the integer
//! arithmetic and its precision argument.

use std::collections::HashMap;
use std::sync::Arc;

use tract_onnx::prelude::*;
use tract_onnx::tract_core::internal::*;
use tract_onnx::tract_core::ops::einsum::EinSum;

pub use remind_int8_matmul::QuantizedWeights;

/// Whether the weight products run faster quantised than in tract's f32 kernels in this
/// build: in both of the worker's wasm builds (relaxed SIMD and simd128 alone), whose
/// integer dot products `remind-int8-matmul` is built for; natively the portable
/// arithmetic is slower. The worker switches its plans
/// (`TractEmbedder::quantize_products`) after it has said it is ready.
pub const FASTER_IN_THIS_BUILD: bool = remind_int8_matmul::FASTER_THAN_F32;

/// What the worker reports for a product this operator runs: the build's kernel.
pub const KERNEL_NAME: &str = remind_int8_matmul::KERNEL_NAME;

/// `x · W` with `W` held as int8: `x`'s last `k` values per row against a `k × outputs`
/// matrix, written as the einsum it replaces shaped its output.
#[derive(Clone, Debug)]
pub struct QuantizedWeightsProduct {
    weights: Arc<QuantizedWeights>,
    output_shape: TVec<usize>,
}

/// Two products are the same operator when they hold the same weights (tract compares
/// operators when it merges identical nodes); comparing the bytes would cost a pass.
impl PartialEq for QuantizedWeightsProduct {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.weights, &other.weights) && self.output_shape == other.output_shape
    }
}

impl Eq for QuantizedWeightsProduct {}

impl Op for QuantizedWeightsProduct {
    fn name(&self) -> StaticName {
        "QuantizedWeightsProduct".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!(
            "k {} × outputs {}",
            self.weights.k, self.weights.outputs
        )])
    }

    op_as_typed_op!();
}

impl EvalOp for QuantizedWeightsProduct {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let x = args_1!(inputs);
        let x = x.try_as_plain_ram()?;
        let x = x.as_slice::<f32>()?;
        let k = self.weights.k;
        ensure!(
            x.len().is_multiple_of(k),
            "{} activations are not rows of {k}",
            x.len()
        );
        // Written in place: building a Vec and handing it to tract copies every output.
        let mut y = Tensor::zero::<f32>(&self.output_shape)?;
        self.weights.product_into(
            x,
            x.len() / k,
            y.try_as_plain_ram_mut()?.as_slice_mut::<f32>()?,
        );
        Ok(tvec!(y.into_tvalue()))
    }
}

impl TypedOp for QuantizedWeightsProduct {
    as_op!();

    fn output_facts(&self, _inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        Ok(tvec!(f32::fact(&*self.output_shape)))
    }
}

/// What [`quantize_weight_products`] recovered, by node name, for the next plan: every
/// bucket's plan has the same weights, and recovering them reads all 42 MB.
pub type RecoveredWeights = HashMap<String, Option<Arc<QuantizedWeights>>>;

/// Replaces every einsum of activations with a constant int8-derived weight matrix in
/// `model` (its sizes fixed) by a [`QuantizedWeightsProduct`].
pub fn quantize_weight_products(
    model: &mut TypedModel,
    recovered: &mut RecoveredWeights,
) -> TractResult<()> {
    let mut patch = TypedModelPatch::default();
    for node in model.nodes() {
        let Some(op) = node.op_as::<EinSum>() else {
            continue;
        };
        let Some(op) = weight_product(model, node, op, recovered)? else {
            continue;
        };
        let x = patch.tap_model(model, node.inputs[0])?;
        let y = patch.wire_node(&node.name, op, &[x])?;
        patch.shunt_outside(model, OutletId::new(node.id, 0), y[0])?;
    }
    patch.apply(model)?;
    model.compact()?;
    Ok(())
}

/// The operator for `node` when it is `x · W`: an f32 einsum whose second input is a
/// constant whose axes are the last of `x`'s (its `k`) then the output's last, the
/// output keeping `x`'s other axes in order (unit axes aside), and `W` int8 times a
/// scale per output.
fn weight_product(
    model: &TypedModel,
    node: &TypedNode,
    op: &EinSum,
    recovered: &mut RecoveredWeights,
) -> TractResult<Option<QuantizedWeightsProduct>> {
    if op.q_params.is_some() || op.operating_dt != DatumType::F32 || node.inputs.len() != 2 {
        return Ok(None);
    }
    let (x_fact, w_fact) = (
        model.outlet_fact(node.inputs[0])?,
        model.outlet_fact(node.inputs[1])?,
    );
    let Some(w) = w_fact.konst.clone() else {
        return Ok(None);
    };
    if x_fact.datum_type != DatumType::F32 || w.datum_type() != DatumType::F32 {
        return Ok(None);
    }
    let (Some(x_shape), Some(y_shape)) = (
        x_fact.shape.as_concrete(),
        model.outlet_fact(node.id.into())?.shape.as_concrete(),
    ) else {
        return Ok(None);
    };
    let expression = op.axes.to_string();
    let Some((x_axes, w_axes, y_axes)) = parse_einsum(&expression) else {
        return Ok(None);
    };
    let Some((&output_axis, k_axes)) = w_axes.split_last() else {
        return Ok(None);
    };
    let w_shape = w.shape();
    // The file is outside input: a shape that disagrees with its expression is left to
    // tract, never indexed.
    let ranks_agree = x_shape.len() == x_axes.len()
        && w_shape.len() == w_axes.len()
        && y_shape.len() == y_axes.len();
    let is_product = ranks_agree
        && !k_axes.is_empty()
        && x_axes.len() > k_axes.len()
        && x_axes.ends_with(k_axes)
        && y_axes.last() == Some(&output_axis)
        && !x_axes.contains(&output_axis)
        && k_axes.iter().all(|a| !y_axes.contains(a))
        && x_shape[x_axes.len() - k_axes.len()..] == w_shape[..k_axes.len()]
        && beyond_units(&x_axes[..x_axes.len() - k_axes.len()], x_shape)
            == beyond_units(&y_axes[..y_axes.len() - 1], y_shape);
    if !is_product {
        return Ok(None);
    }
    let weights = match recovered.get(&node.name) {
        Some(weights) => weights.clone(),
        None => {
            let k: usize = w_shape[..k_axes.len()].iter().product();
            let outputs = w_shape[k_axes.len()];
            let w = w.try_as_plain_ram()?;
            let weights = QuantizedWeights::recover(w.as_slice::<f32>()?, k, outputs).map(Arc::new);
            recovered.insert(node.name.clone(), weights.clone());
            weights
        }
    };
    Ok(weights.map(|weights| QuantizedWeightsProduct {
        weights,
        output_shape: y_shape.into(),
    }))
}

/// `"amk,kn->mn"` as its inputs' and output's axis letters.
fn parse_einsum(expression: &str) -> Option<(Vec<char>, Vec<char>, Vec<char>)> {
    let (inputs, output) = expression.split_once("->")?;
    let (x, w) = inputs.split_once(',')?;
    let letters = |s: &str| s.chars().collect::<Vec<_>>();
    let all_letters = |s: &str| s.chars().all(|c| c.is_ascii_alphabetic());
    (all_letters(x) && all_letters(w) && all_letters(output))
        .then(|| (letters(x), letters(w), letters(output)))
}

/// `axes` (the first of `shape`'s dims) with their sizes, leaving out those of size 1.
fn beyond_units(axes: &[char], shape: &[usize]) -> Vec<(char, usize)> {
    axes.iter()
        .copied()
        .zip(shape.iter().copied())
        .filter(|&(_, size)| size != 1)
        .collect()
}
