//! Revising the memory: every change is planned against what the store holds now,
//! then committed in one transaction.
//!
//! Planning against a fresh read (not the page's possibly older view) is what makes
//! the version check mean something across tabs: a lesson another tab changed is
//! refused as stale instead of being overwritten. The edit, withdraw, undo, forget and
//! statistics use-cases are all this one pattern with a different plan.

use thiserror::Error;

use crate::ports::{MemoryStore, StoreError};
use remind_core::import_plan::ImportPlanError;
use remind_core::memory::{FeedbackMemory, MemoryError, PlannedWrite, ScopeChange};
use remind_core::memory_key::MemoryKey;
use remind_core::record::{MemoryRecord, Reach, RecordId, Timestamp};
use remind_core::withdrawal::{UndoOutcome, Undone};

pub use crate::ports::StoreChange;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum ReviseError {
    #[error(transparent)]
    Memory(#[from] MemoryError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the memory changed since the import preview was shown; preview the file again")]
    ChangedSincePreview,
    #[error(transparent)]
    ImportRefused(#[from] ImportPlanError),
}

/// How a revision ended, and the memory as the store now holds it (`None` when the
/// store could not even be read). The session adopts `memory` whenever it is `Some`:
/// it is what a reload would show, whether or not the change itself went through.
pub struct Revision<T> {
    pub memory: Option<FeedbackMemory>,
    pub outcome: Result<T, ReviseError>,
}

/// What a plan decided: a value and the change that makes it true, or a refusal.
type Planned<T> = Result<(T, StoreChange), ReviseError>;

/// Reads the store, plans a change on what it holds, and commits the change, in one
/// [`MemoryStore::transact`] step, so no other tab's write can fall between the read
/// the plan saw and the write it makes. A plan that is refused, or a commit that
/// fails, leaves the store as it was.
pub async fn revise<T>(
    store: &impl MemoryStore,
    plan: impl FnOnce(&FeedbackMemory) -> Planned<T>,
) -> Revision<T> {
    let mut planned: Option<(FeedbackMemory, Planned<T>)> = None;
    let committed = store
        .transact(|records| {
            let memory = FeedbackMemory::from_records(records);
            let outcome = plan(&memory);
            let change = match &outcome {
                Ok((_, change)) => change.clone(),
                Err(_) => StoreChange::default(),
            };
            planned = Some((memory, outcome));
            change
        })
        .await;
    let Some((mut memory, outcome)) = planned else {
        // The store could not even be read: nothing was planned, nothing written.
        let error = committed
            .err()
            .unwrap_or_else(|| StoreError::Failed("the store neither read nor refused".into()));
        return Revision {
            memory: None,
            outcome: Err(error.into()),
        };
    };
    let (value, change) = match outcome {
        Ok(planned) => planned,
        Err(e) => {
            return Revision {
                memory: Some(memory),
                outcome: Err(e),
            };
        }
    };
    if let Err(e) = committed {
        return Revision {
            memory: Some(memory),
            outcome: Err(e.into()),
        };
    }
    memory.erase(&change.erase);
    memory.apply_records(&change.put);
    Revision {
        memory: Some(memory),
        outcome: Ok(value),
    }
}

/// How a change to a few records ([`revise_records`]) ended: those records as the
/// store held them when the change was planned, and what it committed. Unlike a
/// [`Revision`] it carries no whole memory, since it never read one; the session
/// takes it on with [`RecordsRevision::adopted_by`].
pub struct RecordsRevision<T> {
    /// The records the change was about.
    pub named: Vec<RecordId>,
    /// Those of them the store held, as it held them inside the transaction before
    /// the change; `None` when the store could not even be read.
    pub read: Option<Vec<MemoryRecord>>,
    /// What the store committed: empty unless the change went through.
    pub committed: StoreChange,
    pub outcome: Result<T, ReviseError>,
}

/// What the session's snapshot becomes after a [`RecordsRevision`].
#[derive(Debug, PartialEq)]
pub enum Adoption {
    /// Nothing was written and the snapshot already holds what was read.
    Unchanged,
    /// The snapshot with the committed records: what a reload would read.
    Updated(FeedbackMemory),
    /// Another tab had changed one of the records since the snapshot was read, so the
    /// snapshot with these records alone may not be what the store holds: read it all
    /// again (the other tab's broadcast asks for that too).
    ReadAgain,
}

impl<T> RecordsRevision<T> {
    /// What `snapshot` (the session's memory now) becomes after this revision. The
    /// committed records are taken on only when the records read were the
    /// snapshot's own, so the result is exactly what a reload would read, without one.
    pub fn adopted_by(&self, snapshot: &FeedbackMemory) -> Adoption {
        let Some(read) = &self.read else {
            return Adoption::Unchanged;
        };
        let as_read = |id: &RecordId| read.iter().find(|r| &r.id == id);
        let snapshot_holds_the_read = self.named.iter().all(|id| snapshot.get(id) == as_read(id));
        if !snapshot_holds_the_read {
            return Adoption::ReadAgain;
        }
        if self.committed.is_empty() {
            return Adoption::Unchanged;
        }
        let mut memory = snapshot.clone();
        memory.erase(&self.committed.erase);
        memory.apply_records(&self.committed.put);
        Adoption::Updated(memory)
    }
}

/// [`revise`] for a change to the records `ids` alone (a usage count, stored
/// embeddings): the plan sees a memory of just those records, as the store holds them
/// inside the transaction ([`MemoryStore::transact_records`]), so it never writes back
/// a stale copy, and nothing else is read.
pub async fn revise_records<T>(
    store: &impl MemoryStore,
    ids: &[RecordId],
    plan: impl FnOnce(&FeedbackMemory) -> Planned<T>,
) -> RecordsRevision<T> {
    // Each record is read once, however often it is named.
    let mut named: Vec<RecordId> = Vec::with_capacity(ids.len());
    for id in ids {
        if !named.contains(id) {
            named.push(id.clone());
        }
    }
    let mut planned: Option<(Vec<MemoryRecord>, Planned<T>)> = None;
    let committed = store
        .transact_records(&named, |records| {
            let memory = FeedbackMemory::from_records(records);
            let outcome = plan(&memory);
            let change = match &outcome {
                Ok((_, change)) => change.clone(),
                Err(_) => StoreChange::default(),
            };
            planned = Some((memory.to_records(), outcome));
            change
        })
        .await;
    let Some((read, outcome)) = planned else {
        let error = committed
            .err()
            .unwrap_or_else(|| StoreError::Failed("the store neither read nor refused".into()));
        return RecordsRevision {
            named,
            read: None,
            committed: StoreChange::default(),
            outcome: Err(error.into()),
        };
    };
    let (outcome, committed) = match (outcome, committed) {
        (Err(e), _) => (Err(e), StoreChange::default()),
        (Ok(_), Err(e)) => (Err(e.into()), StoreChange::default()),
        (Ok((value, change)), Ok(())) => (Ok(value), change),
    };
    RecordsRevision {
        named,
        read: Some(read),
        committed,
        outcome,
    }
}

/// Edits a current lesson's text (`expected`: the version the user was shown).
pub async fn edit(
    store: &impl MemoryStore,
    id: &RecordId,
    expected: u32,
    clarification: &str,
    new_id: RecordId,
    now: Timestamp,
) -> Revision<PlannedWrite> {
    revise(store, |memory| {
        let written = memory.plan_edit(id, expected, clarification, new_id, now)?;
        let change = StoreChange::put(written.records());
        Ok((written, change))
    })
    .await
}

/// Changes where a current clarification applies, from one question: "not relevant
/// here", taking such a mark back, or a suggestion accepted (`expected`: the version the
/// user was shown).
pub async fn change_scope(
    store: &impl MemoryStore,
    id: &RecordId,
    expected: u32,
    question: &str,
    change: ScopeChange,
    new_id: RecordId,
    now: Timestamp,
) -> Revision<PlannedWrite> {
    revise(store, |memory| {
        let written = memory.plan_scope_change(id, expected, question, change, new_id, now)?;
        let change = StoreChange::put(written.records());
        Ok((written, change))
    })
    .await
}

/// Sets where a current clarification applies, as the user chose it in the memory
/// browser: its patterns, or every question (`expected`: the version the user was shown).
pub async fn change_reach(
    store: &impl MemoryStore,
    id: &RecordId,
    expected: u32,
    reach: Reach,
    new_id: RecordId,
    now: Timestamp,
) -> Revision<PlannedWrite> {
    revise(store, |memory| {
        let written = memory.plan_reach_change(id, expected, reach, new_id, now)?;
        let change = StoreChange::put(written.records());
        Ok((written, change))
    })
    .await
}

/// Withdraws a current lesson, keeping it in history.
pub async fn withdraw(
    store: &impl MemoryStore,
    id: &RecordId,
    expected: u32,
    now: Timestamp,
) -> Revision<MemoryRecord> {
    revise(store, |memory| {
        let withdrawn = memory.plan_withdraw(id, expected, now)?;
        let change = StoreChange::put(vec![withdrawn.clone()]);
        Ok((withdrawn, change))
    })
    .await
}

/// Undoes a current lesson with the outcome the user chose beforehand.
pub async fn undo(
    store: &impl MemoryStore,
    id: &RecordId,
    expected: u32,
    outcome: UndoOutcome,
    now: Timestamp,
) -> Revision<Undone> {
    revise(store, |memory| {
        let undone = memory.plan_undo(id, expected, outcome, now)?;
        let change = StoreChange::put(undone.records());
        Ok((undone, change))
    })
    .await
}

/// Erases every record of a key, history included; returns the erased ids.
pub async fn forget(store: &impl MemoryStore, key: &MemoryKey) -> Revision<Vec<RecordId>> {
    revise(store, |memory| {
        let ids = memory.plan_forget(key);
        let change = StoreChange {
            put: Vec::new(),
            erase: ids.clone(),
        };
        Ok((ids, change))
    })
    .await
}

/// Counts one application of each lesson in `ids` that was attached to a sent
/// question, in one transaction over those records alone. Returns the updated records;
/// a lesson no longer current (another tab replaced it) is not counted.
pub async fn count_applied(
    store: &impl MemoryStore,
    ids: &[RecordId],
) -> RecordsRevision<Vec<MemoryRecord>> {
    revise_records(store, ids, |memory| {
        let counted: Vec<MemoryRecord> = ids
            .iter()
            .filter_map(|id| memory.plan_applied(id))
            .collect();
        let change = StoreChange::put(counted.clone());
        Ok((counted, change))
    })
    .await
}
