//! The native twin of the IndexedDB store, for testing use-cases without a browser.
//!
//! It can be told to fail its next write, the way a full disk or a blocked browser
//! would, so tests can prove a failed write loses nothing and is never called saved.

use std::cell::RefCell;

use crate::ports::{MemoryStore, StoreError};
use remind_core::learning_curve::TurnEvent;
use remind_core::record::{MemoryRecord, RecordId};

#[derive(Default)]
pub struct InMemoryStore {
    records: RefCell<Vec<MemoryRecord>>,
    fail_next_write: RefCell<Option<StoreError>>,
    turn_events: RefCell<Vec<TurnEvent>>,
}

impl InMemoryStore {
    /// Makes the next write fail with `error` and store nothing.
    pub fn fail_next_write(&self, error: StoreError) {
        *self.fail_next_write.borrow_mut() = Some(error);
    }

    pub fn snapshot(&self) -> Vec<MemoryRecord> {
        self.records.borrow().clone()
    }
}

impl MemoryStore for InMemoryStore {
    async fn load(&self) -> Result<Vec<MemoryRecord>, StoreError> {
        Ok(self.snapshot())
    }

    async fn commit(&self, put: &[MemoryRecord], erase: &[RecordId]) -> Result<(), StoreError> {
        if let Some(error) = self.fail_next_write.borrow_mut().take() {
            return Err(error);
        }
        let mut stored = self.records.borrow_mut();
        stored.retain(|r| !erase.contains(&r.id));
        for record in put {
            match stored.iter_mut().find(|r| r.id == record.id) {
                Some(slot) => *slot = record.clone(),
                None => stored.push(record.clone()),
            }
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
