//! Embedding many lessons at once (issue 17): after an import, a question embeds only
//! itself and never waits for thousands of lessons; the background step embeds them in
//! batches, says how many still wait, and a lesson just taught is still embedded with
//! the next question. A store keeping embeddings apart is read records first.
#![cfg(not(target_arch = "wasm32"))]

use remind_test_support as support;

use remind_app::correct::Correction;
use remind_app::ports::{MemoryStore, StoreChange};
use remind_app::question_embedding::{LESSONS_EMBEDDED_WITH_A_QUESTION, LessonsEmbedded};
use remind_app::remembered_embeddings::RememberedEmbeddings;
use remind_app::session::{Ports, Session};
use remind_core::memory::{FeedbackMemory, Lesson};
use remind_core::record::{MemoryRecord, Reach, RecordId, Timestamp};
use remind_core::sentence_embedding::{EmbedError, Embedder};
use remind_core::write_gate::Durability;
use std::cell::{Cell, RefCell};
use std::future::ready;
use std::rc::Rc;
use std::task::Context;
use support::in_memory_store::InMemoryStore;
use support::in_process_embeddings::InProcessEmbeddings;
use support::scripted::{
    CountingIds, ScriptedModel, SettingsInMemory, SharedStore, TickingClock, block_on, session_with,
};

/// A model that gives every text the same unit vector and counts the texts it embeds.
#[derive(Clone, Default)]
struct CountingModel(Rc<Cell<usize>>);

impl Embedder for CountingModel {
    fn model_id(&self) -> &str {
        "counting"
    }

    fn embed(&self, _text: &str) -> Result<Vec<f32>, EmbedError> {
        self.0.set(self.0.get() + 1);
        Ok(vec![0.5, 0.5, 0.5, 0.5])
    }
}

/// A store holding `n` lessons of distinct questions, none embedded (as an import
/// leaves them).
fn store_with_lessons(n: usize) -> SharedStore {
    let store = SharedStore::default();
    put_lessons(&store, n);
    store
}

/// Puts `n` lessons of distinct questions into `store`, none embedded.
fn put_lessons(store: &SharedStore, n: usize) {
    // Each question is of its own kind, so no lesson supersedes another.
    let records = (0..n)
        .map(|i| {
            let question = format!("What is the colour of item {i} like < fast > ?");
            let lesson = Lesson::user_clarification(&question, "I want a shade of blue");
            let id = RecordId(format!("lesson-{i}"));
            FeedbackMemory::default()
                .plan_write(lesson, id, Timestamp(1))
                .current
        })
        .collect();
    block_on(store.transact(|_| StoreChange::put(records))).expect("stored");
}

/// How many of `records` (the store's, or a snapshot's shared ones) hold an embedding.
fn embedded_among<R: std::borrow::Borrow<MemoryRecord>>(records: &[R]) -> usize {
    records
        .iter()
        .map(std::borrow::Borrow::<MemoryRecord>::borrow)
        .filter(|record| record.embedding.is_some())
        .count()
}

/// How many of the store's records hold an embedding.
fn embedded_count(store: &SharedStore) -> usize {
    embedded_among(&store.0.snapshot())
}

#[test]
fn a_question_after_a_large_import_embeds_only_itself() {
    let store = store_with_lessons(LESSONS_EMBEDDED_WITH_A_QUESTION + 1);
    let model = CountingModel::default();
    let session = session_with(&store, "ask", InProcessEmbeddings(model.clone()));
    block_on(session.ask("What is like < slow > ?")).expect("answered");
    assert_eq!(model.0.get(), 1, "only the question was embedded");
    assert_eq!(embedded_count(&store), 0);
}

#[test]
fn a_few_waiting_lessons_are_embedded_with_the_next_question() {
    let store = store_with_lessons(LESSONS_EMBEDDED_WITH_A_QUESTION);
    let model = CountingModel::default();
    let session = session_with(&store, "ask", InProcessEmbeddings(model.clone()));
    block_on(session.ask("What is like < slow > ?")).expect("answered");
    assert_eq!(model.0.get(), LESSONS_EMBEDDED_WITH_A_QUESTION + 1);
    assert_eq!(embedded_count(&store), LESSONS_EMBEDDED_WITH_A_QUESTION);
}

