//! The conversation (issue 18), through the session the page drives: a temporary
//! turn reads no lesson and writes nothing, a turn kept in the conversation log is
//! made whole again after a reload and can still be corrected and confirmed, and the
//! log keeps what the page showed.
#![cfg(not(target_arch = "wasm32"))]

use remind_test_support as support;

use std::cell::RefCell;

use remind_app::confirm::ExampleError;
use remind_app::conversation::{
    ConversationError, ConversationKeeper, ConversationLog, Conversations,
};
use remind_app::correct::{Correction, CorrectionOutcome};
use remind_app::ports::{MemoryStore, ReplyStream, StopSignal};
use remind_app::session::AskMode;
use remind_core::memory_key::MemoryKey;
use remind_core::record::{Reach, RecordKind};
use remind_core::write_gate::Durability;
use support::scripted::{SharedStore, TestSession, TickingClock, block_on, session_over};

const SYNONYM: &str = "when I ask for like, I want a synonym.";

fn lasting(text: &str) -> Correction {
    Correction {
        clarification: text.into(),
        durability: Durability::Lasting,
        reach: Reach::default(),
    }
}

/// A session whose memory holds the synonym lesson for "What is like < fast > ?".
fn taught(store: &SharedStore) -> TestSession {
    let session = session_over(store, "tab");
    let turn = block_on(session.ask("What is like < fast > ?")).unwrap();
    block_on(session.correct(&turn, lasting(SYNONYM))).unwrap();
    session
}

#[derive(Default)]
struct LogInMemory(RefCell<Option<Conversations>>);

impl ConversationLog for LogInMemory {
    fn load(&self) -> Result<Option<Conversations>, ConversationError> {
        Ok(self.0.borrow().clone())
    }

    fn save(&self, conversations: &Conversations) -> Result<(), ConversationError> {
        *self.0.borrow_mut() = Some(conversations.clone());
        Ok(())
    }
}

#[test]
fn a_temporary_turn_reads_no_lesson_and_writes_nothing() {
    let store = SharedStore::default();
    let session = taught(&store);
    let events_before = block_on(store.load_turn_events()).unwrap();
    let records_before = block_on(store.load()).unwrap();

    let turn = block_on(session.ask_temporarily("What is like < big > ?")).unwrap();

    assert!(turn.prepared.applied.is_empty());
    assert!(turn.prepared.examples.is_empty());
    assert!(turn.prepared.breakdown.clarifications.is_empty());
    assert!(
        !turn.prepared.query.contains(SYNONYM),
        "{}",
        turn.prepared.query
    );
    assert_eq!(
        turn.reply.understanding.as_deref(),
        Some("a word that sounds like for big")
    );
    assert_eq!(block_on(store.load_turn_events()).unwrap(), events_before);
    assert_eq!(block_on(store.load()).unwrap(), records_before);
}

#[test]
fn the_same_question_outside_a_temporary_conversation_gets_the_lesson() {
    let store = SharedStore::default();
    let session = taught(&store);
    let turn = block_on(session.ask("What is like < big > ?")).unwrap();
    assert_eq!(turn.prepared.applied.len(), 1);
    assert_eq!(
        turn.reply.understanding.as_deref(),
        Some("the synonym for big")
    );
}

#[test]
fn the_log_keeps_a_turn_as_the_page_showed_it() {
    let store = SharedStore::default();
    let session = taught(&store);
    let turn = block_on(session.ask("What is like < big > ?")).unwrap();
    let keeper = ConversationKeeper::new(LogInMemory::default(), TickingClock::default());

    let kept = keeper.keep(&turn, |_| "fits its scope".into()).unwrap();

    let saved = &kept.current[0];
    assert_eq!(saved.question, "What is like < big > ?");
    assert_eq!(saved.reply, turn.reply);
    assert_eq!(saved.completion, turn.completion.text);
    assert_eq!(saved.prompt, turn.prepared.request.prompt.display_text());
    assert_eq!(saved.lessons.len(), 1);
    assert_eq!(saved.lessons[0].clarification, SYNONYM);
    assert_eq!(saved.lessons[0].taught_on, "What is like < fast > ?");
    assert_eq!(saved.lessons[0].because, "fits its scope");
    assert_eq!(saved.one_time, None);
}

