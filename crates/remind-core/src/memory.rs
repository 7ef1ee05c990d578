//! The feedback memory: one current lesson per key, with every earlier one kept.
//!
//! Corrections replace; they never stack. A new clarification for a key that already
//! has a current record supersedes it, so a prompt can only ever carry one lesson per
//! request, and the replaced lesson stays readable in history. Every checked write
//! names the version it read, so a write based on a stale view is refused instead of
//! silently overwriting a lesson someone else (another tab) changed in between.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use thiserror::Error;

use crate::memory_key::MemoryKey;
use crate::record::{
    Actor, ChangeNote, ChangeReason, MAX_EXCEPTIONS_PER_LESSON, MAX_PATTERNS_PER_LESSON,
    MemoryRecord, Reach, RecordId, RecordKind, RecordState, RecordStats, Source, StoredEmbedding,
    Timestamp,
};
use crate::request_pattern::{PatternError, RequestPattern};
use crate::stored_record::StoredVector;
use crate::verified_examples::example_key;
use crate::write_gate::{self, Admission, Durability, Origin, Refusal, StoredText};

/// What the user taught, before the memory gives it an id, a version and a place.
#[derive(Clone, Debug, PartialEq)]
pub struct Lesson {
    pub question: String,
    pub kind: RecordKind,
    pub source: Source,
}

/// What a correction the user typed becomes once the write gate has read it.
#[derive(Clone, Debug, PartialEq)]
pub enum AdmittedCorrection {
    /// A lasting lesson, to be planned against the memory and stored.
    Lesson(Lesson),
    /// "Just this once": it goes with this turn only and is never stored.
    ThisTurnOnly { clarification: String },
}

impl Lesson {
    /// The one path from a typed correction to a lesson, for the page and the harness:
    /// the write gate reads the clarification (a one-time instruction stays in the
    /// turn) and, for a lasting lesson, the question it will be stored with; the lesson
    /// goes with the questions of `reach`.
    pub fn from_correction(
        question: &str,
        clarification: &str,
        durability: Durability,
        reach: Reach,
    ) -> Result<AdmittedCorrection, Refusal> {
        let clarification = clarification.trim();
        match write_gate::admit(clarification, Origin::UserTyped, durability)? {
            Admission::ThisTurnOnly => {
                return Ok(AdmittedCorrection::ThisTurnOnly {
                    clarification: clarification.to_string(),
                });
            }
            Admission::Lasting => {}
        }
        // A lasting lesson stores its question too (and exports it), so a key typed
        // into the question is refused here, before anything is read or written.
        write_gate::admit_question(question)?;
        Ok(AdmittedCorrection::Lesson(Lesson {
            question: question.to_string(),
            kind: RecordKind::clarification_for(clarification, reach),
            source: Source::UserStated,
        }))
    }

    /// The one path from a reply the user confirmed ("This is right") to a verified
    /// example, for the page and the harness: the write gate reads the question, the
    /// understanding and the answer as the texts that will be stored.
    pub fn from_confirmed_reply(
        question: &str,
        understanding: &str,
        answer: &str,
    ) -> Result<Lesson, Refusal> {
        let question = question.trim();
        write_gate::admit_confirmed_reply(
            question,
            understanding,
            answer,
            Origin::UserConfirmedProposal,
        )?;
        Ok(Lesson {
            question: question.to_string(),
            kind: RecordKind::VerifiedExample {
                understanding: understanding.to_string(),
                answer: answer.to_string(),
            },
            source: Source::UserStated,
        })
    }

    /// A clarification in the user's own words: the common lesson.
    pub fn user_clarification(question: &str, clarification: &str) -> Self {
        Lesson {
            question: question.into(),
            kind: RecordKind::clarification(clarification),
            source: Source::UserStated,
        }
    }

    /// The key the lesson is stored under: its question's, in the verified examples'
    /// own namespace for an example, so an example and a clarification of the same
    /// question are each the one current record of their own key.
    pub fn key(&self) -> MemoryKey {
        match self.kind {
            RecordKind::Clarification { .. } => MemoryKey::of_question(&self.question),
            RecordKind::VerifiedExample { .. } => example_key(&self.question),
        }
    }
}

/// The records a planned write would put into the store: the new current one, the one
/// it replaces, and the lesson of another key that was applied to the corrected turn
/// and misfired. Planning changes nothing; a use-case commits it in one transaction
/// and, once the store confirmed, returns it as what was written.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedWrite {
    pub current: MemoryRecord,
    pub replaced: Option<MemoryRecord>,
    /// Only filled by a correction whose turn had lessons of *other* keys applied:
    /// they stay current (they may be right for their own questions) but their
    /// failure counts went up.
    pub misfired: Vec<MemoryRecord>,
}

impl PlannedWrite {
    /// Every record this write puts into the store, in one transaction.
    pub fn records(&self) -> Vec<MemoryRecord> {
        std::iter::once(&self.current)
            .chain(&self.replaced)
            .chain(&self.misfired)
            .cloned()
            .collect()
    }
}

/// A change of the questions a clarification applies to, made from one question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeChange {
    /// "Not relevant here", pressed under a turn or on a suggestion: keep it off the
    /// question's kind.
    NotRelevantHere,
    /// "Apply there again", in the memory browser: take one such mark back.
    RelevantAgain,
    /// A suggestion accepted: the lesson applies to questions like this one too (the
    /// question's proposed pattern joins its scope; a mark on its kind is taken back).
    AppliesHereToo,
}

