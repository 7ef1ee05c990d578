//! A block of records as this Remind writes it since schema 7: a tag, then the records
//! field by field in a fixed order (postcard), with no field names and no text to scan.
//!
//! At 10 000 lessons the JSON blocks of schemas 5 and 6 were 5.2 MB, read into records
//! natively in 8.0 ms and in the page in about 20 ms of a reload's main thread; the
//! same records in this form are 2.2 MB and read natively in 4.7 ms
//! (`bench_read_blocks`). JSON names every field of every record, and most of the
//! decoding was matching those names and scanning the text for the ends of its strings.
//!
//! The layout is [`BlockRecord`]'s fields in order, each enum as the position of its
//! variant: a new variant only ever goes last, and a new field needs a new tag, so a
//! block written by an earlier Remind keeps reading.

use serde::{Deserialize, Serialize};

use crate::record::MemoryRecord;
use crate::stored_record::{
    StoredChange, StoredKind, StoredRecord, StoredScope, StoredSource, StoredState, StoredStats,
};

/// The first bytes of a block in this form: `0xFF` never begins a UTF-8 text, so a
/// block is told from a JSON block of schema 5 and 6 by its first byte.
pub const BINARY_BLOCK_TAG: [u8; 4] = [0xFF, b'R', b'B', 1];

/// One record in a block: every field of [`StoredRecord`] but the embedding, which
/// the store keeps apart.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct BlockRecord {
    id: String,
    key: String,
    question: String,
    clarification: String,
    kind: BlockKind,
    scope: StoredScope,
    not_for: Vec<String>,
    applies_to: Vec<String>,
    source: StoredSource,
    created_at: i64,
    version: u32,
    supersedes: Option<String>,
    superseded_by: Option<String>,
    state: StoredState,
    stats: StoredStats,
    change: Option<StoredChange>,
}

/// [`StoredKind`] with its fields inside its variant, as a format without field names
/// holds it (JSON holds them beside the `kind` tag).
#[derive(Debug, PartialEq, Serialize, Deserialize)]
enum BlockKind {
    Clarification,
    VerifiedExample {
        understanding: String,
        answer: String,
    },
}

impl From<StoredRecord> for BlockRecord {
    fn from(stored: StoredRecord) -> Self {
        BlockRecord {
            id: stored.id,
            key: stored.key,
            question: stored.question,
            clarification: stored.clarification,
            kind: match stored.kind {
                StoredKind::Clarification => BlockKind::Clarification,
                StoredKind::VerifiedExample {
                    understanding,
                    answer,
                } => BlockKind::VerifiedExample {
                    understanding,
                    answer,
                },
            },
            scope: stored.scope,
            not_for: stored.not_for,
            applies_to: stored.applies_to,
            source: stored.source,
            created_at: stored.created_at,
            version: stored.version,
            supersedes: stored.supersedes,
            superseded_by: stored.superseded_by,
            state: stored.state,
            stats: stored.stats,
            change: stored.change,
        }
    }
}

impl From<BlockRecord> for StoredRecord {
    fn from(block: BlockRecord) -> Self {
        StoredRecord {
            id: block.id,
            key: block.key,
            question: block.question,
            clarification: block.clarification,
            kind: match block.kind {
                BlockKind::Clarification => StoredKind::Clarification,
                BlockKind::VerifiedExample {
                    understanding,
                    answer,
                } => StoredKind::VerifiedExample {
                    understanding,
                    answer,
                },
            },
            scope: block.scope,
            not_for: block.not_for,
            applies_to: block.applies_to,
            source: block.source,
            created_at: block.created_at,
            version: block.version,
            supersedes: block.supersedes,
            superseded_by: block.superseded_by,
            state: block.state,
            stats: block.stats,
            change: block.change,
            embedding: None,
        }
    }
}

/// The bytes of a block holding `records`, in the order given, without their
/// embeddings; an error says why they could not be written.
pub fn binary_block(records: &[&MemoryRecord]) -> Result<Vec<u8>, String> {
    let held: Vec<BlockRecord> = records
        .iter()
        .map(|&record| BlockRecord::from(StoredRecord::from(record)))
        .collect();
    postcard::to_extend(&held, BINARY_BLOCK_TAG.to_vec())
        .map_err(|e| format!("the block's records could not be written ({e})"))
}

/// The records of a block's bytes, when they begin with [`BINARY_BLOCK_TAG`] and hold
/// the records whole with nothing after them. Bytes from anywhere else are refused
/// with what is wrong, never a panic.
pub fn read_binary_block(bytes: &[u8]) -> Result<Vec<StoredRecord>, String> {
    let body = bytes
        .strip_prefix(&BINARY_BLOCK_TAG[..])
        .ok_or("it does not begin as this Remind's blocks do")?;
    let (held, rest): (Vec<BlockRecord>, &[u8]) =
        postcard::take_from_bytes(body).map_err(|e| format!("its records do not read ({e})"))?;
    if !rest.is_empty() {
        return Err(format!("{} bytes follow its last record", rest.len()));
    }
    Ok(held.into_iter().map(StoredRecord::from).collect())
}

