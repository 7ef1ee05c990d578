//! What an import would do, before it does it: a preview per key, and the exact
//! records to put and ids to erase for a merge or a replace.
//!
//! The plan is applied by one store call, so an import lands completely or not at
//! all. Keys are compared by provenance first (does the file hold the lesson I have
//! now, or do I hold the file's?), which no clock can get wrong; only when both sides
//! hold the same record in different states, or each holds the other's older lesson,
//! do the records' change times decide between newer, older and conflict.
//!
//! An id names one record: what it teaches, when it was written, its version and the
//! record it replaced never change after it is written; only its state and successor
//! do. A file record whose id is that of a different record here (another question,
//! another lesson, another version) is therefore not a newer copy but a collision;
//! its key is a conflict, so a merge keeps the lesson here rather than overwrite it
//! under the other record's id. And since no classification can foresee every
//! hand-edited file or damaged store, every plan is checked once more on the memory
//! it would leave before it is handed out.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use thiserror::Error;

use crate::import::{ImportError, ImportedFile, history_problems_named, truncated};
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
    /// Both changed since they last agreed, or the file reuses the id of a different
    /// record here (see [`KeyPreview::reused_ids`]): merging keeps this one; replace
    /// takes the file's.
    Conflict,
}

/// A file record whose id is already the id of a different record here.
#[derive(Clone, Debug, PartialEq)]
pub struct ReusedId {
    pub id: RecordId,
    /// The record the file holds under the id.
    pub in_file: MemoryRecord,
    /// The record this memory holds under the same id.
    pub here: MemoryRecord,
}

impl fmt::Display for ReusedId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the file's record \"{}\" (\"{}\": {}) has the id of a different lesson here (\"{}\": {})",
            truncated(&self.id.0),
            truncated(&self.in_file.question),
            truncated(&self.in_file.kind.text()),
            truncated(&self.here.question),
            truncated(&self.here.kind.text()),
        )
    }
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
    /// Records of the key in the file whose ids name different records here (of this
    /// key or another); when there are any, the key is a [`KeyStatus::Conflict`].
    pub reused_ids: Vec<ReusedId>,
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
    /// Keys whose lesson here was kept although the file differs (merge conflicts,
    /// reused ids among them).
    pub kept_here: Vec<MemoryKey>,
}

/// Why an import was not planned: the memory it would leave breaks the history rules
/// (a key with two current lessons, a supersede link to a record that is not there or
/// does not link back). Nothing is written.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{}", refusal_text(*mode, problems))]
pub struct ImportPlanError {
    pub mode: ImportMode,
    /// Each problem names a record of the resulting memory by id, and says whether
    /// the record came from the file or is one here.
    pub problems: Vec<ImportError>,
}

fn refusal_text(mode: ImportMode, problems: &[ImportError]) -> String {
    let shown: Vec<String> = problems.iter().take(3).map(ToString::to_string).collect();
    let rest = problems.len().saturating_sub(shown.len());
    let more = if rest == 0 {
        String::new()
    } else {
        format!("; and {rest} more")
    };
    let (doing, way_out) = match mode {
        ImportMode::Merge => (
            "merging this file",
            "correct the records marked \"from the file\" in the file, or forget the question of those marked \"here\" (\"Forget permanently\" in the memory browser), then import again",
        ),
        ImportMode::Replace => (
            "replacing the memory with this file",
            "correct the file and import it again",
        ),
    };
    format!(
        "nothing was imported: {doing} would leave an inconsistent history ({}{more}); {way_out}",
        shown.join("; ")
    )
}

