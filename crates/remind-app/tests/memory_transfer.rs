//! Export and import of the memory (issue 6): the document's shape and schema, the
//! round trip, the preview and the merge/replace plans, and every class of bad file
//! the importer must refuse without panicking.
#![cfg(not(target_arch = "wasm32"))]

use remind_test_support as support;
use remind_test_support::session_reads::SessionReads;

use proptest::prelude::*;
use serde_json::{Value, json};

use remind_app::ports::MemoryStore;
use remind_app::revise::ReviseError;
use remind_app::transfer::TransferError;
use remind_core::export::{EXPORT_FORMAT, EXPORT_VERSION, Embeddings, ExportDocument, export};
use remind_core::import::{
    ImportError, MAX_IMPORT_BYTES, MAX_IMPORT_FILE_BYTES, history_problems, parse_import,
};
use remind_core::import_plan::{ImportMode, KeyStatus, plan_import, preview};
use remind_core::memory::{FeedbackMemory, Lesson};
use remind_core::memory_key::MemoryKey;
use remind_core::record::{
    MemoryRecord, Reach, RecordId, RecordKind, RecordState, StoredEmbedding, Timestamp,
};
use remind_core::request_pattern::RequestPattern;
use remind_core::verified_examples::example_key;
use support::scripted::{SharedStore, block_on, session_over};

fn write(memory: &mut FeedbackMemory, question: &str, fb: &str, id: &str, at: i64) {
    let written = memory.plan_write(
        Lesson::user_clarification(question, fb),
        RecordId(id.into()),
        Timestamp(at),
    );
    memory.apply(&written);
}

/// A memory with history: a replaced lesson, a current one, a withdrawn one, an
/// example, stats and an embedding.
fn sample_memory() -> FeedbackMemory {
    let mut memory = FeedbackMemory::default();
    write(
        &mut memory,
        "What is like < fast > ?",
        "I mean rhymes",
        "like-1",
        1,
    );
    write(
        &mut memory,
        "what is like <slow>?",
        "I want a synonym",
        "like-2",
        2,
    );
    write(
        &mut memory,
        "What is unlike < hot > ?",
        "I want an antonym",
        "unlike-1",
        3,
    );
    let withdrawn = memory
        .plan_withdraw(&RecordId("unlike-1".into()), 1, Timestamp(4))
        .unwrap();
    memory.upsert(withdrawn);
    let mut example = memory
        .plan_write(
            Lesson::user_clarification("capital of France?", ""),
            RecordId("ex-1".into()),
            Timestamp(5),
        )
        .current;
    example.kind = RecordKind::VerifiedExample {
        understanding: "the capital of France <b>bold</b>".into(),
        answer: "Paris".into(),
    };
    // An example lives under its own key, as the memory stores it.
    example.key = example_key("capital of France?");
    example.stats = example.stats.applied().applied().failed_after_applied();
    // Of unit length, as every stored embedding is; with a value far below the rest.
    example.embedding =
        Some(StoredEmbedding::new("minilm", vec![0.1, -0.25, 1.0e-7, 0.963_068]).unwrap());
    memory.upsert(example);
    memory
}

fn export_of(memory: &FeedbackMemory) -> ExportDocument {
    export(
        &memory.to_records(),
        Timestamp(100),
        "0.1.0",
        Embeddings::Include,
    )
}

fn json_of(memory: &FeedbackMemory) -> String {
    export_of(memory).to_json().unwrap()
}

fn problems(bytes: &[u8]) -> Vec<ImportError> {
    parse_import(bytes)
        .expect_err("the file is refused")
        .problems
}

fn document_with(record_changes: impl FnOnce(&mut Vec<Value>)) -> Vec<u8> {
    let mut document: Value = serde_json::from_str(&json_of(&sample_memory())).unwrap();
    let records = document["records"].as_array_mut().unwrap();
    record_changes(records);
    serde_json::to_vec(&document).unwrap()
}

fn index_of(records: &[Value], id: &str) -> usize {
    records.iter().position(|r| r["id"] == id).unwrap()
}

// --- The document -----------------------------------------------------------------

#[test]
fn an_export_matches_the_published_json_schema() {
    let schema: Value =
        serde_json::from_str(include_str!("../../../docs/memory-export.schema.json"))
            .expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema is a valid schema");
    let document: Value = serde_json::from_str(&json_of(&sample_memory())).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&document)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");

    let without_embeddings = export(
        &sample_memory().to_records(),
        Timestamp(1),
        "0.1.0",
        Embeddings::Omit,
    );
    let value = serde_json::to_value(&without_embeddings).unwrap();
    assert!(validator.is_valid(&value));
    assert!(
        value["records"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["embedding"].is_null())
    );

    let mut wrong = document.clone();
    wrong["format"] = json!("something-else");
    assert!(!validator.is_valid(&wrong), "the schema pins the format");
}

#[test]
fn an_export_carries_every_record_with_history_and_never_settings() {
    let text = json_of(&sample_memory());
    let document: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(document["format"], EXPORT_FORMAT);
    assert_eq!(document["version"], EXPORT_VERSION);
    assert_eq!(document["records"].as_array().unwrap().len(), 4);
    for secret_field in ["api_key", "base_url", "endpoint", "settings"] {
        assert!(
            !text.contains(secret_field),
            "{secret_field} is never exported"
        );
    }
}

