//! The integer arithmetic of a quantised product: int8 weights, activations as two 7-bit
//! digits, i32 sums, and the one place the result is scaled back to f32.
//!
//! An activation row (one token) is scaled so its largest magnitude is 8191, rounded, and
//! offset by 8192 into `0..=16383`, which is written as `hi * 128 + lo` with both digits in
//! `0..=127`. Each digit times the int8 weights is an exact integer dot product, the
//! operation wasm's relaxed SIMD runs sixteen at a time (`i32x4.relaxed_dot_i8x16_i7x16_add`,
//! defined for a second operand below 128); `hi * 128 + lo - 8192 * Σw` then gives the
//! product with the activations at 14 bits, where a single int8 digit (the integer
//! products tract ships) moves MiniLM's embeddings too far from the reference.

/// Outputs (columns of the weight matrix) per packed panel: three rows of accumulators
/// for the two digits and the two halves of a tile leave 12 vector registers in use.
pub const PANEL: usize = 3;
/// Tokens per tile: two vectors of four.
pub const TILE: usize = 8;
/// The weights' reduction axis is read four values at a time.
pub const GROUP: usize = 4;

/// The largest quantised activation magnitude; with the offset the digits stay below 128.
const ACTIVATION_MAX: f32 = 8191.0;
const OFFSET: i64 = 8192;
const DIGIT: i64 = 128;

/// A `k × outputs` weight matrix as int8, one scale per output, packed in panels of
/// [`PANEL`] outputs: `[k / GROUP][PANEL][GROUP]` bytes each.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizedWeights {
    pub k: usize,
    pub outputs: usize,
    panels: Vec<i8>,
    scales: Vec<f32>,
    /// Σ over k of each output's int8 weights, to take the digits' offset back out.
    sums: Vec<i64>,
}

impl QuantizedWeights {
    /// The int8 matrix `weights` (row-major `k × outputs`) was dequantised from, if it was
    /// one: every output's column must be its int8 values times one scale. `None` for
    /// weights that are not (a float model), which then stay in f32.
    pub fn recover(weights: &[f32], k: usize, outputs: usize) -> Option<Self> {
        if k == 0 || k % GROUP != 0 || outputs == 0 || weights.len() != k * outputs {
            return None;
        }
        let padded_outputs = outputs.div_ceil(PANEL) * PANEL;
        let mut columns = vec![0i8; k * padded_outputs];
        let mut scales = vec![0f32; padded_outputs];
        let mut sums = vec![0i64; padded_outputs];
        for output in 0..outputs {
            let column = (0..k).map(|row| weights[row * outputs + output]);
            let largest = column.clone().fold(0f32, |m, w| m.max(w.abs()));
            let scale = if largest > 0.0 { largest / 127.0 } else { 1.0 };
            for (row, w) in column.enumerate() {
                let q = (w / scale).round();
                if !(-127.0..=127.0).contains(&q) || (q * scale - w).abs() > largest * 1e-5 {
                    return None;
                }
                columns[output * k + row] = q as i8;
                sums[output] += q as i64;
            }
            scales[output] = scale;
        }
        let groups = k / GROUP;
        let mut panels = vec![0i8; k * padded_outputs];
        for panel in 0..padded_outputs / PANEL {
            for group in 0..groups {
                for lane in 0..PANEL {
                    let output = panel * PANEL + lane;
                    let at = ((panel * groups + group) * PANEL + lane) * GROUP;
                    let from = output * k + group * GROUP;
                    panels[at..at + GROUP].copy_from_slice(&columns[from..from + GROUP]);
                }
            }
        }
        Some(QuantizedWeights {
            k,
            outputs,
            panels,
            scales,
            sums,
        })
    }

    fn panel(&self, panel: usize) -> &[i8] {
        let len = self.k * PANEL;
        &self.panels[panel * len..(panel + 1) * len]
    }

