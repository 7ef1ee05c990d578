//! Export and import use-cases: the file is written from, and applied to, what the
//! store holds, never the page's possibly older view.
//!
//! An import is two steps the user sees: a preview of what the file would change,
//! then the chosen mode applied in one store call. If the memory changed between
//! the two (another tab), the import is refused rather than applied to a memory the
//! user did not preview. The plan is made, and checked for the history it would
//! leave, inside the store's write step, on the records as they are at that moment.

use thiserror::Error;

use crate::ports::{MemoryStore, StoreError};
use crate::revise::{ReviseError, Revision, StoreChange, revise};
use remind_core::export::{Embeddings, export};
use remind_core::import::{ImportRejection, ImportedFile, parse_import};
use remind_core::import_plan::{ImportMode, ImportPlan, ImportPreview, plan_import, preview};
use remind_core::memory::FeedbackMemory;
use remind_core::record::Timestamp;

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

/// Validates a file and previews it against the stored memory. Nothing is written.
pub async fn preview_import(
    store: &impl MemoryStore,
    bytes: &[u8],
) -> Result<PendingImport, TransferError> {
    let document = parse_import(bytes)?;
    let existing = FeedbackMemory::from_records(store.load().await?);
    let preview = preview(&existing, &document);
    Ok(PendingImport { document, preview })
}

/// Applies a previewed import with the chosen mode, in one store call. Refused, with
/// nothing written, if the memory changed since the preview, or if the plan would
/// leave an inconsistent history ([`ReviseError::ImportRefused`]).
pub async fn apply_import(
    store: &impl MemoryStore,
    pending: &PendingImport,
    mode: ImportMode,
) -> Revision<ImportPlan> {
    revise(store, |memory| {
        if !same_records(&preview(memory, &pending.document), &pending.preview) {
            return Err(ReviseError::ChangedSincePreview);
        }
        let plan = plan_import(memory, &pending.document, mode)?;
        let change = StoreChange {
            put: plan.put.clone(),
            erase: plan.erase.clone(),
        };
        Ok((plan, change))
    })
    .await
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
