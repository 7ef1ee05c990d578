//! Memory records in the browser's IndexedDB, written in transactions.
//!
//! A write resolves only when its transaction's `complete` event fired, so the page
//! never says "saved" for a write that was aborted (quota, a closed tab, a blocked
//! database). A change is read, planned and written inside one readwrite transaction:
//! IndexedDB runs readwrite transactions on the same store one at a time, across tabs,
//! so no other tab's write can fall between the read a version check saw and the write
//! it allows. Records are stored in blocks, each the bytes of the records whose id
//! falls in it (schema 5, binary since schema 7, `remind_core::record_blocks`), their
//! embeddings apart as `Float32Array`s under their ids; a block or an older row that
//! does not decode is set aside untouched (`remind_core::stored_rows`), never
//! overwritten. A usage count or a stored embedding reads and writes only its own
//! records' blocks ([`MemoryStore::transact_records`]).

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::task::Context;

use futures::FutureExt;
use futures::future::{LocalBoxFuture, Shared};
use js_sys::{Array, Float32Array, Function, JSON, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DomException, IdbDatabase, IdbObjectStore, IdbObjectStoreParameters, IdbOpenDbRequest,
    IdbRequest, IdbTransaction, IdbTransactionMode, IdbVersionChangeEvent,
};

use crate::adapters::leave_guard::WriteInFlight;
use crate::adapters::load_marks::{LoadStep, mark};
use remind_app::ports::{MemoryStore, StoreChange, StoreError, WriteProgress};
use remind_core::learning_curve::TurnEvent;
use remind_core::record::{MemoryRecord, RecordId, StoredEmbedding};
use remind_core::record_blocks::{
    BlockValue, ReadBlocks, StoreContents, block_bytes, block_named_by, block_of, is_binary_block,
    read_blocks, rewritten_blocks,
};
use remind_core::stored_record::StoredVector;
use remind_core::stored_rows::{StoredMemory, StoredRow, read_readable_rows, read_row, read_rows};

