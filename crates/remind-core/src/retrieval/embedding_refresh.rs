//! Which stored lessons need their embedding (re)computed, and the records that carry
//! the new ones.
//!
//! A lesson is embedded by its masked key (`what is like < > ?`), the text both the
//! stored side and the question side of semantic retrieval compare. An embedding made
//! by another model is as good as none: vectors of two models are not comparable.

use std::collections::HashSet;

use crate::memory::FeedbackMemory;
use crate::memory_key::MemoryKey;
use crate::record::{MemoryRecord, StoredEmbedding};

/// The text semantic retrieval embeds for a question or a stored lesson.
pub fn embedded_text(key: &MemoryKey) -> &str {
    key.as_str()
}

fn needs_embedding(record: &MemoryRecord, model: &str) -> bool {
    record.is_current()
        && record.kind.is_clarification()
        && record.embedding.as_ref().is_none_or(|e| e.model() != model)
}

/// The distinct keys of current clarifications without an embedding from `model`,
/// oldest first, found as they are taken: a question takes at most a few (when more
/// wait, the background embedding has them) and stops there, instead of hashing every
/// key of a memory whose ten thousand imported lessons all wait.
pub fn keys_to_embed<'m>(
    memory: &'m FeedbackMemory,
    model: &'m str,
) -> impl Iterator<Item = &'m MemoryKey> + 'm {
    // A set beside the scan: a key can be met twice only if the store broke the
    // one-current-lesson rule, and a scan of the keys taken per lesson would be quadratic.
    let mut seen: HashSet<&MemoryKey> = HashSet::new();
    memory
        .current()
        .filter(move |r| needs_embedding(r, model))
        .map(|r| &r.key)
        .filter(move |key| seen.insert(*key))
}

/// How many current clarifications wait for an embedding from `model`: counted without
/// hashing their keys, as the background embedding asks after each of its steps.
pub fn lessons_waiting_for_embedding(memory: &FeedbackMemory, model: &str) -> usize {
    memory
        .current()
        .filter(|r| needs_embedding(r, model))
        .count()
}

/// The records of `memory` that need an embedding from `model` and have one in
/// `vectors`, with it attached. Nothing else about them changes: an embedding is
/// derived data, not a new version of the lesson. A vector retrieval could not compare
/// (not finite, not of unit length: a broken model) is not stored; its lesson stays
/// without one and is matched by its key alone.
pub fn with_embeddings(
    memory: &FeedbackMemory,
    model: &str,
    vectors: &[(MemoryKey, Vec<f32>)],
) -> Vec<MemoryRecord> {
    memory
        .current()
        .filter(|r| needs_embedding(r, model))
        .filter_map(|record| {
            let (_, vector) = vectors.iter().find(|(key, _)| *key == record.key)?;
            let mut embedded = record.clone();
            embedded.embedding = Some(StoredEmbedding::new(model, vector.clone()).ok()?);
            Some(embedded)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::test_records::records;

    fn memory(pairs: &[(&str, &str)]) -> FeedbackMemory {
        FeedbackMemory::from_records(records(pairs))
    }

    #[test]
    fn lessons_without_an_embedding_are_embedded_by_their_masked_key() {
        let memory = memory(&[
            ("What is like < fast > ?", "I want a synonym"),
            ("What sounds like < good > ?", "I want a rhyme"),
        ]);
        let texts: Vec<&str> = keys_to_embed(&memory, "m1").map(embedded_text).collect();
        assert_eq!(texts, ["what is like < > ?", "what sounds like < > ?"]);
        assert_eq!(lessons_waiting_for_embedding(&memory, "m1"), 2);
    }

    #[test]
    fn an_embedding_from_another_model_is_recomputed_and_one_from_this_model_kept() {
        let memory = memory(&[("What is like < fast > ?", "I want a synonym")]);
        let key = memory.current().next().unwrap().key.clone();
        let embedded = with_embeddings(&memory, "m1", &[(key.clone(), vec![1.0, 0.0])]);
        assert_eq!(embedded.len(), 1);
        assert_eq!(embedded[0].version, 1, "an embedding is not a new version");
        let memory = FeedbackMemory::from_records(embedded);
        assert_eq!(keys_to_embed(&memory, "m1").next(), None);
        assert_eq!(lessons_waiting_for_embedding(&memory, "m1"), 0);
        assert_eq!(keys_to_embed(&memory, "m2").collect::<Vec<_>>(), [&key]);
    }

    #[test]
    fn a_key_missing_from_the_vectors_is_left_as_it_was() {
        let memory = memory(&[("What is like < fast > ?", "I want a synonym")]);
        assert!(with_embeddings(&memory, "m1", &[]).is_empty());
    }
}
