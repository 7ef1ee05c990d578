//! Derived updates without reading everything (issue 17): a usage count or a stored
//! embedding is read and written with only its own records
//! (`MemoryStore::transact_records`), planned on them as the store holds them, so a
//! copy another tab changed is never written back; and the session's snapshot after
//! it is exactly what a reload reads.
#![cfg(not(target_arch = "wasm32"))]

use remind_test_support as support;
use remind_test_support::session_reads::SessionReads;

use remind_app::correct::Correction;
use remind_app::ports::{EmbedError, Embedder, MemoryStore, StoreChange, StoreError};
use remind_app::revise::{Adoption, count_applied};
use remind_core::memory::FeedbackMemory;
use remind_core::record::{MemoryRecord, Reach, RecordId};
use remind_core::write_gate::Durability;
use support::in_process_embeddings::InProcessEmbeddings;
use support::scripted::{SharedStore, TestSession, block_on, session_over, session_with};

/// A model that gives every text the same unit vector.
struct OneVectorModel;

impl Embedder for OneVectorModel {
    fn model_id(&self) -> &str {
        "one-vector"
    }

    fn embed(&self, _text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(vec![0.6, 0.8])
    }
}

const SYNONYM: &str = "by like I always mean a synonym of the word";
const RHYME: &str = "when I ask what is like a word, I mean a word that rhymes with it";

fn teach(session: &TestSession, question: &str, clarification: &str) {
    let turn = block_on(session.ask(question)).expect("the model answers");
    let lasting = Correction {
        clarification: clarification.into(),
        durability: Durability::Lasting,
        reach: Reach::default(),
    };
    block_on(session.correct(&turn, lasting)).expect("the correction is saved");
}

/// A session over `store` that taught two lessons of different kinds: a synonym for
/// "like" questions and a spelling one.
fn tab_with_two_lessons(store: &SharedStore) -> TestSession {
    let tab = session_over(store, "tab");
    teach(&tab, "What is like < fast > ?", SYNONYM);
    teach(
        &tab,
        "How do I spell < rhythm > ?",
        "I want it letter by letter",
    );
    tab
}

/// The records in id order, as two reads of one store are compared.
fn by_id(mut records: Vec<MemoryRecord>) -> Vec<MemoryRecord> {
    records.sort_by(|a, b| a.id.0.cmp(&b.id.0));
    records
}

/// What a new tab (a reload) reads from `store`.
fn reloaded(store: &SharedStore) -> Vec<MemoryRecord> {
    by_id(block_on(store.load()).expect("the store reads"))
}

fn snapshot(session: &TestSession) -> Vec<MemoryRecord> {
    by_id(session.memory().to_records())
}

#[test]
fn after_a_counted_question_the_snapshot_is_what_a_reload_reads() {
    let store = SharedStore::default();
    let tab = tab_with_two_lessons(&store);
    let turn = block_on(tab.ask("What is like < slow > ?")).unwrap();
    assert_eq!(turn.prepared.applied.len(), 1, "the like lesson applies");
    let counted = tab.record(&turn.prepared.applied[0].record.id).unwrap();
    assert_eq!(counted.stats.times_applied, 1);
    assert_eq!(snapshot(&tab), reloaded(&store));
}

#[test]
fn a_count_builds_on_the_count_another_tab_stored_not_on_a_stale_view() {
    let store = SharedStore::default();
    let tab_a = session_over(&store, "a");
    teach(&tab_a, "What is like < fast > ?", SYNONYM);
    let tab_b = session_over(&store, "b");
    block_on(tab_b.ask("What is like < slow > ?")).unwrap();
    block_on(tab_b.ask("What is like < bright > ?")).unwrap();
    // Tab A has not heard of B's counts: its view still says 0.
    let lesson = tab_a.current_records().remove(0);
    assert_eq!(lesson.stats.times_applied, 0);

    block_on(tab_a.ask("What is like < dark > ?")).unwrap();
    let stored = store.0.snapshot();
    assert_eq!(stored.len(), 1);
    assert_eq!(
        stored[0].stats.times_applied, 3,
        "B's two counts and A's one"
    );
    assert_eq!(snapshot(&tab_a), reloaded(&store));
}

