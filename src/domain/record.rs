//! The shape of one stored memory and its provenance.
//!
//! Records are values: the memory rules in [`crate::domain::memory`] produce new
//! records instead of editing stored ones, so history is never lost by accident.

use serde::{Deserialize, Serialize};

use crate::domain::memory_key::MemoryKey;

/// A stable, opaque record id, generated outside the domain and passed in.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RecordId(pub String);

/// Milliseconds since the Unix epoch, read from a clock outside the domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(pub i64);

/// What kind of lesson a record holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RecordKind {
    /// The user's words about what a misread request means.
    Clarification,
    /// A reply the user confirmed as right, kept as a demonstration.
    VerifiedExample {
        understanding: String,
        answer: String,
    },
}

/// How long a lesson holds. One-time instructions are never stored, so only durable
/// scopes exist here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Always,
}

/// Who authored the lesson: the user, or the model with the user's explicit consent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    UserStated,
    UserConfirmedProposal,
}

/// Where a record stands in the history of its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordState {
    Current,
    Superseded,
    Withdrawn,
}

/// How a record has fared since it was stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordStats {
    pub times_applied: u32,
    pub times_failed_after_applied: u32,
}

/// One stored lesson with its provenance and its place in its key's history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryRecord {
    pub id: RecordId,
    pub key: MemoryKey,
    pub question: String,
    pub clarification: String,
    #[serde(flatten)]
    pub kind: RecordKind,
    pub scope: Scope,
    pub source: Source,
    pub created_at: Timestamp,
    /// Counts the writes to this key; a write must name the version it read.
    pub version: u32,
    pub supersedes: Option<RecordId>,
    pub superseded_by: Option<RecordId>,
    pub state: RecordState,
    #[serde(default)]
    pub stats: RecordStats,
    /// The question's embedding under a named model; recomputed when the model changes.
    #[serde(default)]
    pub embedding: Option<StoredEmbedding>,
}

/// An embedding cached with the record, tagged with the model that produced it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredEmbedding {
    pub model: String,
    pub vector: Vec<f32>,
}

impl MemoryRecord {
    pub fn is_current(&self) -> bool {
        self.state == RecordState::Current
    }
}
