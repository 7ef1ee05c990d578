//! A record as IndexedDB rows and export files hold it, apart from the domain's
//! [`MemoryRecord`], so the domain can change shape without breaking a database or a
//! file written by an earlier Remind.
//!
//! The serde names here are the wire names, written once: the importer validates enum
//! fields by deserialising them as these types, so it accepts exactly what they name.
//! The records store's binary blocks (`record_blocks/binary_block.rs`) hold each enum by
//! its variant's position instead: a variant is only ever added last.

use serde::{Deserialize, Deserializer, Serialize};

use crate::memory_key::MemoryKey;
use crate::record::{
    Actor, ChangeNote, ChangeReason, MemoryRecord, Reach, RecordId, RecordKind, RecordState,
    RecordStats, Source, StoredEmbedding, Timestamp,
};
use crate::request_pattern::RequestPattern;

/// The record layout this build writes: the fields of the first export format and of
/// IndexedDB schemas 2 and 3 (where only the embedding's vector is held as binary). A
/// change to it is a new version with a migration, never an edit.
pub const STORED_RECORD_LAYOUT: u32 = 1;

/// One record on disk or in a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "FlatStoredRecord")]
pub struct StoredRecord {
    pub id: String,
    pub key: String,
    pub question: String,
    /// A clarification's text; empty for a verified example (whose text is its
    /// understanding and answer).
    pub clarification: String,
    #[serde(flatten)]
    pub kind: StoredKind,
    pub scope: StoredScope,
    /// The questions the user marked "not relevant here" for a clarification. Absent
    /// (none) on records stored before exceptions existed, and when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_for: Vec<String>,
    /// A clarification's patterns (`RequestPattern`'s text form, `how far is ___ from
    /// ___`) under the scope `always`. Absent on records stored before scopes existed,
    /// which are matched by retrieval alone, and when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub applies_to: Vec<String>,
    pub source: StoredSource,
    pub created_at: i64,
    pub version: u32,
    pub supersedes: Option<String>,
    pub superseded_by: Option<String>,
    pub state: StoredState,
    pub stats: StoredStats,
    /// Absent on records stored before change notes existed.
    pub change: Option<StoredChange>,
    /// Left out when there is none (an export then carries its own packed form, see
    /// [`crate::export::ExportedRecord`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding: Option<StoredVector>,
}

/// A [`StoredRecord`] as it is read: every field at one level, the kind's own fields
/// beside the `kind` tag, as the record is written. Read so rather than through
/// `#[serde(flatten)]`, which has serde buffer every field of every record before
/// reading it: a reload decodes 10 000 of them.
#[derive(Deserialize)]
struct FlatStoredRecord {
    id: String,
    key: String,
    question: String,
    clarification: String,
    kind: StoredKindName,
    /// A verified example's; a clarification has none (and one there is ignored).
    understanding: Option<String>,
    answer: Option<String>,
    scope: StoredScope,
    #[serde(default)]
    not_for: Vec<String>,
    #[serde(default)]
    applies_to: Vec<String>,
    source: StoredSource,
    created_at: i64,
    version: u32,
    supersedes: Option<String>,
    superseded_by: Option<String>,
    state: StoredState,
    #[serde(default)]
    stats: StoredStats,
    #[serde(default)]
    change: Option<StoredChange>,
    /// Read as absent when a value of the vector is `null`: JSON (and so IndexedDB,
    /// through `JSON.parse`) turns an infinity into `null`, and an embedding is
    /// recomputable, so the lesson must not become unreadable for its sake.
    #[serde(default, deserialize_with = "vector_unless_nulls")]
    embedding: Option<StoredVector>,
}

impl TryFrom<FlatStoredRecord> for StoredRecord {
    type Error = String;

    fn try_from(flat: FlatStoredRecord) -> Result<Self, String> {
        let kind = match flat.kind {
            StoredKindName::Clarification => StoredKind::Clarification,
            StoredKindName::VerifiedExample => StoredKind::VerifiedExample {
                understanding: flat.understanding.ok_or("missing field `understanding`")?,
                answer: flat.answer.ok_or("missing field `answer`")?,
            },
        };
        Ok(StoredRecord {
            id: flat.id,
            key: flat.key,
            question: flat.question,
            clarification: flat.clarification,
            kind,
            scope: flat.scope,
            not_for: flat.not_for,
            applies_to: flat.applies_to,
            source: flat.source,
            created_at: flat.created_at,
            version: flat.version,
            supersedes: flat.supersedes,
            superseded_by: flat.superseded_by,
            state: flat.state,
            stats: flat.stats,
            change: flat.change,
            embedding: flat.embedding,
        })
    }
}

