//! The IndexedDB schema migrations to version 7 (the records in blocks of their binary
//! form, their embeddings as `Float32Array`s in a store of their own, the store of rows
//! made anew), from version 2 (embeddings as JSON numbers in each row), version 3
//! (`Float32Array`s in each row), version 4 (rows of one record each), version 5 (the
//! blocks beside the store of rows they were moved out of) and version 6 (blocks of
//! JSON text), on real databases in headless Chromium:
//! every record reads back, its embedding bit for bit, a row that cannot be read is
//! kept exactly as it was, and writes after the migration round-trip.
//!
//! Its own test binary, since it deletes and recreates the page's database.
#![cfg(target_arch = "wasm32")]

use js_sys::{Array, Float32Array, JSON, Reflect};
use remind_app::ports::{MemoryStore, StoreChange, StoreError};
use remind_core::memory::{FeedbackMemory, Lesson};
use remind_core::record::{MemoryRecord, RecordId, RecordKind, StoredEmbedding, Timestamp};
use remind_core::record_blocks::{BLOCKS, BlockValue, block_of, is_binary_block, read_blocks};
use remind_core::stored_record::{record_to_json, record_to_json_and_vector};
use remind_web::adapters::idb_store::IdbStore;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// The schema version the page opens (`DB_VERSION` in `idb_store.rs`).
const LATEST_SCHEMA: u32 = 7;

/// Runs `script`, an expression giving a promise, and awaits it.
async fn run(script: &str) -> JsValue {
    let promise: js_sys::Promise = js_sys::eval(script).expect("the script runs").into();
    JsFuture::from(promise)
        .await
        .expect("the script's promise resolves")
}

/// Replaces the page's database with a version-2 one, its schema as version 2 of
/// `idb_store.rs` made it, holding `rows` (a JavaScript array literal) as stored.
async fn version_2_database_with(rows: &str) {
    older_database_with(2, rows).await;
}

/// Replaces the page's database with one of `version` (2 or 3, whose schemas were the
/// same; only what a row held differed), holding `rows` (a JavaScript expression
/// giving an array) as stored.
async fn older_database_with(version: u32, rows: &str) {
    database_of_version_with(version, rows, "[]").await;
}

/// Replaces the page's database with one of `version` (2 to 6), its schema as that
/// version of `idb_store.rs` made it, holding `rows` (a JavaScript expression giving an
/// array) in the records store and, from version 4, `apart` (one giving `[id,
/// embedding]` pairs) in the embeddings store.
async fn database_of_version_with(version: u32, rows: &str, apart: &str) {
    run(&format!(
        "new Promise((resolve, reject) => {{
            const gone = indexedDB.deleteDatabase('remind');
            gone.onerror = () => reject(gone.error);
            // A connection the adapter closed as its last read ended may still be
            // finishing that read's transaction: the deletion waits for it, and a
            // connection left open for good fails the test by its time limit.
            gone.onblocked = () => {{}};
            gone.onsuccess = () => {{
                const open = indexedDB.open('remind', {version});
                open.onupgradeneeded = () => {{
                    const db = open.result;
                    db.createObjectStore('records', {{ keyPath: 'id' }}).createIndex('key', 'key');
                    db.createObjectStore('turn_events', {{ autoIncrement: true }});
                    if ({version} >= 4) db.createObjectStore('embeddings');
                    if ({version} >= 5) db.createObjectStore('record_blocks');
                }};
                open.onerror = () => reject(open.error);
                open.onsuccess = () => {{
                    const db = open.result;
                    const stores = {version} >= 4 ? ['records', 'embeddings'] : ['records'];
                    const tx = db.transaction(stores, 'readwrite');
                    for (const row of {rows}) tx.objectStore('records').put(row);
                    for (const [id, embedding] of {apart}) tx.objectStore('embeddings').put(embedding, id);
                    tx.oncomplete = () => {{ db.close(); resolve(); }};
                    tx.onerror = () => {{ db.close(); reject(tx.error); }};
                }};
            }};
        }})"
    ))
    .await;
}

