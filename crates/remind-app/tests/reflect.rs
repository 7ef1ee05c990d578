//! Accepting a proposed rule, called directly rather than through a session: the gate
//! refuses a rule before the store is read.
#![cfg(not(target_arch = "wasm32"))]

use remind_app::ports::{Clock, IdSource};
use remind_app::reflect::{ReflectError, accept_rule};
use remind_core::memory_key::MemoryKey;
use remind_core::record::{RecordId, Timestamp};
use remind_core::reflection::RuleProposal;
use remind_core::write_gate::{MAX_CLARIFICATION_CHARS, Refusal, StoredText};
use remind_test_support::in_memory_store::InMemoryStore;

struct StoppedClock;

impl Clock for StoppedClock {
    fn now(&self) -> Timestamp {
        Timestamp(1)
    }
}

struct OneId;

impl IdSource for OneId {
    fn next_id(&self) -> RecordId {
        RecordId("rule".into())
    }
}

fn proposal(rule: &str) -> RuleProposal {
    let question = "What is like < fast > ?".to_string();
    RuleProposal {
        key: MemoryKey::of_question(&question),
        question,
        misread: "a word that sounds like fast".into(),
        user_words: "no, a word with the same meaning".into(),
        rule: rule.into(),
        applied: Vec::new(),
    }
}

#[test]
fn an_accepted_rule_too_long_to_keep_is_refused_as_the_rule() {
    let store = InMemoryStore::default();
    let edited = "keep it short ".repeat(200);
    let len = edited.trim().chars().count();
    assert!(len > MAX_CLARIFICATION_CHARS);
    let (memory, outcome) = futures::executor::block_on(accept_rule(
        &store,
        &StoppedClock,
        &OneId,
        &proposal("when I ask what is like X, I want a synonym"),
        Some(&edited),
        None,
    ));
    assert_eq!(memory, None, "refused before the store is read");
    let error = outcome.unwrap_err();
    assert_eq!(
        error,
        ReflectError::Refused(Refusal::TooLong {
            text: StoredText::Rule,
            len,
            max: MAX_CLARIFICATION_CHARS
        })
    );
    let message = error.to_string();
    assert!(
        message.starts_with("not saved: the rule is limited to") && message.contains("shorten it"),
        "{message}"
    );
}
