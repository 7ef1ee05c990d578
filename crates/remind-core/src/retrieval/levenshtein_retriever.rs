//! The paper's low-resource retriever: edit distance between masked questions.
//!
//! MemPrompt compares the question with its `< word >` masked against each stored
//! question, accepts a distance below 6, and takes the nearest (earliest on ties).

use crate::levenshtein;
use crate::record::MemoryRecord;
use crate::retrieval::{Decision, Lookup, Query, Retriever, Score, Scored, nearest};

/// Absolute edit distance on masked keys, accepted below `max_distance_exclusive`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LevenshteinRetriever {
    pub max_distance_exclusive: usize,
}

impl Default for LevenshteinRetriever {
    /// The paper's setting: distance < 6.
    fn default() -> Self {
        LevenshteinRetriever {
            max_distance_exclusive: 6,
        }
    }
}

impl Retriever for LevenshteinRetriever {
    fn name(&self) -> &'static str {
        "levenshtein"
    }

    fn lookup(&self, query: &Query<'_>, candidates: &[&MemoryRecord]) -> Lookup {
        let Some((record, d)) = nearest(candidates, |r| {
            Some(levenshtein::distance(query.key.as_str(), r.key.as_str()))
        }) else {
            return Lookup::empty();
        };
        Lookup {
            best: Some(Scored {
                record: record.id.clone(),
                score: Score::Distance(d),
            }),
            decision: Decision::EditDistance {
                distance: d,
                limit: self.max_distance_exclusive,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::test_records::records;

    #[test]
    fn the_same_phrasing_with_another_word_is_a_hit() {
        let stored = records(&[("What is like < fast > ?", "I want a synonym")]);
        let candidates: Vec<_> = stored.iter().collect();
        let lookup = LevenshteinRetriever::default()
            .lookup(&Query::new("what is like < happy > ?"), &candidates);
        assert!(lookup.passed());
        assert_eq!(lookup.best.unwrap().score, Score::Distance(0));
    }

    #[test]
    fn like_pulls_unlikes_clarification_as_in_the_paper() {
        // The known weakness of the low-resource mode, pinned so it stays visible.
        let stored = records(&[("What is unlike < fast > ?", "I want an antonym")]);
        let candidates: Vec<_> = stored.iter().collect();
        let lookup = LevenshteinRetriever::default()
            .lookup(&Query::new("What is like < slow > ?"), &candidates);
        assert!(lookup.passed());
        assert_eq!(lookup.best.unwrap().score, Score::Distance(2));
    }

    #[test]
    fn a_distant_question_is_found_but_not_applied() {
        let stored = records(&[("What is like < fast > ?", "I want a synonym")]);
        let candidates: Vec<_> = stored.iter().collect();
        let lookup = LevenshteinRetriever::default().lookup(
            &Query::new("how do you use < fog > in a sentence?"),
            &candidates,
        );
        assert!(lookup.best.is_some());
        assert!(!lookup.passed());
        assert!(lookup.applied().is_none());
    }

    #[test]
    fn the_earliest_record_wins_a_tie() {
        let stored = records(&[
            ("what is likf < a > ?", "first"),
            ("what is likg < a > ?", "second"),
        ]);
        let candidates: Vec<_> = stored.iter().collect();
        let lookup = LevenshteinRetriever::default()
            .lookup(&Query::new("what is like < b > ?"), &candidates);
        assert_eq!(lookup.best.unwrap().record, stored[0].id);
    }

    #[test]
    fn an_empty_memory_finds_nothing() {
        let lookup = LevenshteinRetriever::default().lookup(&Query::new("q"), &[]);
        assert_eq!(lookup, Lookup::empty());
    }
}
