//! Embeddings that cannot be compared (issue 26): what an import accepts reads back
//! from the store exactly as accepted, a hostile vector in a file is refused by name,
//! and a vector the model got wrong is neither stored nor compared.
#![cfg(not(target_arch = "wasm32"))]

use remind_test_support as support;
use remind_test_support::session_reads::SessionReads;

use proptest::prelude::*;
use serde_json::{Value, json};

use remind_app::ports::{EmbedError, Embedder, MemoryStore, StoreChange};
use remind_app::question_embedding::{LessonsAlong, embed_question};
use remind_app::transfer::TransferError;
use remind_core::export::{Embeddings, ExportDocument, export};
use remind_core::import::{ImportError, parse_import};
use remind_core::import_plan::ImportMode;
use remind_core::memory::{FeedbackMemory, Lesson};
use remind_core::record::{MemoryRecord, RecordId, Timestamp};
use remind_core::retrieval::Decision;
use remind_core::stored_record::record_to_json;
use remind_core::stored_rows::{StoredRow, read_rows};
use support::in_process_embeddings::InProcessEmbeddings;
use support::scripted::{SharedStore, block_on, session_over, session_with};

const DIMENSIONS: usize = 6;
const QUESTIONS: [&str; 4] = [
    "What is like < fast > ?",
    "What is unlike < hot > ?",
    "What sounds like < good > ?",
    "How do I spell < rhythm > ?",
];

/// An embedding vector as a file may hold it, and whether an import must take it.
#[derive(Clone, Debug)]
enum FileVector {
    /// Of unit length, every value within f32's range (some far below its precision).
    Accepted(Vec<f64>),
    /// A value beyond f32's range (an infinity once narrowed), at the given place.
    Overflowing(Vec<f64>),
    /// Finite values, but nowhere near unit length.
    NotUnitLength(Vec<f64>),
}

fn unit_vector() -> impl Strategy<Value = Vec<f64>> {
    let value = prop_oneof![
        6 => -1.0f64..1.0,
        // Values f32 holds only as subnormals, or as zero: finite, so accepted.
        1 => prop::sample::select(vec![1e-45, -1.4e-45, 5e-324, 1e-50, 0.0, -0.0, 1e-7]),
    ];
    prop::collection::vec(value, DIMENSIONS)
        .prop_filter("not all zero", |v| v.iter().any(|x| x.abs() > 1e-3))
        .prop_map(|v| {
            let length = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            v.iter().map(|x| x / length).collect()
        })
}

fn file_vector() -> impl Strategy<Value = FileVector> {
    let beyond_f32 = prop::sample::select(vec![1e39, -1e39, 3.5e38, -f64::MAX, 1e300]);
    let scale = prop::sample::select(vec![0.0, 0.5, 2.0, 3e38]);
    prop_oneof![
        6 => unit_vector().prop_map(FileVector::Accepted),
        1 => (unit_vector(), beyond_f32, 0..DIMENSIONS).prop_map(|(mut v, bad, at)| {
            v[at] = bad;
            FileVector::Overflowing(v)
        }),
        1 => (unit_vector(), scale).prop_map(|(v, by)| {
            FileVector::NotUnitLength(v.iter().map(|x| x * by).collect())
        }),
    ]
}

/// An export file of one current lesson per vector, each carrying its vector.
fn file_with(vectors: &[FileVector]) -> Vec<u8> {
    let mut memory = FeedbackMemory::default();
    for (i, question) in QUESTIONS.iter().take(vectors.len()).enumerate() {
        let written = memory.plan_write(
            Lesson::user_clarification(question, "I want a synonym"),
            RecordId(format!("lesson-{i}")),
            Timestamp(i as i64),
        );
        memory.apply(&written);
    }
    let mut document = serde_json::to_value(export(
        &memory.to_records(),
        Timestamp(10),
        "test",
        Embeddings::Omit,
    ))
    .unwrap();
    for record in document["records"].as_array_mut().unwrap() {
        let i: usize = record["id"].as_str().unwrap()["lesson-".len()..]
            .parse()
            .unwrap();
        let (FileVector::Accepted(v) | FileVector::Overflowing(v) | FileVector::NotUnitLength(v)) =
            &vectors[i];
        record["embedding"] = json!({ "model": "minilm", "vector": v });
    }
    serde_json::to_vec(&document).unwrap()
}

/// The store's records as a reload reads them from IndexedDB: each written as its
/// stored JSON, parsed by `JSON.parse` (numbers become f64), turned back into text by
/// `JSON.stringify` (the shortest text of that f64), and decoded as a row.
fn reloaded(records: &[MemoryRecord]) -> (Vec<MemoryRecord>, usize) {
    let rows = records.iter().map(|record| {
        let as_javascript_holds: Value =
            serde_json::from_str(&record_to_json(record).unwrap()).expect("stored JSON parses");
        StoredRow::json(
            serde_json::to_string(&record.id.0).unwrap(),
            as_javascript_holds.to_string(),
        )
    });
    let memory = read_rows(rows);
    (memory.records, memory.unreadable.len())
}

