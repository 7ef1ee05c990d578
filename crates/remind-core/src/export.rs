//! The memory export: one versioned JSON document holding every record with its
//! history and provenance, so a memory can move between browsers or be backed up.
//!
//! The document is built from records only. Settings, and with them the API key, are
//! not an input here, so no export can carry them. Embeddings are optional: they are
//! large, and recomputable from the question by whichever model the importer uses.

use serde::{Deserialize, Serialize};

use crate::record::{MemoryRecord, Timestamp};
use crate::stored_record::StoredRecord;

/// The `format` field every export carries, so other JSON files are told apart.
pub const EXPORT_FORMAT: &str = "remind-memory";
/// The document version this build writes, and the newest it can read.
pub const EXPORT_VERSION: u32 = 1;

/// An export document, as written and as accepted by the importer after validation
/// (see [`crate::import::parse_import`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExportDocument {
    pub format: String,
    pub version: u32,
    pub exported_at: Timestamp,
    /// The Remind version that wrote the file, for support questions; never checked.
    pub app_version: String,
    /// In their stored form, so a file outlives changes to the domain's records.
    pub records: Vec<StoredRecord>,
}

/// Whether an export carries the cached question embeddings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Embeddings {
    Include,
    Omit,
}

/// Builds the export of `records` (all of them: current, superseded and withdrawn).
/// Records are ordered by key, then version, then id, so the same memory always
/// exports to the same bytes.
pub fn export(
    records: &[MemoryRecord],
    exported_at: Timestamp,
    app_version: &str,
    embeddings: Embeddings,
) -> ExportDocument {
    let mut records: Vec<MemoryRecord> = records
        .iter()
        .map(|record| MemoryRecord {
            // A record's embedding is always finite and of unit length (its type
            // holds nothing else), so what is written here imports again unchanged.
            embedding: record
                .embedding
                .clone()
                .filter(|_| embeddings == Embeddings::Include),
            ..record.clone()
        })
        .collect();
    records.sort_by(|a, b| {
        (a.key.as_str(), a.version, &a.id).cmp(&(b.key.as_str(), b.version, &b.id))
    });
    ExportDocument {
        format: EXPORT_FORMAT.to_string(),
        version: EXPORT_VERSION,
        exported_at,
        app_version: app_version.to_string(),
        records: records.iter().map(StoredRecord::from).collect(),
    }
}

impl ExportDocument {
    /// The document as indented JSON, the bytes of the downloaded file.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }
}
