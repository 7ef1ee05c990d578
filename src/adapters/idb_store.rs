//! Memory records in the browser's IndexedDB, written in transactions.
//!
//! A write resolves only when its transaction's `complete` event fired, so the page
//! never says "saved" for a write that was aborted (quota, a closed tab, a blocked
//! database). A change is read, planned and written inside one readwrite transaction:
//! IndexedDB runs readwrite transactions on the same store one at a time, across tabs,
//! so no other tab's write can fall between the read a version check saw and the write
//! it allows. Records are stored as JSON-shaped objects keyed by `id`, their embedding
//! as a `Float32Array` (schema 3; schema 2 held it as JSON numbers, which took seconds
//! to read at ten thousand lessons); a row that does not decode is set aside untouched
//! (`remind_core::stored_rows`), never overwritten. A usage count or a stored embedding
//! reads and writes only its own records ([`MemoryStore::transact_records`]).

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use js_sys::{Array, Float32Array, Function, JSON, Object, Promise, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DomException, IdbDatabase, IdbObjectStore, IdbObjectStoreParameters, IdbOpenDbRequest,
    IdbRequest, IdbTransaction, IdbTransactionMode, IdbVersionChangeEvent,
};

use crate::adapters::leave_guard::WriteInFlight;
use remind_app::ports::{MemoryStore, StoreChange, StoreError, WriteProgress};
use remind_core::learning_curve::TurnEvent;
use remind_core::record::{MemoryRecord, RecordId};
use remind_core::stored_record::{StoredVector, record_to_json_and_vector};
use remind_core::stored_rows::{StoredMemory, StoredRow, read_readable_rows, read_row, read_rows};

const DB_NAME: &str = "remind";
/// Bumped with every schema change; [`migrate`] brings older databases up to date.
const DB_VERSION: u32 = 4;
const RECORDS: &str = "records";
/// The records' embeddings (schema 4), each under its record's id: kept apart so the
/// records, a tenth of the bytes, are read and shown first.
const EMBEDDINGS: &str = "embeddings";
/// The learning curve's turn log (schema version 2): append-only, in key order.
const TURN_EVENTS: &str = "turn_events";
/// How long an upgrade may wait for another tab to let go of the old version before
/// the page says which tab to close (an upgrade itself takes milliseconds).
const BLOCKED_UPGRADE_TIMEOUT_MS: i32 = 3000;
/// How long any open may take before the page gives up on it. Opening reads no
/// records, so only a blocked upgrade ahead of it in the queue makes it this slow.
const OPEN_TIMEOUT_MS: i32 = 10_000;

#[derive(Clone, Default)]
pub struct IdbStore {
    /// Hears how far a write of more than one batch of puts has come.
    on_progress: Option<Rc<dyn Fn(WriteProgress)>>,
}

impl IdbStore {
    /// The store, telling `on_progress` how far each write of more than
    /// [`PUTS_PER_BATCH`] records has come, after each batch.
    pub fn reporting_progress(on_progress: impl Fn(WriteProgress) + 'static) -> Self {
        IdbStore {
            on_progress: Some(Rc::new(on_progress)),
        }
    }
}

impl MemoryStore for IdbStore {
    async fn load_all(&self) -> Result<StoredMemory, StoreError> {
        let db = open().await?;
        let outcome = load_all_from(&db).await;
        db.close();
        outcome
    }

    async fn load_all_but_embeddings(&self) -> Result<StoredMemory, StoreError> {
        let db = open().await?;
        let outcome = load_records_from(&db).await;
        db.close();
        outcome
    }

    async fn load_embeddings(&self) -> Result<Vec<(RecordId, StoredVector)>, StoreError> {
        let db = open().await?;
        let outcome = load_embeddings_from(&db).await;
        db.close();
        outcome
    }

    async fn transact(
        &self,
        plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    ) -> Result<(), StoreError> {
        let _leaving_warns = WriteInFlight::begin();
        let db = open().await?;
        let outcome = transact_in(&db, plan, self.on_progress.as_deref()).await;
        db.close();
        outcome
    }

