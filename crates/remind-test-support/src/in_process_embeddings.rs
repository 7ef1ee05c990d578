//! The [`EmbeddingService`] port filled in the caller's own thread: by a loaded
//! [`Embedder`] (native tools and tests), or by none, when retrieval goes by wording.

use remind_app::ports::{EmbedError, Embedder, EmbedderStatus, EmbeddingService};

/// No embedding model: the session matches questions by wording (Levenshtein).
pub struct NoEmbeddings;

impl EmbeddingService for NoEmbeddings {
    fn status(&self) -> EmbedderStatus {
        EmbedderStatus::Off
    }

    async fn embed(&self, _texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Err(EmbedError::NotLoaded(
            "no embedding model is configured".into(),
        ))
    }
}

/// A model already loaded in this thread, e.g. `TractEmbedder` in a native test.
pub struct InProcessEmbeddings<E>(pub E);

impl<E: Embedder> EmbeddingService for InProcessEmbeddings<E> {
    fn status(&self) -> EmbedderStatus {
        EmbedderStatus::Ready {
            model_id: self.0.model_id().to_string(),
            from_cache: true,
            load_ms: 0,
        }
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        texts.iter().map(|t| self.0.embed(t)).collect()
    }
}
