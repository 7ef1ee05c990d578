//! Rates of candidate matmul inner loops in a browser's wasm engine, on MiniLM's
//! 10.6 M weights against 16 tokens: the f32 8×8 tile tract runs, int8 weights converted
//! in the loop, and the two-digit relaxed dot product (remind-int8-matmul) in several
//! tile shapes. The shape with 12 accumulators (6 outputs × 4 tokens) runs twice as fast
//! as 3 × 8, whose 17 live vectors spill past the 16 registers V8 gives wasm on x64.
//! Built and run by `bench/int8-kernel-tiles/run.mjs`; the figures are in
//! docs/performance.md ("Ninth session").

use std::arch::wasm32::*;

#[cfg(target_feature = "relaxed-simd")]
macro_rules! madd {
    ($acc:expr, $a:expr, $b:expr) => {
        f32x4_relaxed_madd($a, $b, $acc)
    };
}
#[cfg(not(target_feature = "relaxed-simd"))]
macro_rules! madd {
    ($acc:expr, $a:expr, $b:expr) => {
        f32x4_add($acc, f32x4_mul($a, $b))
    };
}

// Weights: 42 MB of f32, or the same count as i8. B: activations [k][16] for 2 tiles.
const W: usize = 10_600_000;
static mut WF: Vec<f32> = Vec::new();
static mut WQ: Vec<i8> = Vec::new();
static mut B: [f32; 16 * 1536] = [0.0; 16 * 1536];
static mut OUT: [f32; 256] = [0.0; 256];

#[no_mangle]
pub unsafe extern "C" fn init(x: f32) {
    let wf = &mut *core::ptr::addr_of_mut!(WF);
    let wq = &mut *core::ptr::addr_of_mut!(WQ);
    *wf = (0..W).map(|i| x + (i % 97) as f32 * 1e-3).collect();
    *wq = (0..W).map(|i| ((i % 200) as i32 - 100) as i8).collect();
    let b = core::ptr::addr_of_mut!(B) as *mut f32;
    for i in 0..16 * 1536 {
        *b.add(i) = x - i as f32 * 1e-6;
    }
}

#[inline(always)]
unsafe fn store16(o: *mut v128, j: usize, v: [v128; 16]) {
    for (i, v) in v.into_iter().enumerate() {
        v128_store(
            o.add(16 * j + i),
            f32x4_add(v128_load(o.add(16 * j + i)), v),
        );
    }
}

// f32 8x8: A panel [k][8] f32 = 32 bytes per k. Two column tiles (n = 16) per panel.
#[no_mangle]
pub unsafe extern "C" fn f32_8x8(k: usize) {
    let wf = &*core::ptr::addr_of!(WF);
    let panels = W / (8 * k);
    let o = core::ptr::addr_of_mut!(OUT) as *mut v128;
    for p in 0..panels {
        let pa = wf.as_ptr().add(p * 8 * k) as *const v128;
        for t in 0..2 {
            let pb = (core::ptr::addr_of!(B) as *const v128).add(t * 2 * k);
            let z = f32x4_splat(0.0);
            let (mut a0lo, mut a0hi, mut a1lo, mut a1hi, mut a2lo, mut a2hi, mut a3lo, mut a3hi) =
                (z, z, z, z, z, z, z, z);
            let (mut a4lo, mut a4hi, mut a5lo, mut a5hi, mut a6lo, mut a6hi, mut a7lo, mut a7hi) =
                (z, z, z, z, z, z, z, z);
            for i in 0..k {
                let alo = v128_load(pa.add(2 * i));
                let ahi = v128_load(pa.add(2 * i + 1));
                let blo = v128_load(pb.add(2 * i));
                let bhi = v128_load(pb.add(2 * i + 1));
                let s0 = i32x4_shuffle::<0, 0, 0, 0>(alo, alo);
                let s1 = i32x4_shuffle::<1, 1, 1, 1>(alo, alo);
                let s2 = i32x4_shuffle::<2, 2, 2, 2>(alo, alo);
                let s3 = i32x4_shuffle::<3, 3, 3, 3>(alo, alo);
                let s4 = i32x4_shuffle::<0, 0, 0, 0>(ahi, ahi);
                let s5 = i32x4_shuffle::<1, 1, 1, 1>(ahi, ahi);
                let s6 = i32x4_shuffle::<2, 2, 2, 2>(ahi, ahi);
                let s7 = i32x4_shuffle::<3, 3, 3, 3>(ahi, ahi);
                a0lo = madd!(a0lo, s0, blo);
                a0hi = madd!(a0hi, s0, bhi);
                a1lo = madd!(a1lo, s1, blo);
                a1hi = madd!(a1hi, s1, bhi);
                a2lo = madd!(a2lo, s2, blo);
                a2hi = madd!(a2hi, s2, bhi);
                a3lo = madd!(a3lo, s3, blo);
                a3hi = madd!(a3hi, s3, bhi);
                a4lo = madd!(a4lo, s4, blo);
                a4hi = madd!(a4hi, s4, bhi);
                a5lo = madd!(a5lo, s5, blo);
                a5hi = madd!(a5hi, s5, bhi);
                a6lo = madd!(a6lo, s6, blo);
                a6hi = madd!(a6hi, s6, bhi);
                a7lo = madd!(a7lo, s7, blo);
                a7hi = madd!(a7hi, s7, bhi);
            }
            let c = [
                a0lo, a0hi, a1lo, a1hi, a2lo, a2hi, a3lo, a3hi, a4lo, a4hi, a5lo, a5hi, a6lo, a6hi,
                a7lo, a7hi,
            ];
            store16(o, t, c);
        }
    }
}