    async fn transact_records(
        &self,
        ids: &[RecordId],
        plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    ) -> Result<(), StoreError> {
        let _leaving_warns = WriteInFlight::begin();
        let db = open().await?;
        let outcome = transact_records_in(&db, ids, plan, self.on_progress.as_deref()).await;
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
        let tx = readwrite(&db).map_err(|e| failed("starting the deletion", e));
        let outcome = match tx {
            Ok(tx) => {
                let done = committed(&tx);
                match both_stores(&tx) {
                    // An embedding kept under the same key goes with the row.
                    Ok((records, embeddings)) => match row_keys.iter().try_for_each(|key| {
                        records.delete(key)?;
                        embeddings.delete(key).map(drop)
                    }) {
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

/// Every record with its embedding, read in one transaction from both stores and
/// sorted into what decodes and what does not.
async fn load_all_from(db: &IdbDatabase) -> Result<StoredMemory, StoreError> {
    let tx = db
        .transaction_with_str_sequence(&store_names())
        .map_err(|e| failed("opening a read", e))?;
    let (records, embeddings) = both_stores(&tx).map_err(|e| failed("reading", e))?;
    Ok(read_rows(read_whole_rows(&records, &embeddings).await?))
}

/// Every row of the records store, without the embeddings kept apart: what the page
/// shows first.
async fn load_records_from(db: &IdbDatabase) -> Result<StoredMemory, StoreError> {
    let store = store_to_read(db, RECORDS)?;
    let (keys, values) = keys_and_values(&store).await?;
    let embeddings = take_binary_embeddings(&values);
    // Every row a record of its own id, as this Remind writes them: decoded in one
    // pass over the one text of all of them. Otherwise row by row, which names each
    // row it cannot read.
    if let Ok(whole) = JSON::stringify(&values) {
        let ids: Vec<Option<String>> = keys.iter().map(|key| key.as_string()).collect();
        if let Some(records) = read_readable_rows(&ids, &String::from(whole), &embeddings) {
            return Ok(StoredMemory {
                records,
                unreadable: Vec::new(),
            });
        }
    }
    Ok(read_rows(stored_rows(&keys, &values, embeddings)?))
}

/// The store `name`, in a readonly transaction of its own.
fn store_to_read(db: &IdbDatabase, name: &str) -> Result<IdbObjectStore, StoreError> {
    db.transaction_with_str(name)
        .map_err(|e| failed("opening a read", e))?
        .object_store(name)
        .map_err(|e| failed("reading", e))
}

/// Every key and every value of `store`, in key order, read by two requests issued
/// together (both listeners are attached before either can finish).
async fn keys_and_values(store: &IdbObjectStore) -> Result<(Array, Array), StoreError> {
    let keys_request = store.get_all_keys().map_err(|e| failed("reading", e))?;
    let values_request = store.get_all().map_err(|e| failed("reading", e))?;
    let (keys, values) = (settle(&keys_request), settle(&values_request));
    let keys = Array::from(&keys.await.map_err(|e| failed("reading", e))?);
    let values = Array::from(&values.await.map_err(|e| failed("reading", e))?);
    Ok((keys, values))
}

/// Every embedding kept apart, by record id (see [`read_all_embeddings`]).
async fn load_embeddings_from(
    db: &IdbDatabase,
) -> Result<Vec<(RecordId, StoredVector)>, StoreError> {
    let store = store_to_read(db, EMBEDDINGS)?;
    Ok(read_all_embeddings(&store)
        .await?
        .into_iter()
        .map(|(id, embedding)| (RecordId(id), embedding))
        .collect())
}

/// The names of both stores, for a transaction over the two.
fn store_names() -> Array {
    Array::of2(&JsValue::from_str(RECORDS), &JsValue::from_str(EMBEDDINGS))
}

/// A readwrite transaction over both stores: a record and its embedding are written
/// together or not at all.
fn readwrite(db: &IdbDatabase) -> Result<IdbTransaction, JsValue> {
    db.transaction_with_str_sequence_and_mode(&store_names(), IdbTransactionMode::Readwrite)
}

fn both_stores(tx: &IdbTransaction) -> Result<(IdbObjectStore, IdbObjectStore), JsValue> {
    Ok((tx.object_store(RECORDS)?, tx.object_store(EMBEDDINGS)?))
}

/// Every record row, each with its embedding from the embeddings store when the row
/// holds none of its own (a row holding one was put there by something other than
/// this Remind, which writes every embedding apart).
async fn read_whole_rows(
    records: &IdbObjectStore,
    embeddings: &IdbObjectStore,
) -> Result<Vec<StoredRow>, StoreError> {
    // Both reads are issued at the first poll, before either is awaited.
    let (rows, apart) = futures::join!(read_rows_of(records), read_all_embeddings(embeddings));
    let mut rows = rows?;
    let mut apart: HashMap<String, StoredVector> = apart?.into_iter().collect();
    for row in &mut rows {
        if row.embedding.is_none()
            && let Ok(id) = serde_json::from_str::<String>(&row.key)
        {
            row.embedding = apart.remove(&id);
        }
    }
    Ok(rows)
}

/// Every embedding of the embeddings store that reads as one, with its record's id;
/// an entry that is not an embedding this Remind wrote is left out (its lesson is
/// embedded again and the entry replaced).
async fn read_all_embeddings(
    store: &IdbObjectStore,
) -> Result<Vec<(String, StoredVector)>, StoreError> {
    let (keys, values) = keys_and_values(store).await?;
    Ok(keys
        .iter()
        .zip(values.iter())
        .filter_map(|(key, value)| Some((key.as_string()?, embedding_of(&value)?)))
        .collect())
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
    on_progress: Option<&dyn Fn(WriteProgress)>,
) -> Result<(), StoreError> {
    let tx = readwrite(db).map_err(|e| failed("starting the save", e))?;
    let done = committed(&tx);
    let (records, embeddings) = both_stores(&tx).map_err(|e| failed("saving", e))?;
    let stored = match read_whole_rows(&records, &embeddings).await {
        Ok(rows) => read_rows(rows),
        Err(e) => {
            let _ = tx.abort();
            return Err(e);
        }
    };
    let change = plan(stored.records.clone());
    write_planned(
        &tx,
        done,
        (&records, &embeddings),
        &stored,
        &change,
        on_progress,
    )
    .await
}

/// The read, the plan and the write of a change to the records `ids` alone, in one
/// readwrite transaction: each is read with its own `get` (issued together), so a
/// usage count costs the same with ten thousand lessons as with ten. The same rules
/// as [`transact_in`] keep the transaction active from the reads to the last put.
async fn transact_records_in(
    db: &IdbDatabase,
    ids: &[RecordId],
    plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    on_progress: Option<&dyn Fn(WriteProgress)>,
) -> Result<(), StoreError> {
    let tx = readwrite(db).map_err(|e| failed("starting the save", e))?;
    let done = committed(&tx);
    let (records, embeddings) = both_stores(&tx).map_err(|e| failed("saving", e))?;
    let stored = match read_named_rows(&records, &embeddings, ids).await {
        Ok(rows) => read_rows(rows),
        Err(e) => {
            let _ = tx.abort();
            return Err(e);
        }
    };
    let change = plan(stored.records.clone());
    if !change.stays_within(ids) {
        let _ = tx.abort();
        return Err(StoreChange::reaching_further());
    }
    write_planned(
        &tx,
        done,
        (&records, &embeddings),
        &stored,
        &change,
        on_progress,
    )
    .await
}

/// The rows of `ids` the records store holds (an id it does not hold is left out),
/// each with its embedding kept apart, read with one `get` per store and id, all
/// issued before the first is awaited.
async fn read_named_rows(
    records: &IdbObjectStore,
    embeddings: &IdbObjectStore,
    ids: &[RecordId],
) -> Result<Vec<StoredRow>, StoreError> {
    let mut reads = Vec::with_capacity(ids.len());
    for id in ids {
        let key = JsValue::from_str(&id.0);
        let row = records.get(&key).map_err(|e| failed("reading", e))?;
        let embedding = embeddings.get(&key).map_err(|e| failed("reading", e))?;
        reads.push((key, settle(&row), settle(&embedding)));
    }
    let mut rows = Vec::with_capacity(reads.len());
    for (key, row, embedding) in reads {
        let value = row.await.map_err(|e| failed("reading", e))?;
        let apart = embedding.await.map_err(|e| failed("reading", e))?;
        if !value.is_undefined() {
            let mut row = stored_row(&key, value)?;
            if row.embedding.is_none() {
                row.embedding = embedding_of(&apart);
            }
            rows.push(row);
        }
    }
    Ok(rows)
}

/// Writes `change`, planned on `stored`, in the transaction that read it, and resolves
/// when it committed. An empty change writes nothing; one over an unreadable row is
/// refused and nothing written.
async fn write_planned(
    tx: &IdbTransaction,
    done: JsFuture,
    stores: (&IdbObjectStore, &IdbObjectStore),
    stored: &StoredMemory,
    change: &StoreChange,
    on_progress: Option<&dyn Fn(WriteProgress)>,
) -> Result<(), StoreError> {
    if change.is_empty() {
        // A read-only outcome (a refusal, nothing to count): let the transaction end.
        return done.await.map(drop).map_err(|e| failed("reading", e));
    }
    if let Some(row) = change.overwrites_unreadable(stored) {
        let _ = tx.abort();
        return Err(StoreError::WouldOverwriteUnreadable {
            id: row.key.clone(),
        });
    }
    if let Err(e) = write_change(stores, change, stored, on_progress).await {
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
const PUTS_PER_BATCH: usize = 250;

/// Issues the deletes and puts of `change` in batches, each once the last put of the
/// batch before the previous one has succeeded. The transaction stays active
/// throughout: a request is pending until then, and the next batch is issued in the
/// microtasks of that request's `success` event, so IndexedDB never sees an idle
/// transaction to commit early. Between batches the browser is free to paint and
/// answer input.
///
/// A record's row goes to the records store and its embedding to the embeddings
/// store under its id; a record put without an embedding drops the one it had in
/// `stored` (what the change was planned on, read with the embeddings), as putting a
/// whole row did before the two were apart. Only those are deleted: an import of
/// thousands of new records issues no deletion for each.
///
/// A write of more than one batch tells `on_progress` how many puts have succeeded
/// each time a batch is done.
async fn write_change(
    (records, embeddings): (&IdbObjectStore, &IdbObjectStore),
    change: &StoreChange,
    stored: &StoredMemory,
    on_progress: Option<&dyn Fn(WriteProgress)>,
) -> Result<(), StoreError> {
    let total = change.put.len();
    let report = |written| {
        if let Some(on_progress) = on_progress.filter(|_| total > PUTS_PER_BATCH) {
            on_progress(WriteProgress { written, total });
        }
    };
    let mut written = 0;
    let had_embedding: HashSet<&RecordId> = stored
        .records
        .iter()
        .filter(|record| record.embedding.is_some())
        .map(|record| &record.id)
        .collect();
    for id in &change.erase {
        let key = JsValue::from_str(&id.0);
        records.delete(&key).map_err(|e| failed("erasing", e))?;
        embeddings.delete(&key).map_err(|e| failed("erasing", e))?;
    }
    // Two batches in flight: the next is issued as soon as the one before the last
    // has been written, so IndexedDB always has puts queued while the page encodes more.
    let mut in_flight: Option<(JsFuture, usize)> = None;
    for batch in change.put.chunks(PUTS_PER_BATCH) {
        let mut last = None;
        for (record, (row, embedding)) in batch.iter().zip(rows_of(batch)?) {
            let key = JsValue::from_str(&record.id.0);
            match embedding {
                Some(embedding) => embeddings.put_with_key(&embedding, &key).map(drop),
                None if had_embedding.contains(&record.id) => embeddings.delete(&key).map(drop),
                None => Ok(()),
            }
            .map_err(|e| failed("saving", e))?;
            last = Some(records.put(&row).map_err(|e| failed("saving", e))?);
        }
        let issued = last.map(|last| (settle(&last), batch.len()));
        if let Some((previous, puts)) = in_flight.take() {
            previous.await.map_err(|e| failed("saving", e))?;
            written += puts;
            report(written);
        }
        in_flight = issued;
    }
    if let Some((last, puts)) = in_flight {
        last.await.map_err(|e| failed("saving", e))?;
        report(written + puts);
    }
    Ok(())
}

/// Every row of `store`, keys and values paired in key order.
async fn read_rows_of(store: &IdbObjectStore) -> Result<Vec<StoredRow>, StoreError> {
    let (keys, values) = keys_and_values(store).await?;
    let embeddings = take_binary_embeddings(&values);
    stored_rows(&keys, &values, embeddings)
}

/// Each of `values`' binary embedding, taken out of it ([`take_binary_embedding`]).
fn take_binary_embeddings(values: &Array) -> Vec<Option<StoredVector>> {
    values
        .iter()
        .map(|value| take_binary_embedding(&value))
        .collect()
}

/// The rows of `keys` and `values` (their binary embeddings taken out beforehand, into
/// `embeddings`), each as JSON text.
fn stored_rows(
    keys: &Array,
    values: &Array,
    embeddings: Vec<Option<StoredVector>>,
) -> Result<Vec<StoredRow>, StoreError> {
    let texts = json_texts(values)?;
    let keys = json_texts(keys)?;
    Ok(keys
        .into_iter()
        .zip(texts)
        .zip(embeddings)
        .map(|((key, value), embedding)| StoredRow {
            key: as_serde_writes_it(key),
            value,
            embedding,
        })
        .collect())
}

/// A key's JSON text as serde writes it, which is what a record id is compared with
/// ([`remind_core::stored_rows::UnreadableRecord::is_stored_under`]): JavaScript escapes a few characters
/// differently. A key that is not a string is kept as JavaScript wrote it.
fn as_serde_writes_it(key: String) -> String {
    match serde_json::from_str::<String>(&key) {
        Ok(id) => serde_json::to_string(&id).unwrap_or(key),
        Err(_) => key,
    }
}

/// The field of a row that holds its embedding, and the fields of that.
const EMBEDDING: &str = "embedding";
const EMBEDDING_MODEL: &str = "model";
const EMBEDDING_VECTOR: &str = "vector";

/// A store key as JSON text: a record's id is a string; any other key is kept as what
/// JSON makes of it, so an unreadable row can still be named for deletion.
fn key_text(key: &JsValue) -> Result<String, StoreError> {
    match key.as_string() {
        Some(id) => serde_json::to_string(&id)
            .map_err(|e| StoreError::Failed(format!("reading a key: {e}"))),
        None => json_text(key),
    }
}

/// One row as read: its embedding taken out (see [`take_binary_embedding`]) and its
/// other fields as JSON text, which is small.
fn stored_row(key: &JsValue, value: JsValue) -> Result<StoredRow, StoreError> {
    let embedding = take_binary_embedding(&value);
    Ok(StoredRow {
        key: key_text(key)?,
        value: json_text(&value)?,
        embedding,
    })
}

/// Takes a schema-3 row's embedding out of the row (a value of our own,
/// structured-cloned out of the store, so only this read's copy changes): its vector
/// straight from its `Float32Array`. A row of any other shape (schema 2's numbers,
/// something this Remind did not write) keeps its embedding among its JSON, as before.
fn take_binary_embedding(value: &JsValue) -> Option<StoredVector> {
    let embedding = binary_embedding(value)?;
    let _ = Reflect::delete_property(
        value.unchecked_ref::<Object>(),
        &JsValue::from_str(EMBEDDING),
    );
    Some(embedding)
}

/// Each of `values` as JSON text, in order. One `JSON.stringify` of the whole array,
/// cut into its elements by serde, instead of one per row: crossing into JavaScript
/// and back for each of 10 000 rows was most of what a reload spent in the page. When
/// the whole cannot be made text (a row holding a cycle or a BigInt, which no Remind
/// writes), each row is made text on its own, so the failure names that read.
fn json_texts(values: &Array) -> Result<Vec<String>, StoreError> {
    match whole_json_texts(values) {
        Some(texts) => Ok(texts),
        None => values.iter().map(|value| json_text(&value)).collect(),
    }
}

/// Each of `values` as JSON text, from one `JSON.stringify` of the whole array; `None`
/// when the whole cannot be made text.
fn whole_json_texts(values: &Array) -> Option<Vec<String>> {
    let whole = String::from(JSON::stringify(values).ok()?);
    let parts = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(&whole).ok()?;
    (parts.len() == values.length() as usize).then(|| {
        parts
            .into_iter()
            .map(|part| part.get().to_owned())
            .collect()
    })
}

/// The binary embedding a row holds itself (schema 3 kept it there).
fn binary_embedding(value: &JsValue) -> Option<StoredVector> {
    embedding_of(&field(value, EMBEDDING)?)
}

/// An embedding as schema 3 held it in a row and schema 4 holds it apart:
/// `{ model: string, vector: Float32Array }`.
fn embedding_of(embedding: &JsValue) -> Option<StoredVector> {
    let vector = field(embedding, EMBEDDING_VECTOR)?
        .dyn_into::<Float32Array>()
        .ok()?;
    let model = field(embedding, EMBEDDING_MODEL)?.as_string()?;
    Some(StoredVector {
        model,
        vector: vector.to_vec(),
    })
}

/// `value[name]` when `value` is an object that has it.
fn field(value: &JsValue, name: &str) -> Option<JsValue> {
    if !value.is_object() {
        return None;
    }
    Reflect::get(value, &JsValue::from_str(name))
        .ok()
        .filter(|v| !v.is_undefined())
}

/// Records as schema-4 rows, their fields as JSON, each with its embedding as the
/// embeddings store holds it (`{ model, vector: Float32Array }`), if it has one. The
/// fields of all of them go through one `JSON.parse`, not one each: crossing into
/// JavaScript once per record was a good part of what writing an import cost.
fn rows_of(records: &[MemoryRecord]) -> Result<Vec<(JsValue, Option<JsValue>)>, StoreError> {
    let mut fields = String::from("[");
    let mut embeddings = Vec::with_capacity(records.len());
    for (i, record) in records.iter().enumerate() {
        let (json, embedding) = record_to_json_and_vector(record)
            .map_err(|e| StoreError::Failed(format!("a record could not be encoded: {e}")))?;
        if i > 0 {
            fields.push(',');
        }
        fields.push_str(&json);
        embeddings.push(embedding);
    }
    fields.push(']');
    let rows = Array::from(&JSON::parse(&fields).map_err(|e| failed("saving", e))?);
    rows.iter()
        .zip(embeddings)
        .map(|(row, embedding)| {
            Ok((
                row,
                embedding.map(|e| binary_embedding_value(&e)).transpose()?,
            ))
        })
        .collect()
}

/// An embedding as schema 4 stores it: `{ model, vector: Float32Array }`.
fn binary_embedding_value(embedding: &StoredVector) -> Result<JsValue, StoreError> {
    let binary = Object::new();
    let set = |name: &str, value: &JsValue| {
        Reflect::set(&binary, &JsValue::from_str(name), value).map_err(|e| failed("saving", e))
    };
    set(EMBEDDING_MODEL, &JsValue::from_str(&embedding.model))?;
    set(
        EMBEDDING_VECTOR,
        &Float32Array::from(embedding.vector.as_slice()),
    )?;
    Ok(binary.into())
}

/// Every value of an object store, as JSON text, in key order.
async fn read_all(store_name: &str) -> Result<Vec<String>, StoreError> {
    let db = open().await?;
    let store = store_to_read(&db, store_name)?;
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
    let upgrading = Rc::new(Cell::new(false));
    let (upgrade_gave_up, upgrade_started) = (gave_up.clone(), upgrading.clone());
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
            // No longer blocked: the upgrade runs, however long converting the rows
            // takes, and the open waits for it rather than giving up.
            upgrade_started.set(true);
            if let (Ok(db), Some(upgrade)) = (request.result(), request.transaction()) {
                migrate(&db.unchecked_into(), &upgrade, event.old_version() as u32);
            }
        });
    request.set_onupgradeneeded(Some(on_upgrade.as_ref().unchecked_ref()));
    let outcome = JsFuture::from(open_promise(&request, gave_up.clone(), upgrading)).await;
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
///
/// Once the upgrade has started (`upgrading`), nothing blocks the open any more, so the
/// time limits no longer apply: a migration of thousands of rows may take seconds.
fn open_promise(
    request: &IdbOpenDbRequest,
    gave_up: Rc<Cell<bool>>,
    upgrading: Rc<Cell<bool>>,
) -> Promise {
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
            let (gave_up, settled, upgrading) =
                (gave_up.clone(), settled.clone(), upgrading.clone());
            move || {
                if upgrading.get() || settled.replace(true) {
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

/// Schema steps, applied in order from the database's old version, inside the upgrade
/// transaction: should one fail, the upgrade is aborted and the database stays as it was.
fn migrate(db: &IdbDatabase, upgrade: &IdbTransaction, old_version: u32) {
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
    if old_version < 4 {
        let _ = db.create_object_store(EMBEDDINGS);
    }
    if (1..4).contains(&old_version) {
        embeddings_apart(upgrade, old_version);
    }
}

/// Schema 4: every readable record's embedding moves out of its row into the
/// embeddings store, under the record's id, as a `Float32Array`; the rest of the row is
/// put back as it was. A schema-2 row's embedding, held as JSON numbers, becomes a
/// `Float32Array` of the same values on the way (`new Float32Array` rounds each number
/// to 32 bits as reading it did, so every value is bit for bit what the record read
/// before). A row that does not read as a record, or whose embedding is neither a
/// `Float32Array` nor all finite numbers (an infinity stored as `null`, dropped on
/// reading and embedded again), is not touched.
///
/// The rows move [`ROWS_PER_MIGRATION_STEP`] at a time (see [`EmbeddingsApart`]), so a
/// memory of thousands never freezes the page for the whole upgrade.
fn embeddings_apart(upgrade: &IdbTransaction, old_version: u32) {
    let (Ok(records), Ok(embeddings)) = (
        upgrade.object_store(RECORDS),
        upgrade.object_store(EMBEDDINGS),
    ) else {
        let _ = upgrade.abort();
        return;
    };
    let (Ok(keys), Ok(values)) = (records.get_all_keys(), records.get_all()) else {
        let _ = upgrade.abort();
        return;
    };
    let read = values.clone();
    let (migrating, upgrade) = (upgrade.clone(), upgrade.clone());
    let on_values = Closure::once_into_js(move || {
        let (Ok(keys), Ok(values)) = (keys.result(), read.result()) else {
            let _ = migrating.abort();
            return;
        };
        let Some(is_finite) = finite_number_test() else {
            let _ = migrating.abort();
            return;
        };
        Rc::new(EmbeddingsApart {
            keys: Array::from(&keys),
            values: Array::from(&values),
            records,
            embeddings,
            upgrade: migrating,
            old_version,
            is_finite,
            next: Cell::new(0),
        })
        .step();
    });
    let on_error = Closure::once_into_js(move || {
        let _ = upgrade.abort();
    });
    // Requests complete in order, so the keys are in when the values are.
    values.set_onsuccess(Some(on_values.unchecked_ref()));
    values.set_onerror(Some(on_error.unchecked_ref()));
}

/// Rows moved in one step of the schema-4 migration: a few tens of milliseconds of
/// work, after which the browser may paint and answer input.
const ROWS_PER_MIGRATION_STEP: u32 = 250;

/// The schema-4 migration under way: the rows read in the upgrade transaction, and how
/// far their moving has come.
struct EmbeddingsApart {
    keys: Array,
    values: Array,
    records: IdbObjectStore,
    embeddings: IdbObjectStore,
    upgrade: IdbTransaction,
    old_version: u32,
    /// `Number.isFinite`, handed to `Array.prototype.every` to test a schema-2 vector
    /// inside the engine rather than crossing into wasm for each of its values.
    is_finite: Function,
    next: Cell<u32>,
}

impl EmbeddingsApart {
    /// Moves the next step's rows, and the step after them once the last of their puts
    /// has succeeded: a put is pending until then, so the upgrade transaction stays
    /// active, as the batches of a large write keep theirs ([`write_change`]). A step
    /// with nothing to move goes straight on. Any put refused aborts the upgrade.
    fn step(self: Rc<Self>) {
        while self.next.get() < self.keys.length() {
            let start = self.next.get();
            let end = start
                .saturating_add(ROWS_PER_MIGRATION_STEP)
                .min(self.keys.length());
            self.next.set(end);
            match self.move_rows(start..end) {
                Err(()) => {
                    let _ = self.upgrade.abort();
                    return;
                }
                Ok(None) => {}
                Ok(Some(last)) => {
                    let next = Rc::clone(&self);
                    let on_success = Closure::once_into_js(move || next.step());
                    last.set_onsuccess(Some(on_success.unchecked_ref()));
                    return;
                }
            }
        }
    }

    /// Moves the embeddings of the rows in `range` that read as records; the last put
    /// issued, if any. Whether a row reads is decided as a reload of the moved row
    /// decides it (its other fields as JSON text), all of the step's rows made text
    /// with one `JSON.stringify`.
    fn move_rows(&self, range: std::ops::Range<u32>) -> Result<Option<IdbRequest>, ()> {
        let (keys, rows, embeddings) = (Array::new(), Array::new(), Array::new());
        for i in range {
            let value = self.values.get(i);
            if let Some((row, embedding)) = self.apart(&value) {
                keys.push(&self.keys.get(i));
                rows.push(&row);
                embeddings.push(&embedding);
            }
        }
        let (key_texts, row_texts) = (texts_where_possible(&keys), texts_where_possible(&rows));
        let mut last = None;
        for (i, (key_text, row_text)) in key_texts.into_iter().zip(row_texts).enumerate() {
            let (Some(key), Some(value)) = (key_text, row_text) else {
                continue;
            };
            let readable = read_row(&StoredRow {
                key,
                value,
                embedding: None,
            })
            .is_ok();
            if !readable {
                continue;
            }
            let i = i as u32;
            self.records.put(&rows.get(i)).map_err(drop)?;
            let put = self
                .embeddings
                .put_with_key(&embeddings.get(i), &keys.get(i))
                .map_err(drop)?;
            last = Some(put);
        }
        Ok(last)
    }

    /// A row's other fields and its embedding as the embeddings store holds it, when
    /// it holds one this migration moves: a schema-3 row's `Float32Array`, or a
    /// schema-2 row's array of finite numbers made one.
    fn apart(&self, value: &JsValue) -> Option<(Object, JsValue)> {
        let embedding = field(value, EMBEDDING)?;
        field(&embedding, EMBEDDING_MODEL)?.as_string()?;
        let vector = field(&embedding, EMBEDDING_VECTOR)?;
        let binary = if self.old_version < 3 {
            if !Array::is_array(&vector) || !self.all_finite(&vector) {
                return None;
            }
            let binary = Object::assign(&Object::new(), embedding.unchecked_ref());
            let packed = Float32Array::new(&vector);
            Reflect::set(&binary, &JsValue::from_str(EMBEDDING_VECTOR), &packed).ok()?;
            binary.into()
        } else {
            vector.dyn_ref::<Float32Array>()?;
            embedding
        };
        let row = Object::assign(&Object::new(), value.unchecked_ref());
        Reflect::delete_property(&row, &JsValue::from_str(EMBEDDING)).ok()?;
        Some((row, binary))
    }

    /// Whether every value of the array `numbers` is a finite number.
    fn all_finite(&self, numbers: &JsValue) -> bool {
        Reflect::get(numbers, &JsValue::from_str("every"))
            .ok()
            .and_then(|every| every.dyn_into::<Function>().ok())
            .and_then(|every| every.call1(numbers, &self.is_finite).ok())
            .is_some_and(|all| all.is_truthy())
    }
}

/// `Number.isFinite`, which is true of a number that is neither NaN nor an infinity
/// and false of anything else (`null`, a string).
fn finite_number_test() -> Option<Function> {
    let number = Reflect::get(&js_sys::global(), &JsValue::from_str("Number")).ok()?;
    Reflect::get(&number, &JsValue::from_str("isFinite"))
        .ok()?
        .dyn_into()
        .ok()
}

/// Each of `values` as JSON text where it can be made one (as [`json_texts`] makes
/// them), `None` for a value that cannot.
fn texts_where_possible(values: &Array) -> Vec<Option<String>> {
    match whole_json_texts(values) {
        Some(texts) => texts.into_iter().map(Some).collect(),
        None => values.iter().map(|value| json_text(&value).ok()).collect(),
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
