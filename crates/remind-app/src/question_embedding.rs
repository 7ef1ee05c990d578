//! Getting a question ready for semantic retrieval (its embedding), and embedding the
//! stored lessons that lack one from the current model.
//!
//! Embeddings of lessons are stored with them (a derived value, so no new version), so
//! each lesson is embedded once per model rather than on every question. A question
//! brings along the few lessons still waiting ([`LESSONS_EMBEDDED_WITH_A_QUESTION`]);
//! more than that (an import, a model change) are embedded in the background in
//! batches ([`embed_waiting_lessons`]), and until then matched by wording, so no
//! question waits for thousands of them.

use crate::ports::{EmbedError, EmbedderStatus, EmbeddingService, MemoryStore};
use crate::revise::{RecordsRevision, StoreChange, revise_records};
use remind_core::memory::FeedbackMemory;
use remind_core::memory_key::MemoryKey;
use remind_core::record::{RecordId, StoredEmbedding};
use remind_core::retrieval::embedding_refresh::{
    embedded_text, keys_to_embed, lessons_waiting_for_embedding, with_embeddings,
};

/// At most this many waiting lessons are embedded with a question: a lesson just
/// taught is matched by meaning on the next question, while a large import is left to
/// the background.
pub const LESSONS_EMBEDDED_WITH_A_QUESTION: usize = 16;

/// Which lessons a question's embedding brings along.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LessonsAlong {
    /// Those lacking an embedding, when there are no more than
    /// [`LESSONS_EMBEDDED_WITH_A_QUESTION`].
    FewWaiting,
    /// None: the question alone (the stored embeddings are still being read).
    QuestionOnly,
}

/// How far the background embedding has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LessonsEmbedded {
    /// Lessons (by key) embedded and stored by this step.
    pub embedded: usize,
    /// Lessons still waiting for an embedding after it.
    pub waiting: usize,
}

/// Embeds `question` (by its masked key) with the ready model, and, as `lessons`
/// says, the lessons in `view` that lack an embedding when there are no more than
/// [`LESSONS_EMBEDDED_WITH_A_QUESTION`] of them. `Ok(None)` when no model is ready:
/// retrieval then goes by wording. The revision is what storing the lessons' embeddings
/// wrote, to take on after it, if any.
pub async fn embed_question(
    store: &impl MemoryStore,
    embedder: &impl EmbeddingService,
    view: &FeedbackMemory,
    question: &str,
    lessons: LessonsAlong,
) -> (
    Option<RecordsRevision<usize>>,
    Result<Option<Vec<f32>>, EmbedError>,
) {
    let EmbedderStatus::Ready { model_id, .. } = embedder.status() else {
        return (None, Ok(None));
    };
    let mut waiting: Vec<MemoryKey> = match lessons {
        LessonsAlong::FewWaiting => keys_to_embed(view, &model_id)
            .take(LESSONS_EMBEDDED_WITH_A_QUESTION + 1)
            .cloned()
            .collect(),
        LessonsAlong::QuestionOnly => Vec::new(),
    };
    if waiting.len() > LESSONS_EMBEDDED_WITH_A_QUESTION {
        waiting.clear();
    }
    let mut texts: Vec<String> = waiting
        .iter()
        .map(|k| embedded_text(k).to_string())
        .collect();
    texts.push(question_text(question));
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
    if waiting.is_empty() {
        return (None, question_vector);
    }
    let computed: Vec<(MemoryKey, Vec<f32>)> = waiting.into_iter().zip(vectors).collect();
    (
        Some(store_embeddings(store, view, &model_id, computed).await),
        question_vector,
    )
}

/// What is embedded of `question`: its key, as a lesson's is.
fn question_text(question: &str) -> String {
    embedded_text(&MemoryKey::of_question(question)).to_string()
}

/// Embeds `question` as [`embed_question`] does, and nothing else, when a model is
/// ready: called while the question is being typed, so that an embedder that
/// remembers ([`crate::remembered_embeddings::RememberedEmbeddings`]) has its vector
/// when it is asked. The vector, when there is one retrieval can compare; a failure
/// is left for the ask, which matches by wording then.
pub async fn prepare_question(
    embedder: &impl EmbeddingService,
    question: &str,
) -> Option<Vec<f32>> {
    if !matches!(embedder.status(), EmbedderStatus::Ready { .. }) {
        return None;
    }
    let vector = embedder
        .embed(&[question_text(question)])
        .await
        .ok()?
        .pop()?;
    StoredEmbedding::check(&vector).is_ok().then_some(vector)
}

/// Embeds up to `at_most` of the lessons in `view` that lack an embedding from the
/// ready model, oldest first, and stores them once `free_to_store` resolves. Nothing
/// is done when no model is ready or nothing waits. The revision is what storing them
/// wrote, to take on after it, if any.
pub async fn embed_waiting_lessons(
    store: &impl MemoryStore,
    embedder: &impl EmbeddingService,
    view: &FeedbackMemory,
    at_most: usize,
    free_to_store: impl Future<Output = ()>,
) -> (
    Option<RecordsRevision<usize>>,
    Result<LessonsEmbedded, EmbedError>,
) {
    let EmbedderStatus::Ready { model_id, .. } = embedder.status() else {
        return (None, Ok(LessonsEmbedded::default_for(0)));
    };
    let total = lessons_waiting_for_embedding(view, &model_id);
    let waiting: Vec<MemoryKey> = keys_to_embed(view, &model_id)
        .take(at_most)
        .cloned()
        .collect();
    if waiting.is_empty() {
        return (None, Ok(LessonsEmbedded::default_for(total)));
    }
    let texts: Vec<String> = waiting
        .iter()
        .map(|k| embedded_text(k).to_string())
        .collect();
    let vectors = match embedder.embed(&texts).await {
        Ok(vectors) => vectors,
        Err(e) => return (None, Err(e)),
    };
    let computed: Vec<(MemoryKey, Vec<f32>)> = waiting.into_iter().zip(vectors).collect();
    let embedded = computed.len();
    free_to_store.await;
    let revision = store_embeddings(store, view, &model_id, computed).await;
    let progress = match &revision.outcome {
        Ok(_) => Ok(LessonsEmbedded {
            embedded,
            waiting: total.saturating_sub(embedded),
        }),
        Err(e) => Err(EmbedError::Failed(format!(
            "the embeddings were not stored: {e}"
        ))),
    };
    (Some(revision), progress)
}

impl LessonsEmbedded {
    /// Nothing embedded and nothing waiting.
    pub const NONE: LessonsEmbedded = LessonsEmbedded {
        embedded: 0,
        waiting: 0,
    };

    fn default_for(waiting: usize) -> Self {
        LessonsEmbedded {
            embedded: 0,
            waiting,
        }
    }
}

/// Stores `computed` on the current lessons of their keys in `view`, in one
/// transaction over those records alone, planned on them as the store holds them: a
/// lesson changed in another tab since the view was read is embedded as it is now, or,
/// if no longer current, not at all.
async fn store_embeddings(
    store: &impl MemoryStore,
    view: &FeedbackMemory,
    model_id: &str,
    computed: Vec<(MemoryKey, Vec<f32>)>,
) -> RecordsRevision<usize> {
    let ids: Vec<RecordId> = computed
        .iter()
        .filter_map(|(key, _)| view.current_for(key).map(|record| record.id.clone()))
        .collect();
    revise_records(store, &ids, |memory| {
        let put = with_embeddings(memory, model_id, &computed);
        Ok((put.len(), StoreChange::put(put)))
    })
    .await
}
