//! Semantic retrieval through the session with the real MiniLM model: a rephrased
//! question reuses the lesson, the opposite request does not, and each lesson is
//! embedded once per model, with the embedding stored beside it.
//!
//! Needs the model files from `scripts/setup-embedder`.
#![cfg(not(target_arch = "wasm32"))]

mod support {
    pub mod minilm;
    pub use remind_test_support::scripted;
}

use remind_app::ports::MemoryStore;
use remind_app::settings::DEFAULT_SEMANTIC_TAU;
use remind_core::memory::{FeedbackMemory, Lesson};
use remind_core::record::{RecordId, Timestamp};
use remind_core::retrieval::Score;
use remind_core::turn::AppliedBecause;
use remind_embedder::tract_embedder::TractEmbedder;
use remind_test_support::in_process_embeddings::InProcessEmbeddings;
use support::scripted::{SessionWith, SharedStore, block_on, session_with};

const LESSON: (&str, &str) = (
    "What is like < fast > ?",
    "when I ask for like, I want a synonym",
);

/// A store holding one lesson, as an earlier visit (without a model) saved it.
fn store_with_lesson() -> SharedStore {
    let store = SharedStore::default();
    let written = FeedbackMemory::default().plan_write(
        Lesson::user_clarification(LESSON.0, LESSON.1),
        RecordId("lesson".into()),
        Timestamp(1),
    );
    block_on(store.write(std::slice::from_ref(&written.current))).expect("the lesson is stored");
    store
}

/// A loaded session over `store` matching with MiniLM, its embeddings tagged `model`.
fn minilm_session(
    store: &SharedStore,
    ids: &'static str,
    model: &str,
) -> SessionWith<InProcessEmbeddings<TractEmbedder>> {
    session_with(
        store,
        ids,
        InProcessEmbeddings(support::minilm::load(model)),
    )
}

#[test]
fn a_rephrased_question_reuses_the_lesson_by_meaning() {
    let store = store_with_lesson();
    let session = minilm_session(&store, "s", "m1");
    // Eight edits from the stored question, too many for the wording match.
    let turn = block_on(session.ask("Tell me what is like < slow > ?")).expect("answered");
    let [applied] = turn.prepared.applied.as_slice() else {
        panic!("not applied: {:?}", turn.prepared.lookup.decision)
    };
    let AppliedBecause::Similar {
        score: Score::Cosine(similarity),
        decision,
    } = applied.because
    else {
        panic!("a semantic score, got {:?}", applied.because);
    };
    println!("cosine {similarity:.3}: {decision:?}");
    assert!(
        (DEFAULT_SEMANTIC_TAU..1.0).contains(&similarity),
        "a paraphrase, not the same key: cosine {similarity}"
    );
    assert!(turn.prepared.query.contains(LESSON.1));
}

#[test]
fn the_opposite_request_does_not_reuse_the_lesson() {
    let store = store_with_lesson();
    let session = minilm_session(&store, "s", "m1");
    // Four edits away: the paper's wording match (distance < 6) would attach it.
    for opposite in ["What is not like < slow > ?", "What is unlike < slow > ?"] {
        let turn = block_on(session.ask(opposite)).expect("answered");
        assert!(
            turn.prepared.applied.is_empty(),
            "applied to {opposite:?}: {:?}",
            turn.prepared.lookup.decision
        );
        assert!(!turn.prepared.query.contains(LESSON.1));
    }
}

#[test]
fn lesson_embeddings_are_stored_once_and_recomputed_for_another_model() {
    let store = store_with_lesson();
    let stored_model = |store: &SharedStore| {
        let records = block_on(store.load()).expect("loads");
        let embedding = records[0]
            .embedding
            .clone()
            .expect("the lesson was embedded");
        assert_eq!(embedding.vector().len(), 384);
        assert_eq!(
            records[0].version, 1,
            "embedding a lesson is not a new version"
        );
        embedding.model().to_string()
    };
    let first = minilm_session(&store, "a", "m1");
    block_on(first.ask("Tell me what is like < slow > ?")).expect("answered");
    assert_eq!(stored_model(&store), "m1");

    let other = minilm_session(&store, "b", "m2");
    block_on(other.ask("Tell me what is like < slow > ?")).expect("answered");
    assert_eq!(stored_model(&store), "m2");
}
