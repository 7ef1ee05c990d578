//! Learning from the user (issue 8), through the session the page drives: a general
//! rule proposed from a correction is stored only when the user accepts it, confirmed
//! replies come back as verified examples for similar questions, the prompt panel can
//! account for every part of the prompt, and the learning curve counts right.
#![cfg(not(target_arch = "wasm32"))]

use remind_test_support as support;
use remind_test_support::session_reads::SessionReads;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use remind_app::ask::Turn;
use remind_app::confirm::ExampleError;
use remind_app::correct::Correction;
use remind_app::openai_wire;
use remind_app::ports::CompletionRequest;
use remind_app::reflect::ReflectError;
use remind_app::revise::ReviseError;
use remind_app::session::{Ports, Session};
use remind_app::settings::Settings;
use remind_core::export::Embeddings;
use remind_core::import_plan::ImportMode;
use remind_core::learning_curve::{CurveBucket, TurnEvent, TurnEventKind, TurnId, learning_curve};
use remind_core::memory::MemoryError;
use remind_core::memory_key::MemoryKey;
use remind_core::prompt::{PromptMode, RenderedPrompt, SEPARATOR};
use remind_core::prompt_breakdown::ClarificationOrigin;
use remind_core::record::{Reach, RecordKind, RecordState, Source, Timestamp};
use remind_core::reflection::{NoProposal, RuleProposal};
use remind_core::request_pattern::RequestPattern;
use remind_core::turn::AppliedBecause;
use remind_core::verified_examples::{ExampleBudget, Similarity, example_key};
use remind_core::write_gate::{Durability, Refusal, StoredText};
use support::in_process_embeddings::NoEmbeddings;
use support::scripted::{
    CountingIds, ScriptedModel, SettingsInMemory, SharedStore, TestSession, TickingClock, block_on,
};

const RULE: &str = "when I ask what is like X, I want a synonym";
const USER_WORDS: &str = "no, I meant a word with the same meaning";

fn like_key() -> MemoryKey {
    MemoryKey::of_question("What is like < fast > ?")
}

fn ask(session: &TestSession, question: &str) -> Turn {
    block_on(session.ask(question)).expect("the model answers")
}

fn lasting(text: &str) -> Correction {
    Correction {
        clarification: text.into(),
        durability: Durability::Lasting,
        reach: Reach::default(),
    }
}

/// A test's view of the scripted model inside a session.
#[derive(Clone)]
struct Script {
    replies: Rc<RefCell<VecDeque<String>>>,
    requests: Rc<RefCell<Vec<CompletionRequest>>>,
}

impl Script {
    fn will_reply(&self, reply: &str) {
        self.replies.borrow_mut().push_back(reply.to_string());
    }

    fn last_request(&self) -> CompletionRequest {
        self.requests
            .borrow()
            .last()
            .cloned()
            .expect("a request was sent")
    }
}

/// A loaded session over `store` whose prompts carry at most `max_examples` verified
/// examples, with a handle on its model.
fn scripted_session(
    store: &SharedStore,
    ids: &'static str,
    max_examples: usize,
) -> (TestSession, Script) {
    let model = ScriptedModel::default();
    let script = Script {
        replies: model.next_replies.clone(),
        requests: model.requests.clone(),
    };
    let session = Session::new(Ports {
        store: store.clone(),
        llm: model,
        clock: TickingClock::default(),
        ids: CountingIds::new(ids),
        settings: SettingsInMemory::default(),
        embedder: NoEmbeddings,
    })
    .with_example_budget(ExampleBudget {
        max_examples,
        ..ExampleBudget::default()
    });
    block_on(session.load()).expect("the store loads");
    (session, script)
}

fn session(store: &SharedStore) -> (TestSession, Script) {
    scripted_session(store, "tab", ExampleBudget::default().max_examples)
}

/// A misread turn, and the model's rule proposal for it.
fn proposal_for(
    (session, script): &(TestSession, Script),
    question: &str,
    rule_reply: &str,
) -> RuleProposal {
    let turn = ask(session, question);
    script.will_reply(rule_reply);
    block_on(session.propose_rule(&turn, USER_WORDS)).expect("a rule is proposed")
}

// --- Reflection: proposals write nothing until accepted ---------------------------