/// Why a planned change was refused; nothing is written in any of these cases.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum MemoryError {
    /// The write named a version that is no longer the current one. `current` is what
    /// is current now (none if the lesson was withdrawn), so the page can show it.
    #[error(
        "this lesson changed since you read it (you had {}, now {}); review the current one and try again",
        describe_version(*expected),
        describe_version(current.as_ref().map(|c| c.version))
    )]
    Stale {
        expected: Option<u32>,
        current: Option<Box<MemoryRecord>>,
    },
    #[error(
        "this lesson no longer exists (it may have been forgotten in another tab); reload the memory"
    )]
    UnknownRecord(RecordId),
    #[error(
        "this lesson replaced nothing, so there is no earlier version to restore; withdraw it instead"
    )]
    NothingToRestore,
    #[error("nothing to save: the new text is the same as the current lesson")]
    Unchanged,
    #[error("this lesson is already not applied to questions like this one")]
    AlreadyNotRelevant,
    #[error("this lesson already applies to questions like this one")]
    AlreadyApplies,
    #[error(
        "a lesson applies to at most {MAX_PATTERNS_PER_LESSON} kinds of question; remove one, or choose \"every question\" for it instead"
    )]
    TooManyPatterns,
    #[error("nothing to save: the lesson already applies there")]
    ScopeUnchanged,
    #[error("cannot tell what kind of question this is: {0}")]
    NoPattern(#[from] PatternError),
    #[error("this lesson was not marked as not relevant to that question; nothing to take back")]
    NoSuchException,
    #[error(
        "this lesson is already kept away from {MAX_EXCEPTIONS_PER_LESSON} kinds of question; withdraw or rewrite it instead"
    )]
    TooManyExceptions,
    #[error(
        "a verified example is a reply you confirmed, not text to edit; withdraw it and confirm a better reply instead"
    )]
    NotAClarification,
    #[error(transparent)]
    Refused(#[from] Refusal),
}

fn describe_version(version: Option<u32>) -> String {
    version.map_or_else(|| "no lesson".to_string(), |v| format!("version {v}"))
}

/// All records, current and historical, as one value.
///
/// Each record is shared, not copied, by the snapshots cloned from this one: the
/// session takes a new snapshot after every change, a usage count included, and
/// copying a hundred thousand records for one changed record cost about 0.1 s.
#[derive(Clone, Debug, Default)]
pub struct FeedbackMemory {
    records: Vec<Arc<MemoryRecord>>,
    /// Where each id's record stands in `records`: built by the first lookup after a
    /// change and shared (an `Arc`) by the snapshots cloned from it. The page looks up
    /// every lesson it shows by id; searching ten thousand records for each was a good
    /// part of what a reload and a question cost.
    slot_of: OnceLock<Arc<HashMap<RecordId, usize>>>,
}

/// Two memories are equal when they hold the same records; the index follows from them.
impl PartialEq for FeedbackMemory {
    fn eq(&self, other: &Self) -> bool {
        self.records == other.records
    }
}

impl FeedbackMemory {
    pub fn from_records(records: Vec<MemoryRecord>) -> Self {
        FeedbackMemory {
            records: records.into_iter().map(Arc::new).collect(),
            slot_of: OnceLock::new(),
        }
    }

    fn slot_of(&self) -> &HashMap<RecordId, usize> {
        self.slot_of
            .get_or_init(|| Arc::new(slots_of(&self.records)))
    }

    pub fn records(&self) -> &[Arc<MemoryRecord>] {
        &self.records
    }

    /// Every record, current and historical, as values of their own.
    pub fn to_records(&self) -> Vec<MemoryRecord> {
        self.records
            .iter()
            .map(|r| MemoryRecord::clone(r))
            .collect()
    }

    /// The current records in the order they were written (oldest first).
    pub fn current(&self) -> impl Iterator<Item = &MemoryRecord> {
        self.records
            .iter()
            .map(Arc::as_ref)
            .filter(|r| r.is_current())
    }

    /// The key a clarification of `question` is written under: the question's key,
    /// unless an earlier version of Remind stored this question's current lesson under
    /// its exact wording; that lesson is then corrected in place, so a question never
    /// has two current lessons because the key rules changed.
    pub fn clarification_key(&self, question: &str) -> MemoryKey {
        let key = MemoryKey::of_question(question);
        let exact = MemoryKey::of_exact_question(question);
        if exact != key && self.current_for(&key).is_none() && self.current_for(&exact).is_some() {
            return exact;
        }
        key
    }

    /// The key `lesson` is written under in this memory (see
    /// [`FeedbackMemory::clarification_key`]).
    pub fn key_of(&self, lesson: &Lesson) -> MemoryKey {
        match lesson.kind {
            RecordKind::Clarification { .. } => self.clarification_key(&lesson.question),
            RecordKind::VerifiedExample { .. } => lesson.key(),
        }
    }

    pub fn current_for(&self, key: &MemoryKey) -> Option<&MemoryRecord> {
        self.current().find(|r| &r.key == key)
    }

    /// The version a writer should name for `key`: that of its current record, or
    /// `None` when the key has no current lesson.
    pub fn current_version(&self, key: &MemoryKey) -> Option<u32> {
        self.current_for(key).map(|r| r.version)
    }

    pub fn get(&self, id: &RecordId) -> Option<&MemoryRecord> {
        self.slot_of().get(id).map(|&i| &*self.records[i])
    }

    /// Every record of a key, oldest first.
    pub fn history(&self, key: &MemoryKey) -> Vec<&MemoryRecord> {
        let mut of_key: Vec<&MemoryRecord> = self
            .records
            .iter()
            .map(Arc::as_ref)
            .filter(|r| &r.key == key)
            .collect();
        of_key.sort_by_key(|r| (r.version, r.created_at));
        of_key
    }

    /// Plans the write of a lesson as the newest word on its key, without a version
    /// check. For callers that own the memory they write to (the benchmark harness,
    /// tests); the page uses [`FeedbackMemory::plan_correction`].
    pub fn plan_write(&self, lesson: Lesson, id: RecordId, now: Timestamp) -> PlannedWrite {
        let key = self.key_of(&lesson);
        self.supersede(key, lesson, &[], id, now, ChangeReason::Corrected)
    }

