//! The browser adapters against the real platform: IndexedDB and localStorage in
//! headless Chromium (run by wasm-bindgen-test-runner through chromedriver).
#![cfg(target_arch = "wasm32")]

use remind_app::ports::{MemoryStore, SettingsStore, StoreError};
use remind_app::settings::Settings;
use remind_core::memory::{FeedbackMemory, Lesson};
use remind_core::record::{MemoryRecord, RecordId, RecordState, StoredEmbedding, Timestamp};
use remind_core::record_blocks::{BLOCKS, block_of};
use remind_web::adapters::idb_store::IdbStore;
use remind_web::adapters::local_settings::LocalSettings;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn a_committed_write_is_read_back_by_a_new_connection() {
    let store = IdbStore::default();
    let id = format!("browser-test-{}", js_sys::Date::now());
    let written = FeedbackMemory::default().plan_write(
        Lesson::user_clarification(
            "What is like < fast > ?",
            "when I ask for like, I want a synonym.",
        ),
        RecordId(id.clone()),
        Timestamp(1),
    );
    store
        .write(std::slice::from_ref(&written.current))
        .await
        .expect("the write commits");

    let loaded = store.load().await.expect("the store reads back");
    let found = loaded
        .iter()
        .find(|r| r.id.0 == id)
        .expect("the written record is stored");
    assert_eq!(found, &written.current);
}

#[wasm_bindgen_test]
async fn a_superseding_write_stores_both_records_in_one_transaction() {
    let store = IdbStore::default();
    let stamp = js_sys::Date::now();
    let mut memory = FeedbackMemory::default();
    let first = memory.plan_write(
        Lesson::user_clarification("What is unlike < hot > ?", "I want a homonym"),
        RecordId(format!("old-{stamp}")),
        Timestamp(1),
    );
    memory.apply(&first);
    store
        .write(std::slice::from_ref(&first.current))
        .await
        .unwrap();

    let second = memory.plan_write(
        Lesson::user_clarification("what is unlike < cold > ?", "I want an antonym"),
        RecordId(format!("new-{stamp}")),
        Timestamp(2),
    );
    let mut records = vec![second.current.clone()];
    records.extend(second.replaced.clone());
    store.write(&records).await.unwrap();

    let loaded = store.load().await.unwrap();
    let old = loaded
        .iter()
        .find(|r| r.id.0 == format!("old-{stamp}"))
        .unwrap();
    let new = loaded
        .iter()
        .find(|r| r.id.0 == format!("new-{stamp}"))
        .unwrap();
    assert_eq!(old.state, RecordState::Superseded);
    assert_eq!(new.state, RecordState::Current);
    assert_eq!(new.supersedes, Some(old.id.clone()));
}

#[wasm_bindgen_test]
fn settings_survive_in_local_storage() {
    let mut settings = Settings::default();
    settings.endpoint.base_url = "http://127.0.0.1:9999/v1".into();
    settings.endpoint.model = "browser-test-model".into();
    LocalSettings
        .save(&settings)
        .expect("localStorage accepts the settings");
    assert_eq!(LocalSettings.load(), Some(settings));
}

#[wasm_bindgen_test]
async fn the_turn_log_is_appended_in_order_and_read_back() {
    use remind_core::learning_curve::{TurnEvent, TurnEventKind, TurnId};
    let store = IdbStore::default();
    let turn = TurnId(format!("browser-turn-{}", js_sys::Date::now()));
    let events = [
        TurnEvent {
            turn: turn.clone(),
            at: Timestamp(1),
            kind: TurnEventKind::Asked {
                lesson_applied: true,
                examples_used: 1,
            },
        },
        TurnEvent {
            turn: turn.clone(),
            at: Timestamp(2),
            kind: TurnEventKind::Corrected,
        },
    ];
    for event in &events {
        store
            .append_turn_event(event)
            .await
            .expect("the log accepts the event");
    }
    let logged: Vec<TurnEvent> = store
        .load_turn_events()
        .await
        .expect("the log reads back")
        .into_iter()
        .filter(|e| e.turn == turn)
        .collect();
    assert_eq!(logged, events);
}

