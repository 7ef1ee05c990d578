//! Export and import use-cases: the file is written from, and applied to, what the
//! store holds, never the page's possibly older view.
//!
//! An import is two steps the user sees: a preview of what the file would change,
//! then the chosen mode applied in one store call. If the memory changed between
//! the two (another tab), the import is refused rather than applied to a memory the
//! user did not preview. The plan is made, and checked for the history it would
//! leave, on a fresh read of the store; the store's write step writes it only if the
//! records are still those it was made on, so it is as if planned inside that step.
//!
//! A file may hold thousands of records. Checking them is a slice at a time, and
//! planning a step at a time, with a pause between them that the caller supplies: the
//! page yields to the browser there (and shows how far the check has come), so a
//! large file never freezes it.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use thiserror::Error;

use crate::ports::{MemoryStore, StoreError};
use crate::revise::{ReviseError, Revision, StoreChange, revise};
use remind_core::export::{Embeddings, export};
use remind_core::import::{CheckProgress, ImportCheck, ImportRejection, ImportedFile};
use remind_core::import_plan::{
    ImportMode, ImportPlan, ImportPreview, check_plan, plan_unchecked_from_preview, preview,
};
use remind_core::memory::FeedbackMemory;
use remind_core::record::{MemoryRecord, Timestamp};

/// The version written into every export's `app_version`.
pub const APP_VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Debug, Error, Clone, PartialEq)]
pub enum TransferError {
    #[error(transparent)]
    Rejected(#[from] ImportRejection),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the export could not be written ({0}); nothing was downloaded")]
    Encode(String),
}

/// A validated file and what it would change, waiting for the user's choice.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingImport {
    pub document: ImportedFile,
    pub preview: ImportPreview,
    /// The stored records the preview was made on: while the store holds the same but
    /// for their bookkeeping, applying the import needs no second preview.
    previewed_on: Vec<Arc<MemoryRecord>>,
}

/// The embeddings a file carries, by the model that made them: a browser running that
/// model uses them as they are, any other computes its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileEmbeddings {
    /// The file's records.
    pub records: usize,
    /// How many records carry an embedding of each model, by model name.
    pub by_model: BTreeMap<String, usize>,
}

impl FileEmbeddings {
    pub fn of(file: &ImportedFile) -> Self {
        let mut by_model = BTreeMap::new();
        for embedding in file.records.iter().filter_map(|r| r.embedding.as_ref()) {
            *by_model.entry(embedding.model().to_string()).or_default() += 1;
        }
        FileEmbeddings {
            records: file.records.len(),
            by_model,
        }
    }

    /// How many records carry an embedding at all.
    pub fn carried(&self) -> usize {
        self.by_model.values().sum()
    }

    /// How many carry one of `model`, which an importer running it uses as it is.
    pub fn of_model(&self, model: &str) -> usize {
        self.by_model.get(model).copied().unwrap_or(0)
    }
}

/// The JSON text of the whole stored memory, history included.
pub async fn export_json(
    store: &impl MemoryStore,
    now: Timestamp,
    embeddings: Embeddings,
) -> Result<String, TransferError> {
    let records = store.load().await?;
    export(&records, now, APP_VERSION, embeddings)
        .to_json()
        .map_err(|e| TransferError::Encode(e.to_string()))
}

/// Records checked between two pauses of [`preview_import`]: a slice takes 10–20 ms
/// in a browser's wasm on a 2-core machine, under the 50 ms a person notices; each
/// pause costs the browser a redraw of the progress, so slices are not made smaller.
pub const RECORDS_PER_SLICE: usize = 500;

/// Validates a file and previews it against the stored memory. Nothing is written.
/// The records are checked [`RECORDS_PER_SLICE`] at a time, and `pause` is awaited
/// after each slice with how far the check has come.
pub async fn preview_import<Paused: Future<Output = ()>>(
    store: &impl MemoryStore,
    bytes: &[u8],
    mut pause: impl FnMut(CheckProgress) -> Paused,
) -> Result<PendingImport, TransferError> {
    let mut check = ImportCheck::start(bytes)?;
    loop {
        let progress = check.check_next(RECORDS_PER_SLICE);
        pause(progress).await;
        if progress.checked >= progress.total {
            break;
        }
    }
    let document = check.finish()?;
    let existing = FeedbackMemory::from_records(store.load().await?);
    let preview = preview(&existing, &document);
    Ok(PendingImport {
        document,
        preview,
        previewed_on: existing.records().to_vec(),
    })
}

