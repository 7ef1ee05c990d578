//! Products of f32 activations with an int8 weight matrix in integer arithmetic: the
//! activations at 14 bits, i32 sums, and the one place the result is scaled back to f32.
//! remind-embedder runs MiniLM's weight products on it in the embedder worker.
//!
//! An activation row (one token) is scaled so its largest magnitude is 8191 and rounded:
//! 14 bits, where a single int8 digit (the integer products tract ships) moves MiniLM's
//! embeddings too far from the reference. Each build multiplies them as its engine does
//! best:
//!
//! - wasm with relaxed SIMD (`relaxed_simd.rs`): offset by 8192 into `0..=16383` and
//!   written as `hi * 128 + lo`, both digits in `0..=127`. Each digit times the int8
//!   weights is an exact integer dot product, sixteen at a time
//!   (`i32x4.relaxed_dot_i8x16_i7x16_add`, defined for a second operand below 128);
//!   `(hi − 64) * 128 + lo` recombines them.
//! - wasm with simd128 alone (`simd128.rs`): as i16, against the weights widened to i16,
//!   eight products at a time (`i32x4.dot_i16x8_s`).
//! - everywhere else (`portable.rs`, natively and in the tests): the digits' arithmetic
//!   written plainly.

/// Outputs (columns of the weight matrix) per packed panel: six rows of accumulators for
/// the two digits (or two halves of a tile) leave 12 vector registers in use.
pub const PANEL: usize = 6;
/// Tokens per tile: one vector of four.
pub const TILE: usize = 4;
/// The weights' reduction axis is read four values at a time.
pub const GROUP: usize = 4;

/// The largest quantised activation magnitude; with the offset the digits stay below 128.
const ACTIVATION_MAX: f32 = 8191.0;
const OFFSET: i32 = 8192;
/// The high digit's own offset: `hi - 64` lies in `-64..=63`, which keeps the recombined
/// sum inside an i32 for `k` up to [`K_MAX`].
const HIGH_DIGIT_OFFSET: i32 = 64;
/// `|Σ w·(hi − 64)| · 128 + |Σ w·lo| ≤ (127·64·128 + 127·127) · k` stays below 2³¹.
const K_MAX: usize = 2016;

/// A `k × outputs` weight matrix as int8, one scale per output, packed in panels of
/// [`PANEL`] outputs: `[k / GROUP][PANEL][GROUP]` bytes each.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizedWeights {
    pub k: usize,
    pub outputs: usize,
    panels: Vec<i8>,
    /// One per output, padded to whole panels.
    scales: Vec<f32>,
    /// `64 · Σ_k w`, per output (padded likewise): what the high digit's offset adds to its sum.
    high_offsets: Vec<i32>,
}

impl QuantizedWeights {
    /// The int8 matrix `weights` (row-major `k × outputs`) was dequantised from, if it was
    /// one: every output's column must be its int8 values times one scale, the column's
    /// largest magnitude being 127 steps, as symmetric quantisation makes it. `None` for
    /// weights that are not (a float model), which then stay in f32.
    pub fn recover(weights: &[f32], k: usize, outputs: usize) -> Option<Self> {
        if k == 0
            || !k.is_multiple_of(GROUP)
            || k > K_MAX
            || outputs == 0
            || weights.len() != k * outputs
        {
            return None;
        }
        let mut largest = vec![0f32; outputs];
        for row in weights.chunks_exact(outputs) {
            for (largest, w) in largest.iter_mut().zip(row) {
                *largest = largest.max(w.abs());
            }
        }
        let padded_outputs = outputs.div_ceil(PANEL) * PANEL;
        // Padded to whole panels, as the sums are, so a panel reads its scales in one slice.
        let scales: Vec<f32> = largest
            .iter()
            .map(|&l| if l > 0.0 { l / 127.0 } else { 1.0 })
            .chain(std::iter::repeat(1.0))
            .take(padded_outputs)
            .collect();
        // A multiplication and wasm's `f32.nearest` per weight, not a division and a
        // call of libm's `roundf`: the worker recovers 10.6 M of them while it is idle,
        // and a question that comes meanwhile waits. Ties cannot arise: a weight that is
        // a whole number of steps is within rounding error of it.
        let steps: Vec<f32> = scales.iter().map(|s| 1.0 / s).collect();
        let groups = k / GROUP;
        let mut panels = vec![0i8; k * padded_outputs];
        let mut sums = vec![0i32; padded_outputs];
        for (row, values) in weights.chunks_exact(outputs).enumerate() {
            let (group, index) = (row / GROUP, row % GROUP);
            for (output, &w) in values.iter().enumerate() {
                let q = (w * steps[output]).round_ties_even();
                if !(-127.0..=127.0).contains(&q)
                    || (q * scales[output] - w).abs() > largest[output] * 1e-5
                {
                    return None;
                }
                let (panel, lane) = (output / PANEL, output % PANEL);
                panels[((panel * groups + group) * PANEL + lane) * GROUP + index] = q as i8;
                sums[output] += q as i32;
            }
        }
        Some(QuantizedWeights {
            k,
            outputs,
            panels,
            scales,
            high_offsets: sums.iter().map(|s| HIGH_DIGIT_OFFSET * s).collect(),
        })
    }