/// The row stored under `id` as the database holds it (or, for a record its block
/// holds, the record as the JSON of a row, read from the block's bytes here), the
/// embedding the embeddings store holds under it (`undefined` for none), and the
/// database's version.
async fn raw_row(id: &str) -> (JsValue, JsValue, u32) {
    let found = run(&format!(
        "new Promise((resolve, reject) => {{
            const open = indexedDB.open('remind');
            open.onerror = () => reject(open.error);
            open.onsuccess = () => {{
                const db = open.result;
                const tx = db.transaction(['records', 'embeddings']);
                const row = tx.objectStore('records').get({id:?});
                const apart = tx.objectStore('embeddings').get({id:?});
                // Closed once the read's transaction is over, so no deletion that
                // follows finds the connection still open.
                tx.oncomplete = () => {{ db.close(); resolve([row.result, apart.result, db.version]); }};
                tx.onerror = () => {{ db.close(); reject(tx.error); }};
            }};
        }})"
    ))
    .await;
    let found = Array::from(&found);
    let version = found.get(2).as_f64().unwrap() as u32;
    let mut row = found.get(0);
    // A record moved into a block is found there; a row left beside the blocks is
    // found as a row.
    if row.is_undefined() && version >= 5 {
        let read = read_blocks(
            raw_blocks()
                .await
                .into_iter()
                .map(|(number, bytes)| (number.to_string(), BlockValue::Bytes(bytes))),
        );
        if let Some(record) = read.records.iter().find(|record| record.id.0 == id) {
            row = JSON::parse(&record_to_json(record).unwrap()).unwrap();
        }
    }
    (row, found.get(1), version)
}

/// Whether `row` holds an `embedding` field of its own.
fn holds_embedding(row: &JsValue) -> bool {
    Reflect::has(row, &"embedding".into()).unwrap()
        && !Reflect::get(row, &"embedding".into()).unwrap().is_null()
}

/// The `vector` of an embedding as the embeddings store holds it.
fn vector_apart(embedding: &JsValue) -> JsValue {
    Reflect::get(embedding, &"vector".into()).unwrap()
}

fn embedding_vector(row: &JsValue) -> JsValue {
    let embedding = Reflect::get(row, &"embedding".into()).unwrap();
    Reflect::get(&embedding, &"vector".into()).unwrap()
}

/// A lesson under `id` of its own key.
fn lesson(id: &str, question: &str) -> MemoryRecord {
    FeedbackMemory::default()
        .plan_write(
            Lesson::user_clarification(question, "I want a synonym"),
            RecordId(id.into()),
            Timestamp(1),
        )
        .current
}

/// 384 values of unit length that a text round trip could easily get wrong: long
/// decimals, a negative zero, a subnormal.
fn awkward_unit_vector() -> Vec<f32> {
    let raw: Vec<f64> = (0..384)
        .map(|i| ((f64::from(i) * 12.9898).sin() * 43_758.545_3).fract() - 0.5)
        .collect();
    let length = raw.iter().map(|x| x * x).sum::<f64>().sqrt();
    let mut vector: Vec<f32> = raw.iter().map(|x| (x / length) as f32).collect();
    vector[7] = -0.0;
    vector[11] = 1e-40;
    vector
}

fn bits(vector: &[f32]) -> Vec<u32> {
    vector.iter().map(|x| x.to_bits()).collect()
}

