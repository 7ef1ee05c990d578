//! Memory records in the browser's IndexedDB, written in transactions.
//!
//! A write resolves only when its transaction's `complete` event fired, so the page
//! never says "saved" for a write that was aborted (quota, a closed tab, a blocked
//! database). Records are stored as JSON-shaped objects keyed by `id`.

use js_sys::{Array, JSON, Promise};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DomException, IdbDatabase, IdbObjectStoreParameters, IdbOpenDbRequest, IdbRequest,
    IdbTransaction, IdbTransactionMode, IdbVersionChangeEvent,
};

use remind_app::ports::{MemoryStore, StoreError};
use remind_core::learning_curve::TurnEvent;
use remind_core::record::{MemoryRecord, RecordId};
use remind_core::stored_record::{record_from_json, record_to_json};

const DB_NAME: &str = "remind";
/// Bumped with every schema change; [`migrate`] brings older databases up to date.
const DB_VERSION: u32 = 2;
const RECORDS: &str = "records";
/// The learning curve's turn log (schema version 2): append-only, in key order.
const TURN_EVENTS: &str = "turn_events";

#[derive(Clone, Default)]
pub struct IdbStore;

impl MemoryStore for IdbStore {
    async fn load(&self) -> Result<Vec<MemoryRecord>, StoreError> {
        read_all(RECORDS)
            .await?
            .iter()
            .map(|json| {
                record_from_json(json)
                    .map_err(|e| StoreError::Corrupt(format!("a stored record is unreadable: {e}")))
            })
            .collect()
    }

    async fn commit(&self, put: &[MemoryRecord], erase: &[RecordId]) -> Result<(), StoreError> {
        // Encoded before the transaction opens: an early return inside it would let
        // the puts made so far commit, and the change must be all or nothing.
        let mut values = Vec::with_capacity(put.len());
        for record in put {
            let json = record_to_json(record)
                .map_err(|e| StoreError::Failed(format!("a record could not be encoded: {e}")))?;
            values.push(JSON::parse(&json).map_err(|e| failed("saving", e))?);
        }
        let db = open().await?;
        let tx = db
            .transaction_with_str_and_mode(RECORDS, IdbTransactionMode::Readwrite)
            .map_err(|e| failed("starting the save", e))?;
        let done = committed(&tx);
        let store = tx.object_store(RECORDS).map_err(|e| failed("saving", e))?;
        for id in erase {
            if let Err(e) = store.delete(&JsValue::from_str(&id.0)) {
                let _ = tx.abort();
                return Err(failed("erasing", e));
            }
        }
        for value in &values {
            if let Err(e) = store.put(value) {
                let _ = tx.abort();
                return Err(failed("saving", e));
            }
        }
        if let Some(simulated) = take_simulated_failure() {
            // Aborting the real transaction, puts and deletes already issued, proves
            // that a failed save rolls back rather than merely being reported.
            let _ = tx.abort();
            let _ = done.await;
            db.close();
            return Err(simulated);
        }
        let outcome = done.await;
        db.close();
        outcome.map(|_| ()).map_err(|e| failed("saving", e))
    }

    async fn append_turn_event(&self, event: &TurnEvent) -> Result<(), StoreError> {
        let json = serde_json::to_string(event)
            .map_err(|e| StoreError::Failed(format!("a turn event could not be encoded: {e}")))?;
        let value = JSON::parse(&json).map_err(|e| failed("logging the turn", e))?;
        let db = open().await?;
        let tx = db
            .transaction_with_str_and_mode(TURN_EVENTS, IdbTransactionMode::Readwrite)
            .map_err(|e| failed("logging the turn", e))?;
        let done = committed(&tx);
        let store = tx
            .object_store(TURN_EVENTS)
            .map_err(|e| failed("logging the turn", e))?;
        if let Err(e) = store.add(&value) {
            let _ = tx.abort();
            return Err(failed("logging the turn", e));
        }
        let outcome = done.await;
        db.close();
        outcome
            .map(|_| ())
            .map_err(|e| failed("logging the turn", e))
    }

    async fn load_turn_events(&self) -> Result<Vec<TurnEvent>, StoreError> {
        let all = read_all(TURN_EVENTS).await?;
        all.iter()
            .map(|json| {
                serde_json::from_str(json)
                    .map_err(|e| StoreError::Corrupt(format!("a logged turn is unreadable: {e}")))
            })
            .collect()
    }

    async fn request_persistence(&self) -> Result<bool, StoreError> {
        let window =
            web_sys::window().ok_or_else(|| StoreError::Unavailable("no window".into()))?;
        let promise = window
            .navigator()
            .storage()
            .persist()
            .map_err(|e| StoreError::Unavailable(describe(&e)))?;
        let granted = JsFuture::from(promise)
            .await
            .map_err(|e| StoreError::Unavailable(describe(&e)))?;
        Ok(granted.as_bool().unwrap_or(false))
    }
}

/// Every value of an object store, as JSON text, in key order.
async fn read_all(store_name: &str) -> Result<Vec<String>, StoreError> {
    let db = open().await?;
    let tx = db
        .transaction_with_str(store_name)
        .map_err(|e| failed("opening a read", e))?;
    let store = tx
        .object_store(store_name)
        .map_err(|e| failed("reading", e))?;
    let request = store.get_all().map_err(|e| failed("reading", e))?;
    let all = settle(&request).await.map_err(|e| failed("reading", e))?;
    db.close();
    Array::from(&all)
        .iter()
        .map(|value| {
            JSON::stringify(&value)
                .map(String::from)
                .map_err(|e| failed("reading", e))
        })
        .collect()
}

