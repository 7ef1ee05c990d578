//! What every component shares: the session and the state of the current turn.

use std::rc::Rc;

use leptos::prelude::*;

use crate::app::ask::Turn;
use crate::app::ports::EmbedderStatus;
use crate::wiring::PageSession;

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
    pub memory_count: RwSignal<usize>,
    /// Set when stored memory could not be read; shown instead of a count.
    pub memory_error: RwSignal<Option<String>>,
    /// Bumped whenever the session's view of the memory changed, so every list that
    /// reads the session re-reads it.
    pub memory_revision: RwSignal<u64>,
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
    pub fn new(session: Rc<PageSession>, embedder_status: RwSignal<EmbedderStatus>) -> Self {
        PageContext {
            session: StoredValue::new_local(session),
            turn: RwSignal::new(TurnState::Idle),
            memory_count: RwSignal::new(0),
            memory_error: RwSignal::new(None),
            memory_revision: RwSignal::new(0),
            memory_notice: RwSignal::new(None),
            embedder_status,
        }
    }

    /// Call after anything that may have changed the session's memory (a save, a
    /// reload, an import): the counts and lists shown are read again.
    pub fn memory_changed(&self) {
        self.memory_count.set(self.session().current_count());
        self.memory_revision.update(|r| *r += 1);
    }

    /// Shows the outcome of a change and refreshes what is shown: a refused change
    /// (stale version) also refreshes, since the session re-read the store.
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
        self.memory_changed();
    }

    /// Re-reads the store (another tab wrote) and refreshes everything shown.
    pub async fn reload_memory(&self) {
        match self.session().reload().await {
            Ok(_) => self.memory_error.set(None),
            Err(e) => self.memory_error.set(Some(e.to_string())),
        }
        self.memory_changed();
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