const DB_NAME: &str = "remind";
/// Bumped with every schema change; [`migrate`] brings older databases up to date.
const DB_VERSION: u32 = 7;
/// Rows of one record each, keyed by `id` (schemas 1–4). Since schema 5 it holds only
/// the rows the migration to blocks could not read, and rows something other than this
/// Remind put there; writing or erasing such a record deletes its row. Since schema 6
/// it is a store made anew once the rows have moved out ([`records_store_anew`]).
const RECORDS: &str = "records";
/// The records themselves (schema 5): block number → the bytes of its records: since
/// schema 7 field by field without names (`remind_core::record_blocks::block_bytes`),
/// before it the UTF-8 of their JSON text.
const RECORD_BLOCKS: &str = "record_blocks";
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
        let db = connection().await?;
        load_all_from(&db).await
    }

    async fn load_all_but_embeddings(&self) -> Result<StoredMemory, StoreError> {
        let db = connection().await?;
        load_records_from(&db).await
    }

    async fn load_embeddings(&self) -> Result<Vec<(RecordId, StoredVector)>, StoreError> {
        let db = connection().await?;
        load_embeddings_from(&db).await
    }

    async fn transact(
        &self,
        plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    ) -> Result<(), StoreError> {
        let _leaving_warns = WriteInFlight::begin();
        let db = connection().await?;
        transact_in(&db, plan, self.on_progress.as_deref()).await
    }

    async fn transact_records(
        &self,
        ids: &[RecordId],
        plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    ) -> Result<(), StoreError> {
        let _leaving_warns = WriteInFlight::begin();
        let db = connection().await?;
        transact_records_in(&db, ids, plan, self.on_progress.as_deref()).await
    }

    async fn erase_unreadable(&self, keys: &[String]) -> Result<(), StoreError> {
        let mut row_keys = Vec::with_capacity(keys.len());
        let mut block_keys = Vec::new();
        for key in keys {
            let (list, key) = match block_named_by(key) {
                Some(block) => (&mut block_keys, block),
                None => (&mut row_keys, key.clone()),
            };
            list.push(JSON::parse(&key).map_err(|e| failed("naming the record to delete", e))?);
        }
        let _leaving_warns = WriteInFlight::begin();
        let db = connection().await?;
        let tx = readwrite(&db).map_err(|e| failed("starting the deletion", e))?;
        let done = committed(&tx);
        let erased = match stores_of(&tx) {
            Ok(stores) => erase_in(&stores, &row_keys, &block_keys).await,
            Err(e) => Err(e),
        };
        match erased {
            Ok(()) => done.await.map(drop).map_err(|e| failed("deleting", e)),
            Err(e) => {
                let _ = tx.abort();
                Err(failed("deleting", e))
            }
        }
    }

    async fn append_turn_event(&self, event: &TurnEvent) -> Result<(), StoreError> {
        let json = serde_json::to_string(event)
            .map_err(|e| StoreError::Failed(format!("a turn event could not be encoded: {e}")))?;
        let value = JSON::parse(&json).map_err(|e| failed("logging the turn", e))?;
        let db = connection().await?;
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
        done.await
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

/// Deletes the rows `row_keys` and the blocks `block_keys`. An embedding kept under a
/// row's key goes with the row, unless the row copied a lesson its block holds: the
/// embedding is that lesson's. Those of an unreadable block's records stay: nothing can
/// name them, and no record reads them. The blocks are read first, the deletions
/// issued in the microtasks of their reads, while the transaction is active.
async fn erase_in(
    stores: &Stores,
    row_keys: &[JsValue],
    block_keys: &[JsValue],
) -> Result<(), JsValue> {
    let mut reads = Vec::with_capacity(row_keys.len());
    for key in row_keys {
        let block = match key.as_string() {
            Some(id) => {
                let number = block_of(&RecordId(id.clone()));
                let read = settle(&stores.blocks.get(&JsValue::from(number))?);
                Some((id, number, read))
            }
            None => None,
        };
        reads.push((key, block));
    }
    for (key, block) in reads {
        let lesson_in_block = match block {
            Some((id, number, read)) => {
                read_blocks([(number.to_string(), block_value_read(&read.await?))])
                    .records
                    .iter()
                    .any(|record| record.id.0 == id)
            }
            None => false,
        };
        stores.records.delete(key)?;
        if !lesson_in_block {
            stores.embeddings.delete(key)?;
        }
    }
    for key in block_keys {
        stores.blocks.delete(key)?;
    }
    Ok(())
}

/// Every record with its embedding, read in one transaction from the three stores and
/// sorted into what decodes and what does not.
async fn load_all_from(db: &IdbDatabase) -> Result<StoredMemory, StoreError> {
    let tx = db
        .transaction_with_str_sequence(&store_names())
        .map_err(|e| failed("opening a read", e))?;
    let stores = stores_of(&tx).map_err(|e| failed("reading", e))?;
    Ok(read_whole_contents(&stores).await?.stored)
}

/// Every record of the blocks and the rows beside them, without the embeddings kept
/// apart: what the page shows first.
async fn load_records_from(db: &IdbDatabase) -> Result<StoredMemory, StoreError> {
    let tx = db
        .transaction_with_str_sequence(&Array::of2(
            &JsValue::from_str(RECORD_BLOCKS),
            &JsValue::from_str(RECORDS),
        ))
        .map_err(|e| failed("opening a read", e))?;
    let blocks = tx
        .object_store(RECORD_BLOCKS)
        .map_err(|e| failed("reading", e))?;
    let rows = tx.object_store(RECORDS).map_err(|e| failed("reading", e))?;
    let stored = read_contents(&blocks, &rows).await?.stored;
    mark(LoadStep::RecordsRead);
    Ok(stored)
}

/// The blocks' records and the rows beside them, both stores read by requests issued
/// together.
async fn read_contents(
    blocks: &IdbObjectStore,
    rows: &IdbObjectStore,
) -> Result<StoreContents, StoreError> {
    let (blocks, rows) = futures::join!(read_all_blocks(blocks), read_rows_beside(rows));
    Ok(StoreContents::of(blocks?, rows?))
}

/// Every block of the blocks store, read ([`ReadBlocks::add`]) one at a time as it
/// arrives: its keys first, then a `get` for each, all asked for before the first is
/// awaited, so the browser reads the next blocks while the page decodes one. One
/// `getAll` had the page wait for all of them (0.1 s at 100 000 lessons), then decode
/// them in one task (0.3 s) during which nothing on the page answered; a cursor
/// waited for the page before reading each next block (at 10 000 lessons its 64
/// blocks took 80 ms, 20 of them the page's decoding).
async fn read_all_blocks(store: &IdbObjectStore) -> Result<ReadBlocks, StoreError> {
    let keys = store.get_all_keys().map_err(|e| failed("reading", e))?;
    let keys = Array::from(&settle(&keys).await.map_err(|e| failed("reading", e))?);
    let mut gets = Vec::with_capacity(keys.length() as usize);
    for key in keys.iter() {
        let get = store.get(&key).map_err(|e| failed("reading", e))?;
        gets.push((key, settle(&get)));
    }
    let mut read = ReadBlocks::default();
    for (key, get) in gets {
        let value = get.await.map_err(|e| failed("reading", e))?;
        let (key, value) = block_entry(&key, &value)?;
        read.add(key, value);
    }
    Ok(read)
}

/// A block as read: its key as JSON text, and its value.
fn block_entry(key: &JsValue, value: &JsValue) -> Result<(String, BlockValue), StoreError> {
    Ok((key_text(key)?, block_value_read(value)))
}

/// A block's value as the store holds it: bytes (as [`block_value`] stores them) cross
/// into the page's memory as one copy, where a JavaScript string is re-encoded
/// character by character (20 ms of a reload of 10 000 lessons); anything else is kept
/// as its JSON, to show.
fn block_value_read(value: &JsValue) -> BlockValue {
    match value.dyn_ref::<Uint8Array>() {
        Some(bytes) => BlockValue::Bytes(bytes.to_vec()),
        None => BlockValue::Other(json_text(value).unwrap_or_else(|e| format!("{e}"))),
    }
}

/// A block's bytes ([`block_bytes`]) as the store holds them.
fn block_value(bytes: &[u8]) -> JsValue {
    Uint8Array::from(bytes).into()
}

/// Every row of the records store beside the blocks, each with the embedding it holds
/// itself, if any.
async fn read_rows_beside(store: &IdbObjectStore) -> Result<StoredMemory, StoreError> {
    let (keys, values) = keys_and_values(store).await?;
    records_from(&keys, &values)
}

/// The rows of the records store, given as all its keys and values, sorted into
/// records and unreadable rows.
fn records_from(keys: &Array, values: &Array) -> Result<StoredMemory, StoreError> {
    if keys.length() == 0 {
        return Ok(StoredMemory::default());
    }
    let embeddings = take_binary_embeddings(values);
    // Every row a record of its own id, as this Remind writes them: decoded in one
    // pass over the one text of all of them. Otherwise row by row, which names each
    // row it cannot read.
    if let Ok(whole) = JSON::stringify(values) {
        let ids: Vec<Option<String>> = keys.iter().map(|key| key.as_string()).collect();
        if let Some(records) = read_readable_rows(&ids, &String::from(whole), &embeddings) {
            return Ok(StoredMemory {
                records,
                unreadable: Vec::new(),
            });
        }
    }
    Ok(read_rows(stored_rows(keys, values, embeddings)?))
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

/// The names of the stores a change writes, for a transaction over them.
fn store_names() -> Array {
    Array::of3(
        &JsValue::from_str(RECORDS),
        &JsValue::from_str(RECORD_BLOCKS),
        &JsValue::from_str(EMBEDDINGS),
    )
}

/// A readwrite transaction over the records' stores: a record, its block and its
/// embedding are written together or not at all.
fn readwrite(db: &IdbDatabase) -> Result<IdbTransaction, JsValue> {
    db.transaction_with_str_sequence_and_mode(&store_names(), IdbTransactionMode::Readwrite)
}

/// The records' stores, in one transaction.
struct Stores {
    /// The rows beside the blocks.
    records: IdbObjectStore,
    blocks: IdbObjectStore,
    embeddings: IdbObjectStore,
}

fn stores_of(tx: &IdbTransaction) -> Result<Stores, JsValue> {
    Ok(Stores {
        records: tx.object_store(RECORDS)?,
        blocks: tx.object_store(RECORD_BLOCKS)?,
        embeddings: tx.object_store(EMBEDDINGS)?,
    })
}

/// Every record with its embedding: the blocks, the rows beside them and the
/// embeddings store, all read by requests issued together. A record gets the embedding
/// kept apart under its id unless its row holds one itself (a row holding one was put
/// there by something other than this Remind, which writes every embedding apart).
async fn read_whole_contents(stores: &Stores) -> Result<StoreContents, StoreError> {
    let (contents, apart) = futures::join!(
        read_contents(&stores.blocks, &stores.records),
        read_all_embeddings(&stores.embeddings)
    );
    let mut contents = contents?;
    attach_kept_apart(&mut contents, apart?.into_iter().collect());
    Ok(contents)
}

/// Gives each record read without an embedding of its own the one kept apart under its
/// id in `apart`, if any.
fn attach_kept_apart(contents: &mut StoreContents, mut apart: HashMap<String, StoredVector>) {
    for record in &mut contents.stored.records {
        if record.embedding.is_none()
            && let Some(stored) = apart.remove(&record.id.0)
        {
            record.embedding = StoredEmbedding::new(stored.model, stored.vector).ok();
        }
    }
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
/// transaction is still active. The puts go out in steps, each issued while the
/// previous step's last put is finishing ([`write_change`]). Should a browser ever end
/// it sooner, the puts fail and nothing is written, never half of it.
async fn transact_in(
    db: &IdbDatabase,
    plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    on_progress: Option<&dyn Fn(WriteProgress)>,
) -> Result<(), StoreError> {
    let tx = readwrite(db).map_err(|e| failed("starting the save", e))?;
    let done = committed(&tx);
    let stores = stores_of(&tx).map_err(|e| failed("saving", e))?;
    let contents = match read_whole_contents(&stores).await {
        Ok(contents) => contents,
        Err(e) => {
            let _ = tx.abort();
            return Err(e);
        }
    };
    let change = plan(contents.stored.records.clone());
    let write = Write {
        stores: &stores,
        contents: &contents,
        held: contents.held_in_blocks(),
        change: &change,
    };
    write_planned(&tx, done, write, on_progress).await
}

/// The read, the plan and the write of a change to the records `ids` alone, in one
/// readwrite transaction: only their blocks, rows and embeddings are read, each with
/// its own `get` (issued together), so a usage count reads a sixty-fourth of the
/// memory, not all of it. The same rules as [`transact_in`] keep the transaction
/// active from the reads to the last put.
async fn transact_records_in(
    db: &IdbDatabase,
    ids: &[RecordId],
    plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    on_progress: Option<&dyn Fn(WriteProgress)>,
) -> Result<(), StoreError> {
    let tx = readwrite(db).map_err(|e| failed("starting the save", e))?;
    let done = committed(&tx);
    let stores = stores_of(&tx).map_err(|e| failed("saving", e))?;
    let contents = match read_named_records(&stores, ids).await {
        Ok(contents) => contents,
        Err(e) => {
            let _ = tx.abort();
            return Err(e);
        }
    };
    // In the order of `ids`, as each was read with its own `get` before the blocks.
    let by_id: HashMap<&RecordId, &MemoryRecord> = contents
        .stored
        .records
        .iter()
        .map(|record| (&record.id, record))
        .collect();
    let change = plan(
        ids.iter()
            .filter_map(|id| by_id.get(id).map(|record| MemoryRecord::clone(record)))
            .collect(),
    );
    if !change.stays_within(ids) {
        let _ = tx.abort();
        return Err(StoreChange::reaching_further());
    }
    let write = Write {
        stores: &stores,
        contents: &contents,
        held: contents.held_in_blocks(),
        change: &change,
    };
    write_planned(&tx, done, write, on_progress).await
}

/// The blocks of `ids` (every record they hold), the rows of `ids` beside them, and
/// the embeddings of `ids` attached to their records; one `get` per block, row and
/// embedding, all issued before the first is awaited.
async fn read_named_records(
    stores: &Stores,
    ids: &[RecordId],
) -> Result<StoreContents, StoreError> {
    let numbers: std::collections::BTreeSet<u32> = ids.iter().map(block_of).collect();
    let mut block_reads = Vec::with_capacity(numbers.len());
    for number in numbers {
        let key = JsValue::from(number);
        let block = stores.blocks.get(&key).map_err(|e| failed("reading", e))?;
        block_reads.push((key, settle(&block)));
    }
    let mut reads = Vec::with_capacity(ids.len());
    for id in ids {
        let key = JsValue::from_str(&id.0);
        let row = stores.records.get(&key).map_err(|e| failed("reading", e))?;
        let embedding = stores
            .embeddings
            .get(&key)
            .map_err(|e| failed("reading", e))?;
        reads.push((key, settle(&row), settle(&embedding)));
    }
    let mut blocks = Vec::with_capacity(block_reads.len());
    for (key, block) in block_reads {
        let value = block.await.map_err(|e| failed("reading", e))?;
        if !value.is_undefined() {
            blocks.push(block_entry(&key, &value)?);
        }
    }
    let mut rows = Vec::new();
    let mut apart = HashMap::new();
    for (key, row, embedding) in reads {
        let value = row.await.map_err(|e| failed("reading", e))?;
        if let Some(embedding) = embedding_of(&embedding.await.map_err(|e| failed("reading", e))?)
            && let Some(id) = key.as_string()
        {
            apart.insert(id, embedding);
        }
        if !value.is_undefined() {
            rows.push(stored_row(&key, value)?);
        }
    }
    let mut contents = StoreContents::of(read_blocks(blocks), read_rows(rows));
    attach_kept_apart(&mut contents, apart);
    Ok(contents)
}

/// A change to write, with what it was planned on.
struct Write<'a> {
    stores: &'a Stores,
    /// What the transaction read: the unreadable blocks and rows no write may touch,
    /// which records had an embedding, which were rows.
    contents: &'a StoreContents,
    /// The records read from blocks, which a rewrite of their blocks keeps.
    held: Vec<&'a MemoryRecord>,
    change: &'a StoreChange,
}

/// Writes a change in the transaction that read what it was planned on, and resolves
/// when it committed. An empty change writes nothing; one over an unreadable block or
/// row is refused and nothing written.
async fn write_planned(
    tx: &IdbTransaction,
    done: JsFuture,
    write: Write<'_>,
    on_progress: Option<&dyn Fn(WriteProgress)>,
) -> Result<(), StoreError> {
    if write.change.is_empty() {
        // A read-only outcome (a refusal, nothing to count): let the transaction end.
        return done.await.map(drop).map_err(|e| failed("reading", e));
    }
    if let Some(row) = write.change.overwrites_unreadable(&write.contents.stored) {
        let _ = tx.abort();
        return Err(StoreError::WouldOverwriteUnreadable {
            id: row.key.clone(),
        });
    }
    if let Err(e) = write_change(&write, on_progress).await {
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

/// Blocks rewritten in one step of a write: encoding them and issuing their puts takes
/// a few milliseconds, so a write of thousands of records (an import) is many short
/// tasks rather than one that freezes the page.
const BLOCKS_PER_STEP: usize = 4;

/// Issues the deletes and puts of a change in steps of [`BLOCKS_PER_STEP`] blocks, each
/// once the last put of the step before the previous one has succeeded. The
/// transaction stays active throughout: a request is pending until then, and the next
/// step is issued in the microtasks of that request's `success` event, so IndexedDB
/// never sees an idle transaction to commit early. Between steps the browser is free
/// to paint and answer input.
///
/// A step rewrites each of its blocks whole ([`rewritten_blocks`]), unless its text
/// would not change, and, for each record put into them, puts its embedding in the
/// embeddings store under its id; a record put without an embedding drops the one it
/// had (as read), and a record that was a row beside the blocks has that row deleted.
/// An erased record's embedding and row go too.
///
/// A write of more than one step tells `on_progress` how many of the records put are
/// written each time a step is done.
async fn write_change(
    write: &Write<'_>,
    on_progress: Option<&dyn Fn(WriteProgress)>,
) -> Result<(), StoreError> {
    let Write {
        stores,
        contents,
        change,
        ..
    } = write;
    let blocks = rewritten_blocks(&write.held, &change.put, &change.erase);
    let total = change.put.len();
    let report = |written| {
        if let Some(on_progress) = on_progress.filter(|_| blocks.len() > BLOCKS_PER_STEP) {
            on_progress(WriteProgress { written, total });
        }
    };
    let had_embedding: HashSet<&RecordId> = contents
        .stored
        .records
        .iter()
        .filter(|record| record.embedding.is_some())
        .map(|record| &record.id)
        .collect();
    for id in &change.erase {
        let key = JsValue::from_str(&id.0);
        stores
            .embeddings
            .delete(&key)
            .map_err(|e| failed("erasing", e))?;
        if contents.in_rows.contains(id) {
            stores
                .records
                .delete(&key)
                .map_err(|e| failed("erasing", e))?;
        }
    }
    let mut written = 0;
    // Two steps in flight: the next is issued as soon as the one before the last has
    // been written, so IndexedDB always has puts queued while the page encodes more.
    let mut in_flight: Option<(JsFuture, usize)> = None;
    for step in blocks.chunks(BLOCKS_PER_STEP) {
        let mut last = None;
        let mut puts = 0;
        for block in step {
            puts += block.put.len();
            for record in &block.put {
                let key = JsValue::from_str(&record.id.0);
                let request = match &record.embedding {
                    Some(embedding) => stores
                        .embeddings
                        .put_with_key(&binary_embedding_value(embedding)?, &key)
                        .map(Some),
                    None if had_embedding.contains(&record.id) => {
                        stores.embeddings.delete(&key).map(Some)
                    }
                    None => Ok(None),
                }
                .map_err(|e| failed("saving", e))?;
                last = request.or(last);
                if contents.in_rows.contains(&record.id) {
                    stores
                        .records
                        .delete(&key)
                        .map_err(|e| failed("saving", e))?;
                }
            }
            // A block whose records changed only their embeddings reads the same: an
            // embedding stored in the background writes no block.
            if block.changed {
                let bytes = block_bytes(&block.records).map_err(StoreError::Failed)?;
                last = Some(
                    stores
                        .blocks
                        .put_with_key(&block_value(&bytes), &JsValue::from(block.number))
                        .map_err(|e| failed("saving", e))?,
                );
            }
        }
        let issued = last.map(|last| (settle(&last), puts));
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

/// An embedding as schema 4 stores it: `{ model, vector: Float32Array }`.
fn binary_embedding_value(embedding: &StoredEmbedding) -> Result<JsValue, StoreError> {
    let binary = Object::new();
    let set = |name: &str, value: &JsValue| {
        Reflect::set(&binary, &JsValue::from_str(name), value).map_err(|e| failed("saving", e))
    };
    set(EMBEDDING_MODEL, &JsValue::from_str(embedding.model()))?;
    set(EMBEDDING_VECTOR, &Float32Array::from(embedding.vector()))?;
    Ok(binary.into())
}

/// Every value of an object store, as JSON text, in key order.
async fn read_all(store_name: &str) -> Result<Vec<String>, StoreError> {
    let db = connection().await?;
    let store = store_to_read(&db, store_name)?;
    let request = store.get_all().map_err(|e| failed("reading", e))?;
    let all = settle(&request).await.map_err(|e| failed("reading", e))?;
    Array::from(&all)
        .iter()
        .map(|value| json_text(&value))
        .collect()
}

/// A stored value as JSON text; a value JSON cannot hold (a cycle, a BigInt) is an
/// error, not a panic.
fn json_text(value: &JsValue) -> Result<String, StoreError> {
    let text = JSON::stringify(value).map_err(|e| failed("reading", e))?;
    // `undefined` (which a store of keys apart from its values may hold) has no JSON:
    // named as JavaScript writes it.
    Ok(text.as_string().unwrap_or_else(|| "undefined".into()))
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

/// An open under way, shared by every use that needs the connection meanwhile.
type Opening = Shared<LocalBoxFuture<'static, Result<IdbDatabase, StoreError>>>;

thread_local! {
    /// The page's connection to the database, once opened ([`connection`]).
    static CONNECTION: std::cell::RefCell<Option<IdbDatabase>> = const { std::cell::RefCell::new(None) };
    /// The open under way, if any ([`opening`]).
    static OPENING: std::cell::RefCell<Option<Opening>> = const { std::cell::RefCell::new(None) };
}

impl IdbStore {
    /// Asks the browser to open the database now, before the page is drawn, so that
    /// it opens while the page builds (10–15 ms at a reload; the open itself takes
    /// about 25 ms); the page's first read then takes this open over instead of
    /// starting its own once it is drawn.
    pub fn open_ahead() {
        let mut ahead = opening();
        // The first poll issues the open request; the task below sees it through.
        let _ = ahead.poll_unpin(&mut Context::from_waker(futures::task::noop_waker_ref()));
        wasm_bindgen_futures::spawn_local(async move {
            let _ = ahead.await;
        });
    }
}

/// The page's connection to the database: opened ([`open`]) on first use and kept.
///
/// Kept rather than opened for each read and closed after it: once no page has held a
/// connection for two seconds, the browser closes the database's files (and may compact
/// them), and the next open waited for that, 1.3–1.6 s with 100 000 lessons on a
/// reload after the page sat idle. The connection lets go at once when another tab's
/// newer Remind asks to upgrade the database or something deletes it, so it blocks
/// neither; the next use then opens afresh, and learns of a newer version as before.
async fn connection() -> Result<IdbDatabase, StoreError> {
    if let Some(db) = CONNECTION.with_borrow(Clone::clone) {
        return Ok(db);
    }
    opening().await
}

/// The open under way, or a new one: uses that need the connection while it opens
/// wait for the same open rather than each opening one.
fn opening() -> Opening {
    OPENING.with_borrow_mut(|opening| {
        opening
            .get_or_insert_with(|| open_and_keep().boxed_local().shared())
            .clone()
    })
}

/// Opens the database and keeps the connection as the page's ([`connection`]).
async fn open_and_keep() -> Result<IdbDatabase, StoreError> {
    let opened = open().await;
    // Done, whatever the outcome: a failed open is tried afresh by the next use.
    OPENING.with_borrow_mut(|opening| *opening = None);
    let opened = opened?;
    mark(LoadStep::DatabaseOpen);
    let let_go = {
        let db = opened.clone();
        Closure::once_into_js(move || {
            db.close();
            forget_connection(&db);
        })
    };
    opened.set_onversionchange(Some(let_go.unchecked_ref()));
    // Closed by the browser (site data cleared, the disk gone): opened again next time.
    let closed = {
        let db = opened.clone();
        Closure::once_into_js(move || forget_connection(&db))
    };
    opened.set_onclose(Some(closed.unchecked_ref()));
    CONNECTION.with_borrow_mut(|kept| *kept = Some(opened.clone()));
    Ok(opened)
}

/// Forgets `db` as the page's connection, if it is.
fn forget_connection(db: &IdbDatabase) {
    CONNECTION.with_borrow_mut(|kept| {
        if kept.as_ref() == Some(db) {
            *kept = None;
        }
    });
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
        let _ = create_records_store(db);
    }
    if old_version < 2 {
        let params = IdbObjectStoreParameters::new();
        params.set_auto_increment(true);
        let _ = db.create_object_store_with_optional_parameters(TURN_EVENTS, &params);
    }
    if old_version < 4 {
        let _ = db.create_object_store(EMBEDDINGS);
    }
    if old_version < 5 {
        let _ = db.create_object_store(RECORD_BLOCKS);
    }
    // Each step's requests are issued once the step before has issued its last, so
    // the rows the blocks are made of are the rows as schema 4 left them.
    let into_blocks = {
        let upgrade = upgrade.clone();
        move || rows_into_blocks(&upgrade)
    };
    match old_version {
        1..=3 => embeddings_apart(upgrade, old_version, Box::new(into_blocks)),
        4 => into_blocks(),
        5 => {
            records_renewed(upgrade);
            blocks_in_binary(upgrade);
        }
        6 => blocks_in_binary(upgrade),
        _ => {}
    }
}

/// Schema 7: every block of schemas 5 and 6, the JSON text of its records, written
/// again under its key in the binary form ([`block_bytes`]), which a reload decodes in
/// about half the time. A block that does not read whole is left as it was, to be set
/// aside as before; should any request fail, the upgrade is aborted.
fn blocks_in_binary(upgrade: &IdbTransaction) {
    let Ok(blocks) = upgrade.object_store(RECORD_BLOCKS) else {
        let _ = upgrade.abort();
        return;
    };
    let rewriting = upgrade.clone();
    read_every_row(upgrade, &blocks.clone(), move |keys, values| {
        for (key, value) in keys.iter().zip(values.iter()) {
            let Ok((key_text, value)) = block_entry(&key, &value) else {
                continue;
            };
            if matches!(&value, BlockValue::Bytes(bytes) if is_binary_block(bytes)) {
                continue;
            }
            let read = read_blocks([(key_text, value)]);
            if !read.unreadable.is_empty() {
                continue;
            }
            let records: Vec<&MemoryRecord> = read.records.iter().collect();
            let written = block_bytes(&records)
                .map_err(|e| JsValue::from_str(&e))
                .and_then(|bytes| blocks.put_with_key(&block_value(&bytes), &key));
            if written.is_err() {
                let _ = rewriting.abort();
                return;
            }
        }
    });
}

/// The records store as schema 1 made it: keyed by each row's `id`, indexed by `key`.
fn create_records_store(db: &IdbDatabase) -> Result<IdbObjectStore, JsValue> {
    let params = IdbObjectStoreParameters::new();
    params.set_key_path(&JsValue::from_str("id"));
    let store = db.create_object_store_with_optional_parameters(RECORDS, &params)?;
    store.create_index_with_str("key", "key")?;
    Ok(store)
}

/// Schema 6: the records store of a schema-5 database made anew, holding the same
/// rows ([`records_store_anew`]). Should any request fail, the upgrade is aborted.
fn records_renewed(upgrade: &IdbTransaction) {
    let Ok(records) = upgrade.object_store(RECORDS) else {
        let _ = upgrade.abort();
        return;
    };
    let renewing = upgrade.clone();
    read_every_row(upgrade, &records, move |_, rows| {
        if records_store_anew(&renewing, &rows).is_err() {
            let _ = renewing.abort();
        }
    });
}

/// Deletes the records store and creates it again holding `rows`, each put back as it
/// was read. Why not `clear()`: the browser keeps a trace of every row a store ever
/// deleted until it compacts its files, days later, and every read of the store scans
/// them. After the migration to blocks moved 100 000 rows out, reading the few rows
/// left took 0.3 s of every reload and of every change's read; a store made anew has
/// no trace of the old one's rows.
fn records_store_anew(upgrade: &IdbTransaction, rows: &Array) -> Result<(), JsValue> {
    let db = upgrade.db();
    db.delete_object_store(RECORDS)?;
    let records = create_records_store(&db)?;
    for row in rows.iter() {
        records.put(&row)?;
    }
    Ok(())
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
fn embeddings_apart(upgrade: &IdbTransaction, old_version: u32, then: Box<dyn FnOnce()>) {
    // Every store exists by now: `migrate` creates them before any step runs.
    let Ok(Stores {
        records,
        embeddings,
        ..
    }) = stores_of(upgrade)
    else {
        let _ = upgrade.abort();
        return;
    };
    let migrating = upgrade.clone();
    read_every_row(upgrade, &records.clone(), move |keys, values| {
        let Some(is_finite) = finite_number_test() else {
            let _ = migrating.abort();
            return;
        };
        Rc::new(EmbeddingsApart {
            keys,
            values,
            records,
            embeddings,
            upgrade: migrating,
            old_version,
            is_finite,
            next: Cell::new(0),
            then: Cell::new(Some(then)),
        })
        .step();
    });
}

/// Reads every key and value of `records` (the records store, or the blocks store) in
/// the upgrade transaction and hands them to `then`; should either request fail, the
/// upgrade is aborted.
fn read_every_row(
    upgrade: &IdbTransaction,
    records: &IdbObjectStore,
    then: impl FnOnce(Array, Array) + 'static,
) {
    let (Ok(keys), Ok(values)) = (records.get_all_keys(), records.get_all()) else {
        let _ = upgrade.abort();
        return;
    };
    let read = values.clone();
    let (migrating, on_failure) = (upgrade.clone(), upgrade.clone());
    let on_values = Closure::once_into_js(move || {
        let (Ok(keys), Ok(values)) = (keys.result(), read.result()) else {
            let _ = migrating.abort();
            return;
        };
        then(Array::from(&keys), Array::from(&values));
    });
    let on_error = Closure::once_into_js(move || {
        let _ = on_failure.abort();
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
    /// The next schema step, begun once every row has moved.
    then: Cell<Option<Box<dyn FnOnce()>>>,
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
        if let Some(then) = self.then.take() {
            then();
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

/// Schema 5: every row of the records store that reads as a record, as a reload of
/// schema 4 read it, moves into its block ([`remind_core::record_blocks`]), re-encoded
/// as this Remind writes records; the records store is then made anew holding every
/// other row exactly as it was ([`records_store_anew`]): a row that does not read, and
/// a row holding its embedding as binary itself, which no Remind of schema 4 wrote, stay
/// rows beside the blocks, read as before. A record whose row held its embedding as JSON
/// numbers gets it put apart, as schema 4 keeps every embedding.
///
/// The rows are read [`ROWS_PER_BLOCKS_STEP`] at a time (see [`RowsIntoBlocks`]), so a
/// memory of thousands never freezes the page for the whole upgrade; should any request
/// fail, the upgrade is aborted and the database stays at its old version.
fn rows_into_blocks(upgrade: &IdbTransaction) {
    let Ok(Stores {
        records,
        blocks,
        embeddings,
    }) = stores_of(upgrade)
    else {
        let _ = upgrade.abort();
        return;
    };
    let migrating = upgrade.clone();
    read_every_row(upgrade, &records.clone(), move |keys, values| {
        Rc::new(RowsIntoBlocks {
            keys,
            values,
            records,
            blocks,
            embeddings,
            upgrade: migrating,
            next: Cell::new(0),
            into: Default::default(),
            staying: Array::new(),
        })
        .step();
    });
}

/// Rows read in one step of the migration to blocks.
const ROWS_PER_BLOCKS_STEP: u32 = 1000;

/// The migration to blocks under way: the rows read in the upgrade transaction, how far
/// reading them has come, and the blocks made so far.
struct RowsIntoBlocks {
    keys: Array,
    values: Array,
    records: IdbObjectStore,
    blocks: IdbObjectStore,
    embeddings: IdbObjectStore,
    upgrade: IdbTransaction,
    next: Cell<u32>,
    /// Each block's records so far, by block number.
    into: std::cell::RefCell<std::collections::BTreeMap<u32, Vec<MemoryRecord>>>,
    /// The rows that stay rows, as read.
    staying: Array,
}

impl RowsIntoBlocks {
    /// Sorts the next step's rows, then waits for a request of no consequence (a
    /// count) to go on, which keeps the upgrade transaction active between steps; once
    /// every row is sorted, writes the blocks.
    fn step(self: Rc<Self>) {
        let length = self.keys.length();
        let start = self.next.get();
        if start >= length {
            if self.write_blocks().is_err() {
                let _ = self.upgrade.abort();
            }
            return;
        }
        let end = start.saturating_add(ROWS_PER_BLOCKS_STEP).min(length);
        self.next.set(end);
        if self.sort_rows(start..end).is_err() {
            let _ = self.upgrade.abort();
            return;
        }
        let Ok(pause) = self.records.count() else {
            let _ = self.upgrade.abort();
            return;
        };
        let next = Rc::clone(&self);
        let on_success = Closure::once_into_js(move || next.step());
        pause.set_onsuccess(Some(on_success.unchecked_ref()));
    }

    /// Takes each row of `range` that reads as a record into its block (its embedding,
    /// if the row held one as numbers, put apart), and keeps every other row as it is.
    fn sort_rows(&self, range: std::ops::Range<u32>) -> Result<(), ()> {
        let (start, end) = (range.start, range.end);
        let keys = self.keys.slice(start, end);
        let values = self.values.slice(start, end);
        let (key_texts, row_texts) = (texts_where_possible(&keys), texts_where_possible(&values));
        let mut into = self.into.borrow_mut();
        for (i, (key_text, row_text)) in key_texts.into_iter().zip(row_texts).enumerate() {
            let value = values.get(i as u32);
            let record = match (key_text, row_text) {
                (Some(key), Some(value_text)) if binary_embedding(&value).is_none() => {
                    read_row(&StoredRow::json(key, value_text)).ok()
                }
                _ => None,
            };
            let Some(mut record) = record else {
                self.staying.push(&value);
                continue;
            };
            if let Some(embedding) = record.embedding.take() {
                self.embeddings
                    .put_with_key(
                        &binary_embedding_value(&embedding).map_err(drop)?,
                        &JsValue::from_str(&record.id.0),
                    )
                    .map_err(drop)?;
            }
            into.entry(block_of(&record.id)).or_default().push(record);
        }
        Ok(())
    }

    /// Makes the records store anew with the rows that stay, and puts each block.
    fn write_blocks(&self) -> Result<(), ()> {
        records_store_anew(&self.upgrade, &self.staying).map_err(drop)?;
        for (number, records) in self.into.borrow().iter() {
            let records: Vec<&MemoryRecord> = records.iter().collect();
            let bytes = block_bytes(&records).map_err(drop)?;
            self.blocks
                .put_with_key(&block_value(&bytes), &JsValue::from(*number))
                .map_err(drop)?;
        }
        Ok(())
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