/// Whether `bytes` are a block in this form (they may still not read).
pub fn is_binary_block(bytes: &[u8]) -> bool {
    bytes.starts_with(&BINARY_BLOCK_TAG)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{FeedbackMemory, Lesson};
    use crate::record::{
        Actor, ChangeNote, ChangeReason, RecordId, RecordKind, RecordState, RecordStats, Timestamp,
    };
    use proptest::prelude::*;

    fn lesson(id: &str) -> MemoryRecord {
        FeedbackMemory::default()
            .plan_write(
                Lesson::user_clarification(&format!("How far is < {id} > from Paris?"), "in km"),
                RecordId(id.into()),
                Timestamp(7),
            )
            .current
    }

    fn read_back(records: &[&MemoryRecord]) -> Vec<MemoryRecord> {
        read_binary_block(&binary_block(records).unwrap())
            .expect("a block this Remind wrote reads")
            .into_iter()
            .map(MemoryRecord::from)
            .collect()
    }

    #[test]
    fn every_field_of_a_record_reads_back_as_written_but_the_embedding() {
        let mut example = lesson("example");
        example.kind = RecordKind::VerifiedExample {
            understanding: "the distance by road".into(),
            answer: "465 km".into(),
        };
        example.state = RecordState::Superseded;
        example.supersedes = Some(RecordId("older".into()));
        example.superseded_by = Some(RecordId("newer".into()));
        example.stats = RecordStats {
            times_applied: 3,
            times_failed_after_applied: 1,
        };
        example.change = Some(ChangeNote {
            at: Timestamp(-5),
            by: Actor::Import,
            reason: ChangeReason::CorrectedAfterApplied,
        });
        example.version = 4;
        let mut clarification = lesson("clarification");
        clarification.embedding =
            Some(crate::record::StoredEmbedding::new("minilm", vec![0.6, 0.8]).unwrap());
        let read = read_back(&[&example, &clarification]);
        assert_eq!(read[0], example);
        assert_eq!(read[1].embedding, None, "embeddings are kept apart");
        clarification.embedding = None;
        assert_eq!(read[1], clarification);
    }

    #[test]
    fn a_block_is_told_from_a_json_block_by_its_first_byte() {
        let bytes = binary_block(&[&lesson("a")]).unwrap();
        assert!(is_binary_block(&bytes));
        assert!(std::str::from_utf8(&bytes).is_err(), "never a UTF-8 text");
        assert!(!is_binary_block(b"[]"));
    }

    #[test]
    fn a_block_cut_short_or_with_bytes_after_it_is_refused_saying_so() {
        let bytes = binary_block(&[&lesson("a"), &lesson("b")]).unwrap();
        let cut = read_binary_block(&bytes[..bytes.len() - 3]).unwrap_err();
        assert!(cut.contains("do not read"), "{cut}");
        let mut longer = bytes.clone();
        longer.push(0);
        let after = read_binary_block(&longer).unwrap_err();
        assert!(after.contains("1 bytes follow"), "{after}");
        let untagged = read_binary_block(&bytes[1..]).unwrap_err();
        assert!(untagged.contains("does not begin"), "{untagged}");
    }

    #[test]
    fn an_enum_position_no_variant_has_is_refused() {
        // The first record's `kind` comes right after its four strings.
        let record = lesson("a");
        let mut bytes = binary_block(&[&record]).unwrap();
        let stored = StoredRecord::from(&record);
        let strings: usize = [
            &stored.id,
            &stored.key,
            &stored.question,
            &stored.clarification,
        ]
        .iter()
        .map(|text| 1 + text.len())
        .sum();
        let kind_at = BINARY_BLOCK_TAG.len() + 1 + strings;
        assert_eq!(bytes[kind_at], 0, "a clarification is variant 0");
        bytes[kind_at] = 9;
        assert!(read_binary_block(&bytes).is_err());
    }

    #[test]
    fn every_enum_variant_keeps_the_position_blocks_already_hold_it_by() {
        use crate::stored_record::{StoredActor, StoredChangeReason};
        fn position<T: Serialize>(value: &T) -> Vec<u8> {
            postcard::to_allocvec(value).unwrap()
        }
        assert_eq!(position(&BlockKind::Clarification), [0]);
        assert_eq!(position(&StoredScope::Always), [0]);
        assert_eq!(position(&StoredScope::EveryQuestion), [1]);
        assert_eq!(position(&StoredSource::UserStated), [0]);
        assert_eq!(position(&StoredSource::UserConfirmedProposal), [1]);
        assert_eq!(position(&StoredState::Current), [0]);
        assert_eq!(position(&StoredState::Superseded), [1]);
        assert_eq!(position(&StoredState::Withdrawn), [2]);
        assert_eq!(position(&StoredActor::User), [0]);
        assert_eq!(position(&StoredActor::Import), [1]);
        let reasons = [
            StoredChangeReason::Corrected,
            StoredChangeReason::CorrectedAfterApplied,
            StoredChangeReason::Edited,
            StoredChangeReason::ExceptionsChanged,
            StoredChangeReason::Withdrawn,
            StoredChangeReason::Undone,
        ];
        for (at, reason) in reasons.iter().enumerate() {
            assert_eq!(position(reason), [at as u8], "{reason:?}");
        }
        let example = BlockKind::VerifiedExample {
            understanding: String::new(),
            answer: String::new(),
        };
        assert_eq!(position(&example), [1, 0, 0]);
    }

    proptest! {
        #[test]
        fn any_bytes_after_the_tag_are_read_or_refused_never_a_panic(body in proptest::collection::vec(any::<u8>(), 0..512)) {
            let mut bytes = BINARY_BLOCK_TAG.to_vec();
            bytes.extend(body);
            let _ = read_binary_block(&bytes);
        }
    }
}