#[wasm_bindgen_test]
async fn a_version_2_database_is_migrated_keeping_every_record_and_every_unreadable_row() {
    let vector = awkward_unit_vector();
    let mut embedded = lesson("a-embedded", "What is like < fast > ?");
    embedded.embedding = Some(StoredEmbedding::new("minilm", vector.clone()).unwrap());
    let mut example = lesson("b-example", "How do I spell < rhythm > ?");
    example.kind = RecordKind::VerifiedExample {
        understanding: "the spelling of rhythm".into(),
        answer: "r-h-y-t-h-m".into(),
    };
    let infinite = lesson("c-infinite", "What sounds like < good > ?");
    // Today's layout exactly: the record's JSON as `JSON.parse` turns it into a value.
    let (embedded_json, example_json) = (
        record_to_json(&embedded).unwrap(),
        record_to_json(&example).unwrap(),
    );
    // An infinity was stored as `null`: the row reads, without its embedding.
    let bare = record_to_json(&infinite).unwrap();
    let infinite_json = format!(
        "{},\"embedding\":{{\"model\":\"minilm\",\"vector\":[null,0.6,0.8]}}}}",
        bare.strip_suffix('}').unwrap()
    );
    // A newer Remind's state: unreadable, and its numbers must stay numbers.
    let unreadable_json = embedded_json
        .replace("a-embedded", "d-unreadable")
        .replace("\"current\"", "\"archived\"");
    version_2_database_with(&format!(
        "[{embedded_json},{example_json},{infinite_json},{unreadable_json}]"
    ))
    .await;

    let stored = IdbStore::default()
        .load_all()
        .await
        .expect("the migrated database reads");
    let (_, _, version) = raw_row("a-embedded").await;
    assert_eq!(version, LATEST_SCHEMA);
    let mut expected_infinite = infinite.clone();
    expected_infinite.embedding = None;
    assert_eq!(
        stored.records,
        vec![embedded.clone(), example.clone(), expected_infinite]
    );
    let read_vector = stored.records[0].embedding.as_ref().unwrap().vector();
    assert_eq!(bits(read_vector), bits(&vector), "bit for bit");

    let (row, apart, _) = raw_row("a-embedded").await;
    assert!(!holds_embedding(&row), "the embedding left the row");
    assert!(vector_apart(&apart).is_instance_of::<Float32Array>());
    let (row, apart, _) = raw_row("c-infinite").await;
    assert!(
        !holds_embedding(&row),
        "moved into its block without the broken vector, as reading it dropped it"
    );
    assert!(apart.is_undefined());
    let as_stored =
        |json: &str| String::from(JSON::stringify(&JSON::parse(json).unwrap()).unwrap());
    let (row, apart, _) = raw_row("d-unreadable").await;
    assert!(Array::is_array(&embedding_vector(&row)), "not converted");
    assert!(apart.is_undefined(), "nor moved");
    assert_eq!(
        String::from(JSON::stringify(&row).unwrap()),
        as_stored(&unreadable_json),
        "the unreadable row is untouched"
    );
    assert_eq!(stored.unreadable.len(), 1);
    assert_eq!(stored.unreadable[0].key, "\"d-unreadable\"");
    assert_eq!(stored.unreadable[0].raw, as_stored(&unreadable_json));

    // Writes after the migration: a count on two records, read and written alone,
    // then an embedding stored where the infinity was.
    let ids = [embedded.id.clone(), infinite.id.clone()];
    IdbStore::default()
        .transact_records(&ids, |records| {
            assert_eq!(records.len(), 2, "just the named records are read");
            let memory = FeedbackMemory::from_records(records);
            StoreChange::put(
                ids.iter()
                    .filter_map(|id| memory.plan_applied(id))
                    .collect(),
            )
        })
        .await
        .expect("the count commits");
    let embedding = StoredEmbedding::new("minilm", vec![0.6, -0.8]).unwrap();
    IdbStore::default()
        .transact_records(std::slice::from_ref(&infinite.id), |records| {
            let mut record = records[0].clone();
            record.embedding = Some(embedding.clone());
            StoreChange::put(vec![record])
        })
        .await
        .expect("the embedding commits");
    let again = IdbStore::default().load_all().await.unwrap();
    let counted = &again.records[0];
    assert_eq!(counted.stats.times_applied, 1);
    assert_eq!(
        bits(counted.embedding.as_ref().unwrap().vector()),
        bits(&vector)
    );
    assert_eq!(again.records[1], example);
    assert_eq!(again.records[2].stats.times_applied, 1);
    assert_eq!(again.records[2].embedding, Some(embedding));
    let (row, apart, _) = raw_row("c-infinite").await;
    assert!(!holds_embedding(&row), "its block holds no vector");
    assert!(vector_apart(&apart).is_instance_of::<Float32Array>());
    assert_eq!(again.unreadable, stored.unreadable, "still untouched");

    // A targeted write over the unreadable row is refused like any other.
    let mut over = embedded.clone();
    over.id = RecordId("d-unreadable".into());
    let refused = IdbStore::default()
        .transact_records(std::slice::from_ref(&over.id), |_| {
            StoreChange::put(vec![over.clone()])
        })
        .await;
    assert_eq!(
        refused,
        Err(StoreError::WouldOverwriteUnreadable {
            id: "\"d-unreadable\"".into()
        })
    );
}

