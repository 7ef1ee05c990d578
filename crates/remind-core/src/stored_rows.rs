//! Reading the store's rows: every record that decodes, and every row that does not,
//! kept as it is.
//!
//! One bad row (a field missing, a `state` a newer Remind wrote) must not take the
//! rest of the memory with it. A row that cannot be read is neither dropped nor
//! rewritten: it is set aside with its raw text and the reason, so the user can export
//! or delete it, and no write may overwrite it.
//!
//! A row may hold its embedding as binary (IndexedDB schema 3: a `Float32Array` beside
//! the other fields) rather than as JSON numbers: turning 384 numbers into text and
//! back for every record was most of the time a reload took. Such a row comes here as
//! the JSON text of its other fields and the vector apart ([`StoredRow::embedding`]).

use crate::record::{MemoryRecord, RecordId};
use crate::record_blocks::{block_named_by, block_of};
use crate::stored_record::{StoredRecord, StoredVector};

/// One row as the store holds it: its key (as JSON text, since a store key need not be
/// a string) and its value (as JSON text), with the embedding apart when the row holds
/// it as binary.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRow {
    pub key: String,
    /// The row's fields as JSON text; without `embedding` when [`StoredRow::embedding`]
    /// holds it.
    pub value: String,
    /// The embedding a row holds as binary, read straight from its typed array; `None`
    /// for a row whose embedding (if any) is among the JSON of `value`.
    pub embedding: Option<StoredVector>,
}

impl StoredRow {
    /// A row whose value is all JSON (schema 2, an export entry, a test's row).
    pub fn json(key: String, value: String) -> Self {
        StoredRow {
            key,
            value,
            embedding: None,
        }
    }

    /// The whole row as JSON text: `value`, with a binary embedding put back in as
    /// numbers, so an unreadable row is shown and saved with everything it holds.
    pub fn whole_text(&self) -> String {
        let Some(embedding) = &self.embedding else {
            return self.value.clone();
        };
        match serde_json::from_str::<serde_json::Value>(&self.value) {
            Ok(serde_json::Value::Object(mut fields)) => {
                let vector = serde_json::to_value(embedding).unwrap_or_default();
                fields.insert("embedding".into(), vector);
                serde_json::Value::Object(fields).to_string()
            }
            _ => self.value.clone(),
        }
    }
}

/// A row that does not decode as a record of this version of Remind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnreadableRecord {
    /// The row's key as JSON text (`"\"abc\""` for the id `abc`): what deleting it names.
    pub key: String,
    /// The row's value, exactly as stored.
    pub raw: String,
    /// Why it could not be read, in words the user can act on.
    pub problem: String,
}

impl UnreadableRecord {
    /// Whether writing a record with `id` would overwrite this row, or rewrite this
    /// block ([`crate::record_blocks`]).
    pub fn is_stored_under(&self, id: &RecordId) -> bool {
        match block_named_by(&self.key) {
            Some(block) => block == block_of(id).to_string(),
            None => serde_json::to_string(&id.0).is_ok_and(|key| key == self.key),
        }
    }
}

/// Everything the store holds, split into what this Remind can read and what it cannot.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoredMemory {
    pub records: Vec<MemoryRecord>,
    pub unreadable: Vec<UnreadableRecord>,
}

impl StoredMemory {
    /// The unreadable row that a record with `id` would overwrite, if any.
    pub fn unreadable_under(&self, id: &RecordId) -> Option<&UnreadableRecord> {
        self.unreadable.iter().find(|row| row.is_stored_under(id))
    }
}

/// Decodes every row; never fails and never loses a row. A row whose record names an
/// id other than the key it is stored under is unreadable too: writing it back would
/// leave two rows for one record.
pub fn read_rows(rows: impl IntoIterator<Item = StoredRow>) -> StoredMemory {
    let mut memory = StoredMemory::default();
    for row in rows {
        match read_row(&row) {
            Ok(record) => memory.records.push(record),
            Err(problem) => memory.unreadable.push(UnreadableRecord {
                raw: row.whole_text(),
                key: row.key,
                problem,
            }),
        }
    }
    memory
}