#[test]
fn a_rule_proposal_never_writes_without_an_explicit_accept() {
    let store = SharedStore::default();
    let ctx = session(&store);
    let session = &ctx.0;
    let proposal = proposal_for(&ctx, "What is like < fast > ?", &format!(" {RULE} END"));

    assert_eq!(proposal.rule, RULE);
    assert_eq!(proposal.key, like_key());
    assert_eq!(proposal.misread, "a word that sounds like for fast");
    assert!(store.0.snapshot().is_empty(), "proposing stores nothing");
    assert_eq!(session.current_count(), 0);
    let preview = session.preview_accept(&proposal, None);
    assert!(store.0.snapshot().is_empty(), "previewing stores nothing");
    assert_eq!(preview.text, RULE);

    let reflection = ctx.1.last_request();
    let RenderedPrompt::Completion(prompt) = &reflection.prompt else {
        panic!("the default endpoint is in completion mode")
    };
    assert!(prompt.ends_with(&format!(
        "Question: What is like < fast > ?\nAssistant understood: a word that sounds like for fast\nUser said: {USER_WORDS}\nRule:"
    )));
    assert_eq!(reflection.stop, ["END", "\nQuestion:"]);
}

#[test]
fn rejecting_a_proposal_stores_nothing_and_the_next_question_is_unchanged() {
    let store = SharedStore::default();
    let ctx = session(&store);
    let session = &ctx.0;
    let _rejected = proposal_for(&ctx, "What is like < fast > ?", RULE);
    // Rejecting is not calling accept: there is no call that could write.
    let turn = ask(session, "What is like < slow > ?");
    assert_eq!(turn.prepared.applied, Vec::new());
    assert!(!turn.prepared.query.contains(RULE));
    assert!(store.0.snapshot().is_empty());
}

#[test]
fn accepting_an_edited_rule_stores_the_edited_text_as_a_confirmed_proposal() {
    let store = SharedStore::default();
    let ctx = session(&store);
    let session = &ctx.0;
    let proposal = proposal_for(&ctx, "What is like < fast > ?", RULE);
    let edited = "when I ask what is like a word, give me a synonym";
    let preview = session.preview_accept(&proposal, Some(edited));
    assert_eq!(preview.text, edited);
    assert_eq!((preview.replaces, preview.expected_version), (None, None));

    let written = block_on(session.accept_rule(
        &proposal,
        Some(edited.to_string()),
        preview.expected_version,
    ))
    .expect("the accepted rule is stored");
    assert_eq!(written.current.clarification(), Some(edited));
    assert_eq!(written.current.source, Source::UserConfirmedProposal);
    assert!(written.current.kind.is_clarification());
    assert_eq!(written.current.key, like_key());
    assert_eq!(store.0.snapshot(), std::slice::from_ref(&written.current));

    let next = ask(session, "What is like < slow > ?");
    assert!(
        next.prepared
            .query
            .ends_with(&format!("clarification: {edited}"))
    );
}

#[test]
fn accepting_a_rule_whose_key_has_a_current_lesson_supersedes_it_and_the_preview_said_so() {
    let store = SharedStore::default();
    let ctx = session(&store);
    let session = &ctx.0;
    let first = ask(session, "What is like < fast > ?");
    block_on(session.correct(&first, lasting("I mean a word that rhymes"))).unwrap();
    let old = session.current_records().remove(0);

    let proposal = proposal_for(&ctx, "what is like < happy > ?", RULE);
    let preview = session.preview_accept(&proposal, None);
    let replaces = preview.replaces.as_ref().expect("this replaces: …");
    assert_eq!(
        (&replaces.id, replaces.clarification()),
        (&old.id, old.clarification())
    );
    assert_eq!(preview.expected_version, Some(old.version));
    assert_eq!(preview.refusal, None);

    let written = block_on(session.accept_rule(&proposal, None, preview.expected_version)).unwrap();
    let replaced = written.replaced.expect("the current lesson is superseded");
    assert_eq!(replaced.id, old.id);
    assert_eq!(replaced.state, RecordState::Superseded);
    assert_eq!(
        session.current_records(),
        std::slice::from_ref(&written.current)
    );
    assert_eq!(session.history(&like_key()).len(), 2);
}