    /// Plans a correction: the lesson becomes the current record of its question's key
    /// and supersedes the one there, if `expected` (the version the writer read, `None`
    /// for "no current lesson") still holds. `applied` are the lessons retrieved for the
    /// corrected turn: they evidently did not help, so their failure counts go up.
    pub fn plan_correction(
        &self,
        lesson: Lesson,
        expected: Option<u32>,
        applied: &[RecordId],
        id: RecordId,
        now: Timestamp,
    ) -> Result<PlannedWrite, MemoryError> {
        let key = self.key_of(&lesson);
        self.check_key(&key, expected)?;
        let reason = match self.current_for(&key) {
            Some(target) if applied.contains(&target.id) => ChangeReason::CorrectedAfterApplied,
            _ => ChangeReason::Corrected,
        };
        let mut written = self.supersede(key, lesson, applied, id, now, reason);
        let replaced = written.replaced.as_ref().map(|r| r.id.clone());
        written.misfired = applied
            .iter()
            .filter(|applied| replaced.as_ref() != Some(*applied))
            .filter_map(|applied| self.get(applied))
            .map(|record| MemoryRecord {
                stats: record.stats.failed_after_applied(),
                ..record.clone()
            })
            .collect();
        Ok(written)
    }

    /// Plans an edit of a current lesson's text: a new record with the same question
    /// supersedes it. The new text passes the write gate like any typed correction.
    pub fn plan_edit(
        &self,
        id: &RecordId,
        expected: u32,
        clarification: &str,
        new_id: RecordId,
        now: Timestamp,
    ) -> Result<PlannedWrite, MemoryError> {
        let record = self.check_current(id, expected)?;
        let clarification = clarification.trim();
        let Some(current_text) = record.clarification() else {
            return Err(MemoryError::NotAClarification);
        };
        write_gate::admit_text(StoredText::EditedLesson, clarification, Origin::UserTyped)?;
        if clarification == current_text {
            return Err(MemoryError::Unchanged);
        }
        // An edit changes what the lesson says, not which questions it goes with.
        let lesson = Lesson {
            question: record.question.clone(),
            kind: RecordKind::Clarification {
                text: clarification.to_string(),
                reach: record.kind.reach().cloned().unwrap_or_default(),
                not_for: record.kind.not_for().to_vec(),
            },
            source: Source::UserStated,
        };
        Ok(self.supersede(
            record.key.clone(),
            lesson,
            &[],
            new_id,
            now,
            ChangeReason::Edited,
        ))
    }

    /// Plans a change of where a clarification applies (see [`ScopeChange`]).
    pub fn plan_scope_change(
        &self,
        id: &RecordId,
        expected: u32,
        question: &str,
        change: ScopeChange,
        new_id: RecordId,
        now: Timestamp,
    ) -> Result<PlannedWrite, MemoryError> {
        match change {
            ScopeChange::NotRelevantHere => {
                self.plan_not_relevant(id, expected, question, new_id, now)
            }
            ScopeChange::RelevantAgain => {
                self.plan_relevant_again(id, expected, question, new_id, now)
            }
            ScopeChange::AppliesHereToo => {
                self.plan_applies_here_too(id, expected, question, new_id, now)
            }
        }
    }

    /// Plans the scope the user set for the current clarification `id` (at version
    /// `expected`) in the memory browser: from now on it goes with the questions of
    /// `reach`. A new version carries it, so history keeps the old scope and undo
    /// restores it. Patterns listed twice count once; the "not relevant here" marks stay,
    /// each still shown with its own way back. A pattern is stored and exported like a
    /// question, so each passes the write gate as one.
    pub fn plan_reach_change(
        &self,
        id: &RecordId,
        expected: u32,
        reach: Reach,
        new_id: RecordId,
        now: Timestamp,
    ) -> Result<PlannedWrite, MemoryError> {
        let record = self.check_current(id, expected)?;
        let RecordKind::Clarification {
            text,
            reach: reach_now,
            not_for,
        } = &record.kind
        else {
            return Err(MemoryError::NotAClarification);
        };
        let reach = match reach {
            Reach::EveryQuestion => Reach::EveryQuestion,
            Reach::QuestionsLike(patterns) => {
                let mut distinct: Vec<RequestPattern> = Vec::with_capacity(patterns.len());
                for pattern in patterns {
                    if !distinct.contains(&pattern) {
                        distinct.push(pattern);
                    }
                }
                if distinct.len() > MAX_PATTERNS_PER_LESSON {
                    return Err(MemoryError::TooManyPatterns);
                }
                for pattern in &distinct {
                    write_gate::admit_question(&pattern.to_string())?;
                }
                Reach::QuestionsLike(distinct)
            }
        };
        if reach == *reach_now {
            return Err(MemoryError::ScopeUnchanged);
        }
        let kind = RecordKind::Clarification {
            text: text.clone(),
            reach,
            not_for: not_for.clone(),
        };
        Ok(self.plan_where_it_applies(record, kind, new_id, now))
    }

    /// Plans widening the current clarification `id` (at version `expected`) to
    /// questions like `question`: its proposed pattern joins the lesson's scope, and a
    /// "not relevant here" mark on its kind is taken back. The question is stored in the
    /// pattern's words, so it passes the write gate first.
    pub fn plan_applies_here_too(
        &self,
        id: &RecordId,
        expected: u32,
        question: &str,
        new_id: RecordId,
        now: Timestamp,
    ) -> Result<PlannedWrite, MemoryError> {
        let question = question.trim();
        write_gate::admit_question(question)?;
        let record = self.check_current(id, expected)?;
        let RecordKind::Clarification {
            text,
            reach: reach_now,
            not_for,
        } = &record.kind
        else {
            return Err(MemoryError::NotAClarification);
        };
        let key = MemoryKey::of_question(question);
        let not_for: Vec<String> = not_for
            .iter()
            .filter(|q| MemoryKey::of_question(q) != key)
            .cloned()
            .collect();
        let reach = match reach_now {
            Reach::EveryQuestion => Reach::EveryQuestion,
            Reach::QuestionsLike(patterns) if patterns.iter().any(|p| p.fits(question)) => {
                reach_now.clone()
            }
            Reach::QuestionsLike(patterns) => {
                if patterns.len() >= MAX_PATTERNS_PER_LESSON {
                    return Err(MemoryError::TooManyPatterns);
                }
                let pattern = RequestPattern::proposal(question)?;
                Reach::QuestionsLike(patterns.iter().cloned().chain([pattern]).collect())
            }
        };
        if reach == *reach_now && not_for.len() == record.kind.not_for().len() {
            return Err(MemoryError::AlreadyApplies);
        }
        let kind = RecordKind::Clarification {
            text: text.clone(),
            reach,
            not_for,
        };
        Ok(self.plan_where_it_applies(record, kind, new_id, now))
    }