#[test]
fn export_then_import_then_export_gives_the_same_bytes() {
    let first = json_of(&sample_memory());
    let imported = parse_import(first.as_bytes()).expect("an export imports");
    let again = export(
        &imported.records,
        imported.exported_at,
        &imported.app_version,
        Embeddings::Include,
    );
    assert_eq!(again.to_json().unwrap(), first);
}

/// The embedding of the sample's example, as the memory holds it.
fn sample_vector() -> Vec<f32> {
    let memory = sample_memory();
    let embedded = memory.records().iter().find(|r| r.embedding.is_some());
    embedded
        .unwrap()
        .embedding
        .as_ref()
        .unwrap()
        .vector()
        .to_vec()
}

fn imported_vector(bytes: &[u8]) -> Vec<u32> {
    let imported = parse_import(bytes).expect("the file imports");
    let embedded = imported.records.iter().find(|r| r.embedding.is_some());
    let embedding = embedded.expect("the embedding came in").embedding.as_ref();
    embedding
        .unwrap()
        .vector()
        .iter()
        .map(|x| x.to_bits())
        .collect()
}

#[test]
fn an_export_packs_each_embedding_as_base64_that_imports_bit_for_bit_with_its_model() {
    let document: Value = serde_json::from_str(&json_of(&sample_memory())).unwrap();
    let records = document["records"].as_array().unwrap();
    let embedded: Vec<&Value> = records
        .iter()
        .filter(|r| r.get("embedding").is_some())
        .collect();
    assert_eq!(
        embedded.len(),
        1,
        "only the record that has one carries one"
    );
    assert_eq!(embedded[0]["embedding"]["model"], "minilm");
    let packed = embedded[0]["embedding"]["vector"].as_str().expect("packed");
    assert_eq!(packed.len(), 24, "four numbers, four bytes each, in base64");
    let bits: Vec<u32> = sample_vector().iter().map(|x| x.to_bits()).collect();
    assert_eq!(imported_vector(json_of(&sample_memory()).as_bytes()), bits);
}

#[test]
fn an_export_without_embeddings_carries_no_embedding_field() {
    let text = export(
        &sample_memory().to_records(),
        Timestamp(100),
        "0.1.0",
        Embeddings::Omit,
    )
    .to_json()
    .unwrap();
    assert!(!text.contains("embedding"), "{text}");
}

#[test]
fn a_version_1_file_with_its_vectors_as_numbers_still_imports_them() {
    let vector = sample_vector();
    let mut document: Value = serde_json::from_str(&json_of(&sample_memory())).unwrap();
    document["version"] = json!(1);
    let i = index_of(document["records"].as_array().unwrap(), "ex-1");
    document["records"][i]["embedding"]["vector"] = json!(vector);
    let bits: Vec<u32> = vector.iter().map(|x| x.to_bits()).collect();
    assert_eq!(
        imported_vector(&serde_json::to_vec(&document).unwrap()),
        bits
    );
}

#[test]
fn a_packed_vector_that_is_not_an_embedding_is_refused_naming_the_field() {
    let packed = |numbers: &[f32]| remind_core::packed_vector::pack_vector(numbers);
    let unit_but_long = vec![1.0 / 4097_f32.sqrt(); 4097];
    for (vector, expected) in [
        (json!("not base64!"), "is not base64"),
        (json!("AAAAAAA="), "not a whole number of 32-bit numbers"),
        (
            json!(packed(&[f32::NAN, 1.0])),
            "which is not a finite number",
        ),
        (json!(packed(&[3.0, 4.0])), "is not of unit length"),
        (
            json!(packed(&unit_but_long)),
            "an embedding holds at most 4096",
        ),
        (json!(""), "is not of unit length"),
        (
            json!({ "a": 1 }),
            "expected a packed vector (base64) or an array of numbers",
        ),
    ] {
        let bytes = document_with(|records| {
            let i = index_of(records, "ex-1");
            records[i]["embedding"]["vector"] = vector.clone();
        });
        let found: Vec<String> = problems(&bytes).iter().map(ToString::to_string).collect();
        assert!(
            matches!(&found[..], [one] if one.contains(".embedding.vector: ") && one.contains(expected)),
            "{vector}: {found:#?}"
        );
    }
}

#[test]
fn the_file_limit_holds_every_embedded_export_whose_lessons_are_within_the_lesson_limit() {
    // The smallest record an export holds, with and without a MiniLM embedding.
    let mut memory = FeedbackMemory::default();
    write(&mut memory, "a?", "b", "1", 1);
    let bare = json_of(&memory).len();
    let mut embedded = memory.to_records().remove(0);
    let vector: Vec<f32> = (0..384).map(|i| if i == 0 { 1.0 } else { 0.0 }).collect();
    embedded.embedding =
        Some(StoredEmbedding::new("all-minilm-l6-v2-int8-0123456789ab", vector).unwrap());
    memory.upsert(embedded);
    let per_embedding = json_of(&memory).len() - bare;
    let per_record = bare - json_of(&FeedbackMemory::default()).len();
    let most_records = MAX_IMPORT_BYTES / per_record;
    assert!(
        MAX_IMPORT_BYTES + most_records * per_embedding <= MAX_IMPORT_FILE_BYTES,
        "{most_records} records of {per_record} bytes, each embedding {per_embedding} bytes more"
    );
}

