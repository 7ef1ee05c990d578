//! Memory records in the browser's IndexedDB, written in transactions.
//!
//! A write resolves only when its transaction's `complete` event fired, so the page
//! never says "saved" for a write that was aborted (quota, a closed tab, a blocked
//! database). A change is read, planned and written inside one readwrite transaction:
//! IndexedDB runs readwrite transactions on the same store one at a time, across tabs,
//! so no other tab's write can fall between the read a version check saw and the write
//! it allows. Records are stored as JSON-shaped objects keyed by `id`; a row that does
//! not decode is set aside untouched (`remind_core::stored_rows`), never overwritten.

use std::cell::Cell;
use std::rc::Rc;

use js_sys::{Array, JSON, Promise};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DomException, IdbDatabase, IdbObjectStore, IdbObjectStoreParameters, IdbOpenDbRequest,
    IdbRequest, IdbTransaction, IdbTransactionMode, IdbVersionChangeEvent,
};

use crate::adapters::leave_guard::WriteInFlight;
use remind_app::ports::{MemoryStore, StoreChange, StoreError};
use remind_core::learning_curve::TurnEvent;
use remind_core::record::MemoryRecord;
use remind_core::stored_record::record_to_json;
use remind_core::stored_rows::{StoredMemory, StoredRow, read_rows};

const DB_NAME: &str = "remind";
/// Bumped with every schema change; [`migrate`] brings older databases up to date.
const DB_VERSION: u32 = 2;
const RECORDS: &str = "records";
/// The learning curve's turn log (schema version 2): append-only, in key order.
const TURN_EVENTS: &str = "turn_events";
/// How long an upgrade may wait for another tab to let go of the old version before
/// the page says which tab to close (an upgrade itself takes milliseconds).
const BLOCKED_UPGRADE_TIMEOUT_MS: i32 = 3000;
/// How long any open may take before the page gives up on it. Opening reads no
/// records, so only a blocked upgrade ahead of it in the queue makes it this slow.
const OPEN_TIMEOUT_MS: i32 = 10_000;

#[derive(Clone, Default)]
pub struct IdbStore;

impl MemoryStore for IdbStore {
    async fn load_all(&self) -> Result<StoredMemory, StoreError> {
        let db = open().await?;
        let outcome = load_all_from(&db).await;
        db.close();
        outcome
    }

    async fn transact(
        &self,
        plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    ) -> Result<(), StoreError> {
        let _leaving_warns = WriteInFlight::begin();
        let db = open().await?;
        let outcome = transact_in(&db, plan).await;
        db.close();
        outcome
    }