// i8 weights 8x8: A panel [k][8] i8 = 8 bytes per k, converted to f32 in the loop.
#[no_mangle]
pub unsafe extern "C" fn i8_8x8(k: usize) {
    let wq = &*core::ptr::addr_of!(WQ);
    let panels = W / (8 * k);
    let o = core::ptr::addr_of_mut!(OUT) as *mut v128;
    for p in 0..panels {
        let pa = wq.as_ptr().add(p * 8 * k);
        for t in 0..2 {
            let pb = (core::ptr::addr_of!(B) as *const v128).add(t * 2 * k);
            let z = f32x4_splat(0.0);
            let (mut a0lo, mut a0hi, mut a1lo, mut a1hi, mut a2lo, mut a2hi, mut a3lo, mut a3hi) =
                (z, z, z, z, z, z, z, z);
            let (mut a4lo, mut a4hi, mut a5lo, mut a5hi, mut a6lo, mut a6hi, mut a7lo, mut a7hi) =
                (z, z, z, z, z, z, z, z);
            for i in 0..k {
                let q = v128_load64_zero(pa.add(8 * i) as *const u64);
                let q16 = i16x8_extend_low_i8x16(q);
                let alo = f32x4_convert_i32x4(i32x4_extend_low_i16x8(q16));
                let ahi = f32x4_convert_i32x4(i32x4_extend_high_i16x8(q16));
                let blo = v128_load(pb.add(2 * i));
                let bhi = v128_load(pb.add(2 * i + 1));
                let s0 = i32x4_shuffle::<0, 0, 0, 0>(alo, alo);
                let s1 = i32x4_shuffle::<1, 1, 1, 1>(alo, alo);
                let s2 = i32x4_shuffle::<2, 2, 2, 2>(alo, alo);
                let s3 = i32x4_shuffle::<3, 3, 3, 3>(alo, alo);
                let s4 = i32x4_shuffle::<0, 0, 0, 0>(ahi, ahi);
                let s5 = i32x4_shuffle::<1, 1, 1, 1>(ahi, ahi);
                let s6 = i32x4_shuffle::<2, 2, 2, 2>(ahi, ahi);
                let s7 = i32x4_shuffle::<3, 3, 3, 3>(ahi, ahi);
                a0lo = madd!(a0lo, s0, blo);
                a0hi = madd!(a0hi, s0, bhi);
                a1lo = madd!(a1lo, s1, blo);
                a1hi = madd!(a1hi, s1, bhi);
                a2lo = madd!(a2lo, s2, blo);
                a2hi = madd!(a2hi, s2, bhi);
                a3lo = madd!(a3lo, s3, blo);
                a3hi = madd!(a3hi, s3, bhi);
                a4lo = madd!(a4lo, s4, blo);
                a4hi = madd!(a4hi, s4, bhi);
                a5lo = madd!(a5lo, s5, blo);
                a5hi = madd!(a5hi, s5, bhi);
                a6lo = madd!(a6lo, s6, blo);
                a6hi = madd!(a6hi, s6, bhi);
                a7lo = madd!(a7lo, s7, blo);
                a7hi = madd!(a7hi, s7, bhi);
            }
            store16(
                o,
                t,
                [
                    a0lo, a0hi, a1lo, a1hi, a2lo, a2hi, a3lo, a3hi, a4lo, a4hi, a5lo, a5hi, a6lo,
                    a6hi, a7lo, a7hi,
                ],
            );
        }
    }
}

