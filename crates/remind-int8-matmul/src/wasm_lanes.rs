//! What both wasm kernels (relaxed SIMD and simd128 alone) do four lanes at a time
//! besides their dot products: a row's largest magnitude, and a tile's exact sums scaled
//! back to f32.

use std::arch::wasm32::*;

use super::TILE;

pub(super) fn largest_magnitude(row: &[f32]) -> f32 {
    let mut largest = f32x4_splat(0.0);
    let mut quads = row.chunks_exact(4);
    for quad in &mut quads {
        // SAFETY: a chunk of four f32 is 16 readable bytes.
        let v = unsafe { v128_load(quad.as_ptr() as *const v128) };
        largest = f32x4_max(largest, f32x4_abs(v));
    }
    quads
        .remainder()
        .iter()
        .fold(lanes(largest).into_iter().fold(0f32, f32::max), |m, v| {
            m.max(v.abs())
        })
}

/// A tile's four token scales as one vector.
pub(super) fn token_scales(scales: &[f32; TILE]) -> v128 {
    // SAFETY: a tile's four token scales are 16 readable bytes.
    unsafe { v128_load(scales.as_ptr() as *const v128) }
}

/// One output's exact sums for a tile's four tokens, in f32: times each token's scale
/// and the output's weight scale.
pub(super) fn scaled(exact: v128, token_scales: v128, weight_scale: f32) -> [f32; TILE] {
    lanes(f32x4_mul(
        f32x4_mul(f32x4_convert_i32x4(exact), token_scales),
        f32x4_splat(weight_scale),
    ))
}

fn lanes(v: v128) -> [f32; 4] {
    [
        f32x4_extract_lane::<0>(v),
        f32x4_extract_lane::<1>(v),
        f32x4_extract_lane::<2>(v),
        f32x4_extract_lane::<3>(v),
    ]
}
