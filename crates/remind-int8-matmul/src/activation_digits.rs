//! The activations as the digit kernels (relaxed SIMD, portable) read them: each value
//! offset into `0..=16383` and written as two 7-bit digits, packed in tiles of [`TILE`]
//! tokens, `[k / GROUP][TILE][GROUP]` bytes per tile for each digit.

use super::{TILE, token_scale};

pub(super) struct ActivationDigits {
    tiles: usize,
    tile_len: usize,
    hi: Vec<u8>,
    lo: Vec<u8>,
    /// One per token, padded to whole tiles.
    scales: Vec<f32>,
}

/// Where one token's digits go in its tile: `column` of every group's `[TILE][GROUP]`.
pub(super) struct Digits<'a> {
    pub hi: &'a mut [u8],
    pub lo: &'a mut [u8],
    pub column: usize,
}

/// One tile's digits and its tokens' scales.
pub(super) struct TileDigits<'a> {
    pub hi: &'a [u8],
    pub lo: &'a [u8],
    pub token_scales: &'a [f32; TILE],
}

impl ActivationDigits {
    /// `write_digits(row, inverse_scale, digits)` is the build's loop that writes a row.
    pub(super) fn new(
        x: &[f32],
        tokens: usize,
        k: usize,
        write_digits: impl Fn(&[f32], f32, Digits),
    ) -> Self {
        let tiles = tokens.div_ceil(TILE);
        let tile_len = k * TILE;
        let mut hi = vec![0u8; tiles * tile_len];
        let mut lo = vec![0u8; tiles * tile_len];
        let mut scales = vec![0f32; tiles * TILE];
        for (token, row) in x.chunks_exact(k).take(tokens).enumerate() {
            let scale = token_scale(row);
            scales[token] = scale;
            let (tile, column) = (token / TILE, token % TILE);
            let digits = Digits {
                hi: &mut hi[tile * tile_len..][..tile_len],
                lo: &mut lo[tile * tile_len..][..tile_len],
                column,
            };
            write_digits(row, 1.0 / scale, digits);
        }
        ActivationDigits {
            tiles,
            tile_len,
            hi,
            lo,
            scales,
        }
    }

    pub(super) fn tiles(&self) -> usize {
        self.tiles
    }

    pub(super) fn tile(&self, tile: usize) -> TileDigits<'_> {
        let range = tile * self.tile_len..(tile + 1) * self.tile_len;
        TileDigits {
            hi: &self.hi[range.clone()],
            lo: &self.lo[range],
            token_scales: self.scales[tile * TILE..][..TILE]
                .try_into()
                .expect("a tile's scales"),
        }
    }
}
