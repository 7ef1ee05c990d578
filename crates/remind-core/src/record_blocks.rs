//! The records store's blocks (IndexedDB schema 5): every record lives in one of
//! [`BLOCKS`] blocks, chosen by its id, and a block is stored as the bytes of its
//! records: since schema 7 field by field without names ([`binary_block`]), in schemas 5
//! and 6 as one JSON text (still read).
//!
//! Reading ten thousand rows of one record each cost IndexedDB about 0.2 s and the page
//! the structured clone of ten thousand objects; the same records as a few tens of
//! texts are read in about a sixth of the time (`bench/idb-layouts.mjs`: 125 against
//! 19 ms, blocks of 500). A change rewrites only the blocks that hold
//! a record it puts or erases, read in the same transaction. A block that does not read
//! whole is set aside whole, like an unreadable row, and no write may rewrite it.

mod binary_block;

use std::collections::{HashMap, HashSet};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::record::{MemoryRecord, RecordId};
pub use crate::record_blocks::binary_block::is_binary_block;
use crate::record_blocks::binary_block::{binary_block, read_binary_block};
use crate::stored_record::StoredRecord;
use crate::stored_rows::{StoredMemory, UnreadableRecord};

/// How many blocks the records are spread over: a usage count rewrites one block, about
/// 150 records at ten thousand lessons, and a reload reads this many blocks.
pub const BLOCKS: u32 = 64;

/// The block a record with `id` lives in: the 32-bit FNV-1a hash of the id's bytes,
/// modulo [`BLOCKS`]. Stored data depends on it: it never changes within a schema.
pub fn block_of(id: &RecordId) -> u32 {
    let hash = id.0.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    hash % BLOCKS
}

/// A block's value as the store holds it.
#[derive(Clone, Debug, PartialEq)]
pub enum BlockValue {
    /// Bytes, as Remind writes every block: a binary block ([`binary_block`], schema 7),
    /// or the UTF-8 of a JSON text (schemas 5 and 6).
    Bytes(Vec<u8>),
    /// Anything else, as text to show (its JSON).
    Other(String),
}

impl BlockValue {
    /// The block as text to show and export when it does not read: a JSON block's
    /// text, a binary block's bytes in base64, other bytes made readable.
    fn into_raw_text(self) -> String {
        match self {
            BlockValue::Bytes(bytes) if is_binary_block(&bytes) => {
                format!("binary block, base64: {}", STANDARD.encode(bytes))
            }
            BlockValue::Bytes(bytes) => match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            },
            BlockValue::Other(text) => text,
        }
    }
}

/// The blocks as read: the records of every block that reads whole, and each block
/// that does not, set aside whole.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadBlocks {
    pub records: Vec<MemoryRecord>,
    pub unreadable: Vec<UnreadableRecord>,
}

/// Reads every block, given as its store key (as JSON text) and its value. A block
/// reads whole when its key is a block number, its value a JSON array of records, and
/// each of them is one of this block's, once: anything else about it would have a
/// write lose or duplicate a record, so the block is set aside with its raw text.
pub fn read_blocks(blocks: impl IntoIterator<Item = (String, BlockValue)>) -> ReadBlocks {
    let mut read = ReadBlocks::default();
    for (key, value) in blocks {
        read.add(key, value);
    }
    read
}

impl ReadBlocks {
    /// Reads one more block as [`read_blocks`] reads each, for a reader that gets them
    /// one at a time.
    pub fn add(&mut self, key: String, value: BlockValue) {
        match read_block(&key, &value) {
            Ok(records) => self.records.extend(records),
            Err(problem) => self.unreadable.push(UnreadableRecord {
                key: unreadable_block_key(&key),
                raw: value.into_raw_text(),
                problem,
            }),
        }
    }
}