#[wasm_bindgen_test]
async fn a_simulated_full_disk_aborts_the_real_transaction_and_stores_nothing() {
    let store = IdbStore::default();
    let id = format!("quota-test-{}", js_sys::Date::now());
    let written = FeedbackMemory::default().plan_write(
        Lesson::user_clarification("What is like < quota > ?", "I want a synonym"),
        RecordId(id.clone()),
        Timestamp(1),
    );
    js_sys::Reflect::set(
        &js_sys::global(),
        &"__remindFailNextWrite".into(),
        &"quota".into(),
    )
    .unwrap();
    let outcome = store.write(std::slice::from_ref(&written.current)).await;
    assert_eq!(outcome, Err(remind_app::ports::StoreError::QuotaExceeded));
    let loaded = store.load().await.unwrap();
    assert!(
        loaded.iter().all(|r| r.id.0 != id),
        "nothing of the failed save is stored"
    );
    store
        .write(std::slice::from_ref(&written.current))
        .await
        .expect("the hook fails one save only");
}

/// A lesson stored under a fresh id, for the transaction tests.
async fn stored_lesson(store: &IdbStore, label: &str) -> remind_core::record::MemoryRecord {
    let id = format!("{label}-{}", js_sys::Date::now());
    let written = FeedbackMemory::default().plan_write(
        Lesson::user_clarification(&format!("What is like < {label} > ?"), "I want a synonym"),
        RecordId(id),
        Timestamp(1),
    );
    store
        .write(std::slice::from_ref(&written.current))
        .await
        .expect("the lesson is stored");
    written.current
}

#[wasm_bindgen_test]
async fn twenty_concurrent_read_modify_writes_lose_no_update() {
    use remind_app::ports::StoreChange;
    let store = IdbStore::default();
    let lesson = stored_lesson(&store, "counted").await;
    // Each change reads the count and writes it plus one; were the read and the write
    // two transactions, concurrent changes would read the same count and lose updates.
    let changes = (0..20).map(|_| {
        let id = lesson.id.clone();
        async move {
            IdbStore::default()
                .transact(|records| {
                    let memory = FeedbackMemory::from_records(records);
                    StoreChange::put(memory.plan_applied(&id).into_iter().collect())
                })
                .await
        }
    });
    for outcome in futures::future::join_all(changes).await {
        outcome.expect("each change commits");
    }
    let loaded = store.load().await.unwrap();
    let counted = loaded.iter().find(|r| r.id == lesson.id).unwrap();
    assert_eq!(counted.stats.times_applied, 20);
}

/// Puts a raw value into the records store, bypassing the adapter, as a newer Remind
/// or a damaged disk would leave it.
async fn put_raw_row(json: &str) {
    put_raw("records", json).await;
}

/// Runs `put`, the arguments of a `put` (a JavaScript argument list), on the store
/// `store_name` in a transaction of its own, bypassing the adapter.
async fn put_raw(store_name: &str, put: &str) {
    run(&format!(
        "new Promise((resolve, reject) => {{
            const open = indexedDB.open('remind');
            open.onerror = () => reject(open.error);
            open.onsuccess = () => {{
                const db = open.result;
                const tx = db.transaction('{store_name}', 'readwrite');
                tx.objectStore('{store_name}').put({put});
                tx.oncomplete = () => {{ db.close(); resolve(); }};
                tx.onerror = () => {{ db.close(); reject(tx.error); }};
            }};
        }})"
    ))
    .await;
}