    /// Plans what "This is right" teaches the lessons that went with the confirmed turn
    /// by similarity alone (`applied`: their ids and the versions the turn carried):
    /// they were right here, so each now also applies to questions like `question`, as
    /// an accepted suggestion does. A lesson of the question's own kind already reaches
    /// it at distance 0; one changed since, already fitting, or full of patterns is
    /// left as it is; the confirmation stands either way.
    pub fn plan_confirmed_here(
        &self,
        question: &str,
        applied: &[(RecordId, u32)],
        mut next_id: impl FnMut() -> RecordId,
        now: Timestamp,
    ) -> Vec<PlannedWrite> {
        let kind = MemoryKey::of_question(question);
        applied
            .iter()
            .filter(|(id, _)| self.get(id).is_some_and(|r| r.key != kind))
            .filter_map(|(id, version)| {
                self.plan_applies_here_too(id, *version, question, next_id(), now)
                    .ok()
            })
            .collect()
    }

    /// Plans "not relevant here": the current clarification `id` (at version `expected`)
    /// is no longer attached to questions of `question`'s kind. A new version carries
    /// the exception, so the mark shows in the history and undo takes it back. The
    /// question is stored with the lesson, so it passes the write gate first.
    pub fn plan_not_relevant(
        &self,
        id: &RecordId,
        expected: u32,
        question: &str,
        new_id: RecordId,
        now: Timestamp,
    ) -> Result<PlannedWrite, MemoryError> {
        let question = question.trim();
        write_gate::admit_question(question)?;
        let record = self.check_current(id, expected)?;
        if !record.kind.is_clarification() {
            return Err(MemoryError::NotAClarification);
        }
        if record
            .kind
            .is_excluded_from(&MemoryKey::of_question(question))
        {
            return Err(MemoryError::AlreadyNotRelevant);
        }
        if record.kind.not_for().len() >= MAX_EXCEPTIONS_PER_LESSON {
            return Err(MemoryError::TooManyExceptions);
        }
        let mut not_for = record.kind.not_for().to_vec();
        not_for.push(question.to_string());
        Ok(self.plan_exceptions(record, not_for, new_id, now))
    }

    /// Plans taking back one "not relevant here" mark (`question`, exactly as the
    /// record holds it) from the current clarification `id` at version `expected`.
    pub fn plan_relevant_again(
        &self,
        id: &RecordId,
        expected: u32,
        question: &str,
        new_id: RecordId,
        now: Timestamp,
    ) -> Result<PlannedWrite, MemoryError> {
        let record = self.check_current(id, expected)?;
        let not_for = record.kind.not_for();
        if !not_for.iter().any(|q| q == question) {
            return Err(MemoryError::NoSuchException);
        }
        let not_for = not_for.iter().filter(|q| *q != question).cloned().collect();
        Ok(self.plan_exceptions(record, not_for, new_id, now))
    }

    fn plan_exceptions(
        &self,
        record: &MemoryRecord,
        not_for: Vec<String>,
        new_id: RecordId,
        now: Timestamp,
    ) -> PlannedWrite {
        let kind = match &record.kind {
            RecordKind::Clarification { text, reach, .. } => RecordKind::Clarification {
                text: text.clone(),
                reach: reach.clone(),
                not_for,
            },
            example @ RecordKind::VerifiedExample { .. } => example.clone(),
        };
        self.plan_where_it_applies(record, kind, new_id, now)
    }

    /// A new version of `record` that differs only in where it applies: `kind`, the
    /// same lesson with another scope or other exceptions.
    fn plan_where_it_applies(
        &self,
        record: &MemoryRecord,
        kind: RecordKind,
        new_id: RecordId,
        now: Timestamp,
    ) -> PlannedWrite {
        let lesson = Lesson {
            question: record.question.clone(),
            kind,
            source: record.source,
        };
        let mut written = self.supersede(
            record.key.clone(),
            lesson,
            &[],
            new_id,
            now,
            ChangeReason::ExceptionsChanged,
        );
        // Where a lesson applies changed, not what it is or what it was taught on: its
        // record of use and its question's embedding carry on.
        written.current.stats = record.stats;
        written.current.embedding = record.embedding.clone();
        written
    }

    /// Plans counting one application of a lesson; `None` if it is gone or no longer
    /// current (then there is nothing to count).
    pub fn plan_applied(&self, id: &RecordId) -> Option<MemoryRecord> {
        self.get(id)
            .filter(|r| r.is_current())
            .map(|r| MemoryRecord {
                stats: r.stats.applied(),
                ..r.clone()
            })
    }

    /// Refuses unless `expected` is the version of `key`'s current record.
    pub fn check_key(&self, key: &MemoryKey, expected: Option<u32>) -> Result<(), MemoryError> {
        let current = self.current_for(key);
        if current.map(|r| r.version) == expected {
            Ok(())
        } else {
            Err(MemoryError::Stale {
                expected,
                current: current.cloned().map(Box::new),
            })
        }
    }

    /// The record `id`, if it is still the current record of its key at `expected`.
    pub fn check_current(
        &self,
        id: &RecordId,
        expected: u32,
    ) -> Result<&MemoryRecord, MemoryError> {
        let record = self
            .get(id)
            .ok_or_else(|| MemoryError::UnknownRecord(id.clone()))?;
        match self.current_for(&record.key) {
            Some(current) if &current.id == id && current.version == expected => Ok(current),
            current => Err(MemoryError::Stale {
                expected: Some(expected),
                current: current.cloned().map(Box::new),
            }),
        }
    }

    /// The next version number of a key: one past the highest ever written, so a
    /// version is never reused even after withdrawals and undos.
    fn next_version(&self, key: &MemoryKey) -> u32 {
        self.records
            .iter()
            .filter(|r| &r.key == key)
            .map(|r| r.version)
            .max()
            .map_or(1, |v| v.saturating_add(1))
    }

