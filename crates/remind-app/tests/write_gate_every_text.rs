//! The write gate covers every text a record stores (the issue "secrets get through"):
//! a clarification, the question beside it, an edit made in the memory browser, an
//! accepted rule and its question, a confirmed reply's question, and imported records,
//! each refused in every secret form the gate knows, with nothing stored.
#![cfg(not(target_arch = "wasm32"))]

use remind_test_support as support;
use remind_test_support::session_reads::SessionReads;

use serde_json::{Value, json};

use remind_app::confirm::ExampleError;
use remind_app::correct::{CorrectError, Correction, CorrectionOutcome};
use remind_app::reflect::ReflectError;
use remind_app::revise::ReviseError;
use remind_app::transfer::TransferError;
use remind_core::export::Embeddings;
use remind_core::import::ImportError;
use remind_core::memory::MemoryError;
use remind_core::memory_key::MemoryKey;
use remind_core::record::Reach;
use remind_core::reflection::RuleProposal;
use remind_core::write_gate::{Durability, Refusal, StoredText};
use support::scripted::{SharedStore, TestSession, block_on, session_over};

const QUESTION: &str = "What is like < fast > ?";
const SYNONYM: &str = "by like I always mean a synonym of the word";

/// One text per secret form the issue names (and the gate's other shapes), with the
/// kind the user is told.
const SECRETS: &[(&str, &str)] = &[
    (
        "my session is eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "a JWT",
    ),
    ("the key id is AKIAIOSFODNN7EXAMPLE", "an AWS access key ID"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "an AWS secret access key",
    ),
    (
        "use wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY for the bucket",
        "an AWS secret access key",
    ),
    (
        "connect to postgres://admin:S3cretPassw0rd@db.example.com/app",
        "a password inside a URL",
    ),
    (
        "mongodb+srv://app:pa55word@cluster0.example.net",
        "a password inside a URL",
    ),
    ("redis://:hunter2@cache:6379", "a password inside a URL"),
    (
        "post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "a Slack webhook URL",
    ),
    ("ghp_16C7e42F292c6912E7710c838347Ae178B4a", "a GitHub token"),
    ("my key is sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv", "an API key"),
    (
        "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy",
        "a Slack token",
    ),
    (
        "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI",
        "a Google API key",
    ),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "a private key"),
    ("send Bearer 8f2a9c1d7e3b4a6f", "a bearer token"),
    ("pw: Tr0ub4dor&3", "a password or key"),
    ("pwd=hunter2", "a password or key"),
    ("password: hunter2", "a password or key"),
    ("my password is swordfish", "a password or key"),
    ("passphrase correct-horse-battery-staple", "a passphrase"),
    ("the door passcode is 482913", "a passcode"),
    ("my PIN is 4821", "a PIN"),
    ("the password for the bank: Qw3rty!9", "a password or key"),
    ("my bank password is hunter2", "a password or key"),
    ("card 4111 1111 1111 1111", "a card number"),
    ("card 5500-0000-0000-0004", "a card number"),
    ("card 4111.1111.1111.1111", "a card number"),
];

/// Questions a user might type a secret into.
const SECRET_QUESTIONS: &[(&str, &str)] = &[
    (
        "What is like < fast > ? my password is hunter2",
        "a password or key",
    ),
    (
        "What is like < fast > ? key AKIAIOSFODNN7EXAMPLE",
        "an AWS access key ID",
    ),
    (
        "What is like < fast > ? (postgres://admin:S3cretPassw0rd@db)",
        "a password inside a URL",
    ),
    (
        "What is like < fast > ? sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv",
        "an API key",
    ),
];

fn lasting(text: &str) -> Correction {
    Correction {
        clarification: text.into(),
        durability: Durability::Lasting,
        reach: Reach::default(),
    }
}

fn fresh() -> (SharedStore, TestSession) {
    let store = SharedStore::default();
    let session = session_over(&store, "tab");
    (store, session)
}

fn proposal(question: &str, rule: &str) -> RuleProposal {
    RuleProposal {
        question: question.into(),
        key: MemoryKey::of_question(question),
        misread: "a word that sounds like fast".into(),
        user_words: "no, I meant a word with the same meaning".into(),
        rule: rule.into(),
        applied: Vec::new(),
    }
}

