//! The memory export: one versioned JSON document holding every record with its
//! history and provenance, so a memory can move between browsers or be backed up.
//!
//! The document is built from records only. Settings, and with them the API key, are
//! not an input here, so no export can carry them. Embeddings are optional: they are
//! large (packed, about 2 kB a lesson; see [`crate::packed_vector`]), and recomputable
//! from the question by whichever model the importer uses. An importer running the
//! model they are tagged with uses them as they are.

use serde::Serialize;

use crate::packed_vector::pack_vector;
use crate::record::{MemoryRecord, Timestamp};
use crate::stored_record::StoredRecord;

/// The `format` field every export carries, so other JSON files are told apart.
pub const EXPORT_FORMAT: &str = "remind-memory";
/// The document version this build writes, and the newest it can read. Version 2
/// packs an embedding's vector as base64; version 1 wrote it as an array of numbers,
/// which is still read.
pub const EXPORT_VERSION: u32 = 2;

/// An export document, as written (see [`crate::import::parse_import`] for reading).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExportDocument {
    pub format: String,
    pub version: u32,
    pub exported_at: Timestamp,
    /// The Remind version that wrote the file, for support questions; never checked.
    pub app_version: String,
    pub records: Vec<ExportedRecord>,
}

/// One record of an export: its stored form, so a file outlives changes to the
/// domain's records, with its embedding packed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExportedRecord {
    /// Every field but the embedding (its own `embedding` is always `None` here).
    #[serde(flatten)]
    pub record: StoredRecord,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding: Option<PackedEmbedding>,
}

/// An embedding as an export carries it: the model's name and the packed vector.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PackedEmbedding {
    pub model: String,
    pub vector: String,
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
pub fn export<'r>(
    records: impl IntoIterator<Item = &'r MemoryRecord>,
    exported_at: Timestamp,
    app_version: &str,
    embeddings: Embeddings,
) -> ExportDocument {
    let mut records: Vec<&MemoryRecord> = records.into_iter().collect();
    records.sort_by(|a, b| {
        (a.key.as_str(), a.version, &a.id).cmp(&(b.key.as_str(), b.version, &b.id))
    });
    ExportDocument {
        format: EXPORT_FORMAT.to_string(),
        version: EXPORT_VERSION,
        exported_at,
        app_version: app_version.to_string(),
        records: records
            .into_iter()
            .map(|record| ExportedRecord {
                record: StoredRecord {
                    embedding: None,
                    ..StoredRecord::from(record)
                },
                // A record's embedding is always finite and of unit length (its type
                // holds nothing else), so what is written here imports again unchanged.
                embedding: record
                    .embedding
                    .as_ref()
                    .filter(|_| embeddings == Embeddings::Include)
                    .map(|e| PackedEmbedding {
                        model: e.model().to_string(),
                        vector: pack_vector(e.vector()),
                    }),
            })
            .collect(),
    }
}

impl ExportDocument {
    /// The document as indented JSON, the bytes of the downloaded file.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }
}