    /// Writes `x · W` for `tokens` rows of `x` (row-major `tokens × k`) into `y`, row-major
    /// `tokens × outputs`.
    pub fn product_into(&self, x: &[f32], tokens: usize, y: &mut [f32]) {
        assert_eq!(y.len(), tokens * self.outputs, "y holds tokens × outputs");
        let activations = encode(x, tokens, self.k);
        let panel_len = self.k * PANEL;
        for (panel, weights) in self.panels.chunks_exact(panel_len).enumerate() {
            let first = panel * PANEL;
            let lanes = PANEL.min(self.outputs - first);
            let panel_outputs = first..first + PANEL;
            let high_offsets = self.high_offsets[panel_outputs.clone()]
                .try_into()
                .expect("offsets padded to whole panels");
            let weight_scales = self.scales[panel_outputs]
                .try_into()
                .expect("scales padded to whole panels");
            for tile in 0..activations.tiles() {
                let tile_y = tile_product(
                    weights,
                    &activations,
                    tile,
                    PanelSums {
                        high_offsets,
                        weight_scales,
                    },
                );
                for (lane, outputs) in tile_y.iter().enumerate().take(lanes) {
                    for (column, &value) in outputs.iter().enumerate() {
                        let token = tile * TILE + column;
                        if token < tokens {
                            y[token * self.outputs + first + lane] = value;
                        }
                    }
                }
            }
        }
    }
}

/// What a panel's sums need to become its products: `64 · Σw` per output (what the
/// digit kernels' high digit and, times 128, the simd128 kernel's offset values add to
/// the sums, so each kernel subtracts it) and the weights' scales, one per output.
#[derive(Clone, Copy)]
struct PanelSums<'a> {
    high_offsets: &'a [i32; PANEL],
    weight_scales: &'a [f32; PANEL],
}

/// Where value `index` of a token's row goes in its tile, for the token in `column`: every
/// kernel's activations are laid out `[k / GROUP][TILE][GROUP]` per tile.
fn tile_index(index: usize, column: usize) -> usize {
    ((index / GROUP) * TILE + column) * GROUP + index % GROUP
}

/// The scale of a token's row: its largest magnitude becomes [`ACTIVATION_MAX`].
fn token_scale(row: &[f32]) -> f32 {
    let largest = largest_magnitude(row);
    if largest > 0.0 {
        largest / ACTIVATION_MAX
    } else {
        1.0
    }
}

type TileProduct = [[f32; TILE]; PANEL];

// The build's kernel: its activations' layout (`Activations`), the products of one panel
// of weights with one tile of them (`tile_product`), and its name.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod activation_digits;
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod portable;
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
use portable::{encode, largest_magnitude, tile_product};

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm_lanes;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use wasm_lanes::largest_magnitude;

#[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
mod activation_digits;
#[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
mod relaxed_simd;
#[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
use relaxed_simd::{encode, tile_product};

#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(target_feature = "relaxed-simd")
))]
mod simd128;
#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(target_feature = "relaxed-simd")
))]
use simd128::{encode, tile_product};

/// What the embedder reports for a product this crate runs, naming this build's kernel.
pub const KERNEL_NAME: &str = if cfg!(all(target_arch = "wasm32", target_feature = "relaxed-simd"))
{
    "remind_i8_weights_i7x2_relaxed_dot"
} else if cfg!(all(target_arch = "wasm32", target_feature = "simd128")) {
    "remind_i8_weights_i14_i16_dot"
} else {
    "remind_i8_weights_i7x2_portable"
};

/// Whether this build's kernel runs the products faster than f32 kernels do: the wasm
/// builds' (relaxed SIMD: 85–88 GFLOP/s-equivalent in Chromium where tract's f32 kernel
/// runs 23–34; simd128 alone: 45–50 against 15–20). The portable one is for tests.
pub const FASTER_THAN_F32: bool = cfg!(all(target_arch = "wasm32", target_feature = "simd128"));