    async fn erase_unreadable(&self, keys: &[String]) -> Result<(), StoreError> {
        let mut row_keys = Vec::with_capacity(keys.len());
        for key in keys {
            row_keys.push(JSON::parse(key).map_err(|e| failed("naming the record to delete", e))?);
        }
        let _leaving_warns = WriteInFlight::begin();
        let db = open().await?;
        let tx = db
            .transaction_with_str_and_mode(RECORDS, IdbTransactionMode::Readwrite)
            .map_err(|e| failed("starting the deletion", e));
        let outcome = match tx {
            Ok(tx) => {
                let done = committed(&tx);
                match tx.object_store(RECORDS) {
                    Ok(store) => match row_keys
                        .iter()
                        .try_for_each(|key| store.delete(key).map(drop))
                    {
                        Ok(()) => done.await.map(drop).map_err(|e| failed("deleting", e)),
                        Err(e) => {
                            let _ = tx.abort();
                            Err(failed("deleting", e))
                        }
                    },
                    Err(e) => Err(failed("deleting", e)),
                }
            }
            Err(e) => Err(e),
        };
        db.close();
        outcome
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

/// Every row of the records store, read in one transaction and sorted into what
/// decodes and what does not.
async fn load_all_from(db: &IdbDatabase) -> Result<StoredMemory, StoreError> {
    let tx = db
        .transaction_with_str(RECORDS)
        .map_err(|e| failed("opening a read", e))?;
    let store = tx.object_store(RECORDS).map_err(|e| failed("reading", e))?;
    let rows = read_rows_of(&store).await?;
    Ok(read_rows(rows))
}

/// The read, the plan and the write of one change, in one readwrite transaction.
///
/// Between the read's `success` and the first put nothing may yield to the event loop,
/// or IndexedDB would commit the transaction early: the plan is synchronous and the
/// futures here resolve in the microtasks of the request's event, while the
/// transaction is still active. The puts go out in batches, each issued while the
/// previous batch's last put is finishing ([`write_change`]). Should a browser ever end it sooner, the puts fail
/// and nothing is written, never half of it.
async fn transact_in(
    db: &IdbDatabase,
    plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
) -> Result<(), StoreError> {
    let tx = db
        .transaction_with_str_and_mode(RECORDS, IdbTransactionMode::Readwrite)
        .map_err(|e| failed("starting the save", e))?;
    let done = committed(&tx);
    let store = tx.object_store(RECORDS).map_err(|e| failed("saving", e))?;
    let stored = match read_rows_of(&store).await {
        Ok(rows) => read_rows(rows),
        Err(e) => {
            let _ = tx.abort();
            return Err(e);
        }
    };
    let change = plan(stored.records.clone());
    if change.is_empty() {
        // A read-only outcome (a refusal, nothing to count): let the transaction end.
        return done.await.map(drop).map_err(|e| failed("reading", e));
    }
    if let Some(row) = change.overwrites_unreadable(&stored) {
        let _ = tx.abort();
        return Err(StoreError::WouldOverwriteUnreadable {
            id: row.key.clone(),
        });
    }
    if let Err(e) = write_change(&store, &change).await {
        let _ = tx.abort();
        let _ = done.await;
        return Err(e);
    }
    if let Some(simulated) = take_simulated_failure() {
        // Aborting the real transaction, puts and deletes already issued, proves
        // that a failed save rolls back rather than merely being reported.
        let _ = tx.abort();
        let _ = done.await;
        return Err(simulated);
    }
    done.await.map(drop).map_err(|e| failed("saving", e))
}

/// Puts issued at once before waiting for the last of them: encoding and issuing a
/// batch takes a few milliseconds, so a write of thousands of records (an import) is
/// many short tasks rather than one that freezes the page.
const PUTS_PER_BATCH: usize = 500;

/// Issues the deletes and puts of `change` in batches, awaiting each batch's last put
/// before issuing the next. The transaction stays active throughout: a request is
/// pending until then, and the next batch is issued in the microtasks of that
/// request's `success` event, so IndexedDB never sees an idle transaction to commit
/// early. Between batches the browser is free to paint and answer input.
async fn write_change(store: &IdbObjectStore, change: &StoreChange) -> Result<(), StoreError> {
    for id in &change.erase {
        store
            .delete(&JsValue::from_str(&id.0))
            .map_err(|e| failed("erasing", e))?;
    }
    for batch in change.put.chunks(PUTS_PER_BATCH) {
        let mut last = None;
        for record in batch {
            let json = record_to_json(record)
                .map_err(|e| StoreError::Failed(format!("a record could not be encoded: {e}")))?;
            let value = JSON::parse(&json).map_err(|e| failed("saving", e))?;
            last = Some(store.put(&value).map_err(|e| failed("saving", e))?);
        }
        if let Some(last) = last {
            settle(&last).await.map_err(|e| failed("saving", e))?;
        }
    }
    Ok(())
}

/// Every row of `store` as JSON text, keys and values paired in key order.
async fn read_rows_of(store: &IdbObjectStore) -> Result<Vec<StoredRow>, StoreError> {
    let keys_request = store.get_all_keys().map_err(|e| failed("reading", e))?;
    let values_request = store.get_all().map_err(|e| failed("reading", e))?;
    // Both listeners are attached before either request can finish.
    let (keys, values) = (settle(&keys_request), settle(&values_request));
    let keys = Array::from(&keys.await.map_err(|e| failed("reading", e))?);
    let values = Array::from(&values.await.map_err(|e| failed("reading", e))?);
    keys.iter()
        .zip(values.iter())
        .map(|(key, value)| {
            Ok(StoredRow {
                key: json_text(&key)?,
                value: json_text(&value)?,
            })
        })
        .collect()
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
        .map(|value| json_text(&value))
        .collect()
}

/// A stored value as JSON text; a value JSON cannot hold (a cycle, a BigInt) is an
/// error, not a panic.
fn json_text(value: &JsValue) -> Result<String, StoreError> {
    JSON::stringify(value)
        .map(String::from)
        .map_err(|e| failed("reading", e))
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

/// What an open gave up with when another connection kept blocking its upgrade.
const UPGRADE_BLOCKED: &str = "remind: upgrade blocked";

/// Opens the database, creating or migrating its schema when needed.
///
/// A database of a newer schema is named as such, and an open that another tab's
/// connection blocks gives up instead of waiting for ever (see [`open_promise`]); should the upgrade be unblocked after that, it is aborted, so a
/// half-migrated database never exists.
async fn open() -> Result<IdbDatabase, StoreError> {
    let factory = factory()?;
    let request: IdbOpenDbRequest = factory
        .open_with_u32(DB_NAME, DB_VERSION)
        .map_err(|e| StoreError::Unavailable(describe(&e)))?;
    let gave_up = Rc::new(Cell::new(false));
    let upgrade_gave_up = gave_up.clone();
    let on_upgrade =
        Closure::<dyn FnMut(IdbVersionChangeEvent)>::new(move |event: IdbVersionChangeEvent| {
            let Some(target) = event.target() else { return };
            let request: IdbOpenDbRequest = target.unchecked_into();
            if upgrade_gave_up.get() {
                if let Some(upgrade) = request.transaction() {
                    let _ = upgrade.abort();
                }
                return;
            }
            if let Ok(db) = request.result() {
                migrate(&db.unchecked_into(), event.old_version() as u32);
            }
        });
    request.set_onupgradeneeded(Some(on_upgrade.as_ref().unchecked_ref()));
    let outcome = JsFuture::from(open_promise(&request, gave_up.clone())).await;
    if gave_up.get() {
        // The request is still pending behind the blocking tab; its upgrade handler
        // must outlive this call to abort the upgrade when it finally runs.
        on_upgrade.forget();
    } else {
        request.set_onupgradeneeded(None);
        drop(on_upgrade);
    }
    match outcome {
        Ok(db) => Ok(db.unchecked_into()),
        Err(e) if e.as_string().as_deref() == Some(UPGRADE_BLOCKED) => {
            Err(StoreError::UpgradeBlocked)
        }
        Err(e)
            if e.dyn_ref::<DomException>()
                .is_some_and(|d| d.name() == "VersionError") =>
        {
            Err(StoreError::NewerVersion {
                found: stored_version(&factory).await,
                known: DB_VERSION,
            })
        }
        Err(e) => Err(StoreError::Unavailable(describe(&e))),
    }
}

fn factory() -> Result<web_sys::IdbFactory, StoreError> {
    let window = web_sys::window().ok_or_else(|| StoreError::Unavailable("no window".into()))?;
    window
        .indexed_db()
        .map_err(|e| StoreError::Unavailable(describe(&e)))?
        .ok_or_else(|| StoreError::Unavailable("IndexedDB is not available".into()))
}

/// The open request's outcome: the database, its error, or [`UPGRADE_BLOCKED`] once
/// an upgrade has been blocked for [`BLOCKED_UPGRADE_TIMEOUT_MS`], or the open has
/// waited [`OPEN_TIMEOUT_MS`] in all (an open queued behind a blocked upgrade is never
/// told it is blocked; it just waits). A database that opens after the caller gave up
/// is closed at once, so it cannot block anyone else.
fn open_promise(request: &IdbOpenDbRequest, gave_up: Rc<Cell<bool>>) -> Promise {
    Promise::new(&mut |resolve, reject| {
        let settled = Rc::new(Cell::new(false));
        let ok = request.clone();
        let (late, success_settled) = (gave_up.clone(), settled.clone());
        let on_success = Closure::once_into_js(move || {
            let result = ok.result().unwrap_or(JsValue::UNDEFINED);
            if late.get() {
                if let Some(db) = result.dyn_ref::<IdbDatabase>() {
                    db.close();
                }
                return;
            }
            success_settled.set(true);
            let _ = resolve.call1(&JsValue::NULL, &result);
        });
        let err = request.clone();
        let (reject_error, error_settled) = (reject.clone(), settled.clone());
        let on_error = Closure::once_into_js(move || {
            error_settled.set(true);
            let error = err
                .error()
                .ok()
                .flatten()
                .map_or(JsValue::UNDEFINED, JsValue::from);
            let _ = reject_error.call1(&JsValue::NULL, &error);
        });
        let give_up = {
            let (gave_up, settled) = (gave_up.clone(), settled.clone());
            move || {
                if settled.replace(true) {
                    return;
                }
                gave_up.set(true);
                let _ = reject.call1(&JsValue::NULL, &JsValue::from_str(UPGRADE_BLOCKED));
            }
        };
        let blocked_give_up = give_up.clone();
        let on_blocked = Closure::once_into_js(move || {
            after_ms(BLOCKED_UPGRADE_TIMEOUT_MS, blocked_give_up);
        });
        after_ms(OPEN_TIMEOUT_MS, give_up);
        request.set_onsuccess(Some(on_success.unchecked_ref()));
        request.set_onerror(Some(on_error.unchecked_ref()));
        request.set_onblocked(Some(on_blocked.unchecked_ref()));
    })
}

/// Runs `then` once, `ms` milliseconds from now.
fn after_ms(ms: i32, then: impl FnOnce() + 'static) {
    let callback = Closure::once_into_js(then);
    if let Some(window) = web_sys::window() {
        let _ = window
            .set_timeout_with_callback_and_timeout_and_arguments_0(callback.unchecked_ref(), ms);
    }
}

/// The schema version of the stored database, for naming a newer one; opening
/// without a version never upgrades, so this changes nothing.
async fn stored_version(factory: &web_sys::IdbFactory) -> String {
    let Ok(request) = factory.open(DB_NAME) else {
        return "unknown".into();
    };
    match settle(&request).await {
        Ok(db) => {
            let db: IdbDatabase = db.unchecked_into();
            let version = db.version();
            db.close();
            format!("{version}")
        }
        Err(_) => "unknown".into(),
    }
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

/// Resolves with a request's result, or rejects with its error. The listeners are
/// attached at once, before the returned future is first polled.
fn settle(request: &IdbRequest) -> JsFuture {
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
    JsFuture::from(promise)
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