#[test]
fn a_file_over_the_lesson_limit_only_by_its_embeddings_imports() {
    let mut memory = FeedbackMemory::default();
    let vector: Vec<f32> = (0..384).map(|i| if i == 7 { 1.0 } else { 0.0 }).collect();
    let words = ["river", "garden", "window", "lantern", "meadow", "harbor"];
    for i in 0..3_000 {
        // Words, not numbers, so that each question has a key of its own.
        let phrase: Vec<&str> = (0..5).map(|d| words[i / 6_usize.pow(d) % 6]).collect();
        let question = format!("What is the {} like < fast > ?", phrase.join(" "));
        let mut written = memory
            .plan_write(
                Lesson::user_clarification(&question, "in kilograms"),
                RecordId(format!("w{i}")),
                Timestamp(i as i64),
            )
            .current;
        written.embedding = Some(StoredEmbedding::new("minilm", vector.clone()).unwrap());
        memory.upsert(written);
    }
    let text = json_of(&memory);
    assert!(text.len() > MAX_IMPORT_BYTES, "{} bytes", text.len());
    let imported = parse_import(text.as_bytes()).expect("its lessons are well under the limit");
    assert_eq!(imported.records.len(), 3_000);
    assert!(imported.records.iter().all(|r| r.embedding.is_some()));
}

#[test]
fn a_scope_set_in_the_memory_browser_is_exported_and_imported_with_the_scope_it_replaced() {
    let mut memory = FeedbackMemory::default();
    write(&mut memory, "How far is Lyon from Paris?", "in km", "km", 1);
    let marked = memory
        .plan_not_relevant(
            &RecordId("km".into()),
            1,
            "How far can Usain Bolt jump?",
            RecordId("km-2".into()),
            Timestamp(2),
        )
        .unwrap();
    memory.apply(&marked);
    let scoped = memory
        .plan_reach_change(
            &RecordId("km-2".into()),
            2,
            Reach::QuestionsLike(vec![
                RequestPattern::parse("how far is ___ from ___").unwrap(),
                RequestPattern::parse("what's the distance between ___ and ___").unwrap(),
            ]),
            RecordId("km-3".into()),
            Timestamp(3),
        )
        .unwrap();
    memory.apply(&scoped);
    let everywhere = memory
        .plan_reach_change(
            &RecordId("km-3".into()),
            3,
            Reach::EveryQuestion,
            RecordId("km-4".into()),
            Timestamp(4),
        )
        .unwrap();
    memory.apply(&everywhere);

    let exported = json_of(&memory);
    let imported = parse_import(exported.as_bytes()).expect("an export imports");
    let scope_of = |id: &str| {
        imported
            .records
            .iter()
            .find(|r| r.id == RecordId(id.into()))
            .and_then(|r| r.kind.reach().cloned())
    };
    assert_eq!(scope_of("km-4"), Some(Reach::EveryQuestion));
    assert_eq!(scope_of("km-3"), scoped.current.kind.reach().cloned());
    assert_eq!(imported.records, memory.to_records());
    assert_eq!(
        export(
            &imported.records,
            imported.exported_at,
            &imported.app_version,
            Embeddings::Include,
        )
        .to_json()
        .unwrap(),
        exported
    );
}

#[test]
fn a_file_saved_with_a_byte_order_mark_imports_like_one_without() {
    let plain = json_of(&sample_memory());
    let mut marked = b"\xEF\xBB\xBF".to_vec();
    marked.extend_from_slice(plain.as_bytes());
    assert_eq!(
        parse_import(&marked).expect("a BOM is not content"),
        parse_import(plain.as_bytes()).unwrap()
    );
}

#[test]
fn html_in_a_lesson_is_accepted_as_plain_text() {
    let bytes = document_with(|records| {
        let i = index_of(records, "like-2");
        records[i]["clarification"] = json!("<script>alert(1)</script> & <b>synonym</b>");
    });
    let document = parse_import(&bytes).expect("markup is just text");
    let record = document
        .records
        .iter()
        .find(|r| r.id.0 == "like-2")
        .unwrap();
    assert_eq!(
        record.clarification(),
        Some("<script>alert(1)</script> & <b>synonym</b>")
    );
}

// --- Refusals, each naming where --------------------------------------------------

#[test]
fn malformed_json_is_refused_with_its_position() {
    let found = problems(b"{\"format\": \"remind-memory\",\n \"version\": }");
    assert!(
        matches!(found[..], [ImportError::Malformed { line: 2, .. }]),
        "{found:?}"
    );
    assert!(matches!(
        problems(&[0xff, 0xfe, 0x00])[..],
        [ImportError::Malformed { .. }]
    ));
}

