//! The ports the use-cases need from the platform, and the errors at each boundary.
//!
//! The page is single-threaded wasm, so these async traits make no `Send` promise.

#![allow(async_fn_in_trait)]

use thiserror::Error;

use crate::settings::Endpoint;
use remind_core::learning_curve::TurnEvent;
use remind_core::record::{MemoryRecord, RecordId, Timestamp};
use remind_core::stored_record::StoredVector;
use remind_core::stored_rows::{StoredMemory, UnreadableRecord};

/// Durable storage of memory records.
///
/// Every change goes through [`MemoryStore::transact`]: the read a change is planned
/// on and the write it makes are one step that no other writer (another tab) can come
/// between, so a version check means what it says.
pub trait MemoryStore {
    /// Every stored row: the records this Remind can read, and the rows it cannot,
    /// set aside untouched (see [`remind_core::stored_rows`]).
    async fn load_all(&self) -> Result<StoredMemory, StoreError>;
    /// Like [`MemoryStore::load_all`], but a store that keeps the records' embeddings
    /// apart (IndexedDB does: they are most of what a read of the whole memory carries)
    /// leaves them out, so the memory can be shown before they are read;
    /// [`MemoryStore::load_embeddings`] reads them. A store that keeps them together
    /// returns everything, as `load_all` does.
    async fn load_all_but_embeddings(&self) -> Result<StoredMemory, StoreError> {
        self.load_all().await
    }
    /// The embeddings a store keeps apart from their records, by record id: what
    /// [`MemoryStore::load_all_but_embeddings`] left out. None for a store that keeps
    /// them together.
    async fn load_embeddings(&self) -> Result<Vec<(RecordId, StoredVector)>, StoreError> {
        Ok(Vec::new())
    }
    /// The records this Remind can read, current and historical.
    async fn load(&self) -> Result<Vec<MemoryRecord>, StoreError> {
        Ok(self.load_all().await?.records)
    }
    /// Reads every readable record, lets `plan` decide a change from them, and commits
    /// that change, all in one exclusive step; returns only after it committed. An
    /// empty change writes nothing. A change that would overwrite an unreadable row is
    /// refused ([`StoreError::WouldOverwriteUnreadable`]) and nothing is written.
    async fn transact(
        &self,
        plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    ) -> Result<(), StoreError>;
    /// Like [`MemoryStore::transact`], for a change to a few records only (a usage
    /// count, stored embeddings): reads just the readable records `ids` names (those the
    /// store holds, as it holds them now), lets `plan` decide a change to them, and
    /// commits it, in one exclusive step. Reading every record for such a change is
    /// what made each question slow with thousands of lessons. The change may put and
    /// erase only records among `ids`: one reaching further is refused
    /// ([`StoreError::Failed`]) and nothing is written, since the plan could not see
    /// what it would overwrite; so is one over an unreadable row, as in `transact`.
    ///
    /// This default goes through `transact`, so a store that reads everything anyway
    /// (the tests' in-memory twin) need not do more.
    async fn transact_records(
        &self,
        ids: &[RecordId],
        plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    ) -> Result<(), StoreError> {
        let mut reached_further = false;
        self.transact(|records| {
            let named = records
                .into_iter()
                .filter(|r| ids.contains(&r.id))
                .collect();
            let change = plan(named);
            if !change.stays_within(ids) {
                reached_further = true;
                return StoreChange::default();
            }
            change
        })
        .await?;
        if reached_further {
            return Err(StoreChange::reaching_further());
        }
        Ok(())
    }
    /// Puts `put` and deletes `erase` in one step, all or nothing, planned on nothing
    /// the store holds (a test's seed, a write that does not depend on a read).
    async fn commit(&self, put: &[MemoryRecord], erase: &[RecordId]) -> Result<(), StoreError> {
        let change = StoreChange {
            put: put.to_vec(),
            erase: erase.to_vec(),
        };
        self.transact(move |_| change).await
    }
    /// Writes all `records` in one step.
    async fn write(&self, records: &[MemoryRecord]) -> Result<(), StoreError> {
        self.commit(records, &[]).await
    }
    /// Deletes unreadable rows for good, named by their keys
    /// ([`remind_core::stored_rows::UnreadableRecord::key`]), in one step.
    async fn erase_unreadable(&self, keys: &[String]) -> Result<(), StoreError>;
    /// Asks the platform not to evict the memory under storage pressure; returns
    /// whether it is now persistent.
    async fn request_persistence(&self) -> Result<bool, StoreError>;
    /// Appends one event to the turn log (the learning curve's input); returns only
    /// after it committed. Events are never changed or deleted one by one.
    async fn append_turn_event(&self, event: &TurnEvent) -> Result<(), StoreError>;
    /// Every logged turn event, in the order they were appended.
    async fn load_turn_events(&self) -> Result<Vec<TurnEvent>, StoreError>;
}

/// The records one change puts and erases, committed together or not at all.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoreChange {
    pub put: Vec<MemoryRecord>,
    pub erase: Vec<RecordId>,
}