#[test]
fn the_background_step_embeds_in_batches_until_none_wait() {
    let store = store_with_lessons(45);
    let session = session_with(&store, "bg", InProcessEmbeddings(CountingModel::default()));
    let steps: Vec<LessonsEmbedded> = (0..4)
        .map(|_| block_on(session.embed_waiting_lessons(20, ready(()))).expect("embedded"))
        .collect();
    let seen: Vec<(usize, usize)> = steps.iter().map(|s| (s.embedded, s.waiting)).collect();
    assert_eq!(seen, [(20, 25), (20, 5), (5, 0), (0, 0)]);
    assert_eq!(embedded_count(&store), 45);
    assert!(
        session
            .memory()
            .records()
            .iter()
            .all(|r| r.embedding.is_some()),
        "the session's view holds what the store holds"
    );
}

#[test]
fn a_background_step_stores_its_embeddings_only_once_the_page_lets_it() {
    let store = store_with_lessons(3);
    let model = CountingModel::default();
    let session = session_with(&store, "held", InProcessEmbeddings(model.clone()));
    let (let_it_store, free) = futures::channel::oneshot::channel::<()>();
    let mut step = Box::pin(session.embed_waiting_lessons(10, async {
        free.await.expect("the page lets the step store");
    }));
    let mut context = Context::from_waker(futures::task::noop_waker_ref());
    assert!(step.as_mut().poll(&mut context).is_pending());
    assert_eq!(model.0.get(), 3, "the lessons are embedded meanwhile");
    assert_eq!(embedded_count(&store), 0, "nothing is stored while held");
    assert_eq!(embedded_among(session.memory().records()), 0);

    let_it_store.send(()).expect("the step waits");
    let step = block_on(step).expect("embedded");
    assert_eq!((step.embedded, step.waiting), (3, 0));
    assert_eq!(embedded_count(&store), 3);
    assert_eq!(embedded_among(session.memory().records()), 3);
}

#[test]
fn without_a_ready_model_the_background_step_does_nothing() {
    let store = store_with_lessons(3);
    let session = session_with(&store, "off", support::in_process_embeddings::NoEmbeddings);
    let step = block_on(session.embed_waiting_lessons(10, ready(()))).expect("nothing to do");
    assert_eq!((step.embedded, step.waiting), (0, 0));
    assert_eq!(embedded_count(&store), 0);
}

#[test]
fn a_load_shows_the_records_first_then_attaches_their_embeddings_and_embeds_none_afresh() {
    let store = SharedStore(Rc::new(InMemoryStore::keeping_embeddings_apart()));
    put_lessons(&store, 40);
    let first_visit = session_with(&store, "v1", InProcessEmbeddings(CountingModel::default()));
    block_on(first_visit.embed_waiting_lessons(100, ready(()))).expect("embedded");
    assert_eq!(embedded_count(&store), 40);

    let model = CountingModel::default();
    let session = Session::new(Ports {
        store: store.clone(),
        llm: ScriptedModel::default(),
        clock: TickingClock::default(),
        ids: CountingIds::new("v2"),
        settings: SettingsInMemory::default(),
        embedder: InProcessEmbeddings(model.clone()),
    });
    let embedded_per_snapshot = Rc::new(RefCell::new(Vec::new()));
    let seen = embedded_per_snapshot.clone();
    session.watch_memory(move |memory| {
        let embedded = memory.records().iter().filter(|r| r.embedding.is_some());
        seen.borrow_mut()
            .push((memory.records().len(), embedded.count()));
    });
    assert_eq!(block_on(session.load()).expect("loads"), 40);
    assert_eq!(
        *embedded_per_snapshot.borrow(),
        [(40, 0), (40, 40)],
        "the records are shown first, then with their embeddings"
    );
    let step = block_on(session.embed_waiting_lessons(100, ready(()))).expect("nothing waits");
    assert_eq!((step.embedded, step.waiting), (0, 0));
    assert_eq!(model.0.get(), 0, "no lesson was embedded afresh");
}