/// The browser tests' way to make the next save fail as a full disk would: setting
/// `window.__remindFailNextWrite = "quota"` (or any other text, for a generic failure).
/// Read once and cleared, so only the next save fails.
fn take_simulated_failure() -> Option<StoreError> {
    let global = js_sys::global();
    let key = JsValue::from_str("__remindFailNextWrite");
    let hook = js_sys::Reflect::get(&global, &key).ok()?.as_string()?;
    let _ = js_sys::Reflect::delete_property(&global, &key);
    Some(if hook == "quota" {
        StoreError::QuotaExceeded
    } else {
        StoreError::Failed(format!("simulated failure: {hook}"))
    })
}

/// Opens the database, creating or migrating its schema when needed.
async fn open() -> Result<IdbDatabase, StoreError> {
    let window = web_sys::window().ok_or_else(|| StoreError::Unavailable("no window".into()))?;
    let factory = window
        .indexed_db()
        .map_err(|e| StoreError::Unavailable(describe(&e)))?
        .ok_or_else(|| StoreError::Unavailable("IndexedDB is not available".into()))?;
    let request: IdbOpenDbRequest = factory
        .open_with_u32(DB_NAME, DB_VERSION)
        .map_err(|e| StoreError::Unavailable(describe(&e)))?;
    let on_upgrade =
        Closure::<dyn FnMut(IdbVersionChangeEvent)>::new(move |event: IdbVersionChangeEvent| {
            let Some(target) = event.target() else { return };
            let request: IdbOpenDbRequest = target.unchecked_into();
            if let Ok(db) = request.result() {
                migrate(&db.unchecked_into(), event.old_version() as u32);
            }
        });
    request.set_onupgradeneeded(Some(on_upgrade.as_ref().unchecked_ref()));
    let db = settle(&request).await;
    request.set_onupgradeneeded(None);
    drop(on_upgrade);
    db.map(JsCast::unchecked_into)
        .map_err(|e| StoreError::Unavailable(describe(&e)))
}

/// Schema steps, applied in order from the database's old version.
fn migrate(db: &IdbDatabase, old_version: u32) {
    if old_version < 1 {
        let params = IdbObjectStoreParameters::new();
        params.set_key_path(&JsValue::from_str("id"));
        if let Ok(store) = db.create_object_store_with_optional_parameters(RECORDS, &params) {
            let _ = store.create_index_with_str("key", "key");
        }
    }
    if old_version < 2 {
        let params = IdbObjectStoreParameters::new();
        params.set_auto_increment(true);
        let _ = db.create_object_store_with_optional_parameters(TURN_EVENTS, &params);
    }
}

/// Resolves with a request's result, or rejects with its error.
async fn settle(request: &IdbRequest) -> Result<JsValue, JsValue> {
    let promise = Promise::new(&mut |resolve, reject| {
        let ok = request.clone();
        let on_success = Closure::once_into_js(move || {
            let _ = resolve.call1(&JsValue::NULL, &ok.result().unwrap_or(JsValue::UNDEFINED));
        });
        let err = request.clone();
        let on_error = Closure::once_into_js(move || {
            let error = err
                .error()
                .ok()
                .flatten()
                .map_or(JsValue::UNDEFINED, JsValue::from);
            let _ = reject.call1(&JsValue::NULL, &error);
        });
        request.set_onsuccess(Some(on_success.unchecked_ref()));
        request.set_onerror(Some(on_error.unchecked_ref()));
    });
    JsFuture::from(promise).await
}

/// Resolves when the transaction committed; rejects when it errored or aborted.
fn committed(tx: &IdbTransaction) -> JsFuture {
    let promise = Promise::new(&mut |resolve, reject| {
        let on_complete = Closure::once_into_js(move || {
            let _ = resolve.call0(&JsValue::NULL);
        });
        let failed_tx = tx.clone();
        let on_failure = Closure::<dyn FnMut()>::new(move || {
            let error = failed_tx
                .error()
                .map_or(JsValue::from_str("the save was aborted"), JsValue::from);
            let _ = reject.call1(&JsValue::NULL, &error);
        })
        .into_js_value();
        tx.set_oncomplete(Some(on_complete.unchecked_ref()));
        tx.set_onerror(Some(on_failure.unchecked_ref()));
        tx.set_onabort(Some(on_failure.unchecked_ref()));
    });
    JsFuture::from(promise)
}

fn failed(doing: &str, error: JsValue) -> StoreError {
    if let Some(dom) = error.dyn_ref::<DomException>()
        && dom.name() == "QuotaExceededError"
    {
        return StoreError::QuotaExceeded;
    }
    StoreError::Failed(format!("{doing}: {}", describe(&error)))
}

fn describe(error: &JsValue) -> String {
    if let Some(dom) = error.dyn_ref::<DomException>() {
        return format!("{}: {}", dom.name(), dom.message());
    }
    error.as_string().unwrap_or_else(|| format!("{error:?}"))
}