// --- Clarifications and questions ---------------------------------------------------

#[test]
fn a_clarification_holding_any_secret_form_is_refused_and_nothing_is_stored() {
    let (store, session) = fresh();
    let turn = block_on(session.ask(QUESTION)).expect("the model answers");
    for &(secret, kind) in SECRETS {
        assert_eq!(
            block_on(session.correct(&turn, lasting(secret))),
            Err(CorrectError::Refused(Refusal::Secret {
                text: StoredText::Clarification,
                kind
            })),
            "{secret}"
        );
    }
    assert!(store.0.snapshot().is_empty());
    assert_eq!(session.current_count(), 0);
}

#[test]
fn a_correction_of_a_question_holding_a_password_or_key_is_refused_and_nothing_is_stored() {
    let (store, session) = fresh();
    for &(question, kind) in SECRET_QUESTIONS {
        let turn = block_on(session.ask(question)).expect("the model answers");
        assert_eq!(
            block_on(session.correct(&turn, lasting(SYNONYM))),
            Err(CorrectError::Refused(Refusal::Secret {
                text: StoredText::Question,
                kind
            })),
            "{question}"
        );
    }
    assert!(store.0.snapshot().is_empty());
    assert_eq!(session.current_count(), 0);
}

#[test]
fn the_refusal_of_a_secret_question_tells_the_user_to_ask_again_without_it() {
    let (_store, session) = fresh();
    let turn = block_on(session.ask(SECRET_QUESTIONS[0].0)).expect("the model answers");
    let refused = block_on(session.correct(&turn, lasting(SYNONYM)));
    let message = refused.expect_err("refused").to_string();
    assert!(
        message.contains("the question") && message.contains("ask again"),
        "{message}"
    );
}

#[test]
fn a_one_time_clarification_of_a_secret_question_applies_to_the_turn_and_stores_nothing() {
    let (store, session) = fresh();
    let turn = block_on(session.ask(SECRET_QUESTIONS[0].0)).expect("the model answers");
    let outcome = block_on(session.correct(
        &turn,
        Correction {
            clarification: SYNONYM.into(),
            durability: Durability::JustThisOnce,
            reach: Reach::default(),
        },
    ));
    assert_eq!(
        outcome,
        Ok(CorrectionOutcome::ThisTurnOnly {
            clarification: SYNONYM.into()
        })
    );
    assert!(store.0.snapshot().is_empty());
}

#[test]
fn an_ordinary_question_about_passwords_is_corrected_and_stored() {
    let (store, session) = fresh();
    let turn = block_on(session.ask("I forgot my password, how do I reset it?"))
        .expect("the model answers");
    let outcome =
        block_on(session.correct(&turn, lasting("I use Bitwarden as my password manager")));
    assert!(
        matches!(outcome, Ok(CorrectionOutcome::Saved(_))),
        "{outcome:?}"
    );
    assert_eq!(store.0.snapshot().len(), 1);
}

// --- Edits in the memory browser ----------------------------------------------------

#[test]
fn an_edit_whose_new_text_holds_a_secret_is_refused_and_the_old_text_stays() {
    let (store, session) = fresh();
    let turn = block_on(session.ask(QUESTION)).expect("the model answers");
    block_on(session.correct(&turn, lasting(SYNONYM))).expect("the lesson is saved");
    let before = store.0.snapshot();
    let current = session.current_records().remove(0);
    for &(secret, kind) in SECRETS {
        assert_eq!(
            block_on(session.edit(&current.id, current.version, secret)),
            Err(ReviseError::Memory(MemoryError::Refused(Refusal::Secret {
                text: StoredText::EditedLesson,
                kind
            }))),
            "{secret}"
        );
    }
    assert_eq!(store.0.snapshot(), before);
    let still = session.current_records().remove(0);
    assert_eq!(still.clarification(), Some(SYNONYM));
    assert_eq!(still.version, current.version);
}

// --- Accepted rules -----------------------------------------------------------------

