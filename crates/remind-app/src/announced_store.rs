//! A memory store that tells the other tabs after each committed change.
//!
//! Announcing in the store, not in each use-case, means no write path can forget it,
//! and a failed write is never announced.

use crate::ports::{ChangeFeed, MemoryStore, StoreError};
use remind_core::learning_curve::TurnEvent;
use remind_core::record::{MemoryRecord, RecordId};

pub struct AnnouncedStore<S, F> {
    pub store: S,
    pub feed: F,
}

impl<S: MemoryStore, F: ChangeFeed> MemoryStore for AnnouncedStore<S, F> {
    async fn load(&self) -> Result<Vec<MemoryRecord>, StoreError> {
        self.store.load().await
    }

    async fn commit(&self, put: &[MemoryRecord], erase: &[RecordId]) -> Result<(), StoreError> {
        self.store.commit(put, erase).await?;
        self.feed.announce();
        Ok(())
    }

    async fn request_persistence(&self) -> Result<bool, StoreError> {
        self.store.request_persistence().await
    }

    // The turn log is not the memory: other tabs need not re-read anything for it.
    async fn append_turn_event(&self, event: &TurnEvent) -> Result<(), StoreError> {
        self.store.append_turn_event(event).await
    }

    async fn load_turn_events(&self) -> Result<Vec<TurnEvent>, StoreError> {
        self.store.load_turn_events().await
    }
}
