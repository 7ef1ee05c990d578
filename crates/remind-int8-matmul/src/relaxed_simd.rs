//! The relaxed-SIMD worker's versions of the digit kernel's three loops, four lanes at a
//! time: a row's largest magnitude, its digits, and a tile's products (sixteen int8
//! products per `i32x4.relaxed_dot_i8x16_i7x16_add`). Same results as the portable ones.

use std::arch::wasm32::*;

use super::activation_digits::{ActivationDigits, Digits, TileDigits};
use super::wasm_lanes;
use super::{GROUP, PANEL, PanelSums, TILE, TileProduct, tile_index};

pub(super) type Activations = ActivationDigits;

pub(super) fn encode(x: &[f32], tokens: usize, k: usize) -> Activations {
    ActivationDigits::new(x, tokens, k, write_digits)
}

/// Four values (one group of the reduction axis) at a time: each group's digits are four
/// consecutive bytes of the tile.
fn write_digits(row: &[f32], inverse_scale: f32, digits: Digits) {
    let inverse = f32x4_splat(inverse_scale);
    let seven_bits = i32x4_splat(127);
    let bytes = |v: v128| {
        let narrowed = u8x16_narrow_i16x8(i16x8_narrow_i32x4(v, v), i16x8_splat(0));
        i32x4_extract_lane::<0>(narrowed).to_le_bytes()
    };
    for (group, quad) in row.chunks_exact(GROUP).enumerate() {
        let value = wasm_lanes::offset_values(quad, inverse);
        let at = tile_index(group * GROUP, digits.column);
        digits.hi[at..at + GROUP].copy_from_slice(&bytes(u32x4_shr(value, 7)));
        digits.lo[at..at + GROUP].copy_from_slice(&bytes(v128_and(value, seven_bits)));
    }
}

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
    assert!(weights.len() >= groups * PANEL * GROUP);
    assert!(lo.len() == hi.len());
    // Twelve accumulators, a digit vector of each kind and one splat of weights: 15 of
    // the 16 vector registers V8 gives wasm on x64. A tile of eight tokens (three outputs)
    // needed 17, and its spills halved the rate of dot products.
    let mut sums_hi = [i32x4_splat(0); PANEL];
    let mut sums_lo = [i32x4_splat(0); PANEL];
    let w = weights.as_ptr() as *const u32;
    let (hi, lo) = (hi.as_ptr() as *const v128, lo.as_ptr() as *const v128);
    // SAFETY: the asserts above bound every read; wasm loads need no alignment.
    unsafe {
        for group in 0..groups {
            let (digits_hi, digits_lo) = (v128_load(hi.add(group)), v128_load(lo.add(group)));
            let w = w.add(PANEL * group);
            for lane in 0..PANEL {
                let s = v128_load32_splat(w.add(lane));
                sums_hi[lane] = i32x4_relaxed_dot_i8x16_i7x16_add(s, digits_hi, sums_hi[lane]);
                sums_lo[lane] = i32x4_relaxed_dot_i8x16_i7x16_add(s, digits_lo, sums_lo[lane]);
            }
        }
    }
    let token_scales = wasm_lanes::token_scales(token_scales);
    std::array::from_fn(|lane| {
        let exact = i32x4_add(
            i32x4_shl(
                i32x4_sub(sums_hi[lane], i32x4_splat(panel.high_offsets[lane])),
                7,
            ),
            sums_lo[lane],
        );
        wasm_lanes::scaled(exact, token_scales, panel.weight_scales[lane])
    })
}
