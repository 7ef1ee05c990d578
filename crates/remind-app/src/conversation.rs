//! The conversation the page shows: its turns as the user saw them, kept between
//! visits so a reload loses none of them. A conversation teaches nothing: lessons are
//! written only by a correction or a confirmation, never from here.
//!
//! "New conversation" sets the current one aside (the last [`EARLIER_KEPT`] stay, to be
//! opened again); "clear" erases the current one from the device. A temporary
//! conversation is never given to this log at all.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::ask::Turn;
use crate::ports::{Clock, StoreError};
use remind_core::learning_curve::TurnId;
use remind_core::record::{RecordId, Timestamp};
use remind_core::reply::ParsedReply;
use remind_core::turn::AppliedBecause;

/// How many turns one conversation keeps; the oldest go first. Each turn carries its
/// prompt, so this bounds what the log asks of the browser's storage.
pub const TURNS_KEPT: usize = 200;
/// How many earlier conversations are kept after "new conversation".
pub const EARLIER_KEPT: usize = 10;

/// One answered turn as it was shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedTurn {
    pub id: TurnId,
    pub asked_at: Timestamp,
    pub question: String,
    /// The model's text as it came back, for asking again with the same reply.
    pub completion: String,
    pub reply: ParsedReply,
    /// The stored lessons that went with the turn, as they were then.
    pub lessons: Vec<SavedLesson>,
    /// The prompt exactly as sent, for "show prompt".
    pub prompt: String,
    /// The user's clarification for this turn only, when the turn was asked again with
    /// one.
    #[serde(default)]
    pub one_time: Option<String>,
    /// The user stopped the reply before it finished: it is not the model's whole
    /// answer, so it is never confirmed into memory.
    #[serde(default)]
    pub stopped_by_user: bool,
}

/// A lesson applied to a saved turn, as it read then (it may since have changed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedLesson {
    pub id: RecordId,
    pub version: u32,
    pub clarification: String,
    pub taught_on: String,
    /// Why it went with the turn, in the words the page showed.
    pub because: String,
}

impl SavedTurn {
    /// The turn as the log keeps it; `because` words why each lesson was applied.
    pub fn of(
        turn: &Turn,
        asked_at: Timestamp,
        because: impl Fn(&AppliedBecause) -> String,
    ) -> Self {
        let lessons = turn
            .prepared
            .applied
            .iter()
            .map(|applied| SavedLesson {
                id: applied.record.id.clone(),
                version: applied.record.version,
                clarification: applied
                    .record
                    .clarification()
                    .unwrap_or_default()
                    .to_string(),
                taught_on: applied.record.question.clone(),
                because: because(&applied.because),
            })
            .collect();
        SavedTurn {
            id: turn.id.clone(),
            asked_at,
            question: turn.prepared.question.clone(),
            completion: turn.completion.text.clone(),
            reply: turn.reply.clone(),
            lessons,
            prompt: turn.prepared.request.prompt.display_text(),
            one_time: turn.prepared.one_time_clarification().map(str::to_string),
            stopped_by_user: turn.completion.is_stopped_by_user(),
        }
    }
}

/// Everything the log holds: the conversation in view and the ones set aside.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Conversations {
    pub current: Vec<SavedTurn>,
    /// Newest first.
    #[serde(default)]
    pub earlier: Vec<Vec<SavedTurn>>,
}

impl Conversations {
    /// `turn` added to the current conversation, the oldest turns dropped past
    /// [`TURNS_KEPT`].
    pub fn with_turn(mut self, turn: SavedTurn) -> Self {
        self.current.push(turn);
        let excess = self.current.len().saturating_sub(TURNS_KEPT);
        self.current.drain(..excess);
        self
    }

    /// The current conversation set aside (if it has any turn) and an empty one begun.
    pub fn started_afresh(mut self) -> Self {
        let finished = std::mem::take(&mut self.current);
        if !finished.is_empty() {
            self.earlier.insert(0, finished);
            self.earlier.truncate(EARLIER_KEPT);
        }
        self
    }

    /// Earlier conversation `index` (newest first) brought back into view; the one in
    /// view is set aside in its place. `None` when there is no such conversation.
    pub fn reopened(mut self, index: usize) -> Option<Self> {
        if index >= self.earlier.len() {
            return None;
        }
        let reopened = self.earlier.remove(index);
        let mut next = self.started_afresh();
        next.current = reopened;
        Some(next)
    }

    /// The conversation in view erased; the earlier ones stay.
    pub fn cleared(mut self) -> Self {
        self.current.clear();
        self
    }
}