    fn supersede(
        &self,
        key: MemoryKey,
        lesson: Lesson,
        applied: &[RecordId],
        id: RecordId,
        now: Timestamp,
        reason: ChangeReason,
    ) -> PlannedWrite {
        let previous = self.current_for(&key);
        let note = ChangeNote {
            at: now,
            by: Actor::User,
            reason,
        };
        let current = MemoryRecord {
            id: id.clone(),
            version: self.next_version(&key),
            key,
            question: lesson.question,
            kind: lesson.kind,
            source: lesson.source,
            created_at: now,
            supersedes: previous.map(|p| p.id.clone()),
            superseded_by: None,
            state: RecordState::Current,
            stats: RecordStats::default(),
            change: Some(note),
            embedding: None,
        };
        let replaced = previous.map(|p| MemoryRecord {
            state: RecordState::Superseded,
            superseded_by: Some(id),
            change: Some(note),
            stats: if applied.contains(&p.id) {
                p.stats.failed_after_applied()
            } else {
                p.stats
            },
            ..p.clone()
        });
        PlannedWrite {
            current,
            replaced,
            misfired: Vec::new(),
        }
    }

    /// Applies records produced by a plan (or read back from storage), replacing any
    /// stored record with the same id.
    pub fn apply(&mut self, written: &PlannedWrite) {
        self.apply_records(&written.records());
    }

    /// Writes `records` over those of the same id, or adds them. Indexed by id, not
    /// searched: an import applies thousands of records at once.
    pub fn apply_records(&mut self, records: &[MemoryRecord]) {
        let mut slot_of = self
            .slot_of
            .take()
            .unwrap_or_else(|| Arc::new(slots_of(&self.records)));
        for record in records {
            match slot_of.get(&record.id) {
                Some(&i) => self.records[i] = Arc::new(record.clone()),
                None => {
                    // Only a new id changes the index, which is copied then if the
                    // snapshot this one was cloned from shares it.
                    Arc::make_mut(&mut slot_of).insert(record.id.clone(), self.records.len());
                    self.records.push(Arc::new(record.clone()));
                }
            }
        }
        self.slot_of = OnceLock::from(slot_of);
    }

    /// Gives each record without an embedding the one `embeddings` holds for its id
    /// (read apart from the records), unless retrieval could not compare it. A record
    /// that has one keeps it: it was read or computed since.
    pub fn attach_embeddings(&mut self, embeddings: Vec<(RecordId, StoredVector)>) {
        let slot_of = self
            .slot_of
            .take()
            .unwrap_or_else(|| Arc::new(slots_of(&self.records)));
        for (id, stored) in embeddings {
            let Some(&i) = slot_of.get(&id) else { continue };
            if self.records[i].embedding.is_none() {
                Arc::make_mut(&mut self.records[i]).embedding =
                    StoredEmbedding::new(stored.model, stored.vector).ok();
            }
        }
        // Attaching moves no record, so the index still holds.
        self.slot_of = OnceLock::from(slot_of);
    }

    pub fn upsert(&mut self, record: MemoryRecord) {
        self.apply_records(std::slice::from_ref(&record));
    }

    /// Drops records for good (after the store erased them).
    pub fn erase(&mut self, ids: &[RecordId]) {
        // Most revisions erase nothing (a usage count, stored embeddings): they keep the
        // index, which ten thousand records take milliseconds to build again.
        if ids.is_empty() {
            return;
        }
        let erased: HashSet<&RecordId> = ids.iter().collect();
        self.records.retain(|r| !erased.contains(&r.id));
        self.slot_of = OnceLock::new();
    }
}

