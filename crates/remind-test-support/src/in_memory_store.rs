//! The native twin of the IndexedDB store, for testing use-cases without a browser.
//!
//! It can be told to fail its next write, the way a full disk or a blocked browser
//! would, so tests can prove a failed write loses nothing and is never called saved.
//! It holds no unreadable rows: those are tested against the real store, in the browser.

use std::cell::RefCell;

use remind_app::ports::{MemoryStore, StoreChange, StoreError};
use remind_core::learning_curve::TurnEvent;
use remind_core::record::{MemoryRecord, RecordId};
use remind_core::stored_record::StoredVector;
use remind_core::stored_rows::StoredMemory;

#[derive(Default)]
pub struct InMemoryStore {
    records: RefCell<Vec<MemoryRecord>>,
    fail_next_write: RefCell<Option<StoreError>>,
    turn_events: RefCell<Vec<TurnEvent>>,
    /// Whether a load hands out the records without their embeddings first, then the
    /// embeddings by id, as the IndexedDB store does (schema 4).
    embeddings_apart: bool,
}

impl InMemoryStore {
    /// A store that is read as IndexedDB is: the records, then their embeddings apart
    /// ([`MemoryStore::load_all_but_embeddings`], [`MemoryStore::load_embeddings`]).
    pub fn keeping_embeddings_apart() -> Self {
        InMemoryStore {
            embeddings_apart: true,
            ..InMemoryStore::default()
        }
    }

    /// Makes the next write fail with `error` and store nothing.
    pub fn fail_next_write(&self, error: StoreError) {
        *self.fail_next_write.borrow_mut() = Some(error);
    }

    pub fn snapshot(&self) -> Vec<MemoryRecord> {
        self.records.borrow().clone()
    }
}

impl MemoryStore for InMemoryStore {
    async fn load_all(&self) -> Result<StoredMemory, StoreError> {
        Ok(StoredMemory {
            records: self.snapshot(),
            unreadable: Vec::new(),
        })
    }

    async fn load_all_but_embeddings(&self) -> Result<StoredMemory, StoreError> {
        let mut stored = self.load_all().await?;
        if self.embeddings_apart {
            for record in &mut stored.records {
                record.embedding = None;
            }
        }
        Ok(stored)
    }

    async fn load_embeddings(&self) -> Result<Vec<(RecordId, StoredVector)>, StoreError> {
        if !self.embeddings_apart {
            return Ok(Vec::new());
        }
        Ok(self
            .snapshot()
            .into_iter()
            .filter_map(|record| {
                let embedding = record.embedding?;
                let vector = StoredVector {
                    model: embedding.model().to_string(),
                    vector: embedding.vector().to_vec(),
                };
                Some((record.id, vector))
            })
            .collect())
    }

    async fn transact(
        &self,
        plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    ) -> Result<(), StoreError> {
        // Single-threaded: nothing can run between this read and the write below,
        // which is the exclusivity the IndexedDB transaction gives the page.
        let change = plan(self.snapshot());
        if change.is_empty() {
            return Ok(());
        }
        if let Some(error) = self.fail_next_write.borrow_mut().take() {
            return Err(error);
        }
        let mut records = self.records.borrow_mut();
        records.retain(|r| !change.erase.contains(&r.id));
        for record in change.put {
            match records.iter_mut().find(|r| r.id == record.id) {
                Some(slot) => *slot = record,
                None => records.push(record),
            }
        }
        Ok(())
    }

    async fn erase_unreadable(&self, _keys: &[String]) -> Result<(), StoreError> {
        if let Some(error) = self.fail_next_write.borrow_mut().take() {
            return Err(error);
        }
        Ok(())
    }

    // `fail_next_write` is left for the memory's writes: the turn log is bookkeeping
    // the session never fails a turn for, and a test arming a failure means a record.
    /// Nothing here outlives the process, so no promise can be given.
    async fn request_persistence(&self) -> Result<bool, StoreError> {
        Ok(false)
    }

    async fn append_turn_event(&self, event: &TurnEvent) -> Result<(), StoreError> {
        self.turn_events.borrow_mut().push(event.clone());
        Ok(())
    }

    async fn load_turn_events(&self) -> Result<Vec<TurnEvent>, StoreError> {
        Ok(self.turn_events.borrow().clone())
    }
}
