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