#[wasm_bindgen_test]
async fn a_version_3_database_has_its_embeddings_moved_apart_bit_for_bit() {
    let vector = awkward_unit_vector();
    let mut embedded = lesson("a-embedded", "What is like < fast > ?");
    embedded.embedding = Some(StoredEmbedding::new("minilm", vector.clone()).unwrap());
    let plain = lesson("b-plain", "How do I spell < rhythm > ?");
    let embedded_json = record_to_json_and_vector(&embedded).unwrap().0;
    let plain_json = record_to_json(&plain).unwrap();
    // A newer Remind's state: unreadable, its Float32Array left in its row.
    let unreadable_json = embedded_json
        .replace("a-embedded", "c-unreadable")
        .replace("\"current\"", "\"archived\"");
    let values: Vec<String> = vector.iter().map(|x| format!("{x:e}")).collect();
    let binary = format!(
        "{{ model: 'minilm', vector: new Float32Array([{}]) }}",
        values.join(",")
    );
    older_database_with(
        3,
        &format!(
            "[{{ ...{embedded_json}, embedding: {binary} }}, {plain_json}, \
             {{ ...{unreadable_json}, embedding: {binary} }}]"
        ),
    )
    .await;

    let stored = IdbStore::default()
        .load_all()
        .await
        .expect("the migrated database reads");
    assert_eq!(stored.records, vec![embedded.clone(), plain.clone()]);
    let read_vector = stored.records[0].embedding.as_ref().unwrap().vector();
    assert_eq!(bits(read_vector), bits(&vector), "bit for bit");
    let (row, apart, version) = raw_row("a-embedded").await;
    assert_eq!(version, LATEST_SCHEMA);
    assert!(!holds_embedding(&row), "the embedding left the row");
    assert!(vector_apart(&apart).is_instance_of::<Float32Array>());
    let (row, apart, _) = raw_row("c-unreadable").await;
    assert!(
        embedding_vector(&row).is_instance_of::<Float32Array>(),
        "the unreadable row keeps its own"
    );
    assert!(apart.is_undefined());
    assert_eq!(stored.unreadable.len(), 1);

    // The records alone, then the embeddings: what a reload shows first, and then.
    let shown_first = IdbStore::default().load_all_but_embeddings().await.unwrap();
    assert!(shown_first.records.iter().all(|r| r.embedding.is_none()));
    assert_eq!(shown_first.records.len(), 2);
    let apart = IdbStore::default().load_embeddings().await.unwrap();
    assert_eq!(apart.len(), 1);
    assert_eq!(apart[0].0, embedded.id);
    assert_eq!(bits(&apart[0].1.vector), bits(&vector));

    // Forgetting the record forgets its embedding; putting it back without one
    // leaves none behind.
    IdbStore::default()
        .commit(&[], std::slice::from_ref(&embedded.id))
        .await
        .unwrap();
    let (_, apart, _) = raw_row("a-embedded").await;
    assert!(apart.is_undefined(), "erased with its record");
    let mut bare = embedded.clone();
    bare.embedding = None;
    IdbStore::default()
        .write(&[embedded.clone()])
        .await
        .unwrap();
    IdbStore::default().write(&[bare]).await.unwrap();
    let (_, apart, _) = raw_row("a-embedded").await;
    assert!(
        apart.is_undefined(),
        "a record put without an embedding has none"
    );
}

#[wasm_bindgen_test]
async fn a_targeted_change_sees_the_record_as_another_write_left_it() {
    version_2_database_with("[]").await;
    let lesson = lesson("e-counted", "What is unlike < hot > ?");
    IdbStore::default()
        .write(std::slice::from_ref(&lesson))
        .await
        .unwrap();
    // Another tab counts it three times, reading everything as before.
    for _ in 0..3 {
        IdbStore::default()
            .transact(|records| {
                let memory = FeedbackMemory::from_records(records);
                StoreChange::put(memory.plan_applied(&lesson.id).into_iter().collect())
            })
            .await
            .unwrap();
    }
    // Concurrent targeted counts: none may write back a copy another has outdated.
    let counts = (0..10).map(|_| async {
        IdbStore::default()
            .transact_records(std::slice::from_ref(&lesson.id), |records| {
                let memory = FeedbackMemory::from_records(records);
                StoreChange::put(memory.plan_applied(&lesson.id).into_iter().collect())
            })
            .await
    });
    for outcome in futures::future::join_all(counts).await {
        outcome.expect("each count commits");
    }
    let stored = IdbStore::default().load().await.unwrap();
    assert_eq!(stored[0].stats.times_applied, 13);
}

