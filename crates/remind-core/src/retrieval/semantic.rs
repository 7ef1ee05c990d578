//! Semantic retrieval: cosine similarity of sentence embeddings against a threshold τ.
//!
//! The embeddings come from the `Embedder` port outside the domain (MiniLM through tract
//! in the page); this module only compares vectors, so it is exact and testable natively.

use crate::dot_product::dot_product;
use crate::record::{MemoryRecord, StoredEmbedding};
use crate::retrieval::{Decision, Lookup, Query, Retriever, Score, Scored, nearest};

/// Cosine similarity; 0.0 when either vector is zero or their lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    cosine_of(dot_product(a, b), dot_product(a, a), dot_product(b, b))
}

/// The cosine of two vectors from their dot product and the squares of their lengths,
/// each summed by [`dot_product`]: what [`cosine`] returns, to the bit, when the
/// squares were summed beforehand (a stored embedding keeps its own).
fn cosine_of(dot: f32, squares_a: f32, squares_b: f32) -> f32 {
    if squares_a == 0.0 || squares_b == 0.0 {
        return 0.0;
    }
    dot / (squares_a.sqrt() * squares_b.sqrt())
}

/// Accepts the most similar stored question when its cosine is at least `tau`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SemanticRetriever {
    pub tau: f32,
}

impl SemanticRetriever {
    /// The nearest candidate by cosine, skipping records without an embedding and
    /// those whose embedding has another length than the query's (another model's,
    /// whose cosine of 0 would otherwise outrank every real but negative one).
    pub(crate) fn most_similar<'r>(
        query: &[f32],
        candidates: &[&'r MemoryRecord],
    ) -> Option<(&'r MemoryRecord, f32)> {
        // Only the dot product is summed per lesson: the question's length is summed
        // once here, and each stored embedding summed its own when it was made.
        let query_squares = dot_product(query, query);
        // `nearest` minimises, so minimise the negated similarity.
        nearest(candidates, |r| {
            r.embedding
                .as_ref()
                .filter(|e| e.vector().len() == query.len())
                .map(|e| {
                    -cosine_of(
                        dot_product(query, e.vector()),
                        query_squares,
                        e.squared_length(),
                    )
                })
        })
        .map(|(r, negated)| (r, -negated))
    }
}

