//! Deterministic stand-ins for the platform ports, shared by the native test files:
//! a scripted model whose reply depends only on the prompt it receives, a clock and
//! id source that count, a settings store in memory, and a store shared by sessions.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use crate::in_memory_store::InMemoryStore;
use crate::in_process_embeddings::NoEmbeddings;
use remind_app::ports::{
    Clock, Completion, CompletionRequest, EmbeddingService, Ending, IdSource, LanguageModel,
    LlmError, MemoryStore, ReplyStream, SettingsStore, StoreChange, StoreError,
};
use remind_app::session::{Ports, Session};
use remind_app::settings::{Endpoint, Settings};
use remind_core::learning_curve::TurnEvent;
use remind_core::memory_key::marked_word;
use remind_core::prompt::{RenderedPrompt, ReplyForm, SEPARATOR};
use remind_core::record::{MemoryRecord, RecordId, Timestamp};
use remind_core::stored_record::StoredVector;
use remind_core::stored_rows::StoredMemory;

/// Runs a future of the native adapters to completion. Re-exported here so the test
/// files keep importing `support::scripted::block_on`; `futures`' executor parks the
/// thread until woken instead of spinning on `Pending` for ever.
pub use futures::executor::block_on;

/// The query a completion prompt ends with: the text between the last two separators.
fn query_of(prompt: &RenderedPrompt) -> String {
    match prompt {
        RenderedPrompt::Completion(text) => {
            let parts: Vec<&str> = text.split(SEPARATOR).collect();
            parts
                .len()
                .checked_sub(2)
                .map_or(String::new(), |i| parts[i].to_string())
        }
        RenderedPrompt::Chat(messages) => {
            messages.last().map_or(String::new(), |m| m.content.clone())
        }
    }
}

/// Reads a lexical question the way a small model misreads it: without a
/// clarification it takes "like" as "sounds like"; with one, it follows its wording.
#[derive(Default)]
pub struct ScriptedModel {
    /// Replies to send instead of the scripted reading, first in first out (e.g. a
    /// rule proposal, or a reply with no understanding).
    /// Shared, so a test keeps a handle after the model moved into a session.
    pub next_replies: Rc<RefCell<VecDeque<String>>>,
    /// Every request received, in order (shared like `next_replies`).
    pub requests: Rc<RefCell<Vec<CompletionRequest>>>,
}

impl ScriptedModel {
    /// Makes the next request get `reply`, whatever its prompt.
    pub fn will_reply(&self, reply: &str) {
        self.next_replies.borrow_mut().push_back(reply.to_string());
    }

    /// The scripted reading of `query`, in `form`.
    fn reply_in(form: ReplyForm, query: &str) -> String {
        let word = marked_word(query).unwrap_or("it");
        let clarification = query
            .split_once("| clarification:")
            .map(|(_, fb)| fb.to_lowercase());
        let meaning = match clarification.as_deref() {
            Some(fb) if fb.contains("antonym") => "the antonym",
            Some(fb) if fb.contains("synonym") => "the synonym",
            Some(fb) if fb.contains("rhyme") => "a rhyme",
            _ => "a word that sounds like",
        };
        form.reply(&format!("{meaning} for {word}"), "answer")
            .trim_start()
            .to_string()
    }
}

/// The reply form a prompt asks for, read from the prompt as a model would: its
/// examples (completion) or its instruction (chat) show labelled replies or not.
fn form_of(prompt: &RenderedPrompt) -> ReplyForm {
    let labelled = match prompt {
        RenderedPrompt::Completion(text) => text.contains("\nAnswer: "),
        RenderedPrompt::Chat(messages) => messages
            .first()
            .is_some_and(|m| m.content.contains("\"Understanding: \"")),
    };
    if labelled {
        ReplyForm::Labelled
    } else {
        ReplyForm::Restated
    }
}

impl LanguageModel for ScriptedModel {
    async fn complete(
        &self,
        _endpoint: &Endpoint,
        request: &CompletionRequest,
    ) -> Result<Completion, LlmError> {
        self.requests.borrow_mut().push(request.clone());
        let query = query_of(&request.prompt);
        let text = self
            .next_replies
            .borrow_mut()
            .pop_front()
            .unwrap_or_else(|| ScriptedModel::reply_in(form_of(&request.prompt), &query));
        Ok(Completion {
            text,
            ending: Ending::Finished,
        })
    }

