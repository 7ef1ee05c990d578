//! The sentence-embedding port: what semantic retrieval needs from a model. It sits in
//! the core so that the application and the tract adapter (`remind-embedder`) both see
//! it, and the adapter does not depend on the application layer. A trait and an error,
//! no I/O: the core stays pure.

use thiserror::Error;

/// Turns a question into a sentence embedding (unit length), for semantic retrieval.
///
/// Synchronous: one short question takes milliseconds once the model is loaded, and the
/// page runs it in a worker. Loading is the adapter's constructor, not part of the port.
pub trait Embedder {
    /// Names the model, so embeddings cached under another model are recomputed.
    fn model_id(&self) -> &str;
    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError>;
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum EmbedError {
    #[error(
        "the embedding model is not loaded yet ({0}); questions are matched by wording until it is"
    )]
    NotLoaded(String),
    #[error(
        "the embedding model file is not usable ({0}); download it again (clear the site's model cache, or run scripts/setup-embedder)"
    )]
    BadModel(String),
    #[error(
        "the tokeniser vocabulary is not usable ({0}); download it again (clear the site's model cache, or run scripts/setup-embedder)"
    )]
    BadVocab(String),
    #[error("the embedding model failed on this question ({0}); it is matched by wording instead")]
    Failed(String),
}