fn exported(records: &[MemoryRecord]) -> ExportDocument {
    export(records, Timestamp(20), "test", Embeddings::Include)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn what_a_preview_accepts_reads_back_from_the_store_identically(
        vectors in prop::collection::vec(file_vector(), 1..=QUESTIONS.len()),
    ) {
        let file = file_with(&vectors);
        let store = SharedStore::default();
        let session = session_over(&store, "import");
        let hostile = vectors.iter().filter(|v| !matches!(v, FileVector::Accepted(_))).count();
        match block_on(session.preview_import(&file)) {
            Ok(pending) => {
                prop_assert_eq!(hostile, 0, "a hostile vector was accepted");
                block_on(session.apply_import(&pending, ImportMode::Merge)).expect("applied");
                let stored = store.0.snapshot();
                prop_assert_eq!(stored.len(), vectors.len());
                let (read_back, unreadable) = reloaded(&stored);
                prop_assert_eq!(unreadable, 0);
                prop_assert!(read_back.iter().all(|r| r.embedding.is_some()));
                prop_assert_eq!(
                    exported(&read_back).records,
                    exported(&pending.document.records).records
                );
            }
            Err(TransferError::Rejected(rejection)) => {
                prop_assert!(hostile > 0, "refused: {}", rejection);
                let named = rejection.problems.iter().filter(|p| {
                    matches!(p, ImportError::Invalid { path, .. } if path.ends_with(".embedding.vector"))
                });
                prop_assert_eq!(named.count(), hostile, "{}", rejection);
                prop_assert!(store.0.snapshot().is_empty(), "nothing is written");
            }
            Err(other) => prop_assert!(false, "{other}"),
        }
    }
}

#[test]
fn an_embedding_of_1e39_is_refused_at_preview_naming_the_field_and_nothing_is_written() {
    let mut vector = vec![0.0; DIMENSIONS];
    vector[0] = 1e39;
    let file = file_with(&[FileVector::Overflowing(vector)]);
    let store = SharedStore::default();
    let session = session_over(&store, "import");
    let Err(TransferError::Rejected(rejection)) = block_on(session.preview_import(&file)) else {
        panic!("the file is refused");
    };
    let problems: Vec<String> = rejection.problems.iter().map(ToString::to_string).collect();
    assert!(
        matches!(&problems[..], [only] if only.starts_with("records[0].embedding.vector: holds 1e39 at [0], which is not a finite number")),
        "{problems:?}"
    );
    assert!(parse_import(&file).is_err());
    assert!(store.0.snapshot().is_empty());
}

/// A model that answers every text with the same vector.
struct OneVector(Vec<f32>);

impl Embedder for OneVector {
    fn model_id(&self) -> &str {
        "one-vector"
    }

    fn embed(&self, _text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(self.0.clone())
    }
}

fn store_with_lesson() -> SharedStore {
    let store = SharedStore::default();
    let lesson = FeedbackMemory::default()
        .plan_write(
            Lesson::user_clarification("What is like < fast > ?", "I want a synonym"),
            RecordId("lesson".into()),
            Timestamp(1),
        )
        .current;
    block_on(store.transact(|_| StoreChange::put(vec![lesson]))).expect("stored");
    store
}

#[test]
fn a_vector_the_model_got_wrong_is_never_stored_and_the_question_is_matched_by_wording() {
    for broken in [vec![3e38; 4], vec![f32::NAN, 0.0, 0.0, 1.0], vec![0.0; 4]] {
        let store = store_with_lesson();
        let embedder = InProcessEmbeddings(OneVector(broken.clone()));
        let view = FeedbackMemory::from_records(store.0.snapshot());
        let (_, question) = block_on(embed_question(
            &store,
            &embedder,
            &view,
            "What is like < slow > ?",
            LessonsAlong::FewWaiting,
        ));
        assert!(
            matches!(&question, Err(EmbedError::Failed(why)) if why.contains("not")),
            "{broken:?}: {question:?}"
        );
        assert!(store.0.snapshot().iter().all(|r| r.embedding.is_none()));

        let session = session_with(&store, "ask", embedder);
        let turn = block_on(session.ask("What is like < slow > ?")).expect("answered");
        assert!(
            matches!(turn.prepared.lookup.decision, Decision::EditDistance { .. }),
            "{broken:?}: {:?}",
            turn.prepared.lookup.decision
        );
        assert_eq!(
            turn.prepared.applied.len(),
            1,
            "the lesson is still applied"
        );
        assert!(store.0.snapshot().iter().all(|r| r.embedding.is_none()));
    }
}

#[test]
fn a_unit_vector_from_the_model_is_stored_with_the_lesson() {
    let store = store_with_lesson();
    let unit = vec![0.5, 0.5, 0.5, 0.5];
    let session = session_with(&store, "ask", InProcessEmbeddings(OneVector(unit.clone())));
    let turn = block_on(session.ask("What is like < slow > ?")).expect("answered");
    assert_eq!(turn.prepared.lookup.decision, Decision::SameRequest);
    let stored = store.0.snapshot();
    let embedding = stored[0].embedding.as_ref().expect("embedded");
    assert_eq!(
        (embedding.model(), embedding.vector()),
        ("one-vector", &unit[..])
    );
}
