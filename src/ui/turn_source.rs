//! The turn a correction or a confirmation is about: one answered in this visit, or
//! one kept from an earlier visit, which the session makes whole again first.

use remind_app::ask::{AskError, Turn};
use remind_app::conversation::SavedTurn;

use crate::wiring::PageSession;

#[derive(Clone, Debug, PartialEq)]
pub enum TurnSource {
    Live(Box<Turn>),
    Saved(SavedTurn),
}

impl TurnSource {
    pub fn question(&self) -> &str {
        match self {
            TurnSource::Live(turn) => &turn.prepared.question,
            TurnSource::Saved(saved) => &saved.question,
        }
    }

    /// The whole turn, as the use-cases take it.
    pub async fn resolve(&self, session: &PageSession) -> Result<Turn, AskError> {
        match self {
            TurnSource::Live(turn) => Ok((**turn).clone()),
            TurnSource::Saved(saved) => session.resume_turn(saved).await,
        }
    }
}