/// Every row's record, decoded from the JSON array of all the rows' values in one pass,
/// when every row is a record stored under its own id, as every row this Remind writes
/// is; `None` when any row is not, and [`read_rows`] then reads them one by one, saying
/// which and why. `ids` holds each row's key when it is a string, `embeddings` the
/// binary embedding each row held apart from `values`.
///
/// The same records [`read_rows`] reads, without first cutting the array into one text
/// per row: at 100 000 lessons that cutting and its copies took about 0.4 s of a
/// reload.
pub fn read_readable_rows(
    ids: &[Option<String>],
    values: &str,
    embeddings: &[Option<StoredVector>],
) -> Option<Vec<MemoryRecord>> {
    let stored: Vec<StoredRecord> = serde_json::from_str(values).ok()?;
    if stored.len() != ids.len() || embeddings.len() != ids.len() {
        return None;
    }
    stored
        .into_iter()
        .zip(ids)
        .zip(embeddings)
        .map(|((stored, id), embedding)| {
            record_under(stored, embedding.as_ref(), id.as_deref()).ok()
        })
        .collect()
}

/// The record `stored` holds, with the embedding its row held apart, when it is stored
/// under its own id (`stored_under`: the row's key, when that is a string); otherwise
/// the id it names, for the row is unreadable.
fn record_under(
    mut stored: StoredRecord,
    embedding: Option<&StoredVector>,
    stored_under: Option<&str>,
) -> Result<MemoryRecord, RecordId> {
    if let Some(embedding) = embedding {
        stored.embedding = Some(embedding.clone());
    }
    let record = MemoryRecord::from(stored);
    if stored_under == Some(record.id.0.as_str()) {
        Ok(record)
    } else {
        Err(record.id)
    }
}