#[test]
fn a_turn_asked_again_for_this_turn_only_keeps_its_clarification_in_the_log() {
    let store = SharedStore::default();
    let session = session_over(&store, "tab");
    let turn =
        block_on(session.ask_with("What is like < big > ?", Some("I want an antonym"))).unwrap();
    let keeper = ConversationKeeper::new(LogInMemory::default(), TickingClock::default());
    let kept = keeper.keep(&turn, |_| String::new()).unwrap();
    assert_eq!(
        kept.current[0].one_time.as_deref(),
        Some("I want an antonym")
    );
}

#[test]
fn a_kept_turn_is_corrected_after_a_reload_as_its_question_s_lesson() {
    let store = SharedStore::default();
    let first_visit = session_over(&store, "visit-1");
    let turn = block_on(first_visit.ask("What is like < fast > ?")).unwrap();
    let keeper = ConversationKeeper::new(LogInMemory::default(), TickingClock::default());
    let saved = keeper.keep(&turn, |_| String::new()).unwrap().current[0].clone();

    let second_visit = session_over(&store, "visit-2");
    let resumed = block_on(second_visit.resume_turn(&saved)).unwrap();
    assert_eq!(resumed.id, saved.id);
    assert_eq!(resumed.reply, saved.reply);
    let outcome = block_on(second_visit.correct(&resumed, lasting(SYNONYM))).unwrap();

    let CorrectionOutcome::Saved(written) = outcome else {
        panic!("the correction is stored: {outcome:?}");
    };
    assert_eq!(
        written.current.key,
        MemoryKey::of_question("What is like < fast > ?")
    );
    assert!(
        matches!(&written.current.kind, RecordKind::Clarification { text, .. } if text == SYNONYM)
    );
    let next = block_on(second_visit.ask("What is like < big > ?")).unwrap();
    assert_eq!(
        next.reply.understanding.as_deref(),
        Some("the synonym for big")
    );
}

#[test]
fn a_kept_turn_is_confirmed_after_a_reload_as_a_verified_example() {
    let store = SharedStore::default();
    let first_visit = session_over(&store, "visit-1");
    let turn = block_on(first_visit.ask("What is the opposite of < fast > ?")).unwrap();
    let keeper = ConversationKeeper::new(LogInMemory::default(), TickingClock::default());
    let saved = keeper.keep(&turn, |_| String::new()).unwrap().current[0].clone();

    let second_visit = session_over(&store, "visit-2");
    let resumed = block_on(second_visit.resume_turn(&saved)).unwrap();
    let confirmed = block_on(second_visit.confirm_answer(&resumed)).unwrap();

    assert!(matches!(
        &confirmed.example.current.kind,
        RecordKind::VerifiedExample { understanding, .. } if Some(understanding) == saved.reply.understanding.as_ref()
    ));
}

#[test]
fn a_reply_the_user_stopped_is_never_kept_as_a_verified_example_even_after_a_reload() {
    let store = SharedStore::default();
    let first_visit = session_over(&store, "visit-1");
    let stop = StopSignal::new();
    let button = stop.clone();
    let reply = ReplyStream::new(stop, |text| {
        if text.split_whitespace().count() >= 3 {
            button.stop();
        }
    });
    let question = "What is the opposite of < fast > ?";
    let turn = block_on(first_visit.ask_shown(question, AskMode::WithMemory, &reply)).unwrap();
    assert!(turn.completion.is_stopped_by_user());
    assert!(matches!(
        block_on(first_visit.confirm_answer(&turn)),
        Err(ExampleError::StoppedByUser)
    ));

    let keeper = ConversationKeeper::new(LogInMemory::default(), TickingClock::default());
    let saved = keeper.keep(&turn, |_| String::new()).unwrap().current[0].clone();
    assert!(saved.stopped_by_user);
    let second_visit = session_over(&store, "visit-2");
    let resumed = block_on(second_visit.resume_turn(&saved)).unwrap();
    assert!(matches!(
        block_on(second_visit.confirm_answer(&resumed)),
        Err(ExampleError::StoppedByUser)
    ));
    assert!(block_on(store.load()).unwrap().is_empty());
}
