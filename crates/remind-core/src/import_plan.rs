//! What an import would do, before it does it: a preview per key, and the exact
//! records to put and ids to erase for a merge or a replace.
//!
//! The plan is applied by one store call, so an import lands completely or not at
//! all. Keys are compared by provenance first (does the file hold the lesson I have
//! now, or do I hold the file's?), which no clock can get wrong; only when both sides
//! hold the same record in different states, or each holds the other's older lesson,
//! do the records' change times decide between newer, older and conflict.

use std::collections::{BTreeMap, HashSet};

use crate::import::ImportedFile;
use crate::memory::FeedbackMemory;
use crate::memory_key::MemoryKey;
use crate::record::{MemoryRecord, RecordId};

/// How one key of the file compares with the memory here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyStatus {
    /// No lesson of this key here yet.
    New,
    /// The file's latest lesson for the key is the one here, unchanged.
    Identical,
    /// The file builds on the lesson here and has moved on: merging takes the file's.
    Newer,
    /// The lesson here builds on the file's: merging keeps this one.
    Older,
    /// Both changed since they last agreed: merging keeps this one; replace takes the file's.
    Conflict,
}

/// One line of the preview.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyPreview {
    pub key: MemoryKey,
    pub status: KeyStatus,
    /// The latest record of the key in the file (its current one, if it has one).
    pub imported: MemoryRecord,
    /// The latest record of the key here, if any.
    pub existing: Option<MemoryRecord>,
}

/// The preview the page shows before the user picks merge or replace.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportPreview {
    /// One entry per key in the file, ordered by key.
    pub keys: Vec<KeyPreview>,
    /// Records here whose key is not in the file: kept by merge, erased by replace.
    pub only_here: Vec<RecordId>,
}

impl ImportPreview {
    pub fn count(&self, status: KeyStatus) -> usize {
        self.keys.iter().filter(|k| k.status == status).count()
    }
}

/// How the file's records combine with the memory here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportMode {
    /// Adds new keys and takes newer ones; keeps what is here on conflicts.
    Merge,
    /// The memory becomes exactly the file's records; everything else is erased.
    Replace,
}

/// The exact change an import makes, for one store call.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportPlan {
    pub mode: ImportMode,
    pub put: Vec<MemoryRecord>,
    pub erase: Vec<RecordId>,
    /// Keys whose lesson here was kept although the file differs (merge conflicts).
    pub kept_here: Vec<MemoryKey>,
}

fn by_key(records: &[MemoryRecord]) -> BTreeMap<&MemoryKey, Vec<&MemoryRecord>> {
    let mut keys: BTreeMap<&MemoryKey, Vec<&MemoryRecord>> = BTreeMap::new();
    for record in records {
        keys.entry(&record.key).or_default().push(record);
    }
    keys
}

/// The record that speaks for a key: its current one, else the latest written.
fn head<'r>(records: &[&'r MemoryRecord]) -> Option<&'r MemoryRecord> {
    records
        .iter()
        .copied()
        .find(|r| r.is_current())
        .or_else(|| {
            records
                .iter()
                .copied()
                .max_by_key(|r| (r.version, r.changed_at(), &r.id))
        })
}

/// Whether two copies of one record say the same (statistics and embeddings aside:
/// they are bookkeeping, not lessons).
fn same_state(a: &MemoryRecord, b: &MemoryRecord) -> bool {
    a.same_lesson(b)
        && a.state == b.state
        && a.supersedes == b.supersedes
        && a.superseded_by == b.superseded_by
}

fn classify(here: &[&MemoryRecord], file: &[&MemoryRecord]) -> KeyStatus {
    let (Some(mine), Some(theirs)) = (head(here), head(file)) else {
        return KeyStatus::New;
    };
    let copy_in = |records: &[&MemoryRecord], id: &RecordId| {
        records.iter().copied().find(|r| &r.id == id).cloned()
    };
    if mine.id == theirs.id {
        return if same_state(mine, theirs) {
            KeyStatus::Identical
        } else if theirs.changed_at() > mine.changed_at() {
            KeyStatus::Newer
        } else if theirs.changed_at() < mine.changed_at() {
            KeyStatus::Older
        } else {
            KeyStatus::Conflict
        };
    }
    // The file holds my head: it moved on from it, unless mine changed since.
    if let Some(their_copy_of_mine) = copy_in(file, &mine.id) {
        return if mine.changed_at() > their_copy_of_mine.changed_at() {
            KeyStatus::Conflict
        } else {
            KeyStatus::Newer
        };
    }
    if let Some(my_copy_of_theirs) = copy_in(here, &theirs.id) {
        return if theirs.changed_at() > my_copy_of_theirs.changed_at() {
            KeyStatus::Conflict
        } else {
            KeyStatus::Older
        };
    }
    KeyStatus::Conflict
}

/// Compares a validated file with the memory here, key by key.
pub fn preview(existing: &FeedbackMemory, file: &ImportedFile) -> ImportPreview {
    let here = by_key(existing.records());
    let theirs = by_key(&file.records);
    let keys = theirs
        .iter()
        .filter_map(|(key, file_records)| {
            let here_records = here.get(key).map(Vec::as_slice).unwrap_or_default();
            Some(KeyPreview {
                key: (*key).clone(),
                status: classify(here_records, file_records),
                imported: head(file_records)?.clone(),
                existing: head(here_records).cloned(),
            })
        })
        .collect();
    let only_here = existing
        .records()
        .iter()
        .filter(|r| !theirs.contains_key(&r.key))
        .map(|r| r.id.clone())
        .collect();
    ImportPreview { keys, only_here }
}

/// Plans an import. Merge takes the file's records of new and newer keys (keeping
/// history here that the file lacks) and leaves every other key as it is here;
/// replace puts every record of the file and erases every other record here.
pub fn plan_import(existing: &FeedbackMemory, file: &ImportedFile, mode: ImportMode) -> ImportPlan {
    match mode {
        ImportMode::Replace => {
            let kept: HashSet<&RecordId> = file.records.iter().map(|r| &r.id).collect();
            ImportPlan {
                mode,
                put: file.records.clone(),
                erase: existing
                    .records()
                    .iter()
                    .filter(|r| !kept.contains(&r.id))
                    .map(|r| r.id.clone())
                    .collect(),
                kept_here: Vec::new(),
            }
        }
        ImportMode::Merge => {
            let mut put = Vec::new();
            let mut kept_here = Vec::new();
            let theirs = by_key(&file.records);
            for line in preview(existing, file).keys {
                match line.status {
                    KeyStatus::New | KeyStatus::Newer => {
                        let records = theirs.get(&line.key).map(Vec::as_slice).unwrap_or_default();
                        put.extend(records.iter().map(|r| (*r).clone()));
                    }
                    KeyStatus::Conflict => kept_here.push(line.key),
                    KeyStatus::Identical | KeyStatus::Older => {}
                }
            }
            ImportPlan {
                mode,
                put,
                erase: Vec::new(),
                kept_here,
            }
        }
    }
}