    /// `x · W` for `tokens` rows of `x` (row-major `tokens × k`), row-major
    /// `tokens × outputs`.
    pub fn product(&self, x: &[f32], tokens: usize) -> Vec<f32> {
        let activations = QuantizedActivations::new(x, tokens, self.k);
        let mut y = vec![0f32; tokens * self.outputs];
        for panel in 0..self.outputs.div_ceil(PANEL) {
            let weights = self.panel(panel);
            for tile in 0..activations.tiles {
                let (hi, lo) = activations.tile(tile);
                let (sum_hi, sum_lo) = tile_sums(weights, hi, lo, self.k / GROUP);
                for lane in 0..PANEL {
                    let output = panel * PANEL + lane;
                    if output >= self.outputs {
                        break;
                    }
                    let offset = OFFSET * self.sums[output];
                    for column in 0..TILE {
                        let token = tile * TILE + column;
                        if token >= tokens {
                            break;
                        }
                        let exact = i64::from(sum_hi[lane][column]) * DIGIT
                            + i64::from(sum_lo[lane][column])
                            - offset;
                        let scale =
                            f64::from(activations.scales[token]) * f64::from(self.scales[output]);
                        y[token * self.outputs + output] = (exact as f64 * scale) as f32;
                    }
                }
            }
        }
        y
    }
}

/// `tokens` rows of activations as digits, packed in tiles of [`TILE`] tokens:
/// `[k / GROUP][TILE][GROUP]` bytes per tile for each digit.
struct QuantizedActivations {
    tiles: usize,
    tile_len: usize,
    hi: Vec<u8>,
    lo: Vec<u8>,
    scales: Vec<f32>,
}

impl QuantizedActivations {
    fn new(x: &[f32], tokens: usize, k: usize) -> Self {
        let tiles = tokens.div_ceil(TILE);
        let tile_len = k * TILE;
        let mut hi = vec![0u8; tiles * tile_len];
        let mut lo = vec![0u8; tiles * tile_len];
        let mut scales = vec![0f32; tokens];
        for (token, row) in x.chunks_exact(k).take(tokens).enumerate() {
            let largest = row.iter().fold(0f32, |m, v| m.max(v.abs()));
            let scale = if largest > 0.0 {
                largest / ACTIVATION_MAX
            } else {
                1.0
            };
            scales[token] = scale;
            let (tile, column) = (token / TILE, token % TILE);
            for (index, v) in row.iter().enumerate() {
                let q = (v / scale).round().clamp(-ACTIVATION_MAX, ACTIVATION_MAX) as i64;
                let digits = (q + OFFSET) as u16;
                let (group, lane) = (index / GROUP, index % GROUP);
                let at = tile * tile_len + (group * TILE + column) * GROUP + lane;
                hi[at] = (digits >> 7) as u8;
                lo[at] = (digits & 127) as u8;
            }
        }
        QuantizedActivations {
            tiles,
            tile_len,
            hi,
            lo,
            scales,
        }
    }

    fn tile(&self, tile: usize) -> (&[u8], &[u8]) {
        let range = tile * self.tile_len..(tile + 1) * self.tile_len;
        (&self.hi[range.clone()], &self.lo[range])
    }
}

type TileSums = [[i32; TILE]; PANEL];

/// The integer sums of one panel of weights against one tile of digits, for the high and
/// the low digit: `Σ_k w[output][k] · digit[token][k]`.
#[cfg(not(all(target_arch = "wasm32", target_feature = "relaxed-simd")))]
fn tile_sums(weights: &[i8], hi: &[u8], lo: &[u8], groups: usize) -> (TileSums, TileSums) {
    let mut sum_hi = [[0i32; TILE]; PANEL];
    let mut sum_lo = [[0i32; TILE]; PANEL];
    for group in 0..groups {
        for lane in 0..PANEL {
            let w = &weights[(group * PANEL + lane) * GROUP..][..GROUP];
            for column in 0..TILE {
                let at = (group * TILE + column) * GROUP;
                for (i, &w) in w.iter().enumerate() {
                    sum_hi[lane][column] += i32::from(w) * i32::from(hi[at + i]);
                    sum_lo[lane][column] += i32::from(w) * i32::from(lo[at + i]);
                }
            }
        }
    }
    (sum_hi, sum_lo)
}

