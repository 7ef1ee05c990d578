//! What every component shares: the session, its memory as one signal, and the state
//! of the current turn.

use std::rc::Rc;
use std::sync::Arc;

use leptos::prelude::*;

use crate::wiring::PageSession;
use remind_app::ask::Turn;
use remind_app::ports::EmbedderStatus;
use remind_core::memory::FeedbackMemory;
use remind_core::stored_rows::UnreadableRecord;

/// Where the current question stands.
#[derive(Clone, Debug, PartialEq)]
pub enum TurnState {
    Idle,
    Asking,
    Answered(Box<Turn>),
    Failed(String),
}

#[derive(Clone, Copy)]
pub struct PageContext {
    session: StoredValue<Rc<PageSession>, LocalStorage>,
    pub turn: RwSignal<TurnState>,
    /// The session's memory: its latest snapshot, set by the session itself whenever it
    /// takes on a new one, so every count and list derived from it stays current. The
    /// page's only watch of the session's memory (see [`PageContext::new`]).
    pub memory: RwSignal<Arc<FeedbackMemory>>,
    pub memory_count: Memo<usize>,
    /// Stored rows the session could not read, as of its last load.
    pub unreadable: RwSignal<Arc<Vec<UnreadableRecord>>>,
    /// Set when stored memory could not be read; shown instead of a count.
    pub memory_error: RwSignal<Option<String>>,
    /// The outcome of the last change made in the memory browser or the import panel.
    pub memory_notice: RwSignal<Option<Notice>>,
    /// Where the embedding model stands, as the embedder last reported.
    pub embedder_status: RwSignal<EmbedderStatus>,
}

/// A one-line outcome shown to the user; errors are styled and announced as alerts.
#[derive(Clone, Debug, PartialEq)]
pub struct Notice {
    pub text: String,
    pub is_error: bool,
}

impl Notice {
    pub fn done(text: impl Into<String>) -> Self {
        Notice {
            text: text.into(),
            is_error: false,
        }
    }

    pub fn failed(error: impl std::fmt::Display) -> Self {
        Notice {
            text: error.to_string(),
            is_error: true,
        }
    }
}

impl PageContext {
    /// Watches the session's memory and unreadable rows, the one place the page does:
    /// every view reads these signals, never the session's snapshot directly.
    pub fn new(session: Rc<PageSession>, embedder_status: RwSignal<EmbedderStatus>) -> Self {
        let memory = RwSignal::new(session.memory());
        session.watch_memory(move |snapshot| memory.set(snapshot));
        let unreadable = RwSignal::new(session.unreadable());
        session.watch_unreadable(move |rows| unreadable.set(rows));
        PageContext {
            session: StoredValue::new_local(session),
            turn: RwSignal::new(TurnState::Idle),
            memory,
            memory_count: Memo::new(move |_| memory.with(|m| m.current().count())),
            unreadable,
            memory_error: RwSignal::new(None),
            memory_notice: RwSignal::new(None),
            embedder_status,
        }
    }

    /// Shows the outcome of a change. What is shown of the memory follows the session's
    /// snapshot by itself, a refused change (stale version, re-read store) included.
    pub fn report<T, E: std::fmt::Display>(
        &self,
        outcome: Result<T, E>,
        done: impl FnOnce(T) -> String,
    ) {
        let notice = match outcome {
            Ok(value) => Notice::done(done(value)),
            Err(error) => Notice::failed(error),
        };
        self.memory_notice.set(Some(notice));
    }

    /// Re-reads the store (another tab wrote); the new snapshot reaches every view.
    pub async fn reload_memory(&self) {
        match self.session().reload().await {
            Ok(_) => self.memory_error.set(None),
            Err(e) => self.memory_error.set(Some(e.to_string())),
        }
    }

    pub fn session(&self) -> Rc<PageSession> {
        self.session.get_value()
    }

    pub fn answered_turn(&self) -> Option<Turn> {
        match self.turn.get() {
            TurnState::Answered(turn) => Some(*turn),
            _ => None,
        }
    }
}

pub fn use_page() -> PageContext {
    expect_context::<PageContext>()
}
