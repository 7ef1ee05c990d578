//! Semantic retrieval: cosine similarity of sentence embeddings against a threshold τ.
//!
//! The embeddings come from the `Embedder` port outside the domain (MiniLM through tract
//! in the page); this module only compares vectors, so it is exact and testable natively.

use crate::record::MemoryRecord;
use crate::retrieval::{Decision, Lookup, Query, Retriever, Score, Scored, nearest};

/// Cosine similarity; 0.0 when either vector is zero or their lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    dot / (na.sqrt() * nb.sqrt())
}

/// Accepts the most similar stored question when its cosine is at least `tau`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SemanticRetriever {
    pub tau: f32,
}

impl SemanticRetriever {
    /// The nearest candidate by cosine, skipping records without an embedding.
    pub(crate) fn most_similar<'r>(
        query: &[f32],
        candidates: &[&'r MemoryRecord],
    ) -> Option<(&'r MemoryRecord, f32)> {
        // `nearest` minimises, so minimise the negated similarity.
        nearest(candidates, |r| {
            r.embedding.as_ref().map(|e| -cosine(query, &e.vector))
        })
        .map(|(r, negated)| (r, -negated))
    }
}

impl Retriever for SemanticRetriever {
    fn name(&self) -> &'static str {
        "semantic"
    }

    fn lookup(&self, query: &Query<'_>, candidates: &[&MemoryRecord]) -> Lookup {
        let Some(embedding) = query.embedding else {
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
    use crate::record::StoredEmbedding;
    use crate::retrieval::test_records::records;

    fn embedded(pairs: &[(&str, &str)], vectors: &[[f32; 2]]) -> Vec<MemoryRecord> {
        records(pairs)
            .into_iter()
            .zip(vectors)
            .map(|(mut r, v)| {
                r.embedding = Some(StoredEmbedding {
                    model: "test".into(),
                    vector: v.to_vec(),
                });
                r
            })
            .collect()
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

    #[test]
    fn without_a_query_embedding_nothing_is_applied_and_the_reason_says_why() {
        let stored = embedded(&[("a", "fa")], &[[1.0, 0.0]]);
        let candidates: Vec<_> = stored.iter().collect();
        let lookup = SemanticRetriever { tau: 0.5 }.lookup(&Query::new("a"), &candidates);
        assert!(lookup.applied().is_none());
        assert_eq!(lookup.decision, Decision::NoQuestionEmbedding);
    }
}