/// The record a row holds, or why it holds none. Used by the store's schema migration
/// too, which converts only the rows this reads.
pub fn read_row(row: &StoredRow) -> Result<MemoryRecord, String> {
    let stored = serde_json::from_str::<StoredRecord>(&row.value).map_err(|e| {
        format!("it is not a record this version of Remind can read ({e}); a newer Remind may have written it")
    })?;
    let stored_under = serde_json::from_str::<String>(&row.key).ok();
    record_under(stored, row.embedding.as_ref(), stored_under.as_deref()).map_err(|id| {
        format!(
            "it names the id {:?} but is stored under the key {}",
            id.0, row.key
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::FeedbackMemory;
    use crate::memory::Lesson;
    use crate::record::StoredEmbedding;
    use crate::record::Timestamp;
    use crate::retrieval::embedding_refresh::keys_to_embed;
    use crate::stored_record::{record_to_json, record_to_json_and_vector};
    use proptest::prelude::*;

    fn good_row(n: u32) -> (MemoryRecord, StoredRow) {
        let lesson =
            Lesson::user_clarification(&format!("What is like < word{n} > ?"), "I want a synonym");
        let written = FeedbackMemory::default().plan_write(
            lesson,
            RecordId(format!("id-{n}")),
            Timestamp(i64::from(n)),
        );
        let record = written.current;
        let row = StoredRow::json(
            serde_json::to_string(&record.id.0).unwrap(),
            record_to_json(&record).unwrap(),
        );
        (record, row)
    }

    fn row(key: &str, value: &str) -> StoredRow {
        StoredRow::json(key.to_string(), value.to_string())
    }

    /// The rows as the store reads them in one go: each key when it is a string, the
    /// JSON array of the values, and the embeddings held apart.
    fn read_at_once(rows: &[StoredRow]) -> Option<Vec<MemoryRecord>> {
        let ids: Vec<Option<String>> = rows
            .iter()
            .map(|row| serde_json::from_str::<String>(&row.key).ok())
            .collect();
        let values = format!(
            "[{}]",
            rows.iter()
                .map(|row| row.value.as_str())
                .collect::<Vec<_>>()
                .join(",")
        );
        let embeddings: Vec<Option<StoredVector>> =
            rows.iter().map(|row| row.embedding.clone()).collect();
        read_readable_rows(&ids, &values, &embeddings)
    }

    #[test]
    fn rows_read_at_once_are_the_records_read_row_by_row() {
        let (first, first_row) = good_row(1);
        let (mut with_vector, mut second_row) = good_row(2);
        with_vector.embedding = Some(StoredEmbedding::new("m", vec![0.6, 0.8]).unwrap());
        let (value, vector) = record_to_json_and_vector(&with_vector).unwrap();
        second_row.value = value;
        second_row.embedding = vector;
        let rows = [first_row, second_row];
        let row_by_row = read_rows(rows.clone());
        assert!(row_by_row.unreadable.is_empty());
        assert_eq!(read_at_once(&rows), Some(row_by_row.records.clone()));
        assert_eq!(row_by_row.records, vec![first, with_vector]);
    }

    #[test]
    fn rows_are_not_read_at_once_when_one_is_not_a_record_of_its_own_key() {
        let (_, good) = good_row(1);
        let (_, other) = good_row(2);
        let under_another_key = row("\"someone-else\"", &other.value);
        let newer = row(
            &other.key,
            &other.value.replace("\"current\"", "\"archived\""),
        );
        let numeric_key = row("7", &other.value);
        for odd in [under_another_key, newer, numeric_key] {
            assert_eq!(read_at_once(&[good.clone(), odd.clone()]), None, "{odd:?}");
        }
        assert_eq!(
            read_at_once(std::slice::from_ref(&good)).map(|r| r.len()),
            Some(1)
        );
    }

    #[test]
    fn a_record_with_a_missing_field_is_set_aside_and_the_others_load() {
        let (good, good_row) = good_row(1);
        let broken = row(
            "\"b\"",
            r#"{"id":"b","key":"k","question":"q","kind":"clarification"}"#,
        );
        let memory = read_rows([broken.clone(), good_row]);
        assert_eq!(memory.records, vec![good]);
        assert_eq!(memory.unreadable.len(), 1);
        assert_eq!(memory.unreadable[0].raw, broken.value);
        assert_eq!(memory.unreadable[0].key, "\"b\"");
        assert!(memory.unreadable[0].problem.contains("newer Remind"));
    }

    #[test]
    fn a_state_a_newer_remind_wrote_is_kept_untouched_not_dropped() {
        let (_, good) = good_row(2);
        let newer = good.value.replace("\"current\"", "\"archived\"");
        let memory = read_rows([row(&good.key, &newer)]);
        assert!(memory.records.is_empty());
        assert_eq!(memory.unreadable[0].raw, newer);
    }

    #[test]
    fn a_record_stored_under_another_key_is_unreadable() {
        let (_, good) = good_row(3);
        let memory = read_rows([row("\"someone-else\"", &good.value)]);
        assert!(memory.records.is_empty());
        assert!(memory.unreadable[0].problem.contains("stored under"));
    }

    #[test]
    fn an_unreadable_row_knows_which_id_would_overwrite_it() {
        let memory = read_rows([row("\"x-1\"", "not json")]);
        assert!(memory.unreadable_under(&RecordId("x-1".into())).is_some());
        assert!(memory.unreadable_under(&RecordId("x-2".into())).is_none());
        let numeric = read_rows([row("7", "{}")]);
        assert!(numeric.unreadable_under(&RecordId("7".into())).is_none());
    }

    #[test]
    fn a_stored_embedding_that_cannot_be_compared_is_dropped_and_embedded_again() {
        let (record, good) = good_row(4);
        let holding = |vector: serde_json::Value| {
            let mut value: serde_json::Value = serde_json::from_str(&good.value).unwrap();
            value["embedding"] = serde_json::json!({ "model": "m", "vector": vector });
            row(&good.key, &value.to_string())
        };
        for vector in [
            // 3e38s: every value finite, and every cosine with it NaN.
            serde_json::Value::from(vec![3e38; 384]),
            // An infinity: JSON writes it as `null`, and so IndexedDB holds it.
            serde_json::json!([null, 0.0]),
            serde_json::Value::from(vec![0.0; 384]),
            serde_json::json!([0.6, 0.9]),
        ] {
            let memory = read_rows([holding(vector.clone())]);
            assert_eq!(memory.records, vec![record.clone()], "{vector}");
            assert!(memory.unreadable.is_empty(), "{vector}");
            // The page embeds every current lesson without an embedding on the next
            // question (`embedding_refresh`), so the dropped one is replaced.
            let memory = FeedbackMemory::from_records(memory.records);
            assert_eq!(
                keys_to_embed(&memory, "m").collect::<Vec<_>>(),
                [&record.key]
            );
        }
        let kept = read_rows([holding(serde_json::json!([0.6, 0.8]))]);
        let embedding = kept.records[0].embedding.as_ref().expect("a unit vector");
        assert_eq!(embedding.vector(), [0.6, 0.8]);
    }

    /// A record with an embedding as a schema-3 row holds it: its other fields as JSON,
    /// the vector apart.
    fn binary_row(n: u32, vector: Vec<f32>) -> (MemoryRecord, StoredRow) {
        let (mut record, _) = good_row(n);
        record.embedding = StoredEmbedding::new("m", vector).ok();
        let (value, embedding) = record_to_json_and_vector(&record).unwrap();
        let row = StoredRow {
            key: serde_json::to_string(&record.id.0).unwrap(),
            value,
            embedding,
        };
        (record, row)
    }

    #[test]
    fn a_row_holding_its_embedding_as_binary_reads_the_record_bit_for_bit() {
        // Values a text round trip could round: not short in decimal, and subnormal.
        let vector = vec![0.6, -0.8 + f32::EPSILON, 1e-40, -0.0];
        let (record, row) = binary_row(5, vector.clone());
        let fields: serde_json::Value = serde_json::from_str(&row.value).unwrap();
        assert!(fields["embedding"].is_null(), "{}", row.value);
        let memory = read_rows([row]);
        assert_eq!(memory.records, vec![record]);
        let read = memory.records[0].embedding.as_ref().unwrap().vector();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(read), bits(&vector));
    }

    #[test]
    fn a_binary_embedding_that_cannot_be_compared_is_dropped_like_a_json_one() {
        let (record, mut row) = binary_row(6, vec![0.6, 0.8]);
        row.embedding = Some(StoredVector {
            model: "m".into(),
            vector: vec![f32::NAN, 0.8],
        });
        let memory = read_rows([row]);
        assert_eq!(memory.records[0].embedding, None);
        assert_eq!(memory.records[0].id, record.id);
    }

    #[test]
    fn an_unreadable_binary_row_is_kept_with_its_embedding_as_numbers() {
        let (_, mut row) = binary_row(7, vec![0.6, 0.8]);
        row.value = row.value.replace("\"current\"", "\"archived\"");
        let memory = read_rows([row.clone()]);
        assert!(memory.records.is_empty());
        let raw: serde_json::Value = serde_json::from_str(&memory.unreadable[0].raw).unwrap();
        assert_eq!(raw["state"], "archived");
        assert_eq!(raw["embedding"]["model"], "m");
        let values: Vec<f32> = serde_json::from_value(raw["embedding"]["vector"].clone()).unwrap();
        assert_eq!(values, [0.6, 0.8]);
    }

    /// Arbitrary JSON values, shaped like records or not.
    fn any_json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            "[a-z_ ]{0,12}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 24, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("id".to_string()),
                        Just("key".to_string()),
                        Just("state".to_string()),
                        Just("kind".to_string()),
                        Just("version".to_string()),
                        "[a-z_]{1,10}"
                    ],
                    inner,
                    0..8
                )
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// A good record with one field removed or replaced by an arbitrary value.
    fn damaged_record() -> impl Strategy<Value = String> {
        (0u32..50, "[a-z_]{1,14}", any_json(), any::<bool>()).prop_map(
            |(n, field, value, remove)| {
                let (_, good) = good_row(1000 + n);
                let mut object: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_str(&good.value).unwrap();
                let name = object
                    .keys()
                    .nth(n as usize % object.len())
                    .cloned()
                    .unwrap_or(field);
                if remove {
                    object.remove(&name);
                } else {
                    object.insert(name, value);
                }
                serde_json::Value::Object(object).to_string()
            },
        )
    }

    proptest! {
        #[test]
        fn good_records_always_load_whatever_lies_beside_them(
            bad in prop::collection::vec(
                prop_oneof![
                    any_json().prop_map(|v| v.to_string()),
                    damaged_record(),
                    ".{0,40}",
                ],
                0..12,
            ),
            good_count in 0u32..8,
            seed in any::<u64>(),
        ) {
            let goods: Vec<(MemoryRecord, StoredRow)> = (0..good_count).map(good_row).collect();
            let mut rows: Vec<StoredRow> = goods.iter().map(|(_, row)| row.clone()).collect();
            for (i, value) in bad.iter().enumerate() {
                let at = (seed as usize).wrapping_add(i * 7) % (rows.len() + 1);
                rows.insert(at, row(&format!("\"bad-{i}\""), value));
            }
            let total = rows.len();
            let memory = read_rows(rows);
            for (record, _) in &goods {
                prop_assert!(memory.records.contains(record));
            }
            prop_assert_eq!(memory.records.len() + memory.unreadable.len(), total);
        }
    }
}