/// Where the conversations live between visits (the browser's local storage).
pub trait ConversationLog {
    /// `Ok(None)` when nothing was ever kept.
    fn load(&self) -> Result<Option<Conversations>, ConversationError>;
    fn save(&self, conversations: &Conversations) -> Result<(), ConversationError>;
}

#[derive(Debug, Error, Clone, PartialEq)]
pub enum ConversationError {
    #[error(
        "the earlier conversation could not be read ({0}); new turns are not kept until you clear it"
    )]
    Unreadable(String),
    #[error("the conversation was not kept: {0}")]
    NotKept(#[from] StoreError),
}

/// The page's conversations over their log: every change is saved before it is shown
/// as kept, and an unreadable log is never written over unasked.
pub struct ConversationKeeper<L, C> {
    log: L,
    clock: C,
}

impl<L: ConversationLog, C: Clock> ConversationKeeper<L, C> {
    pub fn new(log: L, clock: C) -> Self {
        ConversationKeeper { log, clock }
    }

    /// What the log holds; empty when nothing was ever kept.
    pub fn load(&self) -> Result<Conversations, ConversationError> {
        Ok(self.log.load()?.unwrap_or_default())
    }

    /// Adds an answered turn to the conversation in view, asked now; `because` words
    /// why each lesson was applied. Returns what is now kept.
    pub fn keep(
        &self,
        turn: &Turn,
        because: impl Fn(&AppliedBecause) -> String,
    ) -> Result<Conversations, ConversationError> {
        let saved = SavedTurn::of(turn, self.clock.now(), because);
        self.keep_saved(saved)
    }

    fn keep_saved(&self, turn: SavedTurn) -> Result<Conversations, ConversationError> {
        self.change(|conversations| conversations.with_turn(turn))
    }

    /// "New conversation": the one in view is set aside.
    pub fn start_afresh(&self) -> Result<Conversations, ConversationError> {
        self.change(Conversations::started_afresh)
    }

    /// Brings earlier conversation `index` back into view.
    pub fn reopen(&self, index: usize) -> Result<Conversations, ConversationError> {
        let conversations = self.load()?;
        let fallback = conversations.clone();
        let next = conversations.reopened(index).unwrap_or(fallback);
        self.log.save(&next)?;
        Ok(next)
    }

    /// "Clear": the conversation in view is erased from the device. An unreadable log
    /// is replaced by an empty one, the only way past it the user is offered.
    pub fn clear(&self) -> Result<Conversations, ConversationError> {
        let next = match self.load() {
            Ok(conversations) => conversations.cleared(),
            Err(ConversationError::Unreadable(_)) => Conversations::default(),
            Err(other) => return Err(other),
        };
        self.log.save(&next)?;
        Ok(next)
    }