// i8 weights x two 7-bit activation digits, relaxed dot: A panel [k/4][3 rows][4] i8, B [k/4][8 cols][4] u7 for hi and lo.
static mut BH: [u8; 16 * 1536] = [0; 16 * 1536];
static mut BL: [u8; 16 * 1536] = [0; 16 * 1536];
static mut OUTI: [i32; 512] = [0; 512];

#[no_mangle]
pub unsafe extern "C" fn init7() {
    let bh = core::ptr::addr_of_mut!(BH) as *mut u8;
    let bl = core::ptr::addr_of_mut!(BL) as *mut u8;
    for i in 0..16 * 1536 {
        *bh.add(i) = (i % 128) as u8;
        *bl.add(i) = ((i * 7) % 128) as u8;
    }
}

#[no_mangle]
pub unsafe extern "C" fn i7_3x8(k: usize) {
    let wq = &*core::ptr::addr_of!(WQ);
    let panels = W / (3 * k);
    let o = core::ptr::addr_of_mut!(OUTI) as *mut v128;
    for p in 0..panels {
        let pa = wq.as_ptr().add(p * 3 * k) as *const u32;
        for t in 0..2 {
            let bh = (core::ptr::addr_of!(BH) as *const v128).add(t * 2 * (k / 4));
            let bl = (core::ptr::addr_of!(BL) as *const v128).add(t * 2 * (k / 4));
            let z = i32x4_splat(0);
            let (mut h0l, mut h0h, mut h1l, mut h1h, mut h2l, mut h2h) = (z, z, z, z, z, z);
            let (mut l0l, mut l0h, mut l1l, mut l1h, mut l2l, mut l2h) = (z, z, z, z, z, z);
            for i in 0..k / 4 {
                let hl = v128_load(bh.add(2 * i));
                let hh = v128_load(bh.add(2 * i + 1));
                let ll = v128_load(bl.add(2 * i));
                let lh = v128_load(bl.add(2 * i + 1));
                let a = pa.add(3 * i);
                let s = v128_load32_splat(a);
                h0l = i32x4_relaxed_dot_i8x16_i7x16_add(s, hl, h0l);
                h0h = i32x4_relaxed_dot_i8x16_i7x16_add(s, hh, h0h);
                l0l = i32x4_relaxed_dot_i8x16_i7x16_add(s, ll, l0l);
                l0h = i32x4_relaxed_dot_i8x16_i7x16_add(s, lh, l0h);
                let s = v128_load32_splat(a.add(1));
                h1l = i32x4_relaxed_dot_i8x16_i7x16_add(s, hl, h1l);
                h1h = i32x4_relaxed_dot_i8x16_i7x16_add(s, hh, h1h);
                l1l = i32x4_relaxed_dot_i8x16_i7x16_add(s, ll, l1l);
                l1h = i32x4_relaxed_dot_i8x16_i7x16_add(s, lh, l1h);
                let s = v128_load32_splat(a.add(2));
                h2l = i32x4_relaxed_dot_i8x16_i7x16_add(s, hl, h2l);
                h2h = i32x4_relaxed_dot_i8x16_i7x16_add(s, hh, h2h);
                l2l = i32x4_relaxed_dot_i8x16_i7x16_add(s, ll, l2l);
                l2h = i32x4_relaxed_dot_i8x16_i7x16_add(s, lh, l2h);
            }
            for (j, v) in [h0l, h0h, h1l, h1h, h2l, h2h, l0l, l0h, l1l, l1h, l2l, l2h]
                .into_iter()
                .enumerate()
            {
                v128_store(
                    o.add(16 * t + j),
                    i32x4_add(v128_load(o.add(16 * t + j)), v),
                );
            }
        }
    }
}