#[test]
fn a_question_prepared_while_typed_is_asked_without_embedding_it_again() {
    let store = store_with_lessons(1);
    let model = CountingModel::default();
    let embedder = RememberedEmbeddings::new(InProcessEmbeddings(model.clone()));
    let session = session_with(&store, "typed", embedder);
    // The one stored lesson is embedded with the first question, as it would be.
    block_on(session.ask("What is like < fast > ?")).expect("answered");
    let before = model.0.get();
    block_on(session.prepare_question("What is like < slow > ?"));
    assert_eq!(model.0.get(), before + 1, "embedded while typed");
    block_on(session.ask("What is like < slow > ?")).expect("answered");
    assert_eq!(model.0.get(), before + 1, "not embedded again when asked");
}

fn typed_session(
    store: &SharedStore,
    ids: &'static str,
) -> support::scripted::SessionWith<RememberedEmbeddings<InProcessEmbeddings<CountingModel>>> {
    session_with(
        store,
        ids,
        RememberedEmbeddings::new(InProcessEmbeddings(CountingModel::default())),
    )
}

#[test]
fn a_turn_built_while_the_question_was_typed_is_the_turn_asking_it_builds() {
    let (typed, asked) = (store_with_lessons(3), store_with_lessons(3));
    let (typed, asked) = (
        typed_session(&typed, "typed"),
        typed_session(&asked, "asked"),
    );
    // The first question embeds the stored lessons, which changes the memory.
    for session in [&typed, &asked] {
        block_on(session.ask("What is like < fast > ?")).expect("answered");
    }
    let question = "What is the colour of item 1 like < slow > ?";
    block_on(typed.prepare_question(question));
    let built_ahead = block_on(typed.ask(question)).expect("answered");
    let built_when_asked = block_on(asked.ask(question)).expect("answered");
    assert_eq!(built_ahead.prepared, built_when_asked.prepared);
    assert!(
        !built_ahead.prepared.applied.is_empty(),
        "the stored lessons apply: {:?}",
        built_ahead.prepared.applied
    );
}

#[test]
fn a_lesson_taught_after_the_question_was_typed_applies_when_it_is_asked() {
    let store = SharedStore::default();
    let session = typed_session(&store, "taught");
    let misread = block_on(session.ask("What is like < fast > ?")).expect("answered");
    let question = "What is like < slow > ?";
    block_on(session.prepare_question(question));
    block_on(session.correct(
        &misread,
        Correction {
            clarification: "when I ask for like, I want a synonym".into(),
            durability: Durability::Lasting,
            reach: Reach::default(),
        },
    ))
    .expect("stored");
    let turn = block_on(session.ask(question)).expect("answered");
    assert_eq!(turn.prepared.applied.len(), 1, "{:?}", turn.prepared);
    assert!(
        turn.prepared.query.contains("I want a synonym"),
        "{}",
        turn.prepared.query
    );
    assert_eq!(
        embedded_count(&store),
        1,
        "the lesson is embedded with the question, as any lesson just taught"
    );
}

#[test]
fn a_question_typed_then_asked_with_a_clarification_for_this_turn_gets_that_clarification() {
    let session = typed_session(&store_with_lessons(1), "once");
    block_on(session.ask("What is like < fast > ?")).expect("answered");
    let question = "What is the colour of item 0 like < slow > ?";
    block_on(session.prepare_question(question));
    let turn = block_on(session.ask_with(question, Some("just this once, I want a shade of red")))
        .expect("answered");
    assert!(
        turn.prepared.applied.is_empty(),
        "{:?}",
        turn.prepared.applied
    );
    assert!(
        turn.prepared.query.contains("a shade of red"),
        "{}",
        turn.prepared.query
    );
}
