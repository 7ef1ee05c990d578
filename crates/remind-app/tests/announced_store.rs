//! The announcing store: committed changes reach the other tabs, failed ones never do.
#![cfg(not(target_arch = "wasm32"))]

use std::cell::Cell;
use std::future::Future;

use futures::FutureExt;

use remind_app::announced_store::AnnouncedStore;
use remind_app::ports::{ChangeFeed, MemoryStore, StoreChange, StoreError};
use remind_core::memory::{FeedbackMemory, Lesson};
use remind_core::record::{MemoryRecord, RecordId, Timestamp};
use remind_test_support::in_memory_store::InMemoryStore;

#[derive(Default)]
struct CountingFeed(Cell<u32>);

impl ChangeFeed for &CountingFeed {
    fn announce(&self) {
        self.0.set(self.0.get() + 1);
    }
}

/// The in-memory store never waits, so one poll finishes its futures; a `Pending`
/// would be a bug in the store, so it fails the test rather than being waited on.
fn now<T>(future: impl Future<Output = T>) -> T {
    future
        .now_or_never()
        .expect("the in-memory store does not wait")
}

fn a_lesson() -> MemoryRecord {
    let lesson = Lesson::user_clarification("What is like < fast > ?", "I want a synonym");
    FeedbackMemory::default()
        .plan_write(lesson, RecordId("a".into()), Timestamp(1))
        .current
}

#[test]
fn a_committed_change_is_announced_once() {
    let feed = CountingFeed::default();
    let store = AnnouncedStore {
        store: InMemoryStore::default(),
        feed: &feed,
    };
    now(store.commit(&[a_lesson()], &[])).unwrap();
    assert_eq!(feed.0.get(), 1);
    now(store.load()).unwrap();
    assert_eq!(feed.0.get(), 1, "a read is not a change");
}

#[test]
fn a_failed_write_is_never_announced() {
    let feed = CountingFeed::default();
    let inner = InMemoryStore::default();
    inner.fail_next_write(StoreError::QuotaExceeded);
    let store = AnnouncedStore {
        store: inner,
        feed: &feed,
    };
    assert_eq!(
        now(store.write(&[a_lesson()])),
        Err(StoreError::QuotaExceeded)
    );
    assert_eq!(feed.0.get(), 0);
}

#[test]
fn a_plan_that_changes_nothing_is_not_announced() {
    let feed = CountingFeed::default();
    let store = AnnouncedStore {
        store: InMemoryStore::default(),
        feed: &feed,
    };
    now(store.transact(|_| StoreChange::default())).unwrap();
    assert_eq!(
        feed.0.get(),
        0,
        "nothing was written, so no tab need re-read"
    );
}

/// A store that counts the changes planned on every record, to show a targeted change
/// is passed on as one rather than read whole.
#[derive(Default)]
struct CountingWholeReads {
    inner: InMemoryStore,
    whole_reads: Cell<u32>,
}

impl MemoryStore for &CountingWholeReads {
    async fn load_all(&self) -> Result<remind_core::stored_rows::StoredMemory, StoreError> {
        self.inner.load_all().await
    }

    async fn transact(
        &self,
        plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    ) -> Result<(), StoreError> {
        self.whole_reads.set(self.whole_reads.get() + 1);
        self.inner.transact(plan).await
    }

    async fn transact_records(
        &self,
        ids: &[RecordId],
        plan: impl FnOnce(Vec<MemoryRecord>) -> StoreChange,
    ) -> Result<(), StoreError> {
        self.inner.transact_records(ids, plan).await
    }

    async fn erase_unreadable(&self, keys: &[String]) -> Result<(), StoreError> {
        self.inner.erase_unreadable(keys).await
    }

    async fn request_persistence(&self) -> Result<bool, StoreError> {
        self.inner.request_persistence().await
    }

    async fn append_turn_event(
        &self,
        event: &remind_core::learning_curve::TurnEvent,
    ) -> Result<(), StoreError> {
        self.inner.append_turn_event(event).await
    }

    async fn load_turn_events(
        &self,
    ) -> Result<Vec<remind_core::learning_curve::TurnEvent>, StoreError> {
        self.inner.load_turn_events().await
    }
}

#[test]
fn a_targeted_change_is_passed_on_as_one_and_announced_only_when_it_writes() {
    let feed = CountingFeed::default();
    let inner = CountingWholeReads::default();
    now(inner.inner.commit(&[a_lesson()], &[])).unwrap();
    let store = AnnouncedStore {
        store: &inner,
        feed: &feed,
    };
    let id = a_lesson().id;
    now(
        store.transact_records(std::slice::from_ref(&id), |records| {
            let memory = FeedbackMemory::from_records(records);
            StoreChange::put(memory.plan_applied(&id).into_iter().collect())
        }),
    )
    .unwrap();
    assert_eq!(inner.whole_reads.get(), 0, "no change read every record");
    assert_eq!(feed.0.get(), 1);
    assert_eq!(now(store.load()).unwrap()[0].stats.times_applied, 1);
    now(store.transact_records(std::slice::from_ref(&id), |_| StoreChange::default())).unwrap();
    assert_eq!(feed.0.get(), 1, "nothing written, nothing announced");
}
