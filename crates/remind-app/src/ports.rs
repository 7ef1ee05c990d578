//! The ports the use-cases need from the platform, and the errors at each boundary.
//!
//! The page is single-threaded wasm, so these async traits make no `Send` promise.

#![allow(async_fn_in_trait)]

use thiserror::Error;

use crate::settings::Endpoint;
use remind_core::learning_curve::TurnEvent;
use remind_core::record::{MemoryRecord, RecordId, Timestamp};

/// Durable storage of memory records.
pub trait MemoryStore {
    /// Every stored record, current and historical.
    async fn load(&self) -> Result<Vec<MemoryRecord>, StoreError>;
    /// Writes all `records` in one transaction; returns only after it committed.
    async fn write(&self, records: &[MemoryRecord]) -> Result<(), StoreError> {
        self.commit(records, &[]).await
    }
    /// Puts `put` and deletes the records `erase` in one transaction, all or nothing;
    /// returns only after it committed. Import's "replace" relies on the atomicity.
    async fn commit(&self, put: &[MemoryRecord], erase: &[RecordId]) -> Result<(), StoreError>;
    /// Deletes records for good, in one transaction.
    async fn erase(&self, ids: &[RecordId]) -> Result<(), StoreError> {
        self.commit(&[], ids).await
    }
    /// Asks the platform not to evict the memory under storage pressure; returns
    /// whether it is now persistent.
    async fn request_persistence(&self) -> Result<bool, StoreError>;
    /// Appends one event to the turn log (the learning curve's input); returns only
    /// after it committed. Events are never changed or deleted one by one.
    async fn append_turn_event(&self, event: &TurnEvent) -> Result<(), StoreError>;
    /// Every logged turn event, in the order they were appended.
    async fn load_turn_events(&self) -> Result<Vec<TurnEvent>, StoreError>;
}

/// Tells other views of the same memory (other tabs) that it changed, so they re-read
/// it instead of acting on a stale copy.
pub trait ChangeFeed {
    fn announce(&self);
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum StoreError {
    #[error("the browser's storage is full; free space or remove old memories, then save again")]
    QuotaExceeded,
    #[error(
        "this browser blocks storage for the page (private mode or site settings); nothing was saved"
    )]
    Unavailable(String),
    #[error("the save did not complete ({0}); nothing was saved, try again")]
    Failed(String),
    #[error("stored memory could not be read ({0})")]
    Corrupt(String),
}

pub use remind_core::turn::CompletionRequest;

/// What the model wrote, and whether the server stopped it at a stop sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub text: String,
    pub stopped: bool,
}

/// An OpenAI-compatible language model endpoint.
pub trait LanguageModel {
    async fn complete(
        &self,
        endpoint: &Endpoint,
        request: &CompletionRequest,
    ) -> Result<Completion, LlmError>;
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum LlmError {
    #[error(
        "Could not reach the model at {url}. Is the server running, and does it allow requests from this page (CORS)? Check the base URL in settings."
    )]
    Unreachable { url: String },
    #[error(
        "The model at {url} timed out after {seconds} s. It may be overloaded or the model too large; try again or raise the timeout."
    )]
    TimedOut { url: String, seconds: u64 },
    #[error("The endpoint refused the API key (HTTP {status}). Check the key in settings.")]
    Unauthorized { status: u16 },
    #[error("The endpoint answered HTTP {status}: {detail}")]
    Http { status: u16, detail: String },
    #[error(
        "The endpoint sent a reply that is not valid JSON ({detail}). Is the base URL an OpenAI-compatible API (usually ending in /v1)?"
    )]
    NotJson { detail: String },
    #[error("The endpoint sent an unexpected reply: {detail}")]
    Unexpected { detail: String },
    #[error("The settings are not usable: {0}")]
    BadSettings(String),
}

/// The current time, from outside the domain.
pub trait Clock {
    fn now(&self) -> Timestamp;
}

/// Fresh record ids, from outside the domain.
pub trait IdSource {
    fn next_id(&self) -> RecordId;
}

/// Where settings live between visits.
pub trait SettingsStore {
    fn load(&self) -> Option<crate::settings::Settings>;
    fn save(&self, settings: &crate::settings::Settings) -> Result<(), StoreError>;
}

/// Turns a question into a sentence embedding (unit length), for semantic retrieval.
///
/// Synchronous: one short question takes milliseconds once the model is loaded, and the
/// page runs it in a worker. Loading is the adapter's constructor, not part of the port.
pub trait Embedder {
    /// Names the model, so embeddings cached under another model are recomputed.
    fn model_id(&self) -> &str;
    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError>;
}

/// Where the page's embedding model stands; semantic retrieval runs only when `Ready`.
#[derive(Clone, Debug, PartialEq)]
pub enum EmbedderStatus {
    /// No embedder is configured: questions are matched by wording.
    Off,
    Downloading {
        loaded: u64,
        total: Option<u64>,
    },
    Initialising,
    Ready {
        model_id: String,
        from_cache: bool,
        /// From asking for the model to being able to embed, download included.
        load_ms: u64,
    },
    Failed(String),
}

/// Sentence embeddings computed away from the caller's thread (the page's worker).
pub trait EmbeddingService {
    fn status(&self) -> EmbedderStatus;
    /// One unit vector per text, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
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