#[wasm_bindgen_test]
async fn a_row_this_remind_cannot_read_is_set_aside_and_never_overwritten() {
    let store = IdbStore::default();
    let good = stored_lesson(&store, "beside-unreadable").await;
    // Read at once, every row a record of its own id (what a reload does first), and
    // read whole row by row: the same records.
    let at_once = store.load_all_but_embeddings().await.unwrap();
    let whole = store.load_all().await.unwrap();
    let without_embeddings = |records: Vec<MemoryRecord>| -> Vec<MemoryRecord> {
        records
            .into_iter()
            .map(|record| MemoryRecord {
                embedding: None,
                ..record
            })
            .collect()
    };
    assert_eq!(
        without_embeddings(at_once.records),
        without_embeddings(whole.records)
    );
    let id = format!("newer-{}", js_sys::Date::now());
    put_raw_row(&format!(
        r#"{{"id":"{id}","key":"k","question":"q","state":"archived"}}"#
    ))
    .await;

    let stored = store
        .load_all()
        .await
        .expect("one bad row does not fail the load");
    assert!(stored.records.iter().any(|r| r.id == good.id));
    let row = stored
        .unreadable
        .iter()
        .find(|row| row.key == format!("\"{id}\""))
        .expect("the bad row is listed");
    assert!(row.raw.contains("archived"));
    let shown_first = store.load_all_but_embeddings().await.unwrap();
    assert_eq!(
        shown_first.unreadable, stored.unreadable,
        "the reload's first read sets the same rows aside"
    );
    assert!(shown_first.records.iter().any(|r| r.id == good.id));

    let mut overwrite = good.clone();
    overwrite.id = RecordId(id.clone());
    let refused = store.write(&[overwrite]).await;
    assert_eq!(
        refused,
        Err(remind_app::ports::StoreError::WouldOverwriteUnreadable {
            id: format!("\"{id}\"")
        })
    );
    let again = store.load_all().await.unwrap();
    assert_eq!(
        again.unreadable.iter().find(|r| r.key == row.key),
        Some(row),
        "the row is untouched"
    );

    store
        .erase_unreadable(std::slice::from_ref(&row.key))
        .await
        .unwrap();
    let after = store.load_all().await.unwrap();
    assert!(after.unreadable.iter().all(|r| r.key != row.key));
    assert!(after.records.iter().any(|r| r.id == good.id));
}

/// Puts `value` (a JavaScript expression) into the blocks store under block `number`,
/// bypassing the adapter, as a damaged disk or a hand in the developer tools would.
async fn put_raw_block(number: u32, value: &str) {
    put_raw("record_blocks", &format!("{value}, {number}")).await;
}

/// The text the blocks store holds under block `number` (its UTF-8 bytes, decoded).
async fn raw_block(number: u32) -> wasm_bindgen::JsValue {
    run(&format!(
        "new Promise((resolve, reject) => {{
            const open = indexedDB.open('remind');
            open.onerror = () => reject(open.error);
            open.onsuccess = () => {{
                const db = open.result;
                const tx = db.transaction('record_blocks');
                const block = tx.objectStore('record_blocks').get({number});
                tx.oncomplete = () => {{ db.close(); resolve(new TextDecoder().decode(block.result)); }};
                tx.onerror = () => {{ db.close(); reject(tx.error); }};
            }};
        }})"
    ))
    .await
}

/// Runs `script`, an expression giving a promise, and awaits it.
async fn run(script: &str) -> wasm_bindgen::JsValue {
    let promise: js_sys::Promise = js_sys::eval(script).unwrap().into();
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .expect("the script's promise resolves")
}

/// An id that falls in block `number`.
fn id_in_block(label: &str, number: u32) -> RecordId {
    (0..)
        .map(|i| RecordId(format!("{label}-{}-{i}", js_sys::Date::now())))
        .find(|id| block_of(id) == number)
        .unwrap()
}

