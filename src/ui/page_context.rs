//! What every component shares: the session and the state of the current turn.

use std::rc::Rc;

use leptos::prelude::*;

use crate::app::ask::Turn;
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
}

impl PageContext {
    pub fn new(session: Rc<PageSession>) -> Self {
        PageContext {
            session: StoredValue::new_local(session),
            turn: RwSignal::new(TurnState::Idle),
            memory_count: RwSignal::new(0),
            memory_error: RwSignal::new(None),
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