fn read_block(key: &str, value: &BlockValue) -> Result<Vec<MemoryRecord>, String> {
    let number = key
        .parse::<u32>()
        .ok()
        .filter(|n| *n < BLOCKS)
        .ok_or_else(|| format!("it is stored under {key}, which is not one of Remind's blocks"))?;
    let BlockValue::Bytes(bytes) = value else {
        return Err(
            "it is a block of lessons that is not bytes; something other than Remind wrote it"
                .into(),
        );
    };
    let stored: Vec<StoredRecord> = if is_binary_block(bytes) {
        read_binary_block(bytes).map_err(|e| {
            format!("it is a block of lessons this version of Remind cannot read: {e}; a newer Remind may have written it")
        })?
    } else {
        let text = std::str::from_utf8(bytes).map_err(|_| {
            "it is a block of lessons that is neither Remind's binary form nor a text; something other than Remind wrote it".to_string()
        })?;
        serde_json::from_str(text).map_err(|e| {
            format!("it is a block of lessons this version of Remind cannot read ({e}); a newer Remind may have written it")
        })?
    };
    let records: Vec<MemoryRecord> = stored.into_iter().map(MemoryRecord::from).collect();
    let mut seen = HashSet::with_capacity(records.len());
    for record in &records {
        if block_of(&record.id) != number {
            return Err(format!(
                "it holds the lesson {:?}, which belongs in block {}",
                record.id.0,
                block_of(&record.id)
            ));
        }
        if !seen.insert(record.id.0.as_str()) {
            return Err(format!("it holds the lesson {:?} twice", record.id.0));
        }
    }
    Ok(records)
}

/// The name under which an unreadable block is listed and deleted: `{"block":KEY}`,
/// KEY its store key as JSON. No row of the records store is named so, for an
/// IndexedDB key is never an object.
pub fn unreadable_block_key(key: &str) -> String {
    format!(r#"{{"block":{key}}}"#)
}

/// The store key (as JSON text) of the block an unreadable entry names, when it names
/// a block ([`unreadable_block_key`]) rather than a row.
pub fn block_named_by(unreadable_key: &str) -> Option<String> {
    let named: HashMap<String, serde_json::Value> = serde_json::from_str(unreadable_key).ok()?;
    (named.len() == 1)
        .then(|| named.get("block").map(serde_json::Value::to_string))
        .flatten()
}

/// A block a change touches: the records it is to hold, and whether its text changes.
#[derive(Clone, Debug, PartialEq)]
pub struct TouchedBlock<'a> {
    pub number: u32,
    pub records: Vec<&'a MemoryRecord>,
    /// The records of the change's `put` whose block this is, in the change's order:
    /// each has its embedding (and any row beside the blocks) written with the block.
    pub put: Vec<&'a MemoryRecord>,
    /// False when every record the change puts into it is stored as before but for its
    /// embedding (kept apart) and it erases none it held: the block need not be written.
    pub changed: bool,
}

/// The blocks a change touches, by block number, each with the records it is to hold:
/// every block that holds, or is to hold, a record of `put` or `erase`, with the records
/// it holds now (`held`: every record read from the blocks in the change's transaction,
/// in the order read) less those erased, a put record in place of the one of its id,
/// and new ones after. [`block_bytes`] makes each the bytes to store.
pub fn rewritten_blocks<'a>(
    held: &[&'a MemoryRecord],
    put: &'a [MemoryRecord],
    erase: &[RecordId],
) -> Vec<TouchedBlock<'a>> {
    let erased: HashSet<&RecordId> = erase.iter().collect();
    let mut replaced: HashMap<&RecordId, &MemoryRecord> =
        put.iter().map(|record| (&record.id, record)).collect();
    fn touched<'m, 'a>(
        blocks: &'m mut HashMap<u32, TouchedBlock<'a>>,
        number: u32,
    ) -> &'m mut TouchedBlock<'a> {
        blocks.entry(number).or_insert_with(|| TouchedBlock {
            number,
            records: Vec::new(),
            put: Vec::new(),
            changed: false,
        })
    }
    let mut blocks = HashMap::new();
    for record in put {
        touched(&mut blocks, block_of(&record.id)).put.push(record);
    }
    for id in erase {
        touched(&mut blocks, block_of(id));
    }
    for &record in held {
        let Some(block) = blocks.get_mut(&block_of(&record.id)) else {
            continue;
        };
        if erased.contains(&record.id) {
            block.changed = true;
            continue;
        }
        let kept = match replaced.remove(&record.id) {
            Some(new) => {
                block.changed |= !stored_alike(new, record);
                new
            }
            None => record,
        };
        block.records.push(kept);
    }
    for record in put {
        if let Some(new) = replaced.remove(&record.id)
            && !erased.contains(&new.id)
            && let Some(block) = blocks.get_mut(&block_of(&new.id))
        {
            block.records.push(new);
            block.changed = true;
        }
    }
    let mut blocks: Vec<_> = blocks.into_values().collect();
    blocks.sort_by_key(|block| block.number);
    blocks
}

