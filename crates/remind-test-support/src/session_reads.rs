//! Reads of a session's memory that only the suites need, over its one public path:
//! the snapshot [`Session::memory`] returns, as the page reads it.
//!
//! [`Session::memory`]: remind_app::session::Session::memory
//!
//! The page derives these from its memory signal; keeping them out of `Session` keeps
//! its API to what the page does, and the suites say what they check in one call.

use std::future::Future;

use crate::scripted::SessionWith;
use remind_app::ports::EmbeddingService;
use remind_app::revise::ReviseError;
use remind_app::transfer::{PendingImport, TransferError};
use remind_core::import_plan::{ImportMode, ImportPlan};
use remind_core::memory_key::MemoryKey;
use remind_core::memory_query::{self, MemoryFilter};
use remind_core::record::{MemoryRecord, RecordId, RecordKind};
use remind_core::withdrawal::UndoOutcome;

/// What a suite asks of a session's memory, and imports without a paced pause.
pub trait SessionReads {
    /// How many lessons are current.
    fn current_count(&self) -> usize;
    /// The current lessons, oldest first.
    fn current_records(&self) -> Vec<MemoryRecord>;
    /// The memory browser's list: records matching `filter`, most recently changed first.
    fn list(&self, filter: &MemoryFilter) -> Vec<MemoryRecord>;
    /// Current lessons that misfire often enough to be shown for review.
    fn flagged_count(&self) -> usize;
    /// Every record of a key, current and historical, oldest first.
    fn history(&self, key: &MemoryKey) -> Vec<MemoryRecord>;
    fn record(&self, id: &RecordId) -> Option<MemoryRecord>;
    /// The undo choices offered for a current lesson (empty if it is not current).
    fn undo_choices(&self, id: &RecordId) -> Vec<UndoOutcome>;
    /// The current verified examples, oldest first.
    fn verified_examples(&self) -> Vec<MemoryRecord>;
    /// `Session::preview_import_paced` with no pause between slices.
    fn preview_import<'a>(
        &'a self,
        bytes: &'a [u8],
    ) -> impl Future<Output = Result<PendingImport, TransferError>> + 'a;
    /// `Session::apply_import_paced` with no pause between steps.
    fn apply_import<'a>(
        &'a self,
        pending: &'a PendingImport,
        mode: ImportMode,
    ) -> impl Future<Output = Result<ImportPlan, ReviseError>> + 'a;
}

/// For the suites' sessions (see [`crate::scripted`]), whatever they match questions with.
impl<E: EmbeddingService> SessionReads for SessionWith<E> {
    fn current_count(&self) -> usize {
        self.memory().current().count()
    }

    fn current_records(&self) -> Vec<MemoryRecord> {
        self.memory().current().cloned().collect()
    }

    fn list(&self, filter: &MemoryFilter) -> Vec<MemoryRecord> {
        memory_query::list(&self.memory(), filter)
            .into_iter()
            .cloned()
            .collect()
    }

    fn flagged_count(&self) -> usize {
        memory_query::flagged_count(&self.memory())
    }

    fn history(&self, key: &MemoryKey) -> Vec<MemoryRecord> {
        self.memory().history(key).into_iter().cloned().collect()
    }

    fn record(&self, id: &RecordId) -> Option<MemoryRecord> {
        self.memory().get(id).cloned()
    }

    fn undo_choices(&self, id: &RecordId) -> Vec<UndoOutcome> {
        self.memory().undo_choices(id)
    }

    fn verified_examples(&self) -> Vec<MemoryRecord> {
        self.memory()
            .current()
            .filter(|r| matches!(r.kind, RecordKind::VerifiedExample { .. }))
            .cloned()
            .collect()
    }

    fn preview_import<'a>(
        &'a self,
        bytes: &'a [u8],
    ) -> impl Future<Output = Result<PendingImport, TransferError>> + 'a {
        self.preview_import_paced(bytes, |_| std::future::ready(()))
    }

    fn apply_import<'a>(
        &'a self,
        pending: &'a PendingImport,
        mode: ImportMode,
    ) -> impl Future<Output = Result<ImportPlan, ReviseError>> + 'a {
        self.apply_import_paced(pending, mode, || std::future::ready(()))
    }
}
