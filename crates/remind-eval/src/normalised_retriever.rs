//! A retriever the experiment measures against the paper's: edit distance divided by
//! the longer key's length, so long questions are not held to the same absolute limit
//! as short ones. The page does not use it (`tests/stream_replay.rs` pins its figures).

use remind_core::levenshtein;
use remind_core::record::MemoryRecord;
use remind_core::retrieval::{Decision, Lookup, Query, Retriever, Score, Scored, nearest};

/// How the core, and whoever words its decisions, names this retriever's measure.
const MEASURE: &str = "normalised edit distance";

/// Normalised edit distance on masked keys, accepted up to `max_normalised_distance`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NormalisedLevenshteinRetriever {
    pub max_normalised_distance: f32,
}

impl Default for NormalisedLevenshteinRetriever {
    fn default() -> Self {
        NormalisedLevenshteinRetriever {
            max_normalised_distance: 0.25,
        }
    }
}

impl Retriever for NormalisedLevenshteinRetriever {
    fn name(&self) -> &'static str {
        "levenshtein-normalised"
    }

    fn lookup(&self, query: &Query<'_>, candidates: &[&MemoryRecord]) -> Lookup {
        let Some((record, d)) = nearest(candidates, |r| {
            Some(levenshtein::normalised(query.key.as_str(), r.key.as_str()))
        }) else {
            return Lookup::empty();
        };
        Lookup {
            best: Some(Scored {
                record: record.id.clone(),
                score: Score::Measured {
                    measure: MEASURE,
                    distance: d,
                },
            }),
            decision: Decision::Measured {
                measure: MEASURE,
                distance: d,
                limit: self.max_normalised_distance,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use remind_core::memory::{FeedbackMemory, Lesson};
    use remind_core::record::{RecordId, RecordKind, Source, Timestamp};

    #[test]
    fn the_normalised_distance_scales_with_length() {
        let mut memory = FeedbackMemory::default();
        let written = memory.plan_write(
            Lesson {
                question: "how do i boil an egg?".into(),
                kind: RecordKind::clarification("soft boiled"),
                source: Source::UserStated,
            },
            RecordId("egg".into()),
            Timestamp(0),
        );
        memory.apply(&written);
        let candidates: Vec<&MemoryRecord> = memory.current().collect();
        let retriever = NormalisedLevenshteinRetriever::default();
        assert!(
            retriever
                .lookup(&Query::new("how do i boil an egg ?"), &candidates)
                .passed()
        );
        assert!(
            !retriever
                .lookup(&Query::new("how do i fry a fish?"), &candidates)
                .passed()
        );
    }
}