/// As the portable version, sixteen products per instruction.
#[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
fn tile_sums(weights: &[i8], hi: &[u8], lo: &[u8], groups: usize) -> (TileSums, TileSums) {
    use std::arch::wasm32::*;
    assert!(weights.len() >= groups * PANEL * GROUP);
    assert!(hi.len() >= groups * TILE * GROUP && lo.len() >= groups * TILE * GROUP);
    let dot = |w, d, acc| i32x4_relaxed_dot_i8x16_i7x16_add(w, d, acc);
    let zero = i32x4_splat(0);
    let (mut h0a, mut h0b, mut h1a, mut h1b, mut h2a, mut h2b) = (zero, zero, zero, zero, zero, zero);
    let (mut l0a, mut l0b, mut l1a, mut l1b, mut l2a, mut l2b) = (zero, zero, zero, zero, zero, zero);
    let w = weights.as_ptr() as *const u32;
    let (hi, lo) = (hi.as_ptr() as *const v128, lo.as_ptr() as *const v128);
    // SAFETY: the asserts above bound every read below; wasm loads need no alignment.
    unsafe {
        for group in 0..groups {
            let (hia, hib) = (v128_load(hi.add(2 * group)), v128_load(hi.add(2 * group + 1)));
            let (loa, lob) = (v128_load(lo.add(2 * group)), v128_load(lo.add(2 * group + 1)));
            let w = w.add(PANEL * group);
            let s = v128_load32_splat(w);
            (h0a, h0b, l0a, l0b) = (dot(s, hia, h0a), dot(s, hib, h0b), dot(s, loa, l0a), dot(s, lob, l0b));
            let s = v128_load32_splat(w.add(1));
            (h1a, h1b, l1a, l1b) = (dot(s, hia, h1a), dot(s, hib, h1b), dot(s, loa, l1a), dot(s, lob, l1b));
            let s = v128_load32_splat(w.add(2));
            (h2a, h2b, l2a, l2b) = (dot(s, hia, h2a), dot(s, hib, h2b), dot(s, loa, l2a), dot(s, lob, l2b));
        }
    }
    let lanes = |a: v128, b: v128| {
        [
            i32x4_extract_lane::<0>(a),
            i32x4_extract_lane::<1>(a),
            i32x4_extract_lane::<2>(a),
            i32x4_extract_lane::<3>(a),
            i32x4_extract_lane::<0>(b),
            i32x4_extract_lane::<1>(b),
            i32x4_extract_lane::<2>(b),
            i32x4_extract_lane::<3>(b),
        ]
    };
    (
        [lanes(h0a, h0b), lanes(h1a, h1b), lanes(h2a, h2b)],
        [lanes(l0a, l0b), lanes(l1a, l1b), lanes(l2a, l2b)],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let got = weights.product(&x, tokens);
        let want = f32_product(&x, &w, tokens, k, outputs);
        for token in 0..tokens {
            let row = &x[token * k..][..k];
            let step = row.iter().fold(0f32, |m, v| m.max(v.abs())) / 8191.0;
            for output in 0..outputs {
                // Each activation is off by at most half its row's step.
                let weight_mass: f32 = (0..k).map(|i| w[i * outputs + output].abs()).sum();
                let bound = 0.5 * step * weight_mass * 1.001 + 1e-5;
                let (got, want) = (got[token * outputs + output], want[token * outputs + output]);
                assert!((got - want).abs() <= bound, "{got} vs {want} (bound {bound})");
            }
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
        x[k..].iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
        let y = QuantizedWeights::recover(&w, k, outputs)
            .unwrap()
            .product(&x, tokens);
        assert_eq!(&y[..outputs], &[0.0; 4]);
        assert!(y[outputs..].iter().any(|v| *v != 0.0));
    }
}