// Variants: outputs per tile (splatted weights) x token vectors of 4 (1 or 2), two digits.
macro_rules! i7_variant {
    ($name:ident, $outs:expr, $tv:expr, $reload:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(k: usize) {
            let wq = &*core::ptr::addr_of!(WQ);
            let panels = W / ($outs * k);
            let tiles = 16 / (4 * $tv);
            let o = core::ptr::addr_of_mut!(OUTI) as *mut v128;
            for p in 0..panels {
                let pa = wq.as_ptr().add(p * $outs * k) as *const u32;
                for t in 0..tiles {
                    let bh = (core::ptr::addr_of!(BH) as *const v128).add(t * $tv * (k / 4));
                    let bl = (core::ptr::addr_of!(BL) as *const v128).add(t * $tv * (k / 4));
                    let mut h = [[i32x4_splat(0); $tv]; $outs];
                    let mut l = [[i32x4_splat(0); $tv]; $outs];
                    for i in 0..k / 4 {
                        let a = pa.add($outs * i);
                        if $reload {
                            for r in 0..$outs {
                                let s = v128_load32_splat(a.add(r));
                                for v in 0..$tv {
                                    h[r][v] = i32x4_relaxed_dot_i8x16_i7x16_add(
                                        s,
                                        v128_load(bh.add($tv * i + v)),
                                        h[r][v],
                                    );
                                    l[r][v] = i32x4_relaxed_dot_i8x16_i7x16_add(
                                        s,
                                        v128_load(bl.add($tv * i + v)),
                                        l[r][v],
                                    );
                                }
                            }
                        } else {
                            let mut hv = [i32x4_splat(0); $tv];
                            let mut lv = [i32x4_splat(0); $tv];
                            for v in 0..$tv {
                                hv[v] = v128_load(bh.add($tv * i + v));
                                lv[v] = v128_load(bl.add($tv * i + v));
                            }
                            for r in 0..$outs {
                                let s = v128_load32_splat(a.add(r));
                                for v in 0..$tv {
                                    h[r][v] = i32x4_relaxed_dot_i8x16_i7x16_add(s, hv[v], h[r][v]);
                                    l[r][v] = i32x4_relaxed_dot_i8x16_i7x16_add(s, lv[v], l[r][v]);
                                }
                            }
                        }
                    }
                    for r in 0..$outs {
                        for v in 0..$tv {
                            let j = (t * 64 + r * 8 + v * 2) % 128;
                            v128_store(o.add(j), i32x4_add(v128_load(o.add(j)), h[r][v]));
                            v128_store(o.add(j + 1), i32x4_add(v128_load(o.add(j + 1)), l[r][v]));
                        }
                    }
                }
            }
        }
    };
}
i7_variant!(v3x8, 3, 2, false);
i7_variant!(v3x8r, 3, 2, true);
i7_variant!(v2x8, 2, 2, false);
i7_variant!(v3x4, 3, 1, false);
i7_variant!(v4x4, 4, 1, false);
i7_variant!(v5x4, 5, 1, false);
i7_variant!(v6x4, 6, 1, false);
i7_variant!(v6x4r, 6, 1, true);
i7_variant!(v4x8r, 4, 2, true);

// simd128 only (no relaxed SIMD): int8 weights widened to i16 in the loop against 14-bit
// activations as i16, `i32x4.dot_i16x8_s`. Activations [k/4][4 tokens][4] i16: two
// vectors per group, tokens 0-1 and 2-3, so each i32 lane holds half a group's sum.
static mut BS: [i16; 16 * 1536] = [0; 16 * 1536];

#[no_mangle]
pub unsafe extern "C" fn init16() {
    let bs = core::ptr::addr_of_mut!(BS) as *mut i16;
    for i in 0..16 * 1536 {
        *bs.add(i) = ((i * 7919) % 16383) as i16 - 8191;
    }
}

macro_rules! i16_variant {
    ($name:ident, $outs:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(k: usize) {
            let wq = &*core::ptr::addr_of!(WQ);
            let panels = W / ($outs * k);
            let o = core::ptr::addr_of_mut!(OUTI) as *mut v128;
            for p in 0..panels {
                let pa = wq.as_ptr().add(p * $outs * k) as *const u32;
                for t in 0..4 {
                    let b = (core::ptr::addr_of!(BS) as *const v128).add(t * 2 * (k / 4));
                    let mut a = [[i32x4_splat(0); 2]; $outs];
                    for i in 0..k / 4 {
                        let (x01, x23) = (v128_load(b.add(2 * i)), v128_load(b.add(2 * i + 1)));
                        let w = pa.add($outs * i);
                        for r in 0..$outs {
                            let s = i16x8_extend_low_i8x16(v128_load32_splat(w.add(r)));
                            a[r][0] = i32x4_add(a[r][0], i32x4_dot_i16x8(s, x01));
                            a[r][1] = i32x4_add(a[r][1], i32x4_dot_i16x8(s, x23));
                        }
                    }
                    for r in 0..$outs {
                        let sum = i32x4_add(
                            i32x4_shuffle::<0, 2, 4, 6>(a[r][0], a[r][1]),
                            i32x4_shuffle::<1, 3, 5, 7>(a[r][0], a[r][1]),
                        );
                        let j = (t * 32 + r) % 128;
                        v128_store(o.add(j), i32x4_add(v128_load(o.add(j)), sum));
                    }
                }
            }
        }
    };
}
i16_variant!(s4x4, 4);
i16_variant!(s6x4, 6);
i16_variant!(s3x4, 3);
