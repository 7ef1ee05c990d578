//! Edit distance between two strings, counted in Unicode scalar values.
//!
//! The paper's low-resource retriever compares masked questions by plain Levenshtein
//! distance; transliterated text (Hindi, Punjabi) makes embeddings unreliable there.

/// Levenshtein distance (insertions, deletions, substitutions all cost 1).
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.is_empty() {
        return b.len();
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// Distance divided by the longer length: 0.0 for equal strings, 1.0 for disjoint ones.
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
    }
}