/// An optional [`StoredVector`], `None` when its vector holds a `null`. Any other
/// damage (a missing model, a string among the values) is still an error: that is not
/// a record this Remind wrote.
fn vector_unless_nulls<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<StoredVector>, D::Error> {
    #[derive(Deserialize)]
    struct WithNulls {
        model: String,
        vector: Vec<Option<f32>>,
    }
    let Some(stored) = Option::<WithNulls>::deserialize(deserializer)? else {
        return Ok(None);
    };
    let vector: Option<Vec<f32>> = stored.vector.into_iter().collect();
    Ok(vector.map(|vector| StoredVector {
        model: stored.model,
        vector,
    }))
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StoredKind {
    Clarification,
    VerifiedExample {
        understanding: String,
        answer: String,
    },
}

/// The `kind` tag alone, as the importer checks it before reading the rest; its names
/// are [`StoredKind`]'s (a test holds them together).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoredKindName {
    Clarification,
    VerifiedExample,
}

/// Which questions a stored lesson goes with. Every stored lesson holds until changed
/// (one-time instructions are never stored), hence the first format's only name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoredScope {
    /// Questions like the lesson's own; every verified example.
    Always,
    /// Every question: a standing preference.
    EveryQuestion,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoredSource {
    UserStated,
    UserConfirmedProposal,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoredState {
    Current,
    Superseded,
    Withdrawn,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredStats {
    pub times_applied: u32,
    pub times_failed_after_applied: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredChange {
    pub at: i64,
    pub by: StoredActor,
    pub reason: StoredChangeReason,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoredActor {
    User,
    Import,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoredChangeReason {
    Corrected,
    CorrectedAfterApplied,
    Edited,
    ExceptionsChanged,
    Withdrawn,
    Undone,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredVector {
    pub model: String,
    pub vector: Vec<f32>,
}

impl From<&MemoryRecord> for StoredRecord {
    fn from(record: &MemoryRecord) -> Self {
        StoredRecord {
            id: record.id.0.clone(),
            key: record.key.as_str().to_string(),
            question: record.question.clone(),
            clarification: record.clarification().unwrap_or_default().to_string(),
            kind: match &record.kind {
                RecordKind::Clarification { .. } => StoredKind::Clarification,
                RecordKind::VerifiedExample {
                    understanding,
                    answer,
                } => StoredKind::VerifiedExample {
                    understanding: understanding.clone(),
                    answer: answer.clone(),
                },
            },
            scope: match record.kind.reach() {
                Some(Reach::EveryQuestion) => StoredScope::EveryQuestion,
                Some(Reach::QuestionsLike(_)) | None => StoredScope::Always,
            },
            applies_to: record
                .kind
                .patterns()
                .iter()
                .map(ToString::to_string)
                .collect(),
            not_for: record.kind.not_for().to_vec(),
            source: match record.source {
                Source::UserStated => StoredSource::UserStated,
                Source::UserConfirmedProposal => StoredSource::UserConfirmedProposal,
            },
            created_at: record.created_at.0,
            version: record.version,
            supersedes: record.supersedes.as_ref().map(|id| id.0.clone()),
            superseded_by: record.superseded_by.as_ref().map(|id| id.0.clone()),
            state: match record.state {
                RecordState::Current => StoredState::Current,
                RecordState::Superseded => StoredState::Superseded,
                RecordState::Withdrawn => StoredState::Withdrawn,
            },
            stats: StoredStats {
                times_applied: record.stats.times_applied,
                times_failed_after_applied: record.stats.times_failed_after_applied,
            },
            change: record.change.map(|note| StoredChange {
                at: note.at.0,
                by: match note.by {
                    Actor::User => StoredActor::User,
                    Actor::Import => StoredActor::Import,
                },
                reason: match note.reason {
                    ChangeReason::Corrected => StoredChangeReason::Corrected,
                    ChangeReason::CorrectedAfterApplied => {
                        StoredChangeReason::CorrectedAfterApplied
                    }
                    ChangeReason::Edited => StoredChangeReason::Edited,
                    ChangeReason::ExceptionsChanged => StoredChangeReason::ExceptionsChanged,
                    ChangeReason::Withdrawn => StoredChangeReason::Withdrawn,
                    ChangeReason::Undone => StoredChangeReason::Undone,
                },
            }),
            embedding: record.embedding.as_ref().map(|e| StoredVector {
                model: e.model().to_string(),
                vector: e.vector().to_vec(),
            }),
        }
    }
}

impl From<StoredRecord> for MemoryRecord {
    fn from(stored: StoredRecord) -> Self {
        MemoryRecord {
            id: RecordId(stored.id),
            key: MemoryKey::from_stored(stored.key),
            question: stored.question,
            // A verified example's `clarification` is empty on disk and means nothing.
            kind: match stored.kind {
                StoredKind::Clarification => RecordKind::Clarification {
                    text: stored.clarification,
                    reach: match stored.scope {
                        // The importer refuses a pattern that does not parse and Remind
                        // writes none, so one is dropped only from a row put there by
                        // something else; the lesson is then matched by retrieval.
                        StoredScope::Always => Reach::QuestionsLike(
                            stored
                                .applies_to
                                .iter()
                                .filter_map(|p| RequestPattern::parse(p).ok())
                                .collect(),
                        ),
                        StoredScope::EveryQuestion => Reach::EveryQuestion,
                    },
                    not_for: stored.not_for,
                },
                StoredKind::VerifiedExample {
                    understanding,
                    answer,
                } => RecordKind::VerifiedExample {
                    understanding,
                    answer,
                },
            },
            source: match stored.source {
                StoredSource::UserStated => Source::UserStated,
                StoredSource::UserConfirmedProposal => Source::UserConfirmedProposal,
            },
            created_at: Timestamp(stored.created_at),
            version: stored.version,
            supersedes: stored.supersedes.map(RecordId),
            superseded_by: stored.superseded_by.map(RecordId),
            state: match stored.state {
                StoredState::Current => RecordState::Current,
                StoredState::Superseded => RecordState::Superseded,
                StoredState::Withdrawn => RecordState::Withdrawn,
            },
            stats: RecordStats {
                times_applied: stored.stats.times_applied,
                times_failed_after_applied: stored.stats.times_failed_after_applied,
            },
            change: stored.change.map(|note| ChangeNote {
                at: Timestamp(note.at),
                by: match note.by {
                    StoredActor::User => Actor::User,
                    StoredActor::Import => Actor::Import,
                },
                reason: match note.reason {
                    StoredChangeReason::Corrected => ChangeReason::Corrected,
                    StoredChangeReason::CorrectedAfterApplied => {
                        ChangeReason::CorrectedAfterApplied
                    }
                    StoredChangeReason::Edited => ChangeReason::Edited,
                    StoredChangeReason::ExceptionsChanged => ChangeReason::ExceptionsChanged,
                    StoredChangeReason::Withdrawn => ChangeReason::Withdrawn,
                    StoredChangeReason::Undone => ChangeReason::Undone,
                },
            }),
            // A vector retrieval cannot compare (not finite, not of unit length) is
            // dropped: the record then has no embedding, like one stored before the
            // model was ready, and the page computes a new one. The importer refuses
            // such a vector first, naming it ([`crate::import`]).
            embedding: stored
                .embedding
                .and_then(|e| StoredEmbedding::new(e.model, e.vector).ok()),
        }
    }
}

/// A record as the JSON text an IndexedDB row or an export holds.
pub fn record_to_json(record: &MemoryRecord) -> Result<String, serde_json::Error> {
    serde_json::to_string(&StoredRecord::from(record))
}

/// A record as an IndexedDB row of schema 3 holds it: the JSON text of every field but
/// the embedding, and the embedding apart, to be stored as binary (a `Float32Array`)
/// rather than as hundreds of numbers in text.
pub fn record_to_json_and_vector(
    record: &MemoryRecord,
) -> Result<(String, Option<StoredVector>), serde_json::Error> {
    let mut stored = StoredRecord::from(record);
    let embedding = stored.embedding.take();
    Ok((serde_json::to_string(&stored)?, embedding))
}

/// A record from the JSON text of an IndexedDB row or an export entry.
pub fn record_from_json(json: &str) -> Result<MemoryRecord, serde_json::Error> {
    serde_json::from_str::<StoredRecord>(json).map(MemoryRecord::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAVED_BY_AN_EARLIER_REMIND: &str = r#"{"id":"a","key":"what is like < > ?",
        "question":"What is like < fast > ?","clarification":"I want a synonym",
        "kind":"clarification","scope":"always","source":"user_stated","created_at":1,
        "version":1,"supersedes":null,"superseded_by":null,"state":"current"}"#;

    #[test]
    fn a_record_stored_before_change_notes_existed_still_reads() {
        let record = record_from_json(SAVED_BY_AN_EARLIER_REMIND).expect("old records read");
        assert_eq!(record.change, None);
        assert_eq!(record.stats, RecordStats::default());
        assert_eq!(record.changed_at(), Timestamp(1));
    }

    #[test]
    fn a_record_round_trips_through_its_stored_form_unchanged() {
        let mut record = record_from_json(SAVED_BY_AN_EARLIER_REMIND).unwrap();
        record.kind = RecordKind::VerifiedExample {
            understanding: "the synonym for fast".into(),
            answer: "quick".into(),
        };
        record.change = Some(ChangeNote {
            at: Timestamp(5),
            by: Actor::Import,
            reason: ChangeReason::CorrectedAfterApplied,
        });
        record.embedding = Some(StoredEmbedding::new("m", vec![0.6, -0.8]).unwrap());
        record.supersedes = Some(RecordId("z".into()));
        let json = record_to_json(&record).unwrap();
        assert_eq!(record_from_json(&json).unwrap(), record);
    }

    #[test]
    fn a_verified_example_without_its_answer_is_refused_naming_the_field() {
        let example = SAVED_BY_AN_EARLIER_REMIND.replace(
            r#""kind":"clarification""#,
            r#""kind":"verified_example","understanding":"the synonym for fast""#,
        );
        let error = serde_json::from_str::<StoredRecord>(&example).unwrap_err();
        assert!(
            error.to_string().contains("missing field `answer`"),
            "{error}"
        );
        let clarification_with_stray_fields =
            SAVED_BY_AN_EARLIER_REMIND.replace(r#""state""#, r#""answer":"quick","state""#);
        let record: StoredRecord = serde_json::from_str(&clarification_with_stray_fields)
            .expect("a clarification's stray fields are ignored, as before");
        assert_eq!(record.kind, StoredKind::Clarification);
    }

    #[test]
    fn a_standing_preference_is_stored_with_the_every_question_scope_and_reads_back() {
        let mut record = record_from_json(SAVED_BY_AN_EARLIER_REMIND).unwrap();
        assert_eq!(record.kind.reach(), Some(&Reach::default()));
        record.kind = RecordKind::clarification_for("Call me Sam.", Reach::EveryQuestion);
        let json = record_to_json(&record).unwrap();
        assert!(json.contains(r#""scope":"every_question""#), "{json}");
        assert_eq!(record_from_json(&json).unwrap(), record);
    }

    #[test]
    fn exceptions_are_stored_as_not_for_and_absent_when_there_are_none() {
        let mut record = record_from_json(SAVED_BY_AN_EARLIER_REMIND).unwrap();
        assert!(!record_to_json(&record).unwrap().contains("not_for"));
        record.kind = RecordKind::Clarification {
            text: "Call me Sam.".into(),
            reach: Reach::EveryQuestion,
            not_for: vec!["Write a cover letter for me.".into()],
        };
        let json = record_to_json(&record).unwrap();
        assert!(
            json.contains(r#""not_for":["Write a cover letter for me."]"#),
            "{json}"
        );
        assert_eq!(record_from_json(&json).unwrap(), record);
    }

    #[test]
    fn the_stored_form_keeps_the_field_names_files_and_databases_hold() {
        let record = record_from_json(SAVED_BY_AN_EARLIER_REMIND).unwrap();
        let written: serde_json::Value =
            serde_json::from_str(&record_to_json(&record).unwrap()).unwrap();
        let earlier: serde_json::Value = serde_json::from_str(SAVED_BY_AN_EARLIER_REMIND).unwrap();
        for (name, value) in earlier.as_object().unwrap() {
            assert_eq!(&written[name], value, "{name}");
        }
    }

    #[test]
    fn the_kind_tag_names_are_the_stored_kinds_names() {
        let example = StoredKind::VerifiedExample {
            understanding: String::new(),
            answer: String::new(),
        };
        for (kind, name) in [
            (StoredKind::Clarification, StoredKindName::Clarification),
            (example, StoredKindName::VerifiedExample),
        ] {
            let tag = serde_json::to_value(&kind).unwrap()["kind"].clone();
            assert_eq!(tag, serde_json::to_value(name).unwrap());
        }
    }

    #[test]
    fn an_unknown_state_is_refused_naming_the_states_there_are() {
        let newer = SAVED_BY_AN_EARLIER_REMIND.replace("\"current\"", "\"archived\"");
        let error = record_from_json(&newer).unwrap_err().to_string();
        assert!(
            error.contains("archived") && error.contains("superseded"),
            "{error}"
        );
    }
}