impl StoreChange {
    pub fn put(records: Vec<MemoryRecord>) -> Self {
        StoreChange {
            put: records,
            erase: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.put.is_empty() && self.erase.is_empty()
    }

    /// Whether every record this change puts or erases is among `ids`.
    pub fn stays_within(&self, ids: &[RecordId]) -> bool {
        let named: std::collections::HashSet<&RecordId> = ids.iter().collect();
        self.put.iter().all(|record| named.contains(&record.id))
            && self.erase.iter().all(|id| named.contains(id))
    }

    /// The refusal of a change made on some records that reaches beyond them
    /// ([`MemoryStore::transact_records`]): a bug, never a user's doing.
    pub fn reaching_further() -> StoreError {
        StoreError::Failed("a change reached beyond the records it was planned on".into())
    }

    /// The first record this change would write over an unreadable row, if any.
    pub fn overwrites_unreadable<'a>(
        &self,
        stored: &'a StoredMemory,
    ) -> Option<&'a UnreadableRecord> {
        self.put
            .iter()
            .find_map(|record| stored.unreadable_under(&record.id))
    }
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
    #[error(
        "not saved: it would overwrite the stored record {id}, which this version of Remind cannot read; export or delete that record in the memory browser first"
    )]
    WouldOverwriteUnreadable { id: String },
    #[error(
        "this memory was written by a newer version of Remind (storage version {found}, this page knows {known}); reload this tab to get the newer version, or close the tab that has it"
    )]
    NewerVersion { found: String, known: u32 },
    #[error(
        "another Remind tab still has the memory open in an older version, so it cannot be upgraded; close or reload the other Remind tabs, then reload this one"
    )]
    UpgradeBlocked,
}

pub use remind_core::turn::CompletionRequest;

/// What the model wrote, and how it came to an end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub text: String,
    pub ending: Ending,
}

/// How a completion ended: one value, so a reply cannot be both stopped at a stop
/// sequence and stopped by the user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The server ended it without reporting a stop (`finish_reason` `length`, another
    /// reason, or none): it may be cut at the token limit.
    Finished,
    /// The server stopped it (`finish_reason` `stop`): at one of the request's stop
    /// sequences, or where the model itself ended.
    StopSequence,
    /// The user stopped it while it streamed: the text is what had arrived, cut
    /// anywhere, perhaps mid-word. It is not the model's answer, so nothing of a turn
    /// stopped by the user may be written to memory (a lesson, a verified example).
    StoppedByUser,
}

impl Ending {
    /// The ending an OpenAI `finish_reason` reports, as the non-streaming parse has
    /// always read it: only `stop` is a stop.
    pub fn from_finish_reason(reason: Option<&str>) -> Ending {
        match reason {
            Some("stop") => Ending::StopSequence,
            _ => Ending::Finished,
        }
    }
}

impl Completion {
    /// What had arrived when the user pressed stop.
    pub fn stopped_by_user(text: String) -> Completion {
        Completion {
            text,
            ending: Ending::StoppedByUser,
        }
    }

    /// Whether the server stopped it, so a missing end marker is no problem of the
    /// reply (what `reply::parse_reply` calls `stopped`).
    pub fn at_stop_sequence(&self) -> bool {
        self.ending == Ending::StopSequence
    }

    /// Whether the user cut it short; such a reply must never be written to memory.
    pub fn is_stopped_by_user(&self) -> bool {
        self.ending == Ending::StoppedByUser
    }
}

/// An OpenAI-compatible language model endpoint.
pub trait LanguageModel {
    async fn complete(
        &self,
        endpoint: &Endpoint,
        request: &CompletionRequest,
    ) -> Result<Completion, LlmError>;

    /// `complete`, showing the reply as it is generated: `reply.show` receives the
    /// whole text so far each time it grows, and a press of `reply`'s stop ends the
    /// request at once with `Ok` of what had arrived, its ending
    /// [`Ending::StoppedByUser`].
    ///
    /// This default, for models that cannot stream, waits for the whole reply and
    /// shows it once; a stop still ends the wait at once (the request is dropped,
    /// which in the browser aborts its fetch) with an empty text.
    async fn complete_streaming(
        &self,
        endpoint: &Endpoint,
        request: &CompletionRequest,
        reply: &ReplyStream<'_>,
    ) -> Result<Completion, LlmError> {
        let Some(completion) = reply.unless_stopped(self.complete(endpoint, request)).await else {
            return Ok(Completion::stopped_by_user(String::new()));
        };
        let completion = completion?;
        reply.show(&completion.text);
        Ok(completion)
    }
}

/// A reply on its way: where its text is shown, and the user's stop.
pub use crate::reply_stream::{ReplyStream, StopSignal};

/// Why a model request failed; its own module, so its messages may use redaction
/// without `ports` importing back from a module that imports it.
pub use crate::llm_error::LlmError;

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

/// The sentence-embedding port lives in the core, where the app and the tract crate
/// both see it without the tract crate depending on the application layer.
pub use remind_core::sentence_embedding::{EmbedError, Embedder};

/// How far a store's write of many records (an import) has come: the records it has
/// written so far, of all the write holds. None of them is saved until the whole write
/// commits; this only says how much of the work is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteProgress {
    pub written: usize,
    pub total: usize,
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
    /// Starts loading the model, for a service that waits to be told (the page's
    /// worker). The session tells it once the memory is shown: loading a model and
    /// reading thousands of lessons at once compete for the same cores. Again, it does
    /// nothing.
    fn begin(&self) {}
    /// One unit vector per text, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
}
