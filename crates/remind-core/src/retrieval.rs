//! Finding the stored lesson that fits a new question, and deciding whether it fits
//! well enough to be attached.
//!
//! Every retriever answers the same way: the best candidate with its score, whether it
//! passed the gate, and why. The page shows the reason; the harness counts it.

pub mod embedding_refresh;
pub mod hybrid;
pub mod levenshtein_retriever;
pub mod semantic;

use crate::memory_key::MemoryKey;
use crate::record::{MemoryRecord, RecordId};

pub use hybrid::HybridRetriever;
pub use levenshtein_retriever::LevenshteinRetriever;
pub use semantic::{SemanticRetriever, cosine};

/// A new question as retrieval sees it.
#[derive(Clone, Debug)]
pub struct Query<'a> {
    pub question: &'a str,
    pub key: MemoryKey,
    /// The question's embedding, when an embedder is available.
    pub embedding: Option<&'a [f32]>,
}

impl<'a> Query<'a> {
    pub fn new(question: &'a str) -> Self {
        Query {
            question,
            key: MemoryKey::of_question(question),
            embedding: None,
        }
    }

    pub fn with_embedding(mut self, embedding: &'a [f32]) -> Self {
        self.embedding = Some(embedding);
        self
    }
}

/// How close a candidate is, in the retriever's own measure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Score {
    /// Edit distance between masked keys (smaller is closer).
    Distance(usize),
    /// Cosine similarity of embeddings (larger is closer).
    Cosine(f32),
    /// A distance in a measure the core does not define, named by the retriever that
    /// uses it (smaller is closer). Experiments try measures of their own without
    /// the core, or the page, having to know each one.
    Measured {
        measure: &'static str,
        distance: f32,
    },
}

impl Score {
    /// The bare number, for machine-readable output (the page's `data-score`).
    pub fn value(&self) -> f32 {
        match *self {
            Score::Distance(d) => d as f32,
            Score::Cosine(d) | Score::Measured { distance: d, .. } => d,
        }
    }
}

impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Score::Distance(d) => write!(f, "edit distance {d}"),
            Score::Cosine(c) => write!(f, "cosine {c:.3}"),
            Score::Measured { measure, distance } => write!(f, "{measure} {distance:.2}"),
        }
    }
}

/// The nearest candidate and its score.
#[derive(Clone, Debug, PartialEq)]
pub struct Scored {
    pub record: RecordId,
    pub score: Score,
}

/// Why a lookup attached its best candidate or did not. A value, so the page and the
/// harness word it each their own way and tests compare it exactly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// No lesson to compare with.
    NothingStored,
    /// The turn was configured not to consult memory.
    NotConsulted,
    /// A semantic retriever without the question's embedding (model not ready).
    NoQuestionEmbedding,
    /// Edit distance of the nearest masked key, against the exclusive limit.
    EditDistance { distance: usize, limit: usize },
    /// Cosine of the most similar question, against τ.
    Cosine { cosine: f32, tau: f32 },
    /// A distance in a measure the core does not define (see `Score::Measured`),
    /// against the inclusive limit.
    Measured {
        measure: &'static str,
        distance: f32,
        limit: f32,
    },
    /// A stored question is the same request about another word (same masked key).
    SameRequest,
    /// Similar enough by cosine, but one question negates the other.
    Opposite { cosine: f32, tau: f32 },
}

impl Decision {
    /// Whether the best candidate is attached.
    pub fn attaches(self) -> bool {
        match self {
            Decision::EditDistance { distance, limit } => distance < limit,
            Decision::Cosine { cosine, tau } => cosine >= tau,
            Decision::Measured {
                distance, limit, ..
            } => distance <= limit,
            Decision::SameRequest => true,
            Decision::NothingStored
            | Decision::NotConsulted
            | Decision::NoQuestionEmbedding
            | Decision::Opposite { .. } => false,
        }
    }
}

/// The outcome of one lookup.
#[derive(Clone, Debug, PartialEq)]
pub struct Lookup {
    pub best: Option<Scored>,
    pub decision: Decision,
}