#[test]
fn accepting_with_a_stale_version_is_refused_with_the_current_lesson() {
    let store = SharedStore::default();
    let ctx = scripted_session(&store, "a", 2);
    let session = &ctx.0;
    let proposal = proposal_for(&ctx, "What is like < fast > ?", RULE);
    let preview = session.preview_accept(&proposal, None);

    let other_tab = scripted_session(&store, "b", 2).0;
    let turn = ask(&other_tab, "What is like < cold > ?");
    block_on(other_tab.correct(&turn, lasting("I want an antonym"))).unwrap();

    match block_on(session.accept_rule(&proposal, None, preview.expected_version)) {
        Err(ReflectError::Revise(ReviseError::Memory(MemoryError::Stale {
            expected: None,
            current: Some(current),
        }))) => assert_eq!(current.clarification(), Some("I want an antonym")),
        other => panic!("expected a stale refusal, got {other:?}"),
    }
    assert_eq!(store.0.snapshot().len(), 1);
}

#[test]
fn secrets_in_a_proposal_or_its_edit_are_refused_and_the_preview_warns() {
    let store = SharedStore::default();
    let ctx = session(&store);
    let session = &ctx.0;
    let proposal = proposal_for(
        &ctx,
        "What is like < fast > ?",
        "when I ask, use my password: hunter2 END",
    );
    let preview = session.preview_accept(&proposal, None);
    assert_eq!(
        preview.refusal,
        Some(Refusal::Secret {
            text: StoredText::Rule,
            kind: "a password or key"
        })
    );
    assert_eq!(
        block_on(session.accept_rule(&proposal, None, None)),
        Err(ReflectError::Refused(Refusal::Secret {
            text: StoredText::Rule,
            kind: "a password or key"
        }))
    );
    let edited = Some("my key is sk-proj-abcdefghijklmnop1234".to_string());
    assert!(matches!(
        block_on(session.accept_rule(&proposal, edited, None)),
        Err(ReflectError::Refused(Refusal::Secret { .. }))
    ));
    assert!(store.0.snapshot().is_empty());
}

#[test]
fn an_empty_or_garbage_reflection_is_no_proposal() {
    let store = SharedStore::default();
    let ctx = session(&store);
    let session = &ctx.0;
    let turn = ask(session, "What is like < fast > ?");
    ctx.1.will_reply("   END");
    assert_eq!(
        block_on(session.propose_rule(&turn, USER_WORDS)),
        Err(ReflectError::NoProposal(NoProposal::Empty))
    );
    ctx.1.will_reply("?!? 1 2 3");
    assert_eq!(
        block_on(session.propose_rule(&turn, USER_WORDS)),
        Err(ReflectError::NoProposal(NoProposal::NoWords))
    );
    assert_eq!(
        block_on(session.propose_rule(&turn, "  ")),
        Err(ReflectError::EmptyWords)
    );
    assert!(store.0.snapshot().is_empty());
}

// --- Verified examples ------------------------------------------------------------

#[test]
fn a_confirmed_answer_widens_a_lesson_it_got_by_similarity_to_questions_like_it() {
    let store = SharedStore::default();
    let ctx = session(&store);
    let session = &ctx.0;
    let misread = ask(session, "What is like < fast > ?");
    block_on(session.correct(&misread, lasting("I want a synonym"))).unwrap();
    // Close in wording, another kind of question: the lesson goes by similarity.
    let right = ask(session, "What's like < fast > ?");
    assert!(matches!(
        right.prepared.applied[0].because,
        AppliedBecause::Similar { .. }
    ));

    let confirmed = block_on(session.confirm_answer(&right)).unwrap();
    assert_eq!(confirmed.widened.len(), 1);
    let widened = &confirmed.widened[0];
    assert_eq!(
        widened.version, 2,
        "a new version: history keeps the scope it had"
    );
    assert_eq!(
        widened.kind.patterns(),
        [RequestPattern::parse("what's like ___").unwrap()]
    );
    // Stored in the same write: another question of that wording fits at once.
    let fitting = ask(session, "What's like < slow > ?");
    assert!(matches!(
        fitting.prepared.applied[0].because,
        AppliedBecause::FitsScope(_)
    ));
    let reloaded = scripted_session(&store, "reloaded", 3).0.memory();
    assert_eq!(
        reloaded.get(&widened.id).map(|r| &r.kind),
        Some(&widened.kind)
    );
    // A lesson that went by its scope already applies there: nothing to widen.
    assert!(
        block_on(session.confirm_answer(&fitting))
            .unwrap()
            .widened
            .is_empty()
    );
}