    /// The same reply as `complete`, shown a word at a time (each word with the space
    /// after it). A stop pressed while a word is shown (a test presses it from the
    /// `show` callback) ends the reply there, as the browser's stop button would.
    async fn complete_streaming(
        &self,
        endpoint: &Endpoint,
        request: &CompletionRequest,
        reply: &ReplyStream<'_>,
    ) -> Result<Completion, LlmError> {
        if reply.is_stopped() {
            return Ok(Completion::stopped_by_user(String::new()));
        }
        let whole = self.complete(endpoint, request).await?;
        let mut so_far = String::new();
        for word in whole.text.split_inclusive(' ') {
            so_far.push_str(word);
            reply.show(&so_far);
            if reply.is_stopped() {
                return Ok(Completion::stopped_by_user(so_far));
            }
        }
        Ok(whole)
    }
}

/// A clock that advances one millisecond per reading.
#[derive(Default)]
pub struct TickingClock(Cell<i64>);

impl Clock for TickingClock {
    fn now(&self) -> Timestamp {
        self.0.set(self.0.get() + 1);
        Timestamp(self.0.get())
    }
}

/// Ids `<prefix>-1`, `<prefix>-2`, …; sessions use distinct prefixes.
pub struct CountingIds {
    prefix: &'static str,
    next: Cell<u32>,
}

impl CountingIds {
    pub fn new(prefix: &'static str) -> Self {
        CountingIds {
            prefix,
            next: Cell::new(0),
        }
    }
}

impl IdSource for CountingIds {
    fn next_id(&self) -> RecordId {
        self.next.set(self.next.get() + 1);
        RecordId(format!("{}-{}", self.prefix, self.next.get()))
    }
}

#[derive(Default)]
pub struct SettingsInMemory(RefCell<Option<Settings>>);

impl SettingsStore for SettingsInMemory {
    fn load(&self) -> Option<Settings> {
        self.0.borrow().clone()
    }

    fn save(&self, settings: &Settings) -> Result<(), StoreError> {
        *self.0.borrow_mut() = Some(settings.clone());
        Ok(())
    }
}

/// One store seen by several sessions, as tabs (or a reload) see one IndexedDB.
#[derive(Clone, Default)]
pub struct SharedStore(pub Rc<InMemoryStore>);

impl MemoryStore for SharedStore {
    async fn load_all(&self) -> Result<StoredMemory, StoreError> {
        self.0.load_all().await
    }

    async fn load_all_but_embeddings(&self) -> Result<StoredMemory, StoreError> {
        self.0.load_all_but_embeddings().await
    }

    async fn load_embeddings(&self) -> Result<Vec<(RecordId, StoredVector)>, StoreError> {
        self.0.load_embeddings().await
    }

    async fn transact(
        &self,
        plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    ) -> Result<(), StoreError> {
        self.0.transact(plan).await
    }

    async fn transact_records(
        &self,
        ids: &[RecordId],
        plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    ) -> Result<(), StoreError> {
        self.0.transact_records(ids, plan).await
    }

    async fn erase_unreadable(&self, keys: &[String]) -> Result<(), StoreError> {
        self.0.erase_unreadable(keys).await
    }

    async fn request_persistence(&self) -> Result<bool, StoreError> {
        self.0.request_persistence().await
    }

    async fn append_turn_event(&self, event: &TurnEvent) -> Result<(), StoreError> {
        self.0.append_turn_event(event).await
    }

    async fn load_turn_events(&self) -> Result<Vec<TurnEvent>, StoreError> {
        self.0.load_turn_events().await
    }
}

pub type TestSession = SessionWith<NoEmbeddings>;

/// A test session whose semantic retrieval runs on `E`.
pub type SessionWith<E> =
    Session<SharedStore, ScriptedModel, TickingClock, CountingIds, SettingsInMemory, E>;

/// A session over `store`, loaded, as a page (re)load would start one.
pub fn session_over(store: &SharedStore, ids: &'static str) -> TestSession {
    session_with(store, ids, NoEmbeddings)
}

/// A loaded session over `store` that matches questions with `embedder`.
pub fn session_with<E: EmbeddingService>(
    store: &SharedStore,
    ids: &'static str,
    embedder: E,
) -> SessionWith<E> {
    let session = Session::new(Ports {
        store: store.clone(),
        llm: ScriptedModel::default(),
        clock: TickingClock::default(),
        ids: CountingIds::new(ids),
        settings: SettingsInMemory::default(),
        embedder,
    });
    block_on(session.load()).expect("the store loads");
    session
}
