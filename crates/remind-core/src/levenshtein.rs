//! Edit distance between two strings, counted in Unicode scalar values.
//!
//! The paper's low-resource retriever compares masked questions by plain Levenshtein
//! distance; transliterated text (Hindi, Punjabi) makes embeddings unreliable there.
//! The algorithm itself is `strsim`'s; this module exists to pin down the unit the
//! retriever measures (characters, not bytes: one Devanagari letter is one edit, not
//! three) and the normalisation its thresholds are tuned against, in one place.

/// Levenshtein distance (insertions, deletions, substitutions all cost 1), counted
/// in `char`s: `strsim::levenshtein` walks `str::chars`, so non-ASCII text costs
/// one edit per character.
pub fn distance(a: &str, b: &str) -> usize {
    strsim::levenshtein(a, b)
}

/// Distance divided by the longer length: 0.0 for equal strings, 1.0 for disjoint ones.
///
/// Not `1.0 - strsim::normalized_levenshtein`: that goes through a similarity in
/// `f64`, whose rounding could move a pair across a tuned threshold; this ratio is
/// the one the thresholds were set with.
pub fn normalised(a: &str, b: &str) -> f32 {
    let longest = a.chars().count().max(b.chars().count());
    if longest == 0 {
        return 0.0;
    }
    distance(a, b) as f32 / longest as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_pairs_have_their_textbook_distances() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("abc", ""), 3);
        assert_eq!(distance("flaw", "lawn"), 2);
        assert_eq!(distance("same", "same"), 0);
    }

    #[test]
    fn like_and_unlike_are_two_edits_apart() {
        assert_eq!(distance("what is like <w> ?", "what is unlike <w> ?"), 2);
    }

    #[test]
    fn distance_counts_characters_not_bytes() {
        assert_eq!(distance("naïve", "naive"), 1);
        // न म स ् त े against न म स ् क ा र: two substitutions and one insertion,
        // where a byte count would see three bytes per letter.
        assert_eq!(distance("नमस्ते", "नमस्कार"), 3);
        assert!((normalised("नमस्ते", "नमस्कार") - 3.0 / 7.0).abs() < 1e-6);
    }

    #[test]
    fn normalised_distance_is_bounded_by_one() {
        assert_eq!(normalised("", ""), 0.0);
        assert_eq!(normalised("abc", "xyz"), 1.0);
        assert!((normalised("kitten", "sitting") - 3.0 / 7.0).abs() < 1e-6);
    }

    proptest::proptest! {
        #[test]
        fn distance_is_symmetric_and_obeys_the_triangle_inequality(
            a in "[a-c ]{0,8}", b in "[a-c ]{0,8}", c in "[a-c ]{0,8}"
        ) {
            proptest::prop_assert_eq!(distance(&a, &b), distance(&b, &a));
            proptest::prop_assert!(distance(&a, &c) <= distance(&a, &b) + distance(&b, &c));
        }

        /// Counted in characters, the distance lies between the length difference and
        /// the longer length, and is zero exactly for equal strings; a byte-based
        /// distance would break the upper bound on Devanagari.
        #[test]
        fn distance_is_bounded_by_the_lengths_in_characters(
            a in "[a-cनमस्तेकार ï]{0,10}", b in "[a-cनमस्तेकार ï]{0,10}"
        ) {
            let (la, lb) = (a.chars().count(), b.chars().count());
            let d = distance(&a, &b);
            proptest::prop_assert!(la.abs_diff(lb) <= d);
            proptest::prop_assert!(d <= la.max(lb));
            proptest::prop_assert_eq!(d == 0, a == b);
            let n = normalised(&a, &b);
            proptest::prop_assert!((0.0..=1.0).contains(&n));
        }
    }
}