#[test]
fn a_count_for_a_lesson_another_tab_replaced_never_brings_the_old_one_back() {
    let store = SharedStore::default();
    let tab_a = session_over(&store, "a");
    teach(&tab_a, "What is like < fast > ?", SYNONYM);
    let tab_b = session_over(&store, "b");
    teach(&tab_b, "What is like < slow > ?", RHYME);
    let replaced_by_b = reloaded(&store);

    // A's view still has the first lesson current, so its turn applies it.
    let turn = block_on(tab_a.ask("What is like < dark > ?")).unwrap();
    assert_eq!(
        turn.prepared.applied[0].record.clarification(),
        Some(SYNONYM)
    );
    assert_eq!(
        reloaded(&store),
        replaced_by_b,
        "nothing counted or revived"
    );
    assert_eq!(snapshot(&tab_a), replaced_by_b, "A now shows what B left");
    let current: Vec<_> = tab_a.current_records();
    assert_eq!(current.len(), 1);
    assert_eq!(current[0].clarification(), Some(RHYME));
}

#[test]
fn a_count_committed_over_a_snapshot_that_holds_the_read_records_takes_them_on() {
    let store = SharedStore::default();
    let tab = session_over(&store, "tab");
    teach(&tab, "What is like < fast > ?", SYNONYM);
    let id = tab.current_records().remove(0).id;
    let snapshot_before = FeedbackMemory::from_records(reloaded(&store));

    let revision = block_on(count_applied(&store, std::slice::from_ref(&id)));
    let Adoption::Updated(memory) = revision.adopted_by(&snapshot_before) else {
        panic!("the snapshot held the record read, so the count is taken on");
    };
    assert_eq!(by_id(memory.to_records()), reloaded(&store));
    // Against a snapshot that no longer holds what the store read, the session must
    // read the store again rather than patch a memory it cannot vouch for.
    assert_eq!(
        revision.adopted_by(&FeedbackMemory::default()),
        Adoption::ReadAgain
    );
}

#[test]
fn stored_embeddings_leave_the_snapshot_as_a_reload_reads_it() {
    let store = SharedStore::default();
    tab_with_two_lessons(&store);
    let embedding = session_with(&store, "emb", InProcessEmbeddings(OneVectorModel));
    block_on(embedding.ask("What is like < slow > ?")).unwrap();
    let stored = reloaded(&store);
    assert!(
        stored
            .iter()
            .all(|r| !r.is_current() || r.embedding.is_some()),
        "every current lesson embedded with the question"
    );
    assert_eq!(by_id(embedding.memory().to_records()), stored);
}

#[test]
fn a_targeted_change_reaching_beyond_its_records_is_refused_and_writes_nothing() {
    let store = SharedStore::default();
    tab_with_two_lessons(&store);
    let before = reloaded(&store);
    let (named, other) = (before[0].clone(), before[1].clone());
    let mut seen = Vec::new();
    let outcome = block_on(
        store.transact_records(std::slice::from_ref(&named.id), |records| {
            seen = records;
            let mut changed = other.clone();
            changed.stats.times_applied += 7;
            StoreChange::put(vec![changed])
        }),
    );
    assert_eq!(seen, vec![named], "the plan sees the named record only");
    assert!(matches!(outcome, Err(StoreError::Failed(_))), "{outcome:?}");
    assert_eq!(reloaded(&store), before);
}

#[test]
fn an_id_the_store_does_not_hold_is_read_as_nothing() {
    let store = SharedStore::default();
    let mut seen = None;
    let outcome = block_on(
        store.transact_records(&[RecordId("gone".into())], |records| {
            seen = Some(records);
            StoreChange::default()
        }),
    );
    assert_eq!(outcome, Ok(()));
    assert_eq!(seen, Some(Vec::new()));
}