// Natively these hold the portable kernel; `cargo test --target wasm32-unknown-unknown`
// (scripts/test, in Node) holds the simd128 one.
#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// Int8 values times a scale per column, each column reaching ±127 as symmetric
    /// quantisation makes it.
    fn int8_matrix(k: usize, outputs: usize) -> Vec<f32> {
        (0..k * outputs)
            .map(|i| {
                let (row, output) = (i / outputs, i % outputs);
                let q = if row == 0 {
                    127.0
                } else {
                    ((row * 31 + output * 17) % 255) as f32 - 127.0
                };
                q * (0.01 + output as f32 * 0.001)
            })
            .collect()
    }

    fn f32_product(x: &[f32], w: &[f32], tokens: usize, k: usize, outputs: usize) -> Vec<f32> {
        let mut y = vec![0f32; tokens * outputs];
        for t in 0..tokens {
            for o in 0..outputs {
                y[t * outputs + o] = (0..k).map(|i| x[t * k + i] * w[i * outputs + o]).sum();
            }
        }
        y
    }

    #[test]
    fn an_int8_matrix_is_recovered_and_its_product_matches_f32_to_14_bits() {
        let (tokens, k, outputs) = (11, 64, 7);
        let w = int8_matrix(k, outputs);
        let x: Vec<f32> = (0..tokens * k)
            .map(|i| ((i * 7919) % 1000) as f32 / 250.0 - 2.0)
            .collect();
        let weights = QuantizedWeights::recover(&w, k, outputs).expect("an int8 matrix");
        let mut got = vec![0f32; tokens * outputs];
        weights.product_into(&x, tokens, &mut got);
        let want = f32_product(&x, &w, tokens, k, outputs);
        for token in 0..tokens {
            let row = &x[token * k..][..k];
            let step = row.iter().fold(0f32, |m, v| m.max(v.abs())) / 8191.0;
            for output in 0..outputs {
                // Each activation is off by at most half its row's step.
                let weight_mass: f32 = (0..k).map(|i| w[i * outputs + output].abs()).sum();
                let bound = 0.5 * step * weight_mass * 1.001 + 1e-5;
                let (got, want) = (
                    got[token * outputs + output],
                    want[token * outputs + output],
                );
                assert!(
                    (got - want).abs() <= bound,
                    "{got} vs {want} (bound {bound})"
                );
            }
        }
    }

    #[test]
    fn the_largest_sums_at_the_longest_row_come_out_exact() {
        // Every weight ±127 and every activation at its row's largest magnitude: the
        // sums reach `8191 · 127 · k`, and the simd128 kernel's offset sums wrap an i32.
        let (tokens, k, outputs) = (5, K_MAX, 6);
        let w: Vec<f32> = (0..k * outputs)
            .map(|i| if i % outputs % 2 == 0 { 127.0 } else { -127.0 })
            .collect();
        let x: Vec<f32> = (0..tokens * k)
            .map(|i| if (i / k) % 2 == 0 { 8191.0 } else { -8191.0 })
            .collect();
        let weights = QuantizedWeights::recover(&w, k, outputs).expect("an int8 matrix");
        let mut got = vec![0f32; tokens * outputs];
        weights.product_into(&x, tokens, &mut got);
        let want = f32_product(&x, &w, tokens, k, outputs);
        for (got, want) in got.iter().zip(&want) {
            assert!(want.abs() > 1e9, "the sums are at their extremes: {want}");
            assert!((got - want).abs() <= want.abs() * 1e-6, "{got} vs {want}");
        }
    }

    #[test]
    fn weights_that_are_not_int8_times_a_scale_stay_f32() {
        let (k, outputs) = (8, 3);
        let mut w = int8_matrix(k, outputs);
        w[5] += 0.0013;
        assert_eq!(QuantizedWeights::recover(&w, k, outputs), None);
    }

    #[test]
    fn a_zero_row_of_activations_gives_a_zero_row_of_outputs() {
        let (tokens, k, outputs) = (2, 8, 4);
        let w = int8_matrix(k, outputs);
        let mut x = vec![0f32; tokens * k];
        x[k..]
            .iter_mut()
            .enumerate()
            .for_each(|(i, v)| *v = i as f32);
        let mut y = vec![0f32; tokens * outputs];
        QuantizedWeights::recover(&w, k, outputs)
            .unwrap()
            .product_into(&x, tokens, &mut y);
        assert_eq!(&y[..outputs], &[0.0; 4]);
        assert!(y[outputs..].iter().any(|v| *v != 0.0));
    }
}
