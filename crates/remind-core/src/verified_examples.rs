//! Verified examples: replies the user confirmed as right, shown to the model again as
//! demonstrations when a similar question comes.
//!
//! A clarification says what a request *means*; a verified example shows a whole
//! right reply. Both can exist for the same question, so an example lives under its
//! own key ([`example_key`]): the memory's one-current-per-key rule then holds per
//! (question, kind) without a second rule, and history, withdraw, undo, export and
//! import treat examples exactly as they treat clarifications.

use crate::levenshtein;
use crate::memory_key::MemoryKey;
use crate::prompt::{Example, ReplyForm, SEPARATOR, estimate_tokens};
use crate::record::{MemoryRecord, RecordId, RecordKind, StoredEmbedding};
use crate::retrieval::{Query, cosine};

/// Marks a key as a verified example's, so it never equals a clarification's key.
pub const EXAMPLE_KEY_PREFIX: &str = "verified example: ";

/// The key a verified example of `question` is stored under: the question's exact key
/// (only a `< word >` masked: a confirmed reply is about its own question, not every
/// question of its kind) in the examples' own namespace. Two confirmed replies to the
/// same request therefore supersede each other, and never the clarification of it.
pub fn example_key(question: &str) -> MemoryKey {
    MemoryKey::from_stored(format!(
        "{EXAMPLE_KEY_PREFIX}{}",
        MemoryKey::of_exact_question(question)
    ))
}

/// The demonstration a verified example adds to the prompt, in the same form as the
/// template's own examples (with their
/// leading space, so completion text reads like the paper's). `None` for any other kind.
pub fn demonstration(record: &MemoryRecord, form: ReplyForm) -> Option<Example> {
    match &record.kind {
        RecordKind::VerifiedExample {
            understanding,
            answer,
        } => Some(Example {
            query: record.question.trim().to_string(),
            reply: form.reply(understanding, answer),
        }),
        RecordKind::Clarification { .. } => None,
    }
}

/// How close a verified example's question is to the new one; larger is closer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Similarity {
    /// Cosine of the question embeddings (−1 to 1).
    Cosine(f32),
    /// One minus the normalised edit distance between masked keys (0 to 1).
    KeySimilarity(f32),
}

impl Similarity {
    pub fn value(&self) -> f32 {
        match *self {
            Similarity::Cosine(v) | Similarity::KeySimilarity(v) => v,
        }
    }
}

impl std::fmt::Display for Similarity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Similarity::Cosine(c) => write!(f, "cosine {c:.3}"),
            Similarity::KeySimilarity(s) => write!(f, "{:.0}% alike (edit distance)", s * 100.0),
        }
    }
}

/// How many verified examples a prompt may carry, and how close they must be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExampleBudget {
    pub max_examples: usize,
    /// Estimated tokens all chosen examples may take together.
    pub max_tokens: usize,
    /// Less similar examples are left out: an unrelated demonstration costs tokens and
    /// can pull the model towards the wrong kind of answer.
    pub min_similarity: f32,
}

impl Default for ExampleBudget {
    fn default() -> Self {
        ExampleBudget {
            max_examples: 2,
            max_tokens: 400,
            min_similarity: 0.5,
        }
    }
}

/// A verified example chosen for a prompt, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct ChosenExample {
    pub record: RecordId,
    pub version: u32,
    pub example: Example,
    pub similarity: Similarity,
}

/// Chooses the verified examples nearest to `query` among `candidates` (records of
/// other kinds and non-current records are ignored), within `budget`.
///
/// Similarity is the embedding cosine when the query has an embedding and every
/// candidate carries one of the same length; otherwise one minus the normalised edit
/// distance of the masked keys. One measure for all candidates, because a cosine and
/// an edit distance cannot be ranked against each other. Ties go to the most recently
/// written example. The result is in prompt order: the most similar example last, right
/// before the query, where it weighs most.
pub fn select_examples(
    query: &Query<'_>,
    candidates: &[&MemoryRecord],
    budget: &ExampleBudget,
    form: ReplyForm,
) -> Vec<ChosenExample> {
    let examples: Vec<(&MemoryRecord, Example)> = candidates
        .iter()
        .filter(|r| r.is_current())
        .filter_map(|r| demonstration(r, form).map(|e| (*r, e)))
        .collect();
    let by_cosine = query.embedding.filter(|q| {
        StoredEmbedding::check(q).is_ok()
            && examples.iter().all(|(r, _)| {
                r.embedding
                    .as_ref()
                    .is_some_and(|e| e.vector().len() == q.len())
            })
    });
    let mut scored: Vec<(&MemoryRecord, Example, Similarity)> = examples
        .into_iter()
        .map(|(record, example)| {
            let similarity = match (by_cosine, &record.embedding) {
                (Some(q), Some(e)) => Similarity::Cosine(cosine(q, e.vector())),
                _ => Similarity::KeySimilarity(
                    1.0 - levenshtein::normalised(
                        query.key.as_str(),
                        MemoryKey::of_question(&record.question).as_str(),
                    ),
                ),
            };
            (record, example, similarity)
        })
        .filter(|(_, _, s)| s.value() >= budget.min_similarity)
        .collect();
    // `total_cmp`, so the order is total whatever the scores (a NaN fails the
    // `min_similarity` filter above, but the sort does not rely on it).
    scored.sort_by(|a, b| {
        b.2.value()
            .total_cmp(&a.2.value())
            .then_with(|| b.0.created_at.cmp(&a.0.created_at))
            .then_with(|| a.0.id.cmp(&b.0.id))
    });
    let mut chosen = Vec::new();
    let mut tokens = 0usize;
    for (record, example, similarity) in scored {
        if chosen.len() == budget.max_examples {
            break;
        }
        let cost = example_tokens(&example);
        if tokens + cost > budget.max_tokens {
            continue;
        }
        tokens += cost;
        chosen.push(ChosenExample {
            record: record.id.clone(),
            version: record.version,
            example,
            similarity,
        });
    }
    chosen.reverse();
    chosen
}