    fn change(
        &self,
        change: impl FnOnce(Conversations) -> Conversations,
    ) -> Result<Conversations, ConversationError> {
        let next = change(self.load()?);
        self.log.save(&next)?;
        Ok(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[derive(Default)]
    struct LogInMemory {
        text: RefCell<Option<String>>,
        refuse_writes: bool,
    }

    impl ConversationLog for LogInMemory {
        fn load(&self) -> Result<Option<Conversations>, ConversationError> {
            self.text
                .borrow()
                .as_deref()
                .map(|text| {
                    serde_json::from_str(text)
                        .map_err(|e| ConversationError::Unreadable(e.to_string()))
                })
                .transpose()
        }

        fn save(&self, conversations: &Conversations) -> Result<(), ConversationError> {
            if self.refuse_writes {
                return Err(StoreError::QuotaExceeded.into());
            }
            *self.text.borrow_mut() = Some(serde_json::to_string(conversations).unwrap());
            Ok(())
        }
    }

    struct FixedClock;

    impl Clock for FixedClock {
        fn now(&self) -> Timestamp {
            Timestamp(1)
        }
    }

    fn keeper_of(log: LogInMemory) -> ConversationKeeper<LogInMemory, FixedClock> {
        ConversationKeeper::new(log, FixedClock)
    }

    fn saved(question: &str) -> SavedTurn {
        SavedTurn {
            id: TurnId(format!("turn-{question}")),
            asked_at: Timestamp(1),
            question: question.into(),
            completion: "the synonym for fast END quick".into(),
            reply: ParsedReply::default(),
            lessons: Vec::new(),
            prompt: "prompt".into(),
            one_time: None,
            stopped_by_user: false,
        }
    }

    fn questions(turns: &[SavedTurn]) -> Vec<&str> {
        turns.iter().map(|t| t.question.as_str()).collect()
    }

    #[test]
    fn kept_turns_are_read_back_in_the_order_they_were_asked() {
        let keeper = keeper_of(LogInMemory::default());
        keeper.keep_saved(saved("one")).unwrap();
        keeper.keep_saved(saved("two")).unwrap();
        assert_eq!(questions(&keeper.load().unwrap().current), ["one", "two"]);
    }

    #[test]
    fn a_conversation_keeps_its_latest_turns_when_it_grows_past_the_limit() {
        let mut conversations = Conversations::default();
        for n in 0..TURNS_KEPT + 3 {
            conversations = conversations.with_turn(saved(&n.to_string()));
        }
        assert_eq!(conversations.current.len(), TURNS_KEPT);
        assert_eq!(conversations.current[0].question, "3");
    }

    #[test]
    fn a_new_conversation_sets_the_old_one_aside_and_it_can_be_reopened() {
        let keeper = keeper_of(LogInMemory::default());
        keeper.keep_saved(saved("first talk")).unwrap();
        let fresh = keeper.start_afresh().unwrap();
        assert!(fresh.current.is_empty());
        assert_eq!(questions(&fresh.earlier[0]), ["first talk"]);
        keeper.keep_saved(saved("second talk")).unwrap();
        let reopened = keeper.reopen(0).unwrap();
        assert_eq!(questions(&reopened.current), ["first talk"]);
        assert_eq!(questions(&reopened.earlier[0]), ["second talk"]);
    }

    #[test]
    fn starting_afresh_with_nothing_asked_sets_nothing_aside() {
        let fresh = Conversations::default().started_afresh();
        assert!(fresh.earlier.is_empty());
    }

    #[test]
    fn only_the_latest_earlier_conversations_are_kept() {
        let mut conversations = Conversations::default();
        for n in 0..EARLIER_KEPT + 2 {
            conversations = conversations
                .with_turn(saved(&n.to_string()))
                .started_afresh();
        }
        assert_eq!(conversations.earlier.len(), EARLIER_KEPT);
        assert_eq!(
            questions(&conversations.earlier[0]),
            [(EARLIER_KEPT + 1).to_string()]
        );
    }

    #[test]
    fn clearing_erases_the_conversation_in_view_and_keeps_the_earlier_ones() {
        let keeper = keeper_of(LogInMemory::default());
        keeper.keep_saved(saved("old")).unwrap();
        keeper.start_afresh().unwrap();
        keeper.keep_saved(saved("now")).unwrap();
        let cleared = keeper.clear().unwrap();
        assert!(cleared.current.is_empty());
        assert_eq!(questions(&cleared.earlier[0]), ["old"]);
        assert_eq!(keeper.load().unwrap(), cleared);
    }

    #[test]
    fn an_unreadable_log_is_reported_and_not_written_over_by_a_new_turn() {
        let log = LogInMemory::default();
        *log.text.borrow_mut() = Some("{not json".into());
        let keeper = keeper_of(log);
        assert!(matches!(
            keeper.load(),
            Err(ConversationError::Unreadable(_))
        ));
        assert!(matches!(
            keeper.keep_saved(saved("new")),
            Err(ConversationError::Unreadable(_))
        ));
        assert_eq!(keeper.log.text.borrow().as_deref(), Some("{not json"));
    }

    #[test]
    fn clearing_an_unreadable_log_leaves_an_empty_readable_one() {
        let log = LogInMemory::default();
        *log.text.borrow_mut() = Some("[1, 2".into());
        let keeper = keeper_of(log);
        assert_eq!(keeper.clear().unwrap(), Conversations::default());
        assert_eq!(keeper.load().unwrap(), Conversations::default());
    }

    #[test]
    fn a_refused_write_is_reported_and_the_log_keeps_what_it_had() {
        let keeper = keeper_of(LogInMemory {
            refuse_writes: true,
            ..LogInMemory::default()
        });
        assert!(matches!(
            keeper.keep_saved(saved("lost?")),
            Err(ConversationError::NotKept(StoreError::QuotaExceeded))
        ));
        assert_eq!(keeper.load().unwrap(), Conversations::default());
    }

    #[test]
    fn reopening_a_conversation_that_does_not_exist_changes_nothing() {
        let keeper = keeper_of(LogInMemory::default());
        keeper.keep_saved(saved("here")).unwrap();
        let after = keeper.reopen(4).unwrap();
        assert_eq!(questions(&after.current), ["here"]);
        assert!(after.earlier.is_empty());
    }
}
