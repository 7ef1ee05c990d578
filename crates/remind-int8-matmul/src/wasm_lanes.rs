//! What both wasm kernels (relaxed SIMD and simd128 alone) do four lanes at a time
//! besides their dot products: a row's largest magnitude, its values quantised, and a
//! tile's exact sums scaled back to f32. One copy, so both kernels quantise alike.

use std::arch::wasm32::*;

use super::{ACTIVATION_MAX, OFFSET, TILE};

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

/// Four values of a row (`quad`) as both kernels take them: `round(v · inverse)`, ties to
/// even, clamped to ±8191 and offset by 8192 into `0..=16383`, as i32 lanes.
pub(super) fn offset_values(quad: &[f32], inverse: v128) -> v128 {
    assert_eq!(quad.len(), 4, "four values");
    // SAFETY: four f32 are 16 readable bytes.
    let v = unsafe { v128_load(quad.as_ptr() as *const v128) };
    let (low, high) = (f32x4_splat(-ACTIVATION_MAX), f32x4_splat(ACTIVATION_MAX));
    let q = f32x4_min(f32x4_max(f32x4_nearest(f32x4_mul(v, inverse)), low), high);
    i32x4_add(i32x4_trunc_sat_f32x4(q), i32x4_splat(OFFSET))
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
