//! A tiny seeded random-number generator, so simulations replay identically everywhere.
//!
//! The simulated user and the vector-index tests need randomness that is the same on
//! every run and every target (native, wasm). SplitMix64 is a few lines, has no state
//! beyond one word, and passes BigCrush, which is plenty for coin flips and test data.

/// Sebastiano Vigna's SplitMix64.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`, from the top 53 bits so every value is an exact `f64`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p` (clamped to `[0, 1]`); `p = 1.0` is always true.
    pub fn chance(&mut self, p: f64) -> bool {
        self.next_f64() < p.clamp(0.0, 1.0)
    }

    /// Approximately standard normal (Box–Muller), for random directions in space.
    pub fn next_gaussian(&mut self) -> f64 {
        let u1 = 1.0 - self.next_f64(); // in (0, 1], so the logarithm is finite
        let u2 = self.next_f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// A direction drawn uniformly on the unit sphere of `dimensions` dimensions (a
    /// normalised Gaussian vector), as benchmarks and tests of vector search need.
    pub fn next_unit_vector(&mut self, dimensions: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dimensions)
            .map(|_| self.next_gaussian() as f32)
            .collect();
        let norm = v
            .iter()
            .map(|x| x * x)
            .sum::<f32>()
            .sqrt()
            .max(f32::MIN_POSITIVE);
        v.into_iter().map(|x| x / norm).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_sequence_for_seed_zero_is_reproduced() {
        // First outputs of the reference C implementation seeded with 0.
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn the_same_seed_gives_the_same_stream() {
        let a: Vec<u64> = {
            let mut r = SplitMix64::new(42);
            (0..5).map(|_| r.next_u64()).collect()
        };
        let mut r = SplitMix64::new(42);
        assert!(a.iter().all(|&x| x == r.next_u64()));
    }

    #[test]
    fn a_unit_vector_has_length_one_and_its_dimensions() {
        let v = SplitMix64::new(3).next_unit_vector(384);
        assert_eq!(v.len(), 384);
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{norm}");
    }

    #[test]
    fn chance_honours_its_extremes_and_is_roughly_fair_in_between() {
        let mut rng = SplitMix64::new(7);
        assert!((0..1000).all(|_| rng.chance(1.0)));
        assert!((0..1000).all(|_| !rng.chance(0.0)));
        let heads = (0..10_000).filter(|_| rng.chance(0.5)).count();
        assert!((4_800..5_200).contains(&heads), "{heads}");
    }
}
