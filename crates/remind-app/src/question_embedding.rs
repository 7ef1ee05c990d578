//! Getting a question ready for semantic retrieval: its embedding, and embeddings for
//! any stored lesson that lacks one from the current model, in one request.
//!
//! Embeddings of lessons are stored with them (a derived value, so no new version), so
//! each lesson is embedded once per model rather than on every question.

use crate::ports::{EmbedError, EmbedderStatus, EmbeddingService, MemoryStore};
use crate::revise::{Revision, StoreChange, revise};
use remind_core::memory::FeedbackMemory;
use remind_core::memory_key::MemoryKey;
use remind_core::record::StoredEmbedding;
use remind_core::retrieval::embedding_refresh::{embedded_text, keys_to_embed, with_embeddings};

/// Embeds `question` (by its masked key) with the ready model, storing embeddings for
/// lessons in `view` that lack one. `Ok(None)` when no model is ready: retrieval then
/// goes by wording. The revision is the memory to take on after storing, if any.
pub async fn embed_question(
    store: &impl MemoryStore,
    embedder: &impl EmbeddingService,
    view: &FeedbackMemory,
    question: &str,
) -> (
    Option<Revision<usize>>,
    Result<Option<Vec<f32>>, EmbedError>,
) {
    let EmbedderStatus::Ready { model_id, .. } = embedder.status() else {
        return (None, Ok(None));
    };
    let missing = keys_to_embed(view, &model_id);
    let mut texts: Vec<String> = missing
        .iter()
        .map(|k| embedded_text(k).to_string())
        .collect();
    texts.push(embedded_text(&MemoryKey::of_question(question)).to_string());
    let mut vectors = match embedder.embed(&texts).await {
        Ok(vectors) => vectors,
        Err(e) => return (None, Err(e)),
    };
    // A vector retrieval cannot compare (not finite, not of unit length) is as good as
    // none: the question is matched by wording, as when the model fails outright.
    // (`with_embeddings` likewise stores no such vector for a lesson.)
    let question_vector = match vectors
        .pop()
        .map(|v| StoredEmbedding::check(&v).map(|()| v))
    {
        None => Ok(None),
        Some(Ok(vector)) => Ok(Some(vector)),
        Some(Err(problem)) => Err(EmbedError::Failed(format!("its vector {problem}"))),
    };
    if missing.is_empty() {
        return (None, question_vector);
    }
    let computed: Vec<(MemoryKey, Vec<f32>)> = missing.into_iter().zip(vectors).collect();
    // Planned against the store's records, so a lesson changed in another tab since
    // `view` was read is embedded as it is now, or not at all.
    let revision = revise(store, |memory| {
        let put = with_embeddings(memory, &model_id, &computed);
        Ok((put.len(), StoreChange::put(put)))
    })
    .await;
    (Some(revision), question_vector)
}