#[wasm_bindgen_test]
async fn a_block_this_remind_cannot_read_is_set_aside_whole_guards_its_lessons_and_can_be_deleted()
{
    let store = IdbStore::default();
    let kept = stored_lesson(&store, "beside-a-bad-block").await;
    let bad = (block_of(&kept.id) + 1) % BLOCKS;
    put_raw_block(bad, r#"new TextEncoder().encode('[{"id": 1}')"#).await;

    let stored = store
        .load_all()
        .await
        .expect("one bad block does not fail the load");
    assert!(stored.records.iter().any(|r| r.id == kept.id));
    let set_aside = stored
        .unreadable
        .iter()
        .find(|u| u.key == format!("{{\"block\":{bad}}}"))
        .expect("the block is listed")
        .clone();
    assert_eq!(set_aside.raw, r#"[{"id": 1}"#, "its raw text, as stored");
    let shown_first = store.load_all_but_embeddings().await.unwrap();
    assert!(
        shown_first.unreadable.contains(&set_aside),
        "the reload sets it aside too"
    );

    let mut into_bad = kept.clone();
    into_bad.id = id_in_block("into-a-bad-block", bad);
    assert_eq!(
        store.write(std::slice::from_ref(&into_bad)).await,
        Err(StoreError::WouldOverwriteUnreadable {
            id: set_aside.key.clone()
        }),
        "a lesson of that block would rewrite it"
    );
    assert_eq!(
        raw_block(bad).await.as_string().as_deref(),
        Some(r#"[{"id": 1}"#),
        "the block is untouched"
    );
    let elsewhere = stored_lesson(&store, "in-another-block").await;

    store
        .erase_unreadable(std::slice::from_ref(&set_aside.key))
        .await
        .unwrap();
    store
        .write(std::slice::from_ref(&into_bad))
        .await
        .expect("saved once the bad block is deleted");
    let after = store.load_all().await.unwrap();
    assert!(after.unreadable.iter().all(|u| u.key != set_aside.key));
    for id in [&kept.id, &elsewhere.id, &into_bad.id] {
        assert!(after.records.iter().any(|r| &r.id == id), "{id:?}");
    }
}

#[wasm_bindgen_test]
async fn a_block_holding_no_bytes_or_under_a_key_remind_never_writes_is_set_aside_and_the_rest_reads()
 {
    let store = IdbStore::default();
    let kept = stored_lesson(&store, "beside-odd-blocks").await;
    let empty = (block_of(&kept.id) + 2) % BLOCKS;
    put_raw_block(empty, "undefined").await;
    put_raw("record_blocks", "new Uint8Array([1, 2]), 'seven'").await;
    put_raw(
        "record_blocks",
        &format!("new Uint8Array([3]), {}", BLOCKS + 1),
    )
    .await;

    for stored in [
        store
            .load_all()
            .await
            .expect("the odd blocks do not fail the load"),
        store.load_all_but_embeddings().await.unwrap(),
    ] {
        assert!(stored.records.iter().any(|r| r.id == kept.id));
        for key in [
            format!("{{\"block\":{empty}}}"),
            r#"{"block":"seven"}"#.to_string(),
            format!("{{\"block\":{}}}", BLOCKS + 1),
        ] {
            let set_aside = stored
                .unreadable
                .iter()
                .find(|u| u.key == key)
                .unwrap_or_else(|| panic!("{key} is listed: {:?}", stored.unreadable));
            if key.contains(&empty.to_string()) {
                assert_eq!(set_aside.raw, "undefined");
            }
        }
    }
    let keys: Vec<String> = store
        .load_all()
        .await
        .unwrap()
        .unreadable
        .into_iter()
        .map(|u| u.key)
        .filter(|key| key.starts_with("{\"block\""))
        .collect();
    store.erase_unreadable(&keys).await.unwrap();
    let after = store.load_all().await.unwrap();
    assert!(
        after
            .unreadable
            .iter()
            .all(|u| !u.key.starts_with("{\"block\""))
    );
    assert!(after.records.iter().any(|r| r.id == kept.id));
}

#[wasm_bindgen_test]
async fn a_row_copying_a_lesson_its_block_holds_is_set_aside_and_the_lesson_kept() {
    let store = IdbStore::default();
    let mut kept = stored_lesson(&store, "copied").await;
    kept.embedding = Some(StoredEmbedding::new("minilm", vec![0.6, 0.8]).unwrap());
    store.write(std::slice::from_ref(&kept)).await.unwrap();
    put_raw_row(&remind_core::stored_record::record_to_json(&kept).unwrap()).await;

    let stored = store.load_all().await.unwrap();
    assert_eq!(stored.records.iter().filter(|r| r.id == kept.id).count(), 1);
    let copy = stored
        .unreadable
        .iter()
        .find(|u| u.is_stored_under(&kept.id))
        .expect("the copy is listed")
        .clone();
    assert!(copy.problem.contains("second copy"), "{}", copy.problem);
    assert!(
        matches!(
            store.write(std::slice::from_ref(&kept)).await,
            Err(StoreError::WouldOverwriteUnreadable { .. })
        ),
        "no write picks one copy over the other"
    );

    store
        .erase_unreadable(std::slice::from_ref(&copy.key))
        .await
        .unwrap();
    let after = store.load_all().await.unwrap();
    assert!(after.unreadable.iter().all(|u| u.key != copy.key));
    assert_eq!(
        after.records.iter().find(|r| r.id == kept.id),
        Some(&kept),
        "the lesson its block holds is kept, with its embedding"
    );
    store
        .write(std::slice::from_ref(&kept))
        .await
        .expect("and writable again");
}