/// The estimated tokens one example adds to a completion prompt.
fn example_tokens(example: &Example) -> usize {
    estimate_tokens(&format!(
        "{}{SEPARATOR}{}{SEPARATOR}",
        example.query, example.reply
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{RecordState, RecordStats, Source, Timestamp};

    fn example(id: &str, question: &str, at: i64) -> MemoryRecord {
        MemoryRecord {
            id: RecordId(id.into()),
            key: example_key(question),
            question: question.into(),
            kind: RecordKind::VerifiedExample {
                understanding: format!("the reading of {question}"),
                answer: "yes".into(),
            },
            source: Source::UserStated,
            created_at: Timestamp(at),
            version: 1,
            supersedes: None,
            superseded_by: None,
            state: RecordState::Current,
            stats: RecordStats::default(),
            change: None,
            embedding: None,
        }
    }

    fn ids(chosen: &[ChosenExample]) -> Vec<&str> {
        chosen.iter().map(|c| c.record.0.as_str()).collect()
    }

    #[test]
    fn an_example_key_never_equals_the_clarification_key_of_the_same_question() {
        let question = "What is like < fast > ?";
        assert_ne!(example_key(question), MemoryKey::of_question(question));
        assert_eq!(example_key(question), example_key("what is like <slow>?"));
        assert!(
            example_key(question)
                .as_str()
                .starts_with(EXAMPLE_KEY_PREFIX)
        );
    }

    #[test]
    fn the_demonstration_reads_like_the_templates_examples() {
        let demo = demonstration(
            &example("e", "What is like < fast > ?", 1),
            ReplyForm::Restated,
        )
        .unwrap();
        assert_eq!(demo.query, "What is like < fast > ?");
        assert_eq!(
            demo.reply,
            " the reading of What is like < fast > ? is yes END"
        );
    }

    #[test]
    fn the_most_similar_example_comes_last_and_unrelated_ones_are_left_out() {
        let stored = [
            example("near", "What is like < fast > ?", 1),
            example("nearish", "What is unlike < fast > ?", 2),
            example("far", "how do I boil an egg?", 3),
        ];
        let candidates: Vec<_> = stored.iter().collect();
        let chosen = select_examples(
            &Query::new("what is like < slow > ?"),
            &candidates,
            &ExampleBudget::default(),
            ReplyForm::Restated,
        );
        assert_eq!(ids(&chosen), ["nearish", "near"]);
        assert_eq!(chosen[1].similarity, Similarity::KeySimilarity(1.0));
    }

    #[test]
    fn cosine_is_used_only_when_every_candidate_has_an_embedding() {
        let mut stored = [
            example("a", "What is like < fast > ?", 1),
            example("b", "how do I boil an egg?", 2),
        ];
        stored[0].embedding = Some(StoredEmbedding::new("m", vec![0.0, 1.0]).unwrap());
        stored[1].embedding = Some(StoredEmbedding::new("m", vec![1.0, 0.0]).unwrap());
        let candidates: Vec<_> = stored.iter().collect();
        let budget = ExampleBudget {
            max_examples: 1,
            ..ExampleBudget::default()
        };
        let query = Query::new("what is like < slow > ?").with_embedding(&[1.0, 0.1]);
        let chosen = select_examples(&query, &candidates, &budget, ReplyForm::Restated);
        assert_eq!(ids(&chosen), ["b"]);
        assert!(matches!(chosen[0].similarity, Similarity::Cosine(c) if c > 0.99));

        stored[1].embedding = None;
        let candidates: Vec<_> = stored.iter().collect();
        let chosen = select_examples(&query, &candidates, &budget, ReplyForm::Restated);
        assert_eq!(ids(&chosen), ["a"]);
        assert!(matches!(chosen[0].similarity, Similarity::KeySimilarity(_)));
    }

    #[test]
    fn the_token_budget_and_the_count_cap_the_choice() {
        let stored = [
            example("a", "What is like < fast > ?", 1),
            example("b", "What is like < slow > ?", 2),
        ];
        let candidates: Vec<_> = stored.iter().collect();
        let query = Query::new("what is like < x > ?");
        let one_fits = ExampleBudget {
            max_tokens: example_tokens(&demonstration(&stored[0], ReplyForm::Restated).unwrap()),
            ..ExampleBudget::default()
        };
        assert_eq!(
            ids(&select_examples(
                &query,
                &candidates,
                &one_fits,
                ReplyForm::Restated
            )),
            ["b"]
        );
        let none = ExampleBudget {
            max_examples: 0,
            ..ExampleBudget::default()
        };
        assert!(select_examples(&query, &candidates, &none, ReplyForm::Restated).is_empty());
    }

    #[test]
    fn clarifications_and_withdrawn_examples_are_never_chosen() {
        let mut withdrawn = example("w", "What is like < fast > ?", 1);
        withdrawn.state = RecordState::Withdrawn;
        let mut clarification = example("c", "What is like < fast > ?", 2);
        clarification.kind = RecordKind::clarification("I want a synonym");
        let candidates = [&withdrawn, &clarification];
        let chosen = select_examples(
            &Query::new("What is like < fast > ?"),
            &candidates,
            &ExampleBudget::default(),
            ReplyForm::Restated,
        );
        assert!(chosen.is_empty());
    }
}