#[wasm_bindgen_test]
async fn a_version_2_database_larger_than_a_migration_step_is_migrated_whole() {
    // 700 rows, three steps of the migration: every fifth unreadable (a newer
    // Remind's state), every seventh holding a `null` (a stored infinity), and the
    // unreadable ones of the last step at its very end, so a step may move nothing.
    let vector = awkward_unit_vector();
    let numbers: Vec<String> = vector.iter().map(|x| format!("{x:e}")).collect();
    let numbers = numbers.join(",");
    let mut rows = Vec::new();
    let mut readable = Vec::new();
    for i in 0..700 {
        let record = lesson(&format!("r{i:03}"), &format!("What is like < word{i} > ?"));
        let json = record_to_json(&record).unwrap();
        let json = json.strip_suffix('}').unwrap();
        let (state, vector) = match i {
            _ if i % 5 == 0 || i >= 690 => ("archived", numbers.clone()),
            _ if i % 7 == 0 => ("current", format!("null,{numbers}")),
            _ => ("current", numbers.clone()),
        };
        let json = json.replace("\"current\"", &format!("\"{state}\""));
        rows.push(format!(
            "{json},\"embedding\":{{\"model\":\"minilm\",\"vector\":[{vector}]}}}}"
        ));
        if state == "current" {
            readable.push((record, i % 7 != 0));
        }
    }
    version_2_database_with(&format!("[{}]", rows.join(","))).await;

    let stored = IdbStore::default()
        .load_all()
        .await
        .expect("the migrated database reads");
    assert_eq!(stored.unreadable.len(), 700 - readable.len());
    assert_eq!(stored.records.len(), readable.len());
    for (record, (expected, embedded)) in stored.records.iter().zip(&readable) {
        assert_eq!(record.id, expected.id);
        match record.embedding.as_ref() {
            Some(embedding) => {
                assert!(embedded, "{} had a null among its numbers", record.id.0);
                assert_eq!(bits(embedding.vector()), bits(&vector), "{}", record.id.0);
            }
            None => assert!(!embedded, "{} lost its embedding", record.id.0),
        }
    }
    let (row, apart, version) = raw_row("r698").await;
    assert_eq!(version, LATEST_SCHEMA);
    assert!(
        holds_embedding(&row) && apart.is_undefined(),
        "unreadable, untouched"
    );
    let (row, apart, _) = raw_row("r689").await;
    assert!(!holds_embedding(&row), "the last readable row was moved");
    assert!(vector_apart(&apart).is_instance_of::<Float32Array>());
}

/// How many rows the records store holds, and how many blocks the blocks store.
async fn rows_and_blocks() -> (u32, u32) {
    let counted = run("new Promise((resolve, reject) => {
            const open = indexedDB.open('remind');
            open.onerror = () => reject(open.error);
            open.onsuccess = () => {
                const db = open.result;
                const tx = db.transaction(['records', 'record_blocks']);
                const rows = tx.objectStore('records').count();
                const blocks = tx.objectStore('record_blocks').count();
                tx.oncomplete = () => { db.close(); resolve([rows.result, blocks.result]); };
                tx.onerror = () => { db.close(); reject(tx.error); };
            };
        })")
    .await;
    let counted = Array::from(&counted);
    let count = |i| counted.get(i).as_f64().unwrap() as u32;
    (count(0), count(1))
}