/// Where each id's record stands; the first record of an id wins, as a search from the
/// front finds it.
fn slots_of(records: &[Arc<MemoryRecord>]) -> HashMap<RecordId, usize> {
    let mut slots = HashMap::with_capacity(records.len());
    for (i, record) in records.iter().enumerate() {
        slots.entry(record.id.clone()).or_insert(i);
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Reach;

    #[test]
    fn erasing_no_record_keeps_the_index_by_id_and_erasing_one_rebuilds_it() {
        let mut memory = lessons_of(&["What is like < a > ?", "What rhymes with < b > ?"]);
        let first = memory.records[0].id.clone();
        let second = memory.records[1].id.clone();
        assert!(memory.get(&second).is_some());
        memory.erase(&[]);
        assert!(
            memory.slot_of.get().is_some(),
            "nothing erased, the index kept"
        );
        memory.erase(std::slice::from_ref(&first));
        assert!(
            memory.slot_of.get().is_none(),
            "a record erased, the index dropped"
        );
        assert_eq!(memory.get(&first), None);
        assert_eq!(memory.get(&second).map(|r| &r.id), Some(&second));
    }

    #[test]
    fn a_new_snapshot_copies_only_the_record_that_changed() {
        let mut memory = lessons_of(&[
            "What is like < a > ?",
            "What rhymes with < b > ?",
            "What is the opposite of < c > ?",
        ]);
        let before = memory.clone();
        let mut counted = MemoryRecord::clone(&memory.records()[1]);
        counted.stats.times_applied += 1;
        memory.apply_records(&[counted]);
        for i in [0, 2] {
            assert!(
                Arc::ptr_eq(&before.records()[i], &memory.records()[i]),
                "record {i} is shared"
            );
        }
        assert_eq!(memory.records()[1].stats.times_applied, 1);
        assert_eq!(
            before.records()[1].stats.times_applied,
            0,
            "the snapshot taken before keeps the record as it was"
        );
        assert_eq!(
            memory
                .get(&RecordId("r1".into()))
                .map(|r| r.stats.times_applied),
            Some(1)
        );
    }

    #[test]
    fn a_record_is_found_by_id_after_every_kind_of_change() {
        let mut memory = FeedbackMemory::default();
        write(&mut memory, "What is like < fast > ?", "a synonym", "a", 1);
        write(
            &mut memory,
            "What sounds like < fast > ?",
            "a rhyme",
            "b",
            2,
        );
        let before_erase = memory.clone();
        memory.erase(&[RecordId("a".into())]);
        assert_eq!(memory.get(&RecordId("a".into())), None);
        assert_eq!(
            memory.get(&RecordId("b".into())).map(|r| r.id.0.as_str()),
            Some("b"),
            "erasing moves the others; the lookup follows"
        );
        assert!(
            before_erase.get(&RecordId("a".into())).is_some(),
            "a snapshot taken before keeps its own records"
        );
        let mut edited = memory
            .get(&RecordId("b".into()))
            .cloned()
            .expect("b is held");
        edited.version = 7;
        memory.upsert(edited);
        assert_eq!(
            memory.get(&RecordId("b".into())).map(|r| r.version),
            Some(7)
        );
        assert_eq!(memory.records().len(), 1);
    }

    /// A memory of one lesson per question, ids `r0`, `r1`, … in order.
    fn lessons_of(questions: &[&str]) -> FeedbackMemory {
        let mut memory = FeedbackMemory::default();
        for (i, question) in questions.iter().enumerate() {
            write(
                &mut memory,
                question,
                "a lesson",
                &format!("r{i}"),
                i as i64,
            );
        }
        memory
    }

    fn write(
        memory: &mut FeedbackMemory,
        question: &str,
        fb: &str,
        id: &str,
        at: i64,
    ) -> PlannedWrite {
        let written = memory.plan_write(
            Lesson::user_clarification(question, fb),
            RecordId(id.into()),
            Timestamp(at),
        );
        memory.apply(&written);
        written
    }

    const KM: &str = "I always want distances in kilometres.";

    fn not_relevant(
        memory: &mut FeedbackMemory,
        id: &str,
        question: &str,
        new_id: &str,
    ) -> PlannedWrite {
        let current = memory.get(&RecordId(id.into())).unwrap().clone();
        let written = memory
            .plan_not_relevant(
                &current.id,
                current.version,
                question,
                RecordId(new_id.into()),
                Timestamp(10),
            )
            .unwrap();
        memory.apply(&written);
        written
    }

    #[test]
    fn not_relevant_here_is_a_new_version_that_keeps_the_text_reach_and_record_of_use() {
        let mut memory = FeedbackMemory::default();
        write(&mut memory, "How far is Lyon from Paris?", KM, "km", 1);
        let applied = memory.plan_applied(&RecordId("km".into())).unwrap();
        memory.apply_records(&[applied]);
        let written = not_relevant(&mut memory, "km", "How far can Usain Bolt jump?", "km2");
        let replaced = written.replaced.expect("the first version is replaced");
        assert_eq!(replaced.id, RecordId("km".into()));
        assert_eq!(written.current.supersedes, Some(replaced.id));
        assert_eq!(written.current.clarification(), Some(KM));
        assert_eq!(written.current.kind.reach(), Some(&Reach::default()));
        assert_eq!(
            written.current.kind.not_for(),
            ["How far can Usain Bolt jump?"]
        );
        assert_eq!(written.current.stats.times_applied, 1);
        assert_eq!(
            written.current.change.map(|c| c.reason),
            Some(ChangeReason::ExceptionsChanged)
        );
        assert!(
            written
                .current
                .kind
                .is_excluded_from(&MemoryKey::of_question("How far can Carl Lewis jump?"))
        );
        assert!(
            !written
                .current
                .kind
                .is_excluded_from(&MemoryKey::of_question("How far is Berlin from Munich?"))
        );
    }

    #[test]
    fn an_accepted_suggestion_widens_the_scope_and_takes_back_a_mark_on_that_kind() {
        let mut memory = FeedbackMemory::default();
        write(&mut memory, "How far is Lyon from Paris?", KM, "km", 1);
        not_relevant(
            &mut memory,
            "km",
            "What's the distance between Lyon and Paris?",
            "km2",
        );
        let current = memory.get(&RecordId("km2".into())).unwrap().clone();
        let widen = |memory: &FeedbackMemory, record: &MemoryRecord, question: &str| {
            memory.plan_scope_change(
                &record.id,
                record.version,
                question,
                ScopeChange::AppliesHereToo,
                RecordId(format!("{}+", record.id.0)),
                Timestamp(20),
            )
        };
        let written = widen(
            &memory,
            &current,
            "What's the distance between Berlin and Rome?",
        )
        .expect("widened");
        memory.apply(&written);
        let patterns: Vec<String> = written
            .current
            .kind
            .patterns()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(patterns, ["what's the distance between ___ and ___"]);
        assert!(
            written.current.kind.not_for().is_empty(),
            "the mark on that kind is gone"
        );
        assert_eq!(written.current.clarification(), Some(KM));
        assert_eq!(
            widen(
                &memory,
                &written.current,
                "What's the distance between Oslo and Bergen?"
            ),
            Err(MemoryError::AlreadyApplies)
        );
        assert!(matches!(
            widen(&memory, &written.current, "password: hunter2hunter2"),
            Err(MemoryError::Refused(_))
        ));
    }

    fn pattern(text: &str) -> RequestPattern {
        RequestPattern::parse(text).expect("a pattern")
    }

    fn set_reach(
        memory: &FeedbackMemory,
        id: &str,
        reach: Reach,
    ) -> Result<PlannedWrite, MemoryError> {
        let current = memory.get(&RecordId(id.into())).unwrap();
        memory.plan_reach_change(
            &current.id,
            current.version,
            reach,
            RecordId(format!("{id}+")),
            Timestamp(30),
        )
    }

    #[test]
    fn a_scope_set_in_the_memory_browser_is_a_new_version_that_keeps_text_marks_and_record_of_use()
    {
        let mut memory = FeedbackMemory::default();
        write(&mut memory, "How far is Lyon from Paris?", KM, "km", 1);
        let applied = memory.plan_applied(&RecordId("km".into())).unwrap();
        memory.apply_records(&[applied]);
        not_relevant(&mut memory, "km", "How far can Usain Bolt jump?", "km2");
        let reach = Reach::QuestionsLike(vec![
            pattern("how far is ___ from ___"),
            pattern("how far is ___"),
        ]);
        let written = set_reach(&memory, "km2", reach.clone()).expect("saved");
        assert_eq!(written.current.kind.reach(), Some(&reach));
        assert_eq!(written.current.clarification(), Some(KM));
        assert_eq!(
            written.current.kind.not_for(),
            ["How far can Usain Bolt jump?"]
        );
        assert_eq!(written.current.stats.times_applied, 1);
        assert_eq!(written.current.version, 3);
        assert_eq!(
            written.current.change.map(|c| c.reason),
            Some(ChangeReason::ExceptionsChanged)
        );
        let replaced = written.replaced.expect("the old scope stays in history");
        assert_eq!(replaced.id, RecordId("km2".into()));
        assert_eq!(replaced.state, RecordState::Superseded);
    }

    /// A memory holding `lesson` alone, as record `id`.
    fn memory_with(lesson: Lesson, id: &str) -> FeedbackMemory {
        let mut memory = FeedbackMemory::default();
        let written = memory.plan_write(lesson, RecordId(id.into()), Timestamp(1));
        memory.apply(&written);
        memory
    }

    /// A memory holding one lesson, `d`, taught on "Define entropy" for `define ___`.
    fn define_lesson(text: &str) -> FeedbackMemory {
        let lesson = Lesson {
            question: "Define entropy".into(),
            kind: RecordKind::clarification_for(
                text,
                Reach::QuestionsLike(vec![pattern("define ___")]),
            ),
            source: Source::UserStated,
        };
        memory_with(lesson, "d")
    }

    #[test]
    fn a_scope_can_become_every_question_and_back_and_undo_restores_the_old_one() {
        let mut memory = define_lesson("One line, then an example.");
        let everywhere = set_reach(&memory, "d", Reach::EveryQuestion).expect("saved");
        memory.apply(&everywhere);
        assert!(everywhere.current.kind.is_standing_preference());
        let back = set_reach(
            &memory,
            "d+",
            Reach::QuestionsLike(vec![pattern("define ___")]),
        )
        .expect("saved");
        assert_eq!(back.current.kind.patterns(), [pattern("define ___")]);

        let undone = memory
            .plan_undo(
                &RecordId("d+".into()),
                2,
                crate::withdrawal::UndoOutcome::RestorePredecessor,
                Timestamp(40),
            )
            .expect("undone");
        memory.apply_records(&undone.records());
        let current = memory.current().next().expect("one current lesson");
        assert_eq!(current.kind.patterns(), [pattern("define ___")]);
    }

    #[test]
    fn an_unchanged_scope_is_refused_as_already_applying_there() {
        let memory = define_lesson("One line.");
        let same = Reach::QuestionsLike(vec![pattern("define ___"), pattern("define ___")]);
        let refused = set_reach(&memory, "d", same).unwrap_err();
        assert_eq!(refused, MemoryError::ScopeUnchanged);
        assert_eq!(
            refused.to_string(),
            "nothing to save: the lesson already applies there"
        );
    }

    #[test]
    fn a_scope_is_checked_like_any_write_version_size_and_secrets() {
        let mut memory = FeedbackMemory::default();
        write(&mut memory, "How far is Lyon from Paris?", KM, "km", 1);
        let stale = memory.plan_reach_change(
            &RecordId("km".into()),
            7,
            Reach::EveryQuestion,
            RecordId("x".into()),
            Timestamp(2),
        );
        assert!(
            matches!(&stale, Err(e @ MemoryError::Stale { .. }) if e.to_string().contains("changed since you read it")),
            "{stale:?}"
        );
        let too_many = (0..=MAX_PATTERNS_PER_LESSON)
            .map(|i| pattern(&format!("how far is ___ from place{i}")))
            .collect();
        assert_eq!(
            set_reach(&memory, "km", Reach::QuestionsLike(too_many)).unwrap_err(),
            MemoryError::TooManyPatterns
        );
        let secret = Reach::QuestionsLike(vec![pattern(
            "how far is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
        )]);
        assert!(matches!(
            set_reach(&memory, "km", secret),
            Err(MemoryError::Refused(_))
        ));
    }

    #[test]
    fn a_scope_of_slots_alone_never_reaches_the_planner_and_says_to_choose_every_question() {
        let words = RequestPattern::proposed_for("Hello")
            .into_iter()
            .map(|w| crate::request_pattern::ScopeWord { slot: true, ..w })
            .collect::<Vec<_>>();
        let refused = MemoryError::from(RequestPattern::from_words(&words).unwrap_err());
        assert!(
            refused.to_string().contains("choose \"every question\""),
            "{refused}"
        );
    }

    /// A memory holding one verified example, `e`.
    fn verified_example_memory() -> FeedbackMemory {
        let example = Lesson {
            question: "What is like < fast > ?".into(),
            kind: RecordKind::VerifiedExample {
                understanding: "the synonym for fast".into(),
                answer: "quick".into(),
            },
            source: Source::UserStated,
        };
        memory_with(example, "e")
    }

    #[test]
    fn a_verified_example_has_no_scope_to_set() {
        let memory = verified_example_memory();
        assert_eq!(
            set_reach(&memory, "e", Reach::EveryQuestion).unwrap_err(),
            MemoryError::NotAClarification
        );
    }

    #[test]
    fn the_same_kind_of_question_is_marked_once_and_a_mark_can_be_taken_back() {
        let mut memory = FeedbackMemory::default();
        write(&mut memory, "How far is Lyon from Paris?", KM, "km", 1);
        not_relevant(&mut memory, "km", "How far can Usain Bolt jump?", "km2");
        let again = memory.plan_not_relevant(
            &RecordId("km2".into()),
            2,
            "How far can Carl Lewis jump?",
            RecordId("km3".into()),
            Timestamp(11),
        );
        assert_eq!(again.unwrap_err(), MemoryError::AlreadyNotRelevant);
        let back = memory
            .plan_relevant_again(
                &RecordId("km2".into()),
                2,
                "How far can Usain Bolt jump?",
                RecordId("km3".into()),
                Timestamp(12),
            )
            .unwrap();
        assert!(back.current.kind.not_for().is_empty());
        assert_eq!(back.current.version, 3);
        let unknown = memory.plan_relevant_again(
            &RecordId("km2".into()),
            2,
            "How far can Carl Lewis jump?",
            RecordId("km3".into()),
            Timestamp(12),
        );
        assert_eq!(unknown.unwrap_err(), MemoryError::NoSuchException);
    }

    #[test]
    fn not_relevant_here_checks_the_version_and_the_question_like_any_write() {
        let mut memory = FeedbackMemory::default();
        write(&mut memory, "How far is Lyon from Paris?", KM, "km", 1);
        let stale = memory.plan_not_relevant(
            &RecordId("km".into()),
            2,
            "How far can Usain Bolt jump?",
            RecordId("x".into()),
            Timestamp(2),
        );
        assert!(matches!(stale, Err(MemoryError::Stale { .. })));
        let secret = memory.plan_not_relevant(
            &RecordId("km".into()),
            1,
            "How far is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789 from here?",
            RecordId("x".into()),
            Timestamp(2),
        );
        assert!(matches!(secret, Err(MemoryError::Refused(_))), "{secret:?}");
    }

    #[test]
    fn a_lesson_keeps_a_bounded_number_of_exceptions() {
        let mut memory = FeedbackMemory::default();
        write(&mut memory, "How far is Lyon from Paris?", KM, "km", 1);
        let mut id = "km".to_string();
        for i in 0..MAX_EXCEPTIONS_PER_LESSON {
            let next = format!("km-{i}");
            not_relevant(
                &mut memory,
                &id,
                &format!("Question of kind {} ?", "ab".repeat(i + 1)),
                &next,
            );
            id = next;
        }
        let current = memory.get(&RecordId(id)).unwrap().clone();
        let one_more = memory.plan_not_relevant(
            &current.id,
            current.version,
            "Yet another kind?",
            RecordId("last".into()),
            Timestamp(99),
        );
        assert_eq!(one_more.unwrap_err(), MemoryError::TooManyExceptions);
    }

    #[test]
    fn an_edit_keeps_the_lessons_exceptions() {
        let mut memory = FeedbackMemory::default();
        write(&mut memory, "How far is Lyon from Paris?", KM, "km", 1);
        not_relevant(&mut memory, "km", "How far can Usain Bolt jump?", "km2");
        let edited = memory
            .plan_edit(
                &RecordId("km2".into()),
                2,
                "Distances in km, please.",
                RecordId("km3".into()),
                Timestamp(20),
            )
            .unwrap();
        assert_eq!(
            edited.current.kind.not_for(),
            ["How far can Usain Bolt jump?"]
        );
    }

    #[test]
    fn a_verified_example_is_withdrawn_not_edited() {
        let memory = verified_example_memory();
        let edited = memory.plan_edit(
            &RecordId("e".into()),
            1,
            "I want a synonym",
            RecordId("f".into()),
            Timestamp(2),
        );
        assert_eq!(edited.unwrap_err(), MemoryError::NotAClarification);
    }

    #[test]
    fn a_first_lesson_becomes_the_current_record_of_its_key() {
        let mut memory = FeedbackMemory::default();
        let written = write(
            &mut memory,
            "What is like < fast > ?",
            "I want a synonym",
            "a",
            1,
        );
        assert_eq!(written.replaced, None);
        assert_eq!(written.current.version, 1);
        assert_eq!(memory.current().count(), 1);
    }

    #[test]
    fn a_correction_replaces_the_lesson_and_keeps_it_in_history() {
        let mut memory = FeedbackMemory::default();
        write(
            &mut memory,
            "What is like < fast > ?",
            "I want a homonym",
            "a",
            1,
        );
        let written = write(
            &mut memory,
            "what is like < slow > ?",
            "I want a synonym",
            "b",
            2,
        );

        let replaced = written.replaced.expect("the first lesson is replaced");
        assert_eq!(replaced.state, RecordState::Superseded);
        assert_eq!(replaced.superseded_by, Some(RecordId("b".into())));
        assert_eq!(written.current.supersedes, Some(RecordId("a".into())));
        assert_eq!(written.current.version, 2);

        let current: Vec<_> = memory.current().collect();
        assert_eq!(current.len(), 1);
        assert_eq!(current[0].clarification(), Some("I want a synonym"));
        let key = MemoryKey::of_question("What is like < x > ?");
        assert_eq!(memory.history(&key).len(), 2);
    }

    #[test]
    fn lessons_about_different_requests_live_side_by_side() {
        let mut memory = FeedbackMemory::default();
        write(&mut memory, "What is like < fast > ?", "synonym", "a", 1);
        write(&mut memory, "What is unlike < fast > ?", "antonym", "b", 2);
        assert_eq!(memory.current().count(), 2);
    }

    #[test]
    fn a_correction_about_other_places_replaces_the_lesson_of_the_same_kind_of_question() {
        let mut memory = FeedbackMemory::default();
        write(
            &mut memory,
            "How far is Lyon from Paris?",
            "in miles",
            "a",
            1,
        );
        let written = write(
            &mut memory,
            "How far is Berlin from Munich?",
            "in kilometres",
            "b",
            2,
        );
        assert_eq!(written.replaced.map(|r| r.id), Some(RecordId("a".into())));
        assert_eq!(memory.current().count(), 1);
    }

    #[test]
    fn a_lesson_an_earlier_remind_keyed_by_exact_wording_is_corrected_in_place() {
        let question = "How far is Lyon from Paris?";
        let mut memory = FeedbackMemory::default();
        write(&mut memory, question, "in miles", "a", 1);
        let exact = MemoryKey::of_exact_question(question);
        let mut records = memory.to_records();
        records[0].key = exact.clone();
        let mut memory = FeedbackMemory::from_records(records);
        assert_eq!(memory.clarification_key(question), exact);

        let written = write(&mut memory, question, "in kilometres", "b", 2);
        assert_eq!(written.current.key, exact);
        assert_eq!(written.replaced.map(|r| r.id), Some(RecordId("a".into())));
        assert_eq!(memory.current().count(), 1);
    }
}
