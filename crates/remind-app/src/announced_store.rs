//! A memory store that tells the other tabs after each committed change.
//!
//! Announcing in the store, not in each use-case, means no write path can forget it,
//! and a failed write is never announced.

use crate::ports::{ChangeFeed, MemoryStore, StoreChange, StoreError};
use remind_core::learning_curve::TurnEvent;
use remind_core::record::{MemoryRecord, RecordId};
use remind_core::stored_record::StoredVector;
use remind_core::stored_rows::StoredMemory;

pub struct AnnouncedStore<S, F> {
    pub store: S,
    pub feed: F,
}

impl<S: MemoryStore, F: ChangeFeed> MemoryStore for AnnouncedStore<S, F> {
    async fn load_all(&self) -> Result<StoredMemory, StoreError> {
        self.store.load_all().await
    }

    async fn load_all_but_embeddings(&self) -> Result<StoredMemory, StoreError> {
        self.store.load_all_but_embeddings().await
    }

    async fn load_embeddings(&self) -> Result<Vec<(RecordId, StoredVector)>, StoreError> {
        self.store.load_embeddings().await
    }

    async fn transact(
        &self,
        plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    ) -> Result<(), StoreError> {
        let mut changed = false;
        self.store
            .transact(noting_change(&mut changed, plan))
            .await?;
        self.announce_if(changed);
        Ok(())
    }

    // Passed on as it is, not left to the default: that would read every record
    // through `transact`, the very cost a targeted change is for.
    async fn transact_records(
        &self,
        ids: &[RecordId],
        plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    ) -> Result<(), StoreError> {
        let mut changed = false;
        self.store
            .transact_records(ids, noting_change(&mut changed, plan))
            .await?;
        self.announce_if(changed);
        Ok(())
    }

    async fn erase_unreadable(&self, keys: &[String]) -> Result<(), StoreError> {
        self.store.erase_unreadable(keys).await?;
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

impl<S, F: ChangeFeed> AnnouncedStore<S, F> {
    /// A plan that changed nothing (a refusal, a stale version) wrote nothing, so the
    /// other tabs have nothing to re-read.
    fn announce_if(&self, changed: bool) {
        if changed {
            self.feed.announce();
        }
    }
}

/// `plan`, noting in `changed` whether the change it decides writes anything.
fn noting_change<'a>(
    changed: &'a mut bool,
    plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange + 'a,
) -> impl FnOnce(Vec<MemoryRecord>) -> StoreChange + 'a {
    move |records| {
        let change = plan(records);
        *changed = !change.is_empty();
        change
    }
}