/// Whether `a` and `b` are stored as the same text in a block: alike in every field
/// but the embedding, which the store keeps apart. [`MemoryRecord::same_but_bookkeeping`]
/// names every field, so a field added to records is counted there.
fn stored_alike(a: &MemoryRecord, b: &MemoryRecord) -> bool {
    a.same_but_bookkeeping(b) && a.stats == b.stats
}

/// `a` against `b` as IndexedDB orders string keys, by UTF-16 code unit. UTF-8's byte
/// order is code point order, which differs from UTF-16's only past a common prefix, so
/// the bytes are compared up to the first difference and only the rest in UTF-16 (most
/// ids differ within their first few characters, all ASCII).
fn in_key_order(a: &str, b: &str) -> std::cmp::Ordering {
    let mut common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    // Both strings share these bytes, so a character boundary of one is the other's.
    while !a.is_char_boundary(common) {
        common -= 1;
    }
    a[common..].encode_utf16().cmp(b[common..].encode_utf16())
}

/// What one read of the records store found: the blocks' records, and the rows beside
/// them (rows an older schema left that the migration could not read, or rows written
/// by something other than this Remind).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoreContents {
    /// Every record that reads, and every block and row that does not.
    pub stored: StoredMemory,
    /// The records read from rows rather than blocks: writing or erasing one deletes
    /// its row, so it is then held in its block alone.
    pub in_rows: HashSet<RecordId>,
}

impl StoreContents {
    /// The blocks' records and the rows beside them, as one memory. A row whose record
    /// a block already holds is set aside as unreadable, so no write picks one copy
    /// over the other; the user keeps or deletes it.
    pub fn of(blocks: ReadBlocks, rows: StoredMemory) -> Self {
        let in_blocks: HashSet<RecordId> = if rows.records.is_empty() {
            HashSet::new()
        } else {
            blocks.records.iter().map(|r| r.id.clone()).collect()
        };
        let mut contents = StoreContents {
            stored: StoredMemory {
                records: blocks.records,
                unreadable: blocks.unreadable,
            },
            in_rows: HashSet::new(),
        };
        contents.stored.unreadable.extend(rows.unreadable);
        for record in rows.records {
            if in_blocks.contains(&record.id) {
                contents.stored.unreadable.push(UnreadableRecord {
                    key: serde_json::to_string(&record.id.0).unwrap_or_default(),
                    raw: crate::stored_record::record_to_json(&record).unwrap_or_default(),
                    problem: format!(
                        "it is a second copy of the lesson {:?}, which Remind keeps in its blocks; delete it, or export it to compare",
                        record.id.0
                    ),
                });
            } else {
                contents.in_rows.insert(record.id.clone());
                contents.stored.records.push(record);
            }
        }
        // In the order of their ids, as IndexedDB orders keys (by UTF-16 code unit):
        // the order the rows of one record each were read in, which is the order
        // Remind's ids were made in, so a tie between lessons still goes to the oldest.
        contents
            .stored
            .records
            .sort_by(|a, b| in_key_order(&a.id.0, &b.id.0));
        contents
    }

    /// The records read from the blocks, in the order read: what a rewrite of their
    /// blocks starts from.
    pub fn held_in_blocks(&self) -> Vec<&MemoryRecord> {
        self.stored
            .records
            .iter()
            .filter(|record| !self.in_rows.contains(&record.id))
            .collect()
    }
}

