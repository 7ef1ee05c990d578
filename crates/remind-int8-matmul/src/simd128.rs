//! The simd128 worker's kernel (engines without relaxed SIMD): the activations as i16
//! against the int8 weights widened to i16, eight products per `i32x4.dot_i16x8_s`, at
//! 45–50 GFLOP/s-equivalent in Chromium where tract's f32 kernel without a fused
//! multiply-add runs 15–20 (bench/int8-kernel-tiles).
//!
//! The values are the digit kernels' `q + 8192` in `0..=16383`, whole, so the panel's
//! `64 · Σw` offsets apply as they do there: `Σ w·(q + 8192) − (64 Σw) · 128`. Its sums
//! may wrap an i32 for the largest `k` (`16383 · 127 · 1536` is past 2³¹), but the result,
//! `Σ w·q`, fits (`K_MAX`), and wrapping sums are exact modulo 2³², so it comes out right.

use std::arch::wasm32::*;

use super::wasm_lanes;
use super::{GROUP, PANEL, PanelSums, TILE, TileProduct, tile_index, token_scale};

/// `tokens` rows as `q + 8192` in i16, packed in tiles of [`TILE`] tokens,
/// `[k / GROUP][TILE][GROUP]` values per tile: a group of a tile is two vectors, the
/// first two tokens' four values and the last two's.
pub(super) struct Activations {
    tiles: usize,
    tile_len: usize,
    values: Vec<i16>,
    /// One per token, padded to whole tiles.
    scales: Vec<f32>,
}

impl Activations {
    pub(super) fn tiles(&self) -> usize {
        self.tiles
    }
}

pub(super) fn encode(x: &[f32], tokens: usize, k: usize) -> Activations {
    let tiles = tokens.div_ceil(TILE);
    let tile_len = k * TILE;
    let mut values = vec![0i16; tiles * tile_len];
    let mut scales = vec![0f32; tiles * TILE];
    for (token, row) in x.chunks_exact(k).take(tokens).enumerate() {
        let scale = token_scale(row);
        scales[token] = scale;
        let inverse = f32x4_splat(1.0 / scale);
        let (tile, column) = (token / TILE, token % TILE);
        let tile_values = &mut values[tile * tile_len..][..tile_len];
        for (group, quad) in row.chunks_exact(GROUP).enumerate() {
            let shifted = wasm_lanes::offset_values(quad, inverse);
            let at = tile_index(group * GROUP, column);
            tile_values[at] = i32x4_extract_lane::<0>(shifted) as i16;
            tile_values[at + 1] = i32x4_extract_lane::<1>(shifted) as i16;
            tile_values[at + 2] = i32x4_extract_lane::<2>(shifted) as i16;
            tile_values[at + 3] = i32x4_extract_lane::<3>(shifted) as i16;
        }
    }
    Activations {
        tiles,
        tile_len,
        values,
        scales,
    }
}

pub(super) fn tile_product(
    weights: &[i8],
    activations: &Activations,
    tile: usize,
    panel: PanelSums,
) -> TileProduct {
    let values = &activations.values[tile * activations.tile_len..][..activations.tile_len];
    let token_scales: &[f32; TILE] = activations.scales[tile * TILE..][..TILE]
        .try_into()
        .expect("a tile's scales");
    let groups = values.len() / (TILE * GROUP);
    assert!(weights.len() >= groups * PANEL * GROUP);
    // Per output, the first two tokens' sums and the last two's, each lane half a
    // group's: 12 accumulators, as in the relaxed kernel.
    let mut sums_01 = [i32x4_splat(0); PANEL];
    let mut sums_23 = [i32x4_splat(0); PANEL];
    let w = weights.as_ptr() as *const u32;
    let x = values.as_ptr() as *const v128;
    // SAFETY: the assert and the tile's length bound every read; wasm loads need no
    // alignment.
    unsafe {
        for group in 0..groups {
            let (x01, x23) = (v128_load(x.add(2 * group)), v128_load(x.add(2 * group + 1)));
            let w = w.add(PANEL * group);
            for lane in 0..PANEL {
                let s = i16x8_extend_low_i8x16(v128_load32_splat(w.add(lane)));
                sums_01[lane] = i32x4_add(sums_01[lane], i32x4_dot_i16x8(s, x01));
                sums_23[lane] = i32x4_add(sums_23[lane], i32x4_dot_i16x8(s, x23));
            }
        }
    }
    let token_scales = wasm_lanes::token_scales(token_scales);
    std::array::from_fn(|lane| {
        let sums = i32x4_add(
            i32x4_shuffle::<0, 2, 4, 6>(sums_01[lane], sums_23[lane]),
            i32x4_shuffle::<1, 3, 5, 7>(sums_01[lane], sums_23[lane]),
        );
        let exact = i32x4_sub(sums, i32x4_splat(panel.high_offsets[lane] << 7));
        wasm_lanes::scaled(exact, token_scales, panel.weight_scales[lane])
    })
}
