//! The one way Remind sums the products of two vectors, so that a length worked out
//! once, when an embedding is stored, agrees to the bit with one worked out afresh.

/// The sum of `a[i] * b[i]` over the shorter of the two.
///
/// Eight running sums, one per lane, instead of one: they do not wait on each other,
/// so the compiler keeps them in vector registers (the browser build has simd128). A
/// question is compared with every stored lesson: at 100 000 the single sums were most
/// of a question's own time. The lanes are added up in order, then what is left past
/// the last whole group of eight, so the same two slices always give the same bits.
pub fn dot_product(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 8;
    let mut lanes = [0.0f32; LANES];
    let (a_lanes, b_lanes) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (a_rest, b_rest) = (a_lanes.remainder(), b_lanes.remainder());
    for (x, y) in a_lanes.zip(b_lanes) {
        for lane in 0..LANES {
            lanes[lane] += x[lane] * y[lane];
        }
    }
    let mut sum: f32 = lanes.iter().sum();
    for (x, y) in a_rest.iter().zip(b_rest) {
        sum += x * y;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_counts_every_value_past_the_last_group_of_eight() {
        let a: Vec<f32> = (1..=19).map(|i| i as f32).collect();
        let expected: f32 = (1..=19).map(|i| (i * i) as f32).sum();
        assert_eq!(dot_product(&a, &a), expected);
        assert_eq!(dot_product(&a, &[0.0; 19]), 0.0);
    }

    #[test]
    fn the_same_two_vectors_give_the_same_bits_whichever_is_first() {
        let a: Vec<f32> = (0..384)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 97.0)
            .collect();
        let b: Vec<f32> = (0..384)
            .map(|i| ((i * 53 % 89) as f32 - 44.0) / 83.0)
            .collect();
        assert_eq!(dot_product(&a, &b).to_bits(), dot_product(&b, &a).to_bits());
    }
}