impl Lookup {
    pub fn empty() -> Self {
        Lookup {
            best: None,
            decision: Decision::NothingStored,
        }
    }

    /// Whether the best candidate passed the gate.
    pub fn passed(&self) -> bool {
        self.best.is_some() && self.decision.attaches()
    }

    /// The record to attach, if the best candidate passed the gate.
    pub fn applied(&self) -> Option<&Scored> {
        self.best.as_ref().filter(|_| self.passed())
    }
}

/// A way to find the lesson for a question among current records.
pub trait Retriever {
    fn name(&self) -> &'static str;
    fn lookup(&self, query: &Query<'_>, candidates: &[&MemoryRecord]) -> Lookup;
}

/// A candidate that passed the retriever's gate, and the decision that let it through.
#[derive(Clone, Debug, PartialEq)]
pub struct Match {
    pub scored: Scored,
    pub decision: Decision,
}

/// Every lesson a question gets: up to `at_most` candidates of distinct keys that pass
/// the gate, best first, each judged by the retriever's own rule; and the first lookup,
/// which says why nothing passed when nothing did.
///
/// Each further match is the best of what is left once the earlier matches and every
/// record sharing their keys are set aside, so one kind of question contributes one
/// lesson and the retriever's gate is the only judge.
pub fn matches(
    retriever: &dyn Retriever,
    query: &Query<'_>,
    candidates: &[&MemoryRecord],
    at_most: usize,
) -> (Lookup, Vec<Match>) {
    let first = retriever.lookup(query, candidates);
    let mut found = Vec::new();
    let mut remaining: Vec<&MemoryRecord> = candidates.to_vec();
    let mut lookup = first.clone();
    while found.len() < at_most {
        let Some(scored) = lookup.applied().cloned() else {
            break;
        };
        let key = remaining
            .iter()
            .find(|r| r.id == scored.record)
            .map(|r| r.key.clone());
        remaining.retain(|r| r.id != scored.record && Some(&r.key) != key.as_ref());
        found.push(Match {
            scored,
            decision: lookup.decision,
        });
        if remaining.is_empty() {
            break;
        }
        lookup = retriever.lookup(query, &remaining);
    }
    (first, found)
}

/// Picks the candidate with the smallest `distance`; the earliest wins on ties, as in
/// the paper's implementation.
///
/// A distance that is not comparable even with itself (a NaN) is skipped like a
/// candidate without one: kept as the best, it would never be beaten (`d < NaN` is
/// always false) and would hide every real candidate after it.
pub fn nearest<'r, T: PartialOrd + Copy>(
    candidates: &[&'r MemoryRecord],
    mut distance: impl FnMut(&MemoryRecord) -> Option<T>,
) -> Option<(&'r MemoryRecord, T)> {
    let mut best: Option<(&MemoryRecord, T)> = None;
    for &record in candidates {
        let Some(d) = distance(record) else { continue };
        if d.partial_cmp(&d).is_none() {
            continue;
        }
        if best.is_none_or(|(_, b)| d < b) {
            best = Some((record, d));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::test_records::records;
    use super::*;

    #[test]
    fn matches_are_every_candidate_that_passes_the_gate_best_first_up_to_the_limit() {
        let stored = records(&[
            ("What is like < fast > ?", "I want a synonym"),
            ("What is like a < fast > ?", "I want a simile"),
            ("What is unlike < hot > ?", "I want an antonym"),
            ("Who wrote Hamlet?", "I want the playwright"),
        ]);
        let candidates: Vec<&MemoryRecord> = stored.iter().collect();
        let retriever = LevenshteinRetriever::default();
        let query = Query::new("What is like < slow > ?");
        let ids = |at_most| {
            let (first, found) = matches(&retriever, &query, &candidates, at_most);
            assert_eq!(first.applied().map(|s| &s.record), Some(&stored[0].id));
            assert!(found.iter().all(|m| m.decision.attaches()));
            found
                .into_iter()
                .map(|m| m.scored.record)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            ids(4),
            [&stored[0].id, &stored[1].id, &stored[2].id].map(Clone::clone)
        );
        assert_eq!(ids(2), [&stored[0].id, &stored[1].id].map(Clone::clone));
    }

    /// `nearest` over `stored`, with each record's distance taken from `distances` by
    /// its place.
    fn nearest_of(stored: &[MemoryRecord], distances: &[f32]) -> Option<(RecordId, f32)> {
        let candidates: Vec<&MemoryRecord> = stored.iter().collect();
        let place = |r: &MemoryRecord| stored.iter().position(|s| s.id == r.id);
        nearest(&candidates, |r| place(r).map(|i| distances[i]))
            .map(|(record, d)| (record.id.clone(), d))
    }

    #[test]
    fn a_nan_distance_never_hides_a_real_nearer_candidate() {
        let stored = records(&[("alpha", "fa"), ("bravo", "fb"), ("charlie", "fc")]);
        let found = nearest_of(&stored, &[f32::NAN, 0.5, 0.2]);
        assert_eq!(found, Some((stored[2].id.clone(), 0.2)));
        let found = nearest_of(&stored, &[0.5, f32::NAN, 0.7]);
        assert_eq!(found, Some((stored[0].id.clone(), 0.5)));
        assert_eq!(nearest_of(&stored, &[f32::NAN; 3]), None);
    }

    proptest::proptest! {
        #[test]
        fn the_nearest_is_the_smallest_real_distance_and_the_earliest_of_equals(
            distances in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::num::f32::ANY,
                    proptest::strategy::Just(f32::NAN),
                    proptest::strategy::Just(0.5f32),
                ],
                5,
            ),
        ) {
            let stored = records(&[
                ("alpha", "f"), ("bravo", "f"), ("charlie", "f"), ("delta", "f"), ("echo", "f"),
            ]);
            let expected = distances
                .iter()
                .enumerate()
                .filter(|(_, d)| !d.is_nan())
                .fold(None, |best: Option<(usize, f32)>, (i, &d)| match best {
                    Some((_, b)) if b <= d => best,
                    _ => Some((i, d)),
                })
                .map(|(i, d)| (stored[i].id.clone(), d));
            proptest::prop_assert_eq!(nearest_of(&stored, &distances), expected);
        }
    }

    #[test]
    fn no_match_is_found_when_the_best_candidate_fails_the_gate() {
        let stored = records(&[("Who wrote Hamlet?", "I want the playwright")]);
        let candidates: Vec<&MemoryRecord> = stored.iter().collect();
        let query = Query::new("What is like < slow > ?");
        let (first, found) = matches(&LevenshteinRetriever::default(), &query, &candidates, 3);
        assert!(first.best.is_some() && !first.passed());
        assert!(found.is_empty());
    }

    #[test]
    fn a_distance_in_an_outside_measure_attaches_up_to_and_including_its_limit() {
        let at = |distance| Decision::Measured {
            measure: "some measure",
            distance,
            limit: 0.25,
        };
        assert!(at(0.25).attaches());
        assert!(!at(0.26).attaches());
        let score = Score::Measured {
            measure: "some measure",
            distance: 0.125,
        };
        assert_eq!(score.to_string(), "some measure 0.12");
        assert_eq!(score.value(), 0.125);
    }
}

#[cfg(test)]
pub(crate) mod test_records {
    use crate::memory::{FeedbackMemory, Lesson};
    use crate::record::{MemoryRecord, RecordId, RecordKind, Source, Timestamp};

    /// Current records for `(question, clarification)` pairs, in order.
    pub fn records(pairs: &[(&str, &str)]) -> Vec<MemoryRecord> {
        let mut memory = FeedbackMemory::default();
        for (i, (question, clarification)) in pairs.iter().enumerate() {
            let lesson = Lesson {
                question: question.to_string(),
                kind: RecordKind::clarification(clarification.to_string()),
                source: Source::UserStated,
            };
            let written = memory.plan_write(lesson, RecordId(format!("r{i}")), Timestamp(i as i64));
            memory.apply(&written);
        }
        memory.current().cloned().collect()
    }
}