#[test]
fn a_confirmed_answer_is_kept_as_a_verified_example_beside_the_clarification() {
    let store = SharedStore::default();
    let ctx = session(&store);
    let session = &ctx.0;
    let misread = ask(session, "What is like < fast > ?");
    block_on(session.correct(&misread, lasting("I want a synonym"))).unwrap();
    let right = ask(session, "What is like < fast > ?");
    assert_eq!(
        right.reply.understanding.as_deref(),
        Some("the synonym for fast")
    );

    let written = block_on(session.confirm_answer(&right)).expect("the example is kept");
    let example = &written.example.current;
    assert_eq!(
        written.example.replaced, None,
        "the clarification is not replaced"
    );
    assert_eq!(example.key, example_key("What is like < fast > ?"));
    assert_eq!(example.source, Source::UserStated);
    assert_eq!(
        example.kind,
        RecordKind::VerifiedExample {
            understanding: "the synonym for fast".into(),
            answer: "answer".into(),
        }
    );
    assert_eq!(session.current_count(), 2);
    assert_eq!(session.verified_examples(), std::slice::from_ref(example));
    assert_eq!(session.history(&like_key()).len(), 1);

    // A later confirmation of the same request supersedes the example, only it.
    let again = ask(session, "What is like < slow > ?");
    let newer = block_on(session.confirm_answer(&again)).unwrap();
    assert_eq!(
        newer.example.replaced.map(|r| r.id),
        Some(example.id.clone())
    );
    assert_eq!(session.current_count(), 2);
    assert_eq!(session.history(&example.key).len(), 2);
}

#[test]
fn a_reply_with_nothing_to_keep_or_a_secret_is_not_confirmed() {
    let store = SharedStore::default();
    let ctx = session(&store);
    let session = &ctx.0;
    ctx.1.will_reply("");
    let empty = ask(session, "What is like < fast > ?");
    assert_eq!(
        block_on(session.confirm_answer(&empty)),
        Err(ExampleError::NothingToConfirm)
    );
    ctx.1
        .will_reply("Understanding: the key for fast\nAnswer: sk-proj-abcdefghijklmnop1234\nEND");
    let secret = ask(session, "What is like < fast > ?");
    assert_eq!(
        block_on(session.confirm_answer(&secret)),
        Err(ExampleError::Refused(Refusal::Secret {
            text: StoredText::Answer,
            kind: "an API key"
        }))
    );
    assert!(store.0.snapshot().is_empty());
}

/// Confirms, oldest first: a "like" example, then newer "unlike" and egg examples.
fn confirm_three(session: &TestSession) -> [String; 3] {
    [
        "What is like < fast > ?",
        "What is unlike < hot > ?",
        "how do I boil an egg?",
    ]
    .map(|question| {
        let turn = ask(session, question);
        block_on(session.confirm_answer(&turn))
            .unwrap()
            .example
            .current
            .id
            .0
    })
}

#[test]
fn verified_examples_are_chosen_by_similarity_not_by_recency() {
    let store = SharedStore::default();
    let session = scripted_session(&store, "one", 1).0;
    let [like, unlike, egg] = confirm_three(&session);

    // The newest examples are the egg and "unlike"; the most similar is the oldest.
    let turn = ask(&session, "What is like < slow > ?");
    let chosen: Vec<_> = turn.prepared.examples.iter().map(|c| &c.record.0).collect();
    assert_eq!(chosen, [&like]);
    assert_eq!(
        turn.prepared.examples[0].similarity,
        Similarity::KeySimilarity(1.0)
    );

    let two = scripted_session(&store, "two", 2).0;
    let turn = ask(&two, "What is like < slow > ?");
    let chosen: Vec<_> = turn.prepared.examples.iter().map(|c| &c.record.0).collect();
    assert_eq!(
        chosen,
        [&unlike, &like],
        "most similar last, the egg left out"
    );
    assert!(!chosen.contains(&&egg));
}