#[test]
fn a_file_of_another_format_or_a_newer_version_is_refused_up_front() {
    let other = problems(br#"{"format": "other-app", "version": 1, "records": []}"#);
    assert!(matches!(&other[..], [ImportError::WrongFormat { path, .. }] if path == "format"));
    let future = problems(br#"{"format": "remind-memory", "version": 3, "records": 5}"#);
    assert!(
        matches!(&future[..], [ImportError::FutureVersion { found: 3, .. }]),
        "{future:?}"
    );
    let not_object = problems(b"[1, 2]");
    assert!(matches!(&not_object[..], [ImportError::WrongType { path, .. }] if path == "$"));
}

#[test]
fn missing_fields_and_wrong_types_are_named_by_path() {
    let bytes = document_with(|records| {
        let i = index_of(records, "like-2");
        records[i].as_object_mut().unwrap().remove("clarification");
        records[i]["version"] = json!("two");
        records[i]["state"] = json!("forgotten");
        let j = index_of(records, "ex-1");
        records[j]["stats"]["times_applied"] = json!(-1);
        records[j]["embedding"]["vector"] = json!(["x"]);
    });
    let found = problems(&bytes);
    let paths: Vec<String> = found.iter().map(ToString::to_string).collect();
    let i = serde_json::from_slice::<Value>(&bytes).unwrap()["records"]
        .as_array()
        .map(|r| index_of(r, "like-2"))
        .unwrap();
    for expected in [
        format!("records[{i}].clarification: missing"),
        format!("records[{i}].version: expected a whole number, found a string"),
    ] {
        assert!(paths.contains(&expected), "{expected} not in {paths:#?}");
    }
    assert!(
        paths
            .iter()
            .any(|p| p.contains(&format!("records[{i}].state:")))
    );
    assert!(
        paths
            .iter()
            .any(|p| p.contains(".stats.times_applied: must be between"))
    );
    assert!(paths.iter().any(|p| {
        p.contains(".embedding.vector: expected a packed vector (base64) or an array of numbers")
    }));
    let header = problems(br#"{"format": "remind-memory", "version": 1, "exported_at": "now"}"#);
    let header: Vec<String> = header.iter().map(ToString::to_string).collect();
    assert_eq!(
        header,
        [
            "exported_at: expected a whole number, found a string",
            "app_version: missing",
            "records: missing"
        ]
    );
}

#[test]
fn duplicate_ids_are_refused() {
    let bytes = document_with(|records| {
        let copy = records[0].clone();
        records.push(copy);
    });
    assert!(
        problems(&bytes)
            .iter()
            .any(|p| matches!(p, ImportError::DuplicateId { .. }))
    );
}

#[test]
fn broken_supersede_chains_are_refused() {
    let missing = document_with(|records| {
        let i = index_of(records, "like-2");
        records[i]["supersedes"] = json!("nowhere");
    });
    assert!(problems(&missing).iter().any(
        |p| matches!(p, ImportError::MissingLink { path, .. } if path.ends_with(".supersedes"))
    ));

    let inconsistent = document_with(|records| {
        let i = index_of(records, "like-2");
        records[i]["supersedes"] = json!(null);
    });
    assert!(problems(&inconsistent).iter().any(
        |p| matches!(p, ImportError::BrokenChain { path, .. } if path.ends_with(".superseded_by"))
    ));

    let two_current = document_with(|records| {
        let i = index_of(records, "like-1");
        records[i]["state"] = json!("current");
        records[i]["superseded_by"] = json!(null);
    });
    assert!(
        problems(&two_current)
            .iter()
            .any(|p| matches!(p, ImportError::TwoCurrent { .. }))
    );

    let superseded_without_successor = document_with(|records| {
        let i = index_of(records, "like-1");
        records[i]["superseded_by"] = json!(null);
        let j = index_of(records, "like-2");
        records[j]["supersedes"] = json!(null);
    });
    assert!(
        problems(&superseded_without_successor)
            .iter()
            .any(|p| matches!(p, ImportError::BrokenChain { .. }))
    );

    let cross_key = document_with(|records| {
        let i = index_of(records, "unlike-1");
        records[i]["supersedes"] = json!("like-1");
    });
    assert!(
        problems(&cross_key)
            .iter()
            .any(|p| matches!(p, ImportError::MissingLink { .. }))
    );

    let looped = document_with(|records| {
        let i = index_of(records, "like-1");
        records[i]["supersedes"] = json!("like-2");
    });
    let found = problems(&looped);
    assert!(
        found.iter().any(|p| p.to_string().contains("loop")),
        "{found:#?}"
    );
}

#[test]
fn an_oversize_file_is_refused_before_it_is_parsed() {
    let bytes = vec![b' '; MAX_IMPORT_FILE_BYTES + 1];
    assert!(matches!(
        problems(&bytes)[..],
        [ImportError::TooLarge { .. }]
    ));
}

#[test]
fn a_file_whose_lessons_pass_the_limit_is_refused_for_that_alone_naming_where() {
    let lesson = |i: usize| json!({ "id": format!("r{i}"), "question": "x".repeat(1000) });
    let records: Vec<Value> = (0..MAX_IMPORT_BYTES / 1000 + 10).map(lesson).collect();
    let bytes = serde_json::to_vec(&json!({
        "format": EXPORT_FORMAT, "version": EXPORT_VERSION, "exported_at": 1,
        "app_version": "t", "records": records,
    }))
    .unwrap();
    let sizes: Vec<usize> = records
        .iter()
        .map(|r| serde_json::to_string(r).unwrap().len())
        .collect();
    let mut read = bytes.len() - sizes.iter().sum::<usize>();
    let first_past = sizes
        .iter()
        .position(|size| {
            read += size;
            read > MAX_IMPORT_BYTES
        })
        .unwrap();
    let found = problems(&bytes);
    assert_eq!(
        found,
        [ImportError::LessonsTooLarge {
            path: format!("records[{first_past}]"),
            limit: MAX_IMPORT_BYTES
        }]
    );
}

#[test]
fn control_characters_other_than_line_breaks_and_tabs_are_refused() {
    let bytes = document_with(|records| {
        let i = index_of(records, "like-2");
        records[i]["clarification"] = json!("a synonym\u{0007}\u{202e}");
        records[i]["question"] = json!("what is like\t<slow>?\nplease");
    });
    let found = problems(&bytes);
    assert!(
        matches!(&found[..], [ImportError::ControlCharacter { path, code: 7 }] if path.ends_with(".clarification")),
        "{found:?}"
    );
    let carriage = document_with(|records| records[0]["key"] = json!("a\rb"));
    assert!(matches!(
        &problems(&carriage)[..],
        [ImportError::ControlCharacter { code: 0x0d, .. }]
    ));
}

#[test]
fn a_secret_inside_a_lesson_is_refused() {
    let bytes = document_with(|records| {
        let i = index_of(records, "like-2");
        records[i]["clarification"] = json!("my api key: sk-proj-abcdefghijklmnop1234");
        let j = index_of(records, "ex-1");
        records[j]["answer"] = json!("4111 1111 1111 1111");
    });
    let found = problems(&bytes);
    assert_eq!(
        found
            .iter()
            .filter(|p| matches!(p, ImportError::Secret { .. }))
            .count(),
        2,
        "{found:?}"
    );
}

#[test]
fn many_problems_are_summarised_after_the_first_fifty() {
    let bytes = document_with(|records| {
        for _ in 0..100 {
            records.push(json!({"id": 5}));
        }
    });
    let found = problems(&bytes);
    assert_eq!(found.len(), 51);
    assert!(matches!(found.last(), Some(ImportError::More(n)) if *n > 0));
}

// --- Preview, merge and replace -----------------------------------------------------

fn status_of(preview: &remind_core::import_plan::ImportPreview, question: &str) -> KeyStatus {
    let key = MemoryKey::of_question(question);
    preview.keys.iter().find(|k| k.key == key).unwrap().status
}

#[test]
fn the_preview_tells_new_identical_newer_older_and_conflicting_keys_apart() {
    let base = sample_memory();
    let file_memory = {
        let mut m = base.clone();
        // Newer in the file: the like lesson was corrected again there.
        write(
            &mut m,
            "What is like < x > ?",
            "I want a close synonym",
            "like-3",
            10,
        );
        // New in the file.
        write(
            &mut m,
            "How do I boil an egg?",
            "I mean soft-boiled",
            "egg-1",
            11,
        );
        // Conflict: both sides corrected the example's key differently.
        write(
            &mut m,
            "capital of France?",
            "I mean the city",
            "ex-file",
            12,
        );
        m
    };
    let mut here = base.clone();
    write(
        &mut here,
        "capital of France?",
        "I mean the country's capital",
        "ex-here",
        13,
    );
    // Older in the file: the unlike lesson was re-taught here after the withdraw.
    write(
        &mut here,
        "What is unlike < x > ?",
        "I want an opposite",
        "unlike-2",
        14,
    );

    let file = parse_import(json_of(&file_memory).as_bytes()).unwrap();
    let shown = preview(&here, &file);
    assert_eq!(status_of(&shown, "What is like < x > ?"), KeyStatus::Newer);
    assert_eq!(status_of(&shown, "How do I boil an egg?"), KeyStatus::New);
    assert_eq!(status_of(&shown, "capital of France?"), KeyStatus::Conflict);
    assert_eq!(
        status_of(&shown, "What is unlike < x > ?"),
        KeyStatus::Older
    );
    let identical = preview(&base, &parse_import(json_of(&base).as_bytes()).unwrap());
    assert!(
        identical
            .keys
            .iter()
            .all(|k| k.status == KeyStatus::Identical)
    );

    let merge = plan_import(&here, &file, ImportMode::Merge).expect("a consistent merge");
    assert!(merge.erase.is_empty());
    let put: Vec<&str> = merge.put.iter().map(|r| r.id.0.as_str()).collect();
    assert!(put.contains(&"like-3") && put.contains(&"egg-1") && !put.contains(&"ex-file"));
    assert_eq!(
        merge.kept_here,
        [MemoryKey::of_question("capital of France?")]
    );
    let mut merged = here.clone();
    merged.apply_records(&merge.put);
    assert!(
        history_problems(&merged.to_records()).is_empty(),
        "{:#?}",
        history_problems(&merged.to_records())
    );
    let like = merged
        .current_for(&MemoryKey::of_question("What is like < x > ?"))
        .unwrap();
    assert_eq!(like.clarification(), Some("I want a close synonym"));
    let unlike = merged
        .current_for(&MemoryKey::of_question("What is unlike < x > ?"))
        .unwrap();
    assert_eq!(
        unlike.clarification(),
        Some("I want an opposite"),
        "an older file changes nothing"
    );

    let replace = plan_import(&here, &file, ImportMode::Replace).expect("a consistent replace");
    let mut replaced = here.clone();
    replaced.erase(&replace.erase);
    replaced.apply_records(&replace.put);
    let mut ids: Vec<&RecordId> = replaced.records().iter().map(|r| &r.id).collect();
    let mut file_ids: Vec<&RecordId> = file.records.iter().map(|r| &r.id).collect();
    ids.sort();
    file_ids.sort();
    assert_eq!(ids, file_ids, "replace makes the memory exactly the file");
    assert!(replace.erase.contains(&RecordId("ex-here".into())));
}

/// The sample memory as another browser's page exports it (embeddings omitted).
fn sample_export() -> String {
    let source = SharedStore::default();
    let exporter = session_over(&source, "src");
    block_on(MemoryStore::write(
        &*source.0,
        &sample_memory().to_records(),
    ))
    .unwrap();
    block_on(exporter.reload()).unwrap();
    block_on(exporter.export_json(Embeddings::Omit)).unwrap()
}

#[test]
fn a_session_imports_in_one_step_and_refuses_if_the_memory_changed_since_the_preview() {
    let file = sample_export();

    let target = SharedStore::default();
    let importer = session_over(&target, "dst");
    let pending = block_on(importer.preview_import(file.as_bytes())).unwrap();
    assert_eq!(
        pending.preview.count(KeyStatus::New),
        pending.preview.keys.len()
    );

    let other_tab = session_over(&target, "other");
    let turn = block_on(other_tab.ask("What is like < fast > ?")).unwrap();
    block_on(other_tab.correct(
        &turn,
        remind_app::correct::Correction {
            clarification: "I want a rhyme".into(),
            durability: remind_core::write_gate::Durability::Lasting,
            reach: Reach::default(),
        },
    ))
    .unwrap();
    let refused = block_on(importer.apply_import(&pending, ImportMode::Merge));
    assert_eq!(refused, Err(ReviseError::ChangedSincePreview));

    let pending = block_on(importer.preview_import(file.as_bytes())).unwrap();
    let plan = block_on(importer.apply_import(&pending, ImportMode::Replace)).unwrap();
    assert_eq!(plan.erase.len(), 1);
    let stored: Vec<MemoryRecord> = target.0.snapshot();
    assert_eq!(stored.len(), 4);
    assert_eq!(importer.current_count(), 2);
    assert!(stored.iter().all(|r| r.embedding.is_none()));
    assert!(stored.iter().any(|r| r.state == RecordState::Withdrawn));
}

#[test]
fn a_question_asked_between_preview_and_apply_does_not_void_the_preview() {
    let file = sample_export();

    // The target already holds the same memory, so asking applies one of its lessons.
    let target = SharedStore::default();
    block_on(MemoryStore::write(
        &*target.0,
        &sample_memory().to_records(),
    ))
    .unwrap();
    let importer = session_over(&target, "dst");
    let pending = block_on(importer.preview_import(file.as_bytes())).unwrap();
    let before: u32 = target
        .0
        .snapshot()
        .iter()
        .map(|r| r.stats.times_applied)
        .sum();
    let turn = block_on(importer.ask("What is like < slow > ?")).unwrap();
    assert!(
        !turn.prepared.applied.is_empty(),
        "a stored lesson was applied"
    );
    let after: u32 = target
        .0
        .snapshot()
        .iter()
        .map(|r| r.stats.times_applied)
        .sum();
    assert_eq!(after, before + 1, "asking counted a use in the store");

    let plan = block_on(importer.apply_import(&pending, ImportMode::Merge));
    assert!(
        plan.is_ok(),
        "usage counters are not a change the user must re-preview: {plan:?}"
    );
}

#[test]
fn a_write_between_planning_an_import_and_its_write_step_refuses_it_and_writes_nothing() {
    let file = sample_export();

    let target = SharedStore::default();
    let importer = session_over(&target, "dst");
    let pending = block_on(importer.preview_import(file.as_bytes())).unwrap();
    // Another tab writes a lesson during the last pause: after the plan was made on
    // a read of the store, before the write step.
    let mut elsewhere = FeedbackMemory::default();
    write(&mut elsewhere, EGG, "soft, six minutes", "other-tab", 50);
    let (store, written) = (target.clone(), elsewhere.to_records());
    let mut pauses = 0;
    let refused = block_on(
        importer.apply_import_paced(&pending, ImportMode::Merge, || {
            pauses += 1;
            let (store, written) = (store.clone(), written.clone());
            let last = pauses == 3;
            async move {
                if last {
                    MemoryStore::write(&*store.0, &written).await.unwrap();
                }
            }
        }),
    );
    assert_eq!(
        pauses, 4,
        "planning pauses after each of its three steps (the memory had not changed since \
         the preview, so it was not previewed again), and after the write step"
    );
    assert_eq!(refused, Err(ReviseError::ChangedSincePreview));
    let stored = target.0.snapshot();
    assert_eq!(
        stored.len(),
        1,
        "only the other tab's lesson is stored: {stored:?}"
    );
    assert_eq!(stored[0].id.0, "other-tab");
}

#[test]
fn a_file_checked_a_slice_at_a_time_reports_its_progress_and_previews_as_in_one_go() {
    let memory = sample_memory();
    let file = json_of(&memory);
    let target = SharedStore::default();
    let importer = session_over(&target, "dst");
    let mut seen = Vec::new();
    let paced = block_on(importer.preview_import_paced(file.as_bytes(), |progress| {
        seen.push(progress);
        std::future::ready(())
    }))
    .unwrap();
    let total = memory.records().len();
    assert_eq!(
        seen.last().map(|p| (p.checked, p.total)),
        Some((total, total))
    );
    assert_eq!(
        paced,
        block_on(importer.preview_import(file.as_bytes())).unwrap()
    );
}

// --- Ids, keys and the history a merge leaves -------------------------------------

const EGG: &str = "How do I boil an egg?";

/// A store holding `records`, and a session importing into it.
fn target_holding(records: &[MemoryRecord]) -> (SharedStore, support::scripted::TestSession) {
    let target = SharedStore::default();
    block_on(MemoryStore::write(&*target.0, records)).unwrap();
    let importer = session_over(&target, "dst");
    (target, importer)
}

fn line_of<'p>(
    preview: &'p remind_core::import_plan::ImportPreview,
    key: &MemoryKey,
) -> &'p remind_core::import_plan::KeyPreview {
    preview.keys.iter().find(|k| &k.key == key).unwrap()
}

fn stored(store: &SharedStore, id: &str) -> MemoryRecord {
    store
        .0
        .snapshot()
        .into_iter()
        .find(|r| r.id.0 == id)
        .unwrap()
}

/// The sample memory plus one record no current Remind writes: what an import before
/// ids and keys were checked could leave behind.
fn sample_with(stray: impl FnOnce(&MemoryRecord) -> MemoryRecord) -> Vec<MemoryRecord> {
    let memory = sample_memory();
    let like = memory.get(&RecordId("like-2".into())).unwrap().clone();
    let mut records = memory.to_records();
    records.push(stray(&like));
    records
}

/// The sample memory where the like lesson was corrected once more: newer in the file.
fn corrected_again() -> String {
    let mut memory = sample_memory();
    write(
        &mut memory,
        "What is like < x > ?",
        "I want a close synonym",
        "like-3",
        10,
    );
    json_of(&memory)
}

#[test]
fn an_import_reusing_the_id_of_another_questions_lesson_is_a_conflict_and_the_lesson_stays() {
    let (target, importer) = target_holding(&sample_memory().to_records());
    let mut theirs = FeedbackMemory::default();
    write(&mut theirs, EGG, "I mean soft-boiled", "like-2", 20);

    let pending = block_on(importer.preview_import(json_of(&theirs).as_bytes())).unwrap();
    assert_eq!(
        pending.preview.count(KeyStatus::New),
        0,
        "not previewed as new"
    );
    let egg = line_of(&pending.preview, &MemoryKey::of_question(EGG));
    assert_eq!(egg.status, KeyStatus::Conflict);
    assert_eq!(egg.reused_ids.len(), 1);
    assert_eq!(egg.reused_ids[0].id, RecordId("like-2".into()));
    assert_eq!(egg.reused_ids[0].here.question, "what is like <slow>?");
    assert_eq!(egg.reused_ids[0].in_file.question, EGG);

    let before = target.0.snapshot();
    let plan = block_on(importer.apply_import(&pending, ImportMode::Merge)).unwrap();
    assert!(plan.put.is_empty(), "{:?}", plan.put);
    assert_eq!(plan.kept_here, [MemoryKey::of_question(EGG)]);
    assert_eq!(target.0.snapshot(), before, "the store is as it was");
    let lesson = stored(&target, "like-2");
    assert_eq!(lesson.question, "what is like <slow>?");
    assert_eq!(lesson.clarification(), Some("I want a synonym"));
    assert!(lesson.is_current());
    assert!(history_problems(&target.0.snapshot()).is_empty());
}

#[test]
fn a_replace_may_reuse_a_stored_id_because_the_memory_becomes_the_file() {
    let (target, importer) = target_holding(&sample_memory().to_records());
    let mut theirs = FeedbackMemory::default();
    write(&mut theirs, EGG, "I mean soft-boiled", "like-2", 20);
    let pending = block_on(importer.preview_import(json_of(&theirs).as_bytes())).unwrap();
    block_on(importer.apply_import(&pending, ImportMode::Replace)).unwrap();
    assert_eq!(target.0.snapshot(), theirs.to_records());
}

#[test]
fn a_file_copy_of_a_stored_record_with_other_words_is_a_conflict_however_late_it_changed() {
    let (target, importer) = target_holding(&sample_memory().to_records());
    let file = document_with(|records| {
        let i = index_of(records, "like-2");
        records[i]["clarification"] = json!("I want an antonym");
        records[i]["change"]["at"] = json!(99);
    });
    let pending = block_on(importer.preview_import(&file)).unwrap();
    let like = line_of(
        &pending.preview,
        &MemoryKey::of_question("what is like <x>?"),
    );
    assert_eq!(like.status, KeyStatus::Conflict, "not newer");
    assert_eq!(like.reused_ids[0].id, RecordId("like-2".into()));

    block_on(importer.apply_import(&pending, ImportMode::Merge)).unwrap();
    assert_eq!(
        stored(&target, "like-2").clarification(),
        Some("I want a synonym")
    );
}

#[test]
fn a_record_whose_key_is_not_its_questions_key_is_refused_naming_the_key_it_should_have() {
    let bytes = document_with(|records| {
        let i = index_of(records, "like-2");
        records[i]["key"] = json!("what is unlike < > ?");
    });
    let i = serde_json::from_slice::<Value>(&bytes).unwrap()["records"]
        .as_array()
        .map(|r| index_of(r, "like-2"))
        .unwrap();
    let found = problems(&bytes);
    assert_eq!(
        found,
        [ImportError::WrongKey {
            path: format!("records[{i}].key"),
            found: "what is unlike < > ?".into(),
            expected: "what is like < > ?".into(),
        }]
    );
    assert!(
        found[0]
            .to_string()
            .starts_with(&format!("records[{i}].key: ")),
        "{}",
        found[0]
    );

    let (target, importer) = target_holding(&[]);
    assert!(matches!(
        block_on(importer.preview_import(&bytes)),
        Err(TransferError::Rejected(_))
    ));
    assert!(target.0.snapshot().is_empty());
}

#[test]
fn a_merge_that_would_leave_two_current_lessons_for_a_question_is_refused_and_writes_nothing() {
    let records = sample_with(|like| MemoryRecord {
        id: RecordId("like-stray".into()),
        question: "what is like <quick>?".into(),
        kind: RecordKind::clarification("I want a rhyme"),
        version: 3,
        supersedes: None,
        ..like.clone()
    });
    let (target, importer) = target_holding(&records);
    let pending = block_on(importer.preview_import(corrected_again().as_bytes())).unwrap();
    let refused = block_on(importer.apply_import(&pending, ImportMode::Merge))
        .expect_err("two current lessons for one key");
    let text = refused.to_string();
    assert!(
        text.contains("inconsistent history")
            && text.contains("already has a current record")
            && text.contains("record \"like-stray\" (here)"),
        "{text}"
    );
    assert_eq!(target.0.snapshot(), records, "nothing was written");
}

#[test]
fn a_merge_that_would_leave_a_history_link_to_a_missing_record_is_refused() {
    let records = sample_with(|like| MemoryRecord {
        id: RecordId("like-0".into()),
        state: RecordState::Superseded,
        supersedes: None,
        superseded_by: Some(RecordId("vanished".into())),
        ..like.clone()
    });
    let (target, importer) = target_holding(&records);
    let pending = block_on(importer.preview_import(corrected_again().as_bytes())).unwrap();
    let refused = block_on(importer.apply_import(&pending, ImportMode::Merge))
        .expect_err("a link to a record that is not there");
    let text = refused.to_string();
    assert!(
        text.contains("record \"like-0\" (here).superseded_by: points at \"vanished\""),
        "{text}"
    );
    assert_eq!(target.0.snapshot(), records, "nothing was written");
}

#[test]
fn a_file_saved_with_a_byte_order_mark_previews_and_merges_through_the_session() {
    let (target, importer) = target_holding(&[]);
    let mut marked = b"\xEF\xBB\xBF".to_vec();
    marked.extend_from_slice(json_of(&sample_memory()).as_bytes());
    let pending = block_on(importer.preview_import(&marked)).expect("a BOM is not content");
    assert_eq!(
        pending.preview.count(KeyStatus::New),
        pending.preview.keys.len()
    );
    block_on(importer.apply_import(&pending, ImportMode::Merge)).unwrap();
    assert_eq!(target.0.snapshot().len(), sample_memory().records().len());
}

#[test]
fn a_secret_in_an_imported_question_or_a_history_record_is_refused_with_its_path() {
    let question = "what is like <slow>? my password: hunter2";
    let bytes = document_with(|records| {
        let i = index_of(records, "like-2");
        records[i]["question"] = json!(question);
        records[i]["key"] = json!(MemoryKey::of_question(question).as_str());
        // like-1 is history: superseded, never shown as the current lesson.
        let j = index_of(records, "like-1");
        records[j]["clarification"] = json!("rhymes; api_key = sk-live-abcdefghijklmnopqrstu");
        let k = index_of(records, "ex-1");
        records[k]["understanding"] = json!("the card 4111 1111 1111 1111");
    });
    let records = serde_json::from_slice::<Value>(&bytes).unwrap()["records"]
        .as_array()
        .unwrap()
        .clone();
    let at = |id: &str, field: &str| format!("records[{}].{field}", index_of(&records, id));
    let found = problems(&bytes);
    let secrets: Vec<&str> = found
        .iter()
        .filter_map(|p| match p {
            ImportError::Secret { path, .. } => Some(path.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        secrets,
        {
            let mut expected = [
                at("like-2", "question"),
                at("like-1", "clarification"),
                at("ex-1", "understanding"),
            ];
            expected.sort_by_key(|path| {
                path.trim_start_matches("records[")
                    .split(']')
                    .next()
                    .and_then(|n| n.parse::<usize>().ok())
            });
            expected
        },
        "{found:?}"
    );
}

// --- Never panics -------------------------------------------------------------------

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
        prop_oneof![
            Just("remind-memory"),
            Just("current"),
            Just("clarification"),
            Just("a")
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let names = prop_oneof![
            Just("format".to_string()),
            Just("version".to_string()),
            Just("records".to_string()),
            Just("id".to_string()),
            Just("key".to_string()),
            Just("supersedes".to_string()),
            Just("superseded_by".to_string()),
            Just("state".to_string()),
            ".{0,6}".prop_map(String::from),
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(names, inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn the_importer_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse_import(&bytes);
    }

    #[test]
    fn the_importer_never_panics_on_arbitrary_json(value in arbitrary_json()) {
        let _ = parse_import(value.to_string().as_bytes());
        let wrapped = json!({"format": "remind-memory", "version": 1, "exported_at": 1,
            "app_version": "x", "records": [value.clone(), value]});
        let _ = parse_import(wrapped.to_string().as_bytes());
    }

    #[test]
    fn the_importer_never_panics_on_mangled_exports(cut in 0usize..4000, byte in any::<u8>()) {
        let mut bytes = json_of(&sample_memory()).into_bytes();
        let at = cut % bytes.len();
        bytes[at] = byte;
        let _ = parse_import(&bytes);
        let _ = parse_import(&bytes[..at]);
    }
}