#[wasm_bindgen_test]
async fn a_version_4_database_has_its_rows_moved_into_blocks_leaving_every_other_row_as_it_was() {
    let vector = awkward_unit_vector();
    // 2 500 lessons, three steps of the migration, each embedded apart; one row a
    // newer Remind's state, one holding its own Float32Array (no Remind of schema 4
    // wrote that), both to stay rows.
    let lessons: Vec<MemoryRecord> = (0..2500)
        .map(|i| lesson(&format!("m-{i:05}"), &format!("What is like < word{i} > ?")))
        .collect();
    let jsons: Vec<String> = lessons.iter().map(|r| record_to_json(r).unwrap()).collect();
    let newer = jsons[0]
        .replace("m-00000", "x-newer")
        .replace("\"current\"", "\"archived\"");
    let values: Vec<String> = vector.iter().map(|x| format!("{x:e}")).collect();
    let binary = format!(
        "{{ model: 'minilm', vector: new Float32Array([{}]) }}",
        values.join(",")
    );
    let own = jsons[1].replace("m-00001", "y-own");
    database_of_version_with(
        4,
        &format!(
            "[{}, {newer}, {{ ...{own}, embedding: {binary} }}]",
            jsons.join(",")
        ),
        &format!("[['m-00007', {binary}]]"),
    )
    .await;

    let stored = IdbStore::default()
        .load_all()
        .await
        .expect("the migrated database reads");
    assert_eq!(stored.records.len(), 2501);
    assert_eq!(
        stored.records[..2500],
        lessons[..2500]
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut r = r.clone();
                if i == 7 {
                    r.embedding = Some(StoredEmbedding::new("minilm", vector.clone()).unwrap());
                }
                r
            })
            .collect::<Vec<_>>()[..],
        "every record, in the order of its id, its embedding apart"
    );
    assert_eq!(stored.records[2500].id, RecordId("y-own".into()));
    assert_eq!(
        bits(stored.records[2500].embedding.as_ref().unwrap().vector()),
        bits(&vector),
        "the row holding its own embedding reads as before"
    );
    assert_eq!(stored.unreadable.len(), 1);
    assert_eq!(stored.unreadable[0].key, "\"x-newer\"");
    let (rows, blocks) = rows_and_blocks().await;
    assert_eq!(rows, 2, "only the rows that stay");
    assert_eq!(blocks, 64, "2 500 records fill every block");
    let (row, _, version) = raw_row("x-newer").await;
    assert_eq!(version, LATEST_SCHEMA);
    assert_eq!(
        String::from(JSON::stringify(&row).unwrap()),
        String::from(JSON::stringify(&JSON::parse(&newer).unwrap()).unwrap()),
        "the unreadable row is untouched"
    );

    // The row beside the blocks moves into its block when written.
    let mut counted = stored.records[2500].clone();
    counted.stats.times_applied = 1;
    IdbStore::default().write(&[counted]).await.unwrap();
    let (rows, _) = rows_and_blocks().await;
    assert_eq!(rows, 1, "its row is gone");
    let again = IdbStore::default().load_all().await.unwrap();
    let moved = again.records.iter().find(|r| r.id.0 == "y-own").unwrap();
    assert_eq!(moved.stats.times_applied, 1);
    assert_eq!(
        bits(moved.embedding.as_ref().unwrap().vector()),
        bits(&vector),
        "put apart"
    );
    assert_eq!(again.records.len(), 2501);
}

#[wasm_bindgen_test]
async fn a_version_5_database_keeps_every_row_beside_the_blocks_in_its_records_store_made_anew() {
    // A version-5 database as the migration to blocks left one: no blocks yet written
    // here, a row this Remind reads as a record and a newer Remind's row, both beside.
    let readable = lesson("a-readable", "What is like < fast > ?");
    let readable_json = record_to_json(&readable).unwrap();
    let newer = readable_json
        .replace("a-readable", "b-newer")
        .replace("\"current\"", "\"archived\"");
    database_of_version_with(5, &format!("[{readable_json}, {newer}]"), "[]").await;

    let stored = IdbStore::default()
        .load_all()
        .await
        .expect("the renewed database reads");
    assert_eq!(stored.records, vec![readable.clone()]);
    assert_eq!(stored.unreadable.len(), 1);
    assert_eq!(stored.unreadable[0].key, "\"b-newer\"");
    let (row, _, version) = raw_row("b-newer").await;
    assert_eq!(version, LATEST_SCHEMA);
    assert_eq!(
        String::from(JSON::stringify(&row).unwrap()),
        String::from(JSON::stringify(&JSON::parse(&newer).unwrap()).unwrap()),
        "the unreadable row is put back exactly as it was"
    );
    let shape = run("new Promise((resolve, reject) => {
            const open = indexedDB.open('remind');
            open.onerror = () => reject(open.error);
            open.onsuccess = () => {
                const db = open.result;
                const records = db.transaction('records').objectStore('records');
                const shape = [records.keyPath, [...records.indexNames].join(',')];
                db.close();
                resolve(shape);
            };
        })")
    .await;
    let shape = Array::from(&shape);
    assert_eq!(
        shape.get(0).as_string().as_deref(),
        Some("id"),
        "keyed by id"
    );
    assert_eq!(
        shape.get(1).as_string().as_deref(),
        Some("key"),
        "indexed by key"
    );

    // The row beside the blocks moves into its block when written, as before.
    let mut counted = readable.clone();
    counted.stats.times_applied = 1;
    IdbStore::default().write(&[counted.clone()]).await.unwrap();
    let (rows, blocks) = rows_and_blocks().await;
    assert_eq!(
        (rows, blocks),
        (1, 1),
        "only the newer Remind's row is left a row"
    );
    let again = IdbStore::default().load_all().await.unwrap();
    assert_eq!(again.records, vec![counted]);
}