#[test]
fn the_prompt_carries_the_chosen_examples_right_before_the_query_and_the_breakdown_says_so() {
    let store = SharedStore::default();
    let ctx = session(&store);
    let session = &ctx.0;
    confirm_three(session);
    let misread = ask(session, "What is like < fast > ?");
    block_on(session.correct(&misread, lasting("I want a synonym"))).unwrap();

    let turn = ask(session, "What is like < slow > ?");
    let RenderedPrompt::Completion(text) = &turn.prepared.request.prompt else {
        panic!("completion mode")
    };
    let tail = format!(
        "What is unlike < hot > ?{SEPARATOR} Understanding: a word that sounds like for hot\n\
         Answer: answer\nEND{SEPARATOR}\
         What is like < fast > ?{SEPARATOR} Understanding: a word that sounds like for fast\n\
         Answer: answer\nEND{SEPARATOR}\
         What is like < slow > ? | clarification: I want a synonym{SEPARATOR}"
    );
    assert!(text.ends_with(&tail), "{text}");
    assert_eq!(text.matches("clarification: I want a synonym").count(), 1);

    let breakdown = &turn.prepared.breakdown;
    assert_eq!(breakdown.render(), turn.prepared.request.prompt);
    assert_eq!(breakdown.verified_examples, turn.prepared.examples);
    assert_eq!(breakdown.base_examples_dropped, 0);
    assert!(!breakdown.base_examples.is_empty());
    let ([clarification], [applied]) = (
        breakdown.clarifications.as_slice(),
        turn.prepared.applied.as_slice(),
    ) else {
        panic!("one lesson is attached")
    };
    assert_eq!(clarification.text, "I want a synonym");
    assert!(matches!(
        clarification.origin,
        ClarificationOrigin::Stored { ref record, .. } if *record == applied.record.id
    ));
    assert_eq!(
        breakdown.query,
        "What is like < slow > ? | clarification: I want a synonym"
    );
    assert_eq!(turn.prepared.request.prompt.display_text(), *text);
}

#[test]
fn settings_that_cannot_be_used_are_refused_with_what_to_fix_and_change_nothing() {
    let store = SharedStore::default();
    let (session, _) = session(&store);
    let before = session.settings();
    let mut unusable = before.clone();
    unusable.endpoint.model = "  ".into();

    let refused = session.save_settings(unusable);

    assert_eq!(
        refused.unwrap_err().to_string(),
        "the model name is empty; correct it and save again"
    );
    assert_eq!(session.settings(), before);
}

#[test]
fn in_chat_mode_the_shown_prompt_is_the_messages_json_of_the_request_body() {
    let store = SharedStore::default();
    let ctx = session(&store);
    let session = &ctx.0;
    let mut settings: Settings = session.settings();
    settings.endpoint.mode = PromptMode::Chat;
    session.save_settings(settings.clone()).unwrap();
    confirm_three(session);

    let turn = ask(session, "What is like < slow > ?\n\"quoted\" ünïcode");
    let (_, body) = openai_wire::request(&settings.endpoint, &turn.prepared.request);
    assert_eq!(
        turn.prepared.request.prompt.display_text(),
        body["messages"].to_string()
    );
    assert_eq!(
        turn.prepared.breakdown.render(),
        turn.prepared.request.prompt
    );
}

#[test]
fn removing_an_example_withdraws_it_keeps_history_and_stops_using_it() {
    let store = SharedStore::default();
    let ctx = session(&store);
    let session = &ctx.0;
    let turn = ask(session, "What is like < fast > ?");
    let example = block_on(session.confirm_answer(&turn))
        .unwrap()
        .example
        .current;
    block_on(session.correct(&turn, lasting("I want a synonym"))).unwrap();
    let clarification = session.current_records()[1].clone();
    assert!(clarification.kind.is_clarification());
    assert_eq!(
        block_on(session.remove_example(&clarification.id, clarification.version)),
        Err(ExampleError::NotAnExample(clarification.id.clone()))
    );

    let removed = block_on(session.remove_example(&example.id, example.version)).unwrap();
    assert_eq!(removed.state, RecordState::Withdrawn);
    assert_eq!(
        session.record(&example.id).unwrap().state,
        RecordState::Withdrawn
    );
    assert!(session.verified_examples().is_empty());
    assert!(
        ask(session, "What is like < slow > ?")
            .prepared
            .examples
            .is_empty()
    );
    assert!(matches!(
        block_on(session.remove_example(&example.id, example.version)),
        Err(ExampleError::Revise(ReviseError::Memory(
            MemoryError::Stale { .. }
        )))
    ));
}