fn by_key<'r>(
    records: impl IntoIterator<Item = &'r MemoryRecord>,
) -> BTreeMap<&'r MemoryKey, Vec<&'r MemoryRecord>> {
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

/// Whether two records with one id are copies of one record: everything fixed when a
/// record is written agrees (its lesson, source, time, version and predecessor). Its
/// state, successor, change note, stats and embedding may differ between copies.
fn same_record(a: &MemoryRecord, b: &MemoryRecord) -> bool {
    a.id == b.id
        && a.same_lesson(b)
        && a.source == b.source
        && a.created_at == b.created_at
        && a.version == b.version
        && a.supersedes == b.supersedes
}

/// The file's records of one key whose ids name different records here.
fn reused_ids(here: &HashMap<&RecordId, &MemoryRecord>, file: &[&MemoryRecord]) -> Vec<ReusedId> {
    file.iter()
        .filter_map(|theirs| {
            let mine = here.get(&theirs.id)?;
            (!same_record(mine, theirs)).then(|| ReusedId {
                id: theirs.id.clone(),
                in_file: (*theirs).clone(),
                here: (*mine).clone(),
            })
        })
        .collect()
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
    let here = by_key(existing.records().iter().map(Arc::as_ref));
    let here_by_id: HashMap<&RecordId, &MemoryRecord> = existing
        .records()
        .iter()
        .map(|r| (&r.id, r.as_ref()))
        .collect();
    let theirs = by_key(&file.records);
    let keys = theirs
        .iter()
        .filter_map(|(key, file_records)| {
            let here_records = here.get(key).map(Vec::as_slice).unwrap_or_default();
            let reused_ids = reused_ids(&here_by_id, file_records);
            let status = if reused_ids.is_empty() {
                classify(here_records, file_records)
            } else {
                KeyStatus::Conflict
            };
            Some(KeyPreview {
                key: (*key).clone(),
                status,
                imported: head(file_records)?.clone(),
                existing: head(here_records).cloned(),
                reused_ids,
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
/// replace puts every record of the file and erases every other record here. The plan
/// is returned only if the memory it leaves passes [`check_plan`].
pub fn plan_import(
    existing: &FeedbackMemory,
    file: &ImportedFile,
    mode: ImportMode,
) -> Result<ImportPlan, ImportPlanError> {
    let plan = unchecked_plan(existing, file, mode, None);
    check_plan(existing, &plan)?;
    Ok(plan)
}

/// The plan of an import whose [`preview`] against `existing` was just made (a merge
/// is planned from it, and making it again for thousands of keys is most of the
/// work), not yet checked: it may be applied only once [`check_plan`] passed on it.
/// [`plan_import`] is this and the check in one step.
pub fn plan_unchecked_from_preview(
    existing: &FeedbackMemory,
    file: &ImportedFile,
    seen: &ImportPreview,
    mode: ImportMode,
) -> ImportPlan {
    unchecked_plan(existing, file, mode, Some(seen))
}

fn unchecked_plan(
    existing: &FeedbackMemory,
    file: &ImportedFile,
    mode: ImportMode,
    seen: Option<&ImportPreview>,
) -> ImportPlan {
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
            let made;
            let seen = match seen {
                Some(seen) => seen,
                None => {
                    made = preview(existing, file);
                    &made
                }
            };
            for line in &seen.keys {
                match line.status {
                    KeyStatus::New | KeyStatus::Newer => {
                        let records = theirs.get(&line.key).map(Vec::as_slice).unwrap_or_default();
                        put.extend(records.iter().map(|r| (*r).clone()));
                    }
                    KeyStatus::Conflict => kept_here.push(line.key.clone()),
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

/// Checks the memory a plan would leave (`existing` without `erase`, with `put` written
/// over records of the same id, as the store applies it): every key it touches has at
/// most one current record, and every supersede link there points at a record of the
/// same key that links back. Keys the plan does not touch are not judged: an import
/// is not refused for a lesson it leaves alone. A touched key is one a put or erased
/// record has, or had here, so a record written over another key's record (whose
/// history would then point at a lesson of another question) is judged in both.
pub fn check_plan(existing: &FeedbackMemory, plan: &ImportPlan) -> Result<(), ImportPlanError> {
    let put_ids: HashSet<&RecordId> = plan.put.iter().map(|r| &r.id).collect();
    let erased: HashSet<&RecordId> = plan.erase.iter().collect();
    let touched: HashSet<&MemoryKey> = plan
        .put
        .iter()
        .map(|r| &r.key)
        .chain(
            existing
                .records()
                .iter()
                .filter(|r| put_ids.contains(&r.id) || erased.contains(&r.id))
                .map(|r| &r.key),
        )
        .collect();
    // As the store applies a change: erased records go, put records are written over
    // the record of the same id or added. Built with an index, not by search, since
    // a replace may erase and put thousands of records.
    let mut records: Vec<MemoryRecord> = existing
        .records()
        .iter()
        .filter(|r| touched.contains(&r.key) && !erased.contains(&r.id))
        .map(|r| MemoryRecord::clone(r))
        .collect();
    let mut slot_of: HashMap<RecordId, usize> = records
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.clone(), i))
        .collect();
    for record in &plan.put {
        match slot_of.get(&record.id) {
            Some(&i) => records[i] = record.clone(),
            None => {
                slot_of.insert(record.id.clone(), records.len());
                records.push(record.clone());
            }
        }
    }
    let name = |i: usize| {
        records.get(i).map_or_else(String::new, |r| {
            let origin = if put_ids.contains(&r.id) {
                "from the file"
            } else {
                "here"
            };
            format!("record \"{}\" ({origin})", truncated(&r.id.0))
        })
    };
    let problems = history_problems_named(&records, &name);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ImportPlanError {
            mode: plan.mode,
            problems,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Lesson;
    use crate::record::{RecordState, Timestamp};

    const LIKE: &str = "What is like < fast > ?";
    const EGG: &str = "How do I boil an egg?";

    fn write(memory: &mut FeedbackMemory, question: &str, text: &str, id: &str, at: i64) {
        let written = memory.plan_write(
            Lesson::user_clarification(question, text),
            RecordId(id.into()),
            Timestamp(at),
        );
        memory.apply(&written);
    }

    fn file_of(memory: &FeedbackMemory) -> ImportedFile {
        ImportedFile {
            version: 1,
            exported_at: Timestamp(100),
            app_version: "test".into(),
            records: memory.to_records(),
        }
    }

    /// A lesson corrected once: `a` replaced by `b`.
    fn here() -> FeedbackMemory {
        let mut memory = FeedbackMemory::default();
        write(&mut memory, LIKE, "I mean rhymes", "a", 1);
        write(&mut memory, LIKE, "I want a synonym", "b", 2);
        memory
    }

    fn line<'p>(preview: &'p ImportPreview, question: &str) -> &'p KeyPreview {
        let key = MemoryKey::of_question(question);
        preview.keys.iter().find(|k| k.key == key).unwrap()
    }

    #[test]
    fn a_file_record_with_the_id_of_another_questions_lesson_is_a_conflict_kept_here() {
        let mut theirs = FeedbackMemory::default();
        write(&mut theirs, EGG, "I mean soft-boiled", "b", 5);
        let file = file_of(&theirs);
        let shown = preview(&here(), &file);
        let egg = line(&shown, EGG);
        assert_eq!(egg.status, KeyStatus::Conflict, "not new");
        assert_eq!(egg.reused_ids.len(), 1);
        assert_eq!(egg.reused_ids[0].here.question, LIKE);
        assert_eq!(egg.reused_ids[0].in_file.question, EGG);
        let text = egg.reused_ids[0].to_string();
        assert!(text.contains(LIKE) && text.contains(EGG), "{text}");

        let merge = plan_import(&here(), &file, ImportMode::Merge).unwrap();
        assert!(merge.put.is_empty(), "the lesson here is never overwritten");
        assert_eq!(merge.kept_here, [MemoryKey::of_question(EGG)]);
    }

    #[test]
    fn a_record_of_the_same_id_with_other_words_is_a_conflict_however_late_it_changed() {
        let mut theirs = here();
        let mut b = theirs.get(&RecordId("b".into())).unwrap().clone();
        b.kind = crate::record::RecordKind::clarification("I want an antonym");
        b.change = b.change.map(|note| crate::record::ChangeNote {
            at: Timestamp(50),
            ..note
        });
        theirs.upsert(b);
        let shown = preview(&here(), &file_of(&theirs));
        assert_eq!(line(&shown, LIKE).status, KeyStatus::Conflict);
        assert_eq!(line(&shown, LIKE).reused_ids[0].id, RecordId("b".into()));
    }

    #[test]
    fn copies_of_the_same_records_are_identical_and_reuse_no_id() {
        let shown = preview(&here(), &file_of(&here()));
        assert_eq!(line(&shown, LIKE).status, KeyStatus::Identical);
        assert!(line(&shown, LIKE).reused_ids.is_empty());
    }

    #[test]
    fn a_replace_may_write_over_a_reused_id_since_the_memory_becomes_the_file() {
        let mut theirs = FeedbackMemory::default();
        write(&mut theirs, EGG, "I mean soft-boiled", "b", 5);
        let plan = plan_import(&here(), &file_of(&theirs), ImportMode::Replace).unwrap();
        assert_eq!(plan.put, theirs.to_records());
        assert_eq!(plan.erase, [RecordId("a".into())]);
    }

    #[test]
    fn a_plan_leaving_two_current_lessons_for_a_key_is_refused_naming_both() {
        let existing = here();
        let mut stray = existing.get(&RecordId("b".into())).unwrap().clone();
        stray.id = RecordId("stray".into());
        stray.supersedes = None;
        stray.version = 3;
        let plan = ImportPlan {
            mode: ImportMode::Merge,
            put: vec![stray],
            erase: Vec::new(),
            kept_here: Vec::new(),
        };
        let refused = check_plan(&existing, &plan).unwrap_err();
        assert!(
            matches!(&refused.problems[..], [ImportError::TwoCurrent { path, first, .. }]
                if path == "record \"stray\" (from the file).state" && first == "record \"b\" (here)"),
            "{refused:?}"
        );
        let text = refused.to_string();
        assert!(
            text.starts_with("nothing was imported: merging this file") && text.contains("stray"),
            "{text}"
        );
    }

    #[test]
    fn a_plan_writing_over_a_record_that_history_links_to_is_refused() {
        // What the reported bug did: the file's egg lesson written under id `b`
        // leaves `a` saying it was superseded by a lesson of another question.
        let existing = here();
        let mut theirs = FeedbackMemory::default();
        write(&mut theirs, EGG, "I mean soft-boiled", "b", 5);
        let plan = ImportPlan {
            mode: ImportMode::Merge,
            put: theirs.to_records(),
            erase: Vec::new(),
            kept_here: Vec::new(),
        };
        let refused = check_plan(&existing, &plan).unwrap_err();
        assert!(
            refused.problems.iter().any(|p| matches!(p,
                ImportError::MissingLink { path, id } if path == "record \"a\" (here).superseded_by" && id == "b")),
            "{refused:?}"
        );
    }

    #[test]
    fn an_erased_record_that_history_links_to_is_refused() {
        let existing = here();
        let plan = ImportPlan {
            mode: ImportMode::Merge,
            put: Vec::new(),
            erase: vec![RecordId("a".into())],
            kept_here: Vec::new(),
        };
        let refused = check_plan(&existing, &plan).unwrap_err();
        assert!(
            matches!(&refused.problems[..], [ImportError::MissingLink { path, .. }] if path.ends_with(".supersedes")),
            "{refused:?}"
        );
    }

    #[test]
    fn keys_a_plan_does_not_touch_are_not_judged() {
        let mut existing = here();
        // An inconsistency here, in a key the file does not hold.
        let mut a = existing.get(&RecordId("a".into())).unwrap().clone();
        a.state = RecordState::Current;
        existing.upsert(a);
        let mut theirs = FeedbackMemory::default();
        write(&mut theirs, EGG, "I mean soft-boiled", "egg", 5);
        let plan = plan_import(&existing, &file_of(&theirs), ImportMode::Merge).unwrap();
        assert_eq!(plan.put.len(), 1);
    }
}