#[test]
fn an_accepted_rule_holding_a_secret_is_refused_and_the_preview_warns() {
    let (store, session) = fresh();
    for &(secret, kind) in SECRETS {
        let proposed = proposal(QUESTION, secret);
        assert_eq!(
            session.preview_accept(&proposed, None).refusal,
            Some(Refusal::Secret {
                text: StoredText::Rule,
                kind
            }),
            "{secret}"
        );
        assert_eq!(
            block_on(session.accept_rule(&proposed, None, None)),
            Err(ReflectError::Refused(Refusal::Secret {
                text: StoredText::Rule,
                kind
            })),
            "{secret}"
        );
        let clean = proposal(QUESTION, "when I ask what is like X, I want a synonym");
        assert_eq!(
            block_on(session.accept_rule(&clean, Some(secret.to_string()), None)),
            Err(ReflectError::Refused(Refusal::Secret {
                text: StoredText::Rule,
                kind
            })),
            "an edit of the rule: {secret}"
        );
    }
    assert!(store.0.snapshot().is_empty());
}

#[test]
fn an_accepted_rule_for_a_question_holding_a_secret_is_refused() {
    let (store, session) = fresh();
    for &(question, kind) in SECRET_QUESTIONS {
        let proposed = proposal(question, "when I ask what is like X, I want a synonym");
        assert_eq!(
            session.preview_accept(&proposed, None).refusal,
            Some(Refusal::Secret {
                text: StoredText::Question,
                kind
            }),
            "{question}"
        );
        assert_eq!(
            block_on(session.accept_rule(&proposed, None, None)),
            Err(ReflectError::Refused(Refusal::Secret {
                text: StoredText::Question,
                kind
            })),
            "{question}"
        );
    }
    assert!(store.0.snapshot().is_empty());
}

// --- Confirmed replies --------------------------------------------------------------

#[test]
fn a_confirmed_reply_to_a_question_holding_a_secret_is_refused() {
    let (store, session) = fresh();
    for &(question, kind) in SECRET_QUESTIONS {
        let turn = block_on(session.ask(question)).expect("the model answers");
        assert_eq!(
            block_on(session.confirm_answer(&turn)),
            Err(ExampleError::Refused(Refusal::Secret {
                text: StoredText::Question,
                kind
            })),
            "{question}"
        );
    }
    assert!(store.0.snapshot().is_empty());
}

// --- Imported records ---------------------------------------------------------------

/// An export of one lesson, with `change` applied to its record.
fn export_with(change: impl FnOnce(&mut Value)) -> Vec<u8> {
    let (_store, session) = fresh();
    let turn = block_on(session.ask(QUESTION)).expect("the model answers");
    block_on(session.correct(&turn, lasting(SYNONYM))).expect("the lesson is saved");
    let text = block_on(session.export_json(Embeddings::Omit)).expect("the export is written");
    let mut document: Value = serde_json::from_str(&text).expect("the export is JSON");
    change(&mut document["records"][0]);
    serde_json::to_vec(&document).expect("the document is written")
}

fn import_problems(bytes: &[u8]) -> Vec<ImportError> {
    let (store, session) = fresh();
    let refused = block_on(session.preview_import(bytes));
    assert!(store.0.snapshot().is_empty());
    match refused {
        Err(TransferError::Rejected(rejection)) => rejection.problems,
        other => panic!("the file is refused, not {other:?}"),
    }
}

#[test]
fn an_imported_lesson_holding_any_secret_form_is_refused() {
    for &(secret, kind) in SECRETS {
        let bytes = export_with(|record| record["clarification"] = json!(secret));
        let problems = import_problems(&bytes);
        assert!(
            problems.iter().any(|p| matches!(
                p,
                ImportError::Secret { path, kind: found }
                    if path.ends_with("clarification") && *found == kind
            )),
            "{secret}: {problems:?}"
        );
    }
}

#[test]
fn an_imported_question_holding_a_secret_is_refused() {
    for &(question, kind) in SECRET_QUESTIONS {
        let bytes = export_with(|record| {
            record["question"] = json!(question);
            record["key"] = json!(MemoryKey::of_question(question).as_str());
        });
        let problems = import_problems(&bytes);
        assert!(
            problems.iter().any(|p| matches!(
                p,
                ImportError::Secret { path, kind: found }
                    if path.ends_with("question") && *found == kind
            )),
            "{question}: {problems:?}"
        );
    }
}