#[test]
fn an_example_and_the_clarification_of_one_question_survive_export_and_import() {
    let store = SharedStore::default();
    let ctx = session(&store);
    let session = &ctx.0;
    let turn = ask(session, "What is like < fast > ?");
    block_on(session.correct(&turn, lasting("I want a synonym"))).unwrap();
    block_on(session.confirm_answer(&ask(session, "What is like < fast > ?"))).unwrap();
    let json = block_on(session.export_json(Embeddings::Omit)).unwrap();

    let elsewhere = scripted_session(&SharedStore::default(), "other", 2).0;
    let pending = block_on(elsewhere.preview_import(json.as_bytes())).expect("a valid file");
    block_on(elsewhere.apply_import(&pending, ImportMode::Merge)).unwrap();
    assert_eq!(elsewhere.current_count(), 2);
    assert_eq!(elsewhere.verified_examples().len(), 1);
}

// --- The learning curve -----------------------------------------------------------

fn event(turn: usize, at: i64, kind: TurnEventKind) -> TurnEvent {
    TurnEvent {
        turn: TurnId(format!("t{turn}")),
        at: Timestamp(at),
        kind,
    }
}

#[test]
fn the_learning_curve_counts_corrections_per_twenty_questions() {
    // 45 questions: memory applied on every third; corrected: every other question in
    // the first block, every fourth in the second, none in the last five.
    let mut events = Vec::new();
    for i in 0..45 {
        let at = i as i64 * 10;
        events.push(event(
            i,
            at,
            TurnEventKind::Asked {
                lesson_applied: i % 3 == 0,
                examples_used: 0,
            },
        ));
        let corrected = match i {
            0..20 => i % 2 == 0,
            20..40 => i % 4 == 0,
            _ => false,
        };
        if corrected {
            events.push(event(i, at + 1, TurnEventKind::Corrected));
        } else {
            events.push(event(i, at + 1, TurnEventKind::Confirmed));
        }
    }
    let curve = learning_curve(&events, 20);
    assert_eq!(curve.buckets.len(), 3);
    let [first, second, third] = [curve.buckets[0], curve.buckets[1], curve.buckets[2]];
    // Block 1: questions 0..20; applied at 0,3,6,9,12,15,18 (7); corrected evens (10);
    // applied and even: 0,6,12,18 → 3 applied turns uncorrected.
    assert_eq!(
        first,
        CurveBucket {
            first_question: 1,
            questions: 20,
            corrected: 10,
            confirmed: 10,
            memory_applied: 7,
            memory_applied_uncorrected: 3,
        }
    );
    assert_eq!(first.corrected_share(), 0.5);
    assert_eq!(first.applied_success_share(), Some(3.0 / 7.0));
    // Block 2: 20..40; applied at 21,24,...,39 (7); corrected multiples of 4 (5);
    // applied and a multiple of 4: 24, 36 → 5 uncorrected.
    assert_eq!((second.questions, second.corrected), (20, 5));
    assert_eq!(second.corrected_share(), 0.25);
    assert_eq!(second.applied_success_share(), Some(5.0 / 7.0));
    // Block 3: 40..45, still filling; applied at 42 only, never corrected.
    assert_eq!((third.first_question, third.questions), (41, 5));
    assert_eq!(third.corrected_share(), 0.0);
    assert_eq!(third.applied_success_share(), Some(1.0));
    assert_eq!(
        CurveBucket::default().applied_success_share(),
        None,
        "no memory applied, nothing to judge"
    );
}

#[test]
fn the_session_logs_turns_and_a_retry_is_not_a_new_question() {
    let store = SharedStore::default();
    let ctx = session(&store);
    let session = &ctx.0;
    let first = ask(session, "What is like < fast > ?");
    block_on(session.correct(&first, lasting("I want a synonym"))).unwrap();
    let second = ask(session, "What is like < slow > ?");
    block_on(session.confirm_answer(&second)).unwrap();
    let third = ask(session, "What is like < cold > ?");
    let one_time = Correction {
        clarification: "I want an antonym".into(),
        durability: Durability::JustThisOnce,
        reach: Reach::default(),
    };
    block_on(session.correct(&third, one_time)).unwrap();
    let retry =
        block_on(session.ask_with("What is like < cold > ?", Some("I want an antonym"))).unwrap();
    block_on(session.confirm_answer(&retry)).unwrap();

    let curve = block_on(session.learning_curve()).unwrap();
    assert_eq!(
        curve.buckets,
        [CurveBucket {
            first_question: 1,
            questions: 3,
            corrected: 2,
            confirmed: 1,
            memory_applied: 2,
            memory_applied_uncorrected: 1,
        }]
    );
}