/// Applies a previewed import with the chosen mode, in one store call. Refused, with
/// nothing written, if the memory changed since the preview, or if the plan would
/// leave an inconsistent history ([`ReviseError::ImportRefused`]).
///
/// The plan for thousands of records takes a while to make, and a store's write
/// step (an IndexedDB transaction) cannot wait for the caller's `pause`. So the plan
/// is made first, on a read of the store, awaiting `pause` after each step; the
/// write step then only confirms that the store still holds the records the plan was
/// made on (usage counters aside) and writes it, or refuses as if planned there.
pub async fn apply_import<Paused: Future<Output = ()>>(
    store: &impl MemoryStore,
    pending: &PendingImport,
    mode: ImportMode,
    mut pause: impl FnMut() -> Paused,
) -> Revision<ImportPlan> {
    let refused = |memory, error| Revision {
        memory: Some(memory),
        outcome: Err(error),
    };
    let existing = match store.load().await {
        Ok(records) => FeedbackMemory::from_records(records),
        Err(e) => {
            return Revision {
                memory: None,
                outcome: Err(e.into()),
            };
        }
    };
    let planned_on = existing.records().to_vec();
    pause().await;
    // Another tab may have changed the memory since the preview. If it changed only
    // what the preview does not show, the import goes on, on a preview made again.
    let seen_again;
    let seen = if same_but_bookkeeping(&planned_on, &pending.previewed_on) {
        &pending.preview
    } else {
        seen_again = preview(&existing, &pending.document);
        if !same_records(&seen_again, &pending.preview) {
            return refused(existing, ReviseError::ChangedSincePreview);
        }
        pause().await;
        &seen_again
    };
    let plan = plan_unchecked_from_preview(&existing, &pending.document, seen, mode);
    pause().await;
    if let Err(e) = check_plan(&existing, &plan) {
        return refused(existing, e.into());
    }
    let change = StoreChange {
        put: plan.put.clone(),
        erase: plan.erase.clone(),
    };
    drop(existing);
    pause().await;
    let revision = revise(store, move |memory| {
        if !same_but_bookkeeping(memory.records(), &planned_on) {
            return Err(ReviseError::ChangedSincePreview);
        }
        Ok((plan, change))
    })
    .await;
    // The caller takes on the new memory next (a page redraws from it): not in the
    // same breath as the commit and the bookkeeping after it.
    pause().await;
    revision
}

/// Whether two memories hold the same records as an import plan depends on them:
/// all but their usage counters and embeddings, which another tab may update meanwhile
/// without changing what the plan writes (a plan never writes a record of this memory
/// back).
fn same_but_bookkeeping(records: &[Arc<MemoryRecord>], others: &[Arc<MemoryRecord>]) -> bool {
    records.len() == others.len()
        && records
            .iter()
            .zip(others)
            .all(|(record, other)| Arc::ptr_eq(record, other) || record.same_but_bookkeeping(other))
}

/// Whether two previews show the same records: ids, versions and states of every key,
/// and what only this memory holds. Usage counters (a question asked meanwhile) do not
/// change what the user decided on; anything else refuses the import.
fn same_records(now: &ImportPreview, seen: &ImportPreview) -> bool {
    let identity = |preview: &ImportPreview| {
        let keys: Vec<_> = preview
            .keys
            .iter()
            .map(|k| {
                let existing = k
                    .existing
                    .as_ref()
                    .map(|r| (r.id.clone(), r.version, r.state));
                (k.key.clone(), k.status, existing)
            })
            .collect();
        (keys, preview.only_here.clone())
    };
    identity(now) == identity(seen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use remind_core::memory::Lesson;
    use remind_core::record::{RecordId, StoredEmbedding};

    fn record(id: &str, model: Option<&str>) -> MemoryRecord {
        let mut memory = FeedbackMemory::default();
        let question = format!("What is like < {id} > in {id}?");
        let mut record = memory
            .plan_write(
                Lesson::user_clarification(&question, "a synonym"),
                RecordId(id.into()),
                Timestamp(1),
            )
            .current;
        record.embedding = model.map(|m| StoredEmbedding::new(m, vec![0.6, 0.8]).unwrap());
        memory.upsert(record.clone());
        record
    }

    #[test]
    fn a_files_embeddings_are_counted_by_the_model_that_made_them() {
        let file = ImportedFile {
            version: 2,
            exported_at: Timestamp(2),
            app_version: "t".into(),
            records: vec![
                record("a", Some("minilm")),
                record("b", Some("minilm")),
                record("c", Some("other")),
                record("d", None),
            ],
        };
        let embeddings = FileEmbeddings::of(&file);
        assert_eq!(embeddings.records, 4);
        assert_eq!(embeddings.carried(), 3);
        assert_eq!(embeddings.of_model("minilm"), 2);
        assert_eq!(embeddings.of_model("other"), 1);
        assert_eq!(embeddings.of_model("absent"), 0);
    }
}