impl Retriever for SemanticRetriever {
    fn name(&self) -> &'static str {
        "semantic"
    }

    fn lookup(&self, query: &Query<'_>, candidates: &[&MemoryRecord]) -> Lookup {
        // A question vector that is not finite or not of unit length would make every
        // cosine meaningless (or NaN): it is no embedding at all.
        let Some(embedding) = query
            .embedding
            .filter(|vector| StoredEmbedding::check(vector).is_ok())
        else {
            return Lookup {
                best: None,
                decision: Decision::NoQuestionEmbedding,
            };
        };
        let Some((record, similarity)) = Self::most_similar(embedding, candidates) else {
            return Lookup::empty();
        };
        Lookup {
            best: Some(Scored {
                record: record.id.clone(),
                score: Score::Cosine(similarity),
            }),
            decision: Decision::Cosine {
                cosine: similarity,
                tau: self.tau,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::test_records::records;
    use crate::stored_record::{StoredRecord, StoredVector};
    use proptest::prelude::*;

    fn embedded(pairs: &[(&str, &str)], vectors: &[[f32; 2]]) -> Vec<MemoryRecord> {
        records(pairs)
            .into_iter()
            .zip(vectors)
            .map(|(mut r, v)| {
                r.embedding = Some(StoredEmbedding::new("test", v.to_vec()).unwrap());
                r
            })
            .collect()
    }

    #[test]
    fn cosine_of_long_vectors_counts_every_value_past_the_lanes() {
        // 19 values: two rounds of eight lanes and three left over.
        let a: Vec<f32> = (0..19).map(|i| if i == 18 { 1.0 } else { 0.0 }).collect();
        let mut b = vec![0.0; 19];
        b[18] = 3.0;
        assert!((cosine(&a, &b) - 1.0).abs() < 1e-6);
        b[0] = 3.0;
        assert!((cosine(&a, &b) - 0.5f32.sqrt()).abs() < 1e-6);
    }

    #[test]
    fn cosine_of_parallel_orthogonal_and_opposite_vectors() {
        assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-6);
        assert!(cosine(&[1.0, 0.0], &[0.0, 1.0]).abs() < 1e-6);
        assert!((cosine(&[1.0, 0.0], &[-1.0, 0.0]) + 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), 0.0);
    }

    #[test]
    fn the_most_similar_record_is_applied_at_or_above_tau() {
        let stored = embedded(&[("a", "fa"), ("b", "fb")], &[[1.0, 0.0], [0.6, 0.8]]);
        let candidates: Vec<_> = stored.iter().collect();
        let retriever = SemanticRetriever { tau: 0.9 };
        let lookup = retriever.lookup(&Query::new("q").with_embedding(&[0.5, 0.86]), &candidates);
        assert!(lookup.passed());
        assert_eq!(lookup.best.unwrap().record, stored[1].id);
        let lookup = retriever.lookup(&Query::new("q").with_embedding(&[-1.0, 0.1]), &candidates);
        assert!(!lookup.passed());
    }

    /// A record as the store would hand it over when its row holds `vector` (or no
    /// embedding): through the stored form, the one way in for a vector from outside.
    fn read_back(record: &MemoryRecord, vector: Option<Vec<f32>>) -> MemoryRecord {
        let mut stored = StoredRecord::from(record);
        stored.embedding = vector.map(|vector| StoredVector {
            model: "m".into(),
            vector,
        });
        MemoryRecord::from(stored)
    }

    #[test]
    fn a_hostile_stored_embedding_beside_a_good_lesson_does_not_hide_it() {
        let lessons = records(&[
            ("What is like < fast > ?", "I want a rhyme"),
            ("What is similar to < slow > ?", "I want a synonym"),
        ]);
        // Right length, right model, every value finite: and every cosine with it NaN.
        let hostile = read_back(&lessons[0], Some(vec![3e38; 2]));
        let good = read_back(&lessons[1], Some(vec![0.6, 0.8]));
        assert_eq!(hostile.embedding, None, "a vector of 3e38s is no embedding");
        let candidates = [&hostile, &good];
        let lookup = SemanticRetriever { tau: 0.9 }
            .lookup(&Query::new("q").with_embedding(&[0.64, 0.77]), &candidates);
        assert!(lookup.passed(), "{lookup:?}");
        assert_eq!(lookup.best.map(|b| b.record), Some(good.id.clone()));
    }

    #[test]
    fn a_question_vector_that_is_not_finite_or_not_of_unit_length_is_no_embedding() {
        let stored = embedded(&[("a", "fa")], &[[1.0, 0.0]]);
        let candidates: Vec<_> = stored.iter().collect();
        for question in [[f32::NAN, 0.0], [3e38, 3e38], [0.0, 0.0], [2.0, 0.0]] {
            let lookup = SemanticRetriever { tau: 0.5 }
                .lookup(&Query::new("a").with_embedding(&question), &candidates);
            assert_eq!(
                lookup.decision,
                Decision::NoQuestionEmbedding,
                "{question:?}"
            );
            assert!(lookup.applied().is_none());
        }
    }

    /// A stored vector of any kind the store or a file could hand over: a unit vector
    /// of the query's length, or one with NaN, an infinity, 3e38s, zeros, or another
    /// length; or none at all.
    fn any_stored_vector() -> impl Strategy<Value = Option<Vec<f32>>> {
        let unit = |n: usize| {
            prop::collection::vec(-1.0f32..1.0, n)
                .prop_filter("not all zero", |v| v.iter().any(|x| x.abs() > 1e-3))
                .prop_map(|v| {
                    let length = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                    v.iter().map(|x| x / length).collect::<Vec<f32>>()
                })
        };
        let spoiled = |bad: f32| {
            (unit(DIMENSIONS), 0..DIMENSIONS).prop_map(move |(mut v, at)| {
                v[at] = bad;
                v
            })
        };
        prop_oneof![
            4 => unit(DIMENSIONS).prop_map(Some),
            1 => spoiled(f32::NAN).prop_map(Some),
            1 => spoiled(f32::INFINITY).prop_map(Some),
            1 => spoiled(f32::NEG_INFINITY).prop_map(Some),
            1 => Just(Some(vec![3e38; DIMENSIONS])),
            1 => Just(Some(vec![-3e38; DIMENSIONS])),
            1 => Just(Some(vec![0.0; DIMENSIONS])),
            1 => Just(Some(Vec::new())),
            1 => unit(DIMENSIONS - 1).prop_map(Some),
            1 => unit(DIMENSIONS + 1).prop_map(Some),
            1 => Just(None),
        ]
    }

    const DIMENSIONS: usize = 4;
    const QUESTIONS: [&str; 8] = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
    ];

    proptest! {
        #[test]
        fn a_nan_similarity_never_hides_the_true_nearest_lesson(
            vectors in prop::collection::vec(any_stored_vector(), 1..=QUESTIONS.len()),
            query in prop::collection::vec(-1.0f32..1.0, DIMENSIONS)
                .prop_filter("not all zero", |v| v.iter().any(|x| x.abs() > 1e-3)),
        ) {
            let length = query.iter().map(|x| x * x).sum::<f32>().sqrt();
            let query: Vec<f32> = query.iter().map(|x| x / length).collect();
            let pairs: Vec<(&str, &str)> =
                QUESTIONS[..vectors.len()].iter().map(|q| (*q, "f")).collect();
            let stored: Vec<MemoryRecord> = records(&pairs)
                .iter()
                .zip(&vectors)
                .map(|(record, vector)| read_back(record, vector.clone()))
                .collect();
            // The true nearest: the most similar of the valid unit vectors of the
            // query's length, the earliest of equals.
            let valid = |v: &Vec<f32>| {
                v.len() == DIMENSIONS
                    && v.iter().all(|x| x.is_finite())
                    && (v.iter().map(|x| x * x).sum::<f32>().sqrt() - 1.0).abs() < 1e-3
            };
            let expected = vectors
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.as_ref().filter(|v| valid(v)).map(|v| (i, cosine(&query, v))))
                .fold(None, |best: Option<(usize, f32)>, (i, c)| match best {
                    Some((_, b)) if b >= c => best,
                    _ => Some((i, c)),
                })
                .map(|(i, c)| Scored { record: stored[i].id.clone(), score: Score::Cosine(c) });
            let candidates: Vec<&MemoryRecord> = stored.iter().collect();
            let lookup = SemanticRetriever { tau: 0.5 }
                .lookup(&Query::new("q").with_embedding(&query), &candidates);
            prop_assert_eq!(lookup.best, expected);
        }
    }

    #[test]
    fn without_a_query_embedding_nothing_is_applied_and_the_reason_says_why() {
        let stored = embedded(&[("a", "fa")], &[[1.0, 0.0]]);
        let candidates: Vec<_> = stored.iter().collect();
        let lookup = SemanticRetriever { tau: 0.5 }.lookup(&Query::new("a"), &candidates);
        assert!(lookup.applied().is_none());
        assert_eq!(lookup.decision, Decision::NoQuestionEmbedding);
    }
}