/// The blocks store's values as the database holds them, by block number.
async fn raw_blocks() -> Vec<(u32, Vec<u8>)> {
    let found = run("new Promise((resolve, reject) => {
            const open = indexedDB.open('remind');
            open.onerror = () => reject(open.error);
            open.onsuccess = () => {
                const db = open.result;
                const tx = db.transaction('record_blocks');
                const keys = tx.objectStore('record_blocks').getAllKeys();
                const blocks = tx.objectStore('record_blocks').getAll();
                tx.oncomplete = () => { db.close(); resolve([keys.result, blocks.result]); };
                tx.onerror = () => { db.close(); reject(tx.error); };
            };
        })")
    .await;
    let found = Array::from(&found);
    let (keys, blocks) = (Array::from(&found.get(0)), Array::from(&found.get(1)));
    keys.iter()
        .zip(blocks.iter())
        .map(|(key, block)| {
            (
                key.as_f64().unwrap() as u32,
                block.unchecked_into::<js_sys::Uint8Array>().to_vec(),
            )
        })
        .collect()
}

#[wasm_bindgen_test]
async fn a_version_6_database_has_its_json_blocks_written_again_in_binary_and_a_bad_block_left_as_it_was()
 {
    let lessons: Vec<MemoryRecord> = (0..40)
        .map(|i| lesson(&format!("j-{i:03}"), &format!("What is like < word{i} > ?")))
        .collect();
    let mut by_block: std::collections::BTreeMap<u32, Vec<String>> = Default::default();
    for record in &lessons {
        by_block
            .entry(block_of(&record.id))
            .or_default()
            .push(record_to_json_and_vector(record).unwrap().0);
    }
    let bad = (0..BLOCKS).find(|n| !by_block.contains_key(n)).unwrap();
    // Each block as schema 6 wrote it: the UTF-8 of the JSON array of its records.
    let mut blocks: Vec<String> = by_block
        .iter()
        .map(|(number, texts)| {
            format!(
                "[new TextEncoder().encode({:?}), {number}]",
                format!("[{}]", texts.join(","))
            )
        })
        .collect();
    blocks.push(format!(
        "[new TextEncoder().encode('[{{\"id\": 1}}'), {bad}]"
    ));
    database_of_version_with(6, "[]", "[]").await;
    run(&format!(
        "new Promise((resolve, reject) => {{
            const open = indexedDB.open('remind', 6);
            open.onerror = () => reject(open.error);
            open.onsuccess = () => {{
                const db = open.result;
                const tx = db.transaction('record_blocks', 'readwrite');
                for (const [bytes, number] of [{}]) tx.objectStore('record_blocks').put(bytes, number);
                tx.oncomplete = () => {{ db.close(); resolve(); }};
                tx.onerror = () => {{ db.close(); reject(tx.error); }};
            }};
        }})",
        blocks.join(",")
    ))
    .await;

    let stored = IdbStore::default()
        .load_all()
        .await
        .expect("the migrated database reads");
    assert_eq!(
        stored.records, lessons,
        "every record, in the order of its id"
    );
    assert_eq!(stored.unreadable.len(), 1);
    assert_eq!(stored.unreadable[0].key, format!("{{\"block\":{bad}}}"));
    assert_eq!(stored.unreadable[0].raw, r#"[{"id": 1}"#);
    let (_, _, version) = raw_row("j-000").await;
    assert_eq!(version, LATEST_SCHEMA);
    for (number, bytes) in raw_blocks().await {
        if number == bad {
            assert_eq!(bytes, br#"[{"id": 1}"#, "the bad block is untouched");
        } else {
            assert!(is_binary_block(&bytes), "block {number} is written again");
        }
    }

    // A write after the migration round-trips.
    let mut counted = lessons[3].clone();
    counted.stats.times_applied = 2;
    IdbStore::default().write(&[counted.clone()]).await.unwrap();
    let again = IdbStore::default().load_all().await.unwrap();
    assert_eq!(
        again.records.iter().find(|r| r.id == counted.id),
        Some(&counted)
    );
    assert_eq!(again.records.len(), 40);
}
