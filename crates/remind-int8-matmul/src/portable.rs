//! The digit kernel written plainly, for every build but the wasm ones (natively it is
//! what the tests hold to the f32 products).

use super::activation_digits::{ActivationDigits, Digits, TileDigits};
use super::{ACTIVATION_MAX, GROUP, OFFSET, PANEL, PanelSums, TILE, TileProduct, tile_index};

pub(super) type Activations = ActivationDigits;

pub(super) fn encode(x: &[f32], tokens: usize, k: usize) -> Activations {
    ActivationDigits::new(x, tokens, k, write_digits)
}

/// The digits of `round(v · inverse_scale) + 8192`.
fn quantized_digits(v: f32, inverse_scale: f32) -> (u8, u8) {
    let q = (v * inverse_scale)
        .round_ties_even()
        .clamp(-ACTIVATION_MAX, ACTIVATION_MAX) as i32;
    let digits = q + OFFSET;
    ((digits >> 7) as u8, (digits & 127) as u8)
}

/// `Σ_k w·x` back in f32 from the digits' sums: `((Σ w·hi − 64 Σw) · 128 + Σ w·lo) ·
/// token scale · weight scale`.
fn recombined(
    sum_hi: i32,
    sum_lo: i32,
    high_offset: i32,
    token_scale: f32,
    weight_scale: f32,
) -> f32 {
    (((sum_hi - high_offset) << 7) + sum_lo) as f32 * token_scale * weight_scale
}

pub(super) fn largest_magnitude(row: &[f32]) -> f32 {
    row.iter().fold(0f32, |m, v| m.max(v.abs()))
}

fn write_digits(row: &[f32], inverse_scale: f32, digits: Digits) {
    for (index, &v) in row.iter().enumerate() {
        let (hi, lo) = quantized_digits(v, inverse_scale);
        let at = tile_index(index, digits.column);
        digits.hi[at] = hi;
        digits.lo[at] = lo;
    }
}

/// The products of one panel of weights with one tile of digits, in f32.
pub(super) fn tile_product(
    weights: &[i8],
    activations: &Activations,
    tile: usize,
    panel: PanelSums,
) -> TileProduct {
    let TileDigits {
        hi,
        lo,
        token_scales,
    } = activations.tile(tile);
    let groups = hi.len() / (TILE * GROUP);
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
    std::array::from_fn(|lane| {
        std::array::from_fn(|column| {
            recombined(
                sum_hi[lane][column],
                sum_lo[lane][column],
                panel.high_offsets[lane],
                token_scales[column],
                panel.weight_scales[lane],
            )
        })
    })
}