/// The bytes of a block holding `records` ([`binary_block`], without their
/// embeddings), in the order of their ids: a read puts the records of all blocks in
/// that order, which for blocks each in order is a merge of 64 runs rather than a sort
/// (at 100 000 lessons natively, 91 ms for blocks in the order records were written).
pub fn block_bytes(records: &[&MemoryRecord]) -> Result<Vec<u8>, String> {
    let mut records = records.to_vec();
    records.sort_by(|a, b| in_key_order(&a.id.0, &b.id.0));
    binary_block(&records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{FeedbackMemory, Lesson};
    use crate::record::{StoredEmbedding, Timestamp};

    fn lesson(id: &str) -> MemoryRecord {
        FeedbackMemory::default()
            .plan_write(
                Lesson::user_clarification(&format!("What is like < {id} > ?"), "a synonym"),
                RecordId(id.into()),
                Timestamp(1),
            )
            .current
    }

    fn blocks_of(blocks: Vec<TouchedBlock<'_>>) -> Vec<(String, BlockValue)> {
        blocks
            .into_iter()
            .map(|block| {
                let bytes = block_bytes(&block.records).unwrap();
                (block.number.to_string(), BlockValue::Bytes(bytes))
            })
            .collect()
    }

    /// Two ids that fall in the same block.
    fn two_ids_in_one_block() -> (String, String) {
        let first = "lesson-0".to_owned();
        let second = (1..)
            .map(|i| format!("lesson-{i}"))
            .find(|id| block_of(&RecordId(id.clone())) == block_of(&RecordId(first.clone())))
            .unwrap();
        (first, second)
    }

    #[test]
    fn ten_thousand_ids_spread_over_every_block_none_holding_twice_its_share() {
        let mut counts = vec![0; BLOCKS as usize];
        for i in 0..10_000 {
            counts[block_of(&RecordId(format!("{i:08x}-lesson"))) as usize] += 1;
        }
        let share = 10_000 / BLOCKS as usize;
        assert!(
            counts.iter().all(|&n| n > share / 2 && n < share * 2),
            "{counts:?}"
        );
    }

    #[test]
    fn written_blocks_read_back_as_the_same_records_without_their_embeddings() {
        let mut embedded = lesson("b");
        embedded.embedding = Some(StoredEmbedding::new("m", vec![1.0, 0.0]).unwrap());
        let records = [lesson("a"), embedded, lesson("c")];
        let texts = rewritten_blocks(&[], &records, &[]);
        let read = read_blocks(blocks_of(texts));
        assert!(read.unreadable.is_empty());
        let mut ids: Vec<_> = read.records.iter().map(|r| r.id.0.clone()).collect();
        ids.sort();
        assert_eq!(ids, ["a", "b", "c"]);
        assert!(read.records.iter().all(|r| r.embedding.is_none()));
    }

    #[test]
    fn a_change_rewrites_only_the_blocks_it_touches_keeping_their_other_records_in_order() {
        let (first, second) = two_ids_in_one_block();
        let held = [lesson(&first), lesson(&second)];
        let held_refs: Vec<&MemoryRecord> = held.iter().collect();
        let mut changed = lesson(&second);
        changed.version = 2;
        let changed = [changed];
        let texts = rewritten_blocks(&held_refs, &changed, &[]);
        assert_eq!(texts.len(), 1, "one block touched");
        assert!(texts[0].changed);
        let read = read_blocks(blocks_of(texts));
        let ids: Vec<_> = read.records.iter().map(|r| r.id.0.as_str()).collect();
        assert_eq!(ids, [first.as_str(), second.as_str()]);
        assert_eq!(
            read.records[1].version, 2,
            "the put record in place of the held one"
        );
    }

    #[test]
    fn an_erased_record_leaves_its_block_and_an_emptied_block_is_written_empty() {
        let (first, second) = two_ids_in_one_block();
        let held = [lesson(&first), lesson(&second)];
        let held_refs: Vec<&MemoryRecord> = held.iter().collect();
        let texts = rewritten_blocks(&held_refs, &[], &[RecordId(first.clone())]);
        let read = read_blocks(blocks_of(texts));
        assert_eq!(read.records.len(), 1);
        assert_eq!(read.records[0].id.0, second);
        let emptied = rewritten_blocks(
            &held_refs,
            &[],
            &[RecordId(first.clone()), RecordId(second)],
        );
        assert_eq!(
            emptied,
            [TouchedBlock {
                number: block_of(&RecordId(first)),
                records: vec![],
                put: vec![],
                changed: true,
            }]
        );
    }

    #[test]
    fn a_block_whose_records_change_only_their_embeddings_is_not_written() {
        let (first, second) = two_ids_in_one_block();
        let held = [lesson(&first), lesson(&second)];
        let held_refs: Vec<&MemoryRecord> = held.iter().collect();
        let mut embedded = held[1].clone();
        embedded.embedding = Some(StoredEmbedding::new("m", vec![0.0, 1.0]).unwrap());
        let mut counted = embedded.clone();
        counted.stats.times_applied += 1;
        let (embedded, counted) = ([embedded], [counted]);
        let only_embedded = rewritten_blocks(&held_refs, &embedded, &[]);
        assert_eq!(only_embedded.len(), 1, "one block touched");
        assert!(!only_embedded[0].changed, "the text would be the same");
        assert_eq!(only_embedded[0].records.len(), 2);
        assert_eq!(
            only_embedded[0].put,
            [&embedded[0]],
            "its embedding is still written"
        );
        let counted_block = rewritten_blocks(&held_refs, &counted, &[]);
        assert!(counted_block[0].changed, "a usage count is in the text");
        let new = lesson("a-new-one");
        assert!(
            rewritten_blocks(&held_refs, &[new], &[])[0].changed,
            "a new record"
        );
    }

    /// A block as schemas 5 and 6 wrote it: the JSON array of its records' texts.
    fn json_block(records: &[&MemoryRecord]) -> Vec<u8> {
        let texts: Vec<String> = records
            .iter()
            .map(|r| {
                crate::stored_record::record_to_json_and_vector(r)
                    .unwrap()
                    .0
            })
            .collect();
        format!("[{}]", texts.join(",")).into_bytes()
    }

    #[test]
    fn a_block_that_does_not_read_whole_is_set_aside_whole_with_its_raw_text() {
        let (first, _) = two_ids_in_one_block();
        let number = block_of(&RecordId(first.clone()));
        let good = block_bytes(&[&lesson(&first)]).unwrap();
        let elsewhere = (number + 1) % BLOCKS;
        let twice = block_bytes(&[&lesson(&first), &lesson(&first)]).unwrap();
        let mut cut = good.clone();
        cut.truncate(good.len() - 2);
        let read = read_blocks([
            (
                number.to_string(),
                BlockValue::Bytes(b"[{\"id\":1}]".to_vec()),
            ),
            (elsewhere.to_string(), BlockValue::Bytes(good.clone())),
            (number.to_string(), BlockValue::Bytes(twice)),
            ("\"x\"".into(), BlockValue::Bytes(good.clone())),
            (number.to_string(), BlockValue::Other("{\"a\":1}".into())),
            (number.to_string(), BlockValue::Bytes(cut.clone())),
            (number.to_string(), BlockValue::Bytes(vec![0xC3, 0x28])),
            (number.to_string(), BlockValue::Bytes(good)),
        ]);
        assert_eq!(read.records.len(), 1, "only the last block reads");
        let problems: Vec<_> = read.unreadable.iter().map(|u| u.problem.as_str()).collect();
        assert!(problems[0].contains("cannot read"), "{problems:?}");
        assert!(
            problems[1].contains(&format!("belongs in block {number}")),
            "{problems:?}"
        );
        assert!(problems[2].contains("twice"), "{problems:?}");
        assert!(
            problems[3].contains("not one of Remind's blocks"),
            "{problems:?}"
        );
        assert!(problems[4].contains("not bytes"), "{problems:?}");
        assert!(problems[5].contains("do not read"), "{problems:?}");
        assert!(problems[6].contains("neither"), "{problems:?}");
        assert_eq!(read.unreadable[0].raw, "[{\"id\":1}]");
        assert_eq!(read.unreadable[0].key, format!("{{\"block\":{number}}}"));
        assert_eq!(
            read.unreadable[5].raw,
            format!("binary block, base64: {}", STANDARD.encode(&cut)),
            "a binary block is kept whole, as its bytes"
        );
        assert_eq!(read.unreadable[6].raw, "\u{FFFD}(");
    }

    #[test]
    fn a_json_block_an_earlier_schema_wrote_reads_as_its_binary_form_does() {
        let (first, second) = two_ids_in_one_block();
        let (a, b) = (lesson(&first), lesson(&second));
        let number = block_of(&a.id).to_string();
        let from_json = read_blocks([(number.clone(), BlockValue::Bytes(json_block(&[&a, &b])))]);
        let from_binary =
            read_blocks([(number, BlockValue::Bytes(block_bytes(&[&a, &b]).unwrap()))]);
        assert!(
            from_json.unreadable.is_empty(),
            "{:?}",
            from_json.unreadable
        );
        assert_eq!(from_json.records.len(), 2);
        let mut in_order = from_json.records.clone();
        in_order.sort_by(|x, y| in_key_order(&x.id.0, &y.id.0));
        assert_eq!(from_binary.records, in_order);
    }

    #[test]
    fn a_row_beside_the_blocks_is_a_record_unless_a_block_holds_its_id_already() {
        let (first, second) = two_ids_in_one_block();
        let blocks = read_blocks(blocks_of(rewritten_blocks(&[], &[lesson(&first)], &[])));
        let rows = StoredMemory {
            records: vec![lesson(&first), lesson(&second)],
            unreadable: Vec::new(),
        };
        let contents = StoreContents::of(blocks, rows);
        let ids: Vec<_> = contents
            .stored
            .records
            .iter()
            .map(|r| r.id.0.as_str())
            .collect();
        assert_eq!(ids, [first.as_str(), second.as_str()]);
        assert_eq!(contents.in_rows, HashSet::from([RecordId(second.clone())]));
        assert_eq!(contents.held_in_blocks().len(), 1);
        assert_eq!(
            contents.stored.unreadable.len(),
            1,
            "the second copy is set aside"
        );
        assert!(contents.stored.unreadable[0].is_stored_under(&RecordId(first)));
        assert!(
            contents.stored.unreadable[0]
                .problem
                .contains("second copy")
        );
    }

    #[test]
    fn records_come_back_in_the_order_of_their_ids_as_rows_of_one_record_each_did() {
        let ids = [
            "m-19a-1",
            "m-19b-2",
            "m-19c-3",
            "m-1a0-4",
            "\u{ff61}",
            "\u{1f600}",
        ];
        let records: Vec<MemoryRecord> = ids.iter().rev().map(|id| lesson(id)).collect();
        let blocks = read_blocks(blocks_of(rewritten_blocks(&[], &records[1..], &[])));
        let rows = StoredMemory {
            records: vec![records[0].clone()],
            unreadable: Vec::new(),
        };
        let read: Vec<_> = StoreContents::of(blocks, rows)
            .stored
            .records
            .iter()
            .map(|r| r.id.0.clone())
            .collect();
        // U+1F600 is a surrogate pair in UTF-16, so it sorts before U+FF61 there.
        assert_eq!(
            read,
            [
                "m-19a-1",
                "m-19b-2",
                "m-19c-3",
                "m-1a0-4",
                "\u{1f600}",
                "\u{ff61}"
            ]
        );
    }

    proptest::proptest! {
        #[test]
        fn key_order_is_the_order_of_utf16_code_units(
            prefix in "\\PC{0,3}",
            a in "\\PC{0,6}",
            b in "\\PC{0,6}",
        ) {
            let (a, b) = (format!("{prefix}{a}"), format!("{prefix}{b}"));
            proptest::prop_assert_eq!(in_key_order(&a, &b), a.encode_utf16().cmp(b.encode_utf16()));
        }
    }

    #[test]
    fn an_unreadable_block_is_named_apart_from_any_row_and_guards_every_id_it_would_hold() {
        let (first, second) = two_ids_in_one_block();
        let number = block_of(&RecordId(first.clone()));
        let named = UnreadableRecord {
            key: unreadable_block_key(&number.to_string()),
            raw: String::new(),
            problem: String::new(),
        };
        assert_eq!(block_named_by(&named.key), Some(number.to_string()));
        assert_eq!(block_named_by("\"lesson-0\""), None);
        assert_eq!(block_named_by("{\"block\":1,\"more\":2}"), None);
        assert!(named.is_stored_under(&RecordId(first)));
        assert!(named.is_stored_under(&RecordId(second)));
        let other = (0..)
            .map(|i| RecordId(format!("other-{i}")))
            .find(|id| block_of(id) != number)
            .unwrap();
        assert!(!named.is_stored_under(&other));
    }
}
