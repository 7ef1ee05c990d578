//! The hybrid retriever: semantic similarity, guarded by the masked key's polarity.
//!
//! Sentence embeddings place "what is like X" and "what is unlike X" close together,
//! and so does edit distance. The hybrid accepts an identical masked key outright,
//! otherwise requires cosine ≥ τ, and refuses any pair whose keys differ by a
//! negation (a word with a negating prefix, or a negating word present in one only).

use crate::record::MemoryRecord;
use crate::retrieval::semantic::SemanticRetriever;
use crate::retrieval::{Decision, Lookup, Query, Retriever, Score, Scored};

/// Words that turn a request into its opposite, in the languages of the task streams
/// (English, romanised Hindi and Punjabi).
const NEGATING_WORDS: &[&str] = &[
    "not",
    "no",
    "never",
    "opposite",
    "different",
    "unlike",
    "ulta",
    "vipreet",
    "vilom",
    "ult",
    "viprit",
    "ulat",
];
const NEGATING_PREFIXES: &[&str] = &["un", "dis", "non", "in", "im"];

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HybridRetriever {
    pub tau: f32,
}

impl Retriever for HybridRetriever {
    fn name(&self) -> &'static str {
        "hybrid"
    }

    fn lookup(&self, query: &Query<'_>, candidates: &[&MemoryRecord]) -> Lookup {
        if let Some(same) = candidates.iter().find(|r| r.key == query.key) {
            return Lookup {
                best: Some(Scored {
                    record: same.id.clone(),
                    score: Score::Cosine(1.0),
                }),
                decision: Decision::SameRequest,
            };
        }
        let mut lookup = SemanticRetriever { tau: self.tau }.lookup(query, candidates);
        if let Some(best) = &lookup.best
            && let Some(record) = candidates.iter().find(|r| r.id == best.record)
            && lookup.passed()
            && let Decision::Cosine { cosine, tau } = lookup.decision
            && polarity_differs(query.key.as_str(), record.key.as_str())
        {
            lookup.decision = Decision::Opposite { cosine, tau };
        }
        lookup
    }
}

/// Whether two keys differ by a negation: "like" vs "unlike", "same" vs "not same".
pub fn polarity_differs(a: &str, b: &str) -> bool {
    let words_a: Vec<&str> = a.split_whitespace().collect();
    let words_b: Vec<&str> = b.split_whitespace().collect();
    let only_a: Vec<&str> = words_a
        .iter()
        .filter(|w| !words_b.contains(w))
        .copied()
        .collect();
    let only_b: Vec<&str> = words_b
        .iter()
        .filter(|w| !words_a.contains(w))
        .copied()
        .collect();
    let negation_count =
        |words: &[&str]| words.iter().filter(|w| NEGATING_WORDS.contains(w)).count();
    if negation_count(&only_a) != negation_count(&only_b) {
        return true;
    }
    let prefixed = |x: &str, y: &str| {
        NEGATING_PREFIXES
            .iter()
            .any(|p| x.strip_prefix(p).is_some_and(|rest| rest == y))
    };
    only_a
        .iter()
        .any(|x| only_b.iter().any(|y| prefixed(x, y) || prefixed(y, x)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory_key::MemoryKey;
    use crate::record::StoredEmbedding;
    use crate::retrieval::test_records::records;

    fn with_embedding(mut record: MemoryRecord, v: &[f32]) -> MemoryRecord {
        record.embedding = Some(StoredEmbedding::new("test", v.to_vec()).unwrap());
        record
    }

    fn key(q: &str) -> String {
        MemoryKey::of_question(q).as_str().to_string()
    }

    #[test]
    fn like_and_unlike_differ_in_polarity() {
        assert!(polarity_differs(
            &key("What is like < a > ?"),
            &key("What is unlike < a > ?")
        ));
        assert!(polarity_differs(
            &key("What is similar to < a > ?"),
            &key("What is the opposite of < a > ?")
        ));
        assert!(polarity_differs(
            &key("< a > jaisa kya hai ?"),
            &key("< a > ka ulta kya hai ?")
        ));
    }

    #[test]
    fn paraphrases_keep_their_polarity() {
        assert!(!polarity_differs(
            &key("What is like < a > ?"),
            &key("What is similar to < a > ?")
        ));
        assert!(!polarity_differs(
            &key("What is unlike < a > ?"),
            &key("What is different than < a > ?")
        ));
    }

    #[test]
    fn a_similar_embedding_of_the_opposite_request_is_refused() {
        let stored = [with_embedding(
            records(&[("What is unlike < fast > ?", "I want an antonym")]).remove(0),
            &[1.0, 0.0],
        )];
        let candidates: Vec<_> = stored.iter().collect();
        let embedding = [0.99, 0.05];
        let lookup = HybridRetriever { tau: 0.8 }.lookup(
            &Query::new("What is like < slow > ?").with_embedding(&embedding),
            &candidates,
        );
        assert!(!lookup.passed());
        assert!(matches!(lookup.decision, Decision::Opposite { .. }));
    }

    #[test]
    fn the_same_request_is_applied_even_without_an_embedding() {
        let stored = records(&[("What is like < fast > ?", "I want a synonym")]);
        let candidates: Vec<_> = stored.iter().collect();
        let lookup = HybridRetriever { tau: 0.8 }
            .lookup(&Query::new("what is like < slow > ?"), &candidates);
        assert!(lookup.passed());
    }

    #[test]
    fn a_similar_paraphrase_is_applied() {
        let stored = [with_embedding(
            records(&[("What is like < fast > ?", "I want a synonym")]).remove(0),
            &[1.0, 0.0],
        )];
        let candidates: Vec<_> = stored.iter().collect();
        let embedding = [0.995, 0.1];
        let lookup = HybridRetriever { tau: 0.8 }.lookup(
            &Query::new("What is similar to < slow > ?").with_embedding(&embedding),
            &candidates,
        );
        assert!(lookup.passed());
    }
}
