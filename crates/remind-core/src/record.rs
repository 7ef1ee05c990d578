//! The shape of one stored memory and its provenance.
//!
//! Records are values: the memory rules in [`crate::memory`] produce new
//! records instead of editing stored ones, so history is never lost by accident.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::dot_product::dot_product;
use crate::memory_key::MemoryKey;
use crate::request_pattern::RequestPattern;

/// A stable, opaque record id, generated outside the domain and passed in.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RecordId(pub String);

/// Milliseconds since the Unix epoch, read from a clock outside the domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(pub i64);

/// What kind of lesson a record holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// The user's words about what a misread request means, and which questions they
    /// go with: those of `reach`, except the kinds of question the user marked "not
    /// relevant here" (`not_for` holds the questions they marked, as asked).
    Clarification {
        text: String,
        reach: Reach,
        not_for: Vec<String>,
    },
    /// A reply the user confirmed as right, kept as a demonstration.
    VerifiedExample {
        understanding: String,
        answer: String,
    },
}

/// Which questions a clarification is attached to, chosen by the user when saving it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Questions like the one it was taught on: every question that fits one of the
    /// patterns (the one the user confirmed when saving, and those added since), and
    /// failing that, questions retrieval finds close enough (the paper's rule). With no
    /// pattern (lessons stored before scopes, or taught on a request with no fixed
    /// word), retrieval alone.
    QuestionsLike(Vec<RequestPattern>),
    /// Every question: a standing preference ("call me Sam"), sent with every turn
    /// within [`crate::turn::STANDING_PREFERENCES_PER_TURN`].
    EveryQuestion,
}

impl Reach {
    /// "Questions like this one" as Remind proposes it for `question`: its request with
    /// the key's specifics as slots; retrieval alone when that leaves no fixed word.
    pub fn proposed_for(question: &str) -> Self {
        Reach::QuestionsLike(RequestPattern::proposal(question).into_iter().collect())
    }
}

/// No pattern: retrieval alone, as for lessons stored before scopes existed.
impl Default for Reach {
    fn default() -> Self {
        Reach::QuestionsLike(Vec::new())
    }
}

/// Who authored the lesson: the user, or the model with the user's explicit consent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    UserStated,
    UserConfirmedProposal,
}

/// Where a record stands in the history of its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordState {
    Current,
    Superseded,
    Withdrawn,
}

/// How a record has fared since it was stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecordStats {
    pub times_applied: u32,
    pub times_failed_after_applied: u32,
}

/// How many questions one lesson can be marked "not relevant" to; past that, the
/// lesson is too broad to keep and is better withdrawn or rewritten.
pub const MAX_EXCEPTIONS_PER_LESSON: usize = 50;

/// How many patterns one lesson's scope holds: the one confirmed when saving and those
/// added by accepting suggestions; past that, "every question" says it better.
pub const MAX_PATTERNS_PER_LESSON: usize = 20;

/// A lesson is flagged for review only once it has misfired at least this often.
pub const REVIEW_MIN_FAILURES: u32 = 2;

impl RecordStats {
    /// The lesson was attached to a question that was sent to the model.
    pub fn applied(self) -> Self {
        RecordStats {
            times_applied: self.times_applied.saturating_add(1),
            ..self
        }
    }

    /// The lesson was attached, and the user still had to correct the understanding.
    pub fn failed_after_applied(self) -> Self {
        RecordStats {
            times_failed_after_applied: self.times_failed_after_applied.saturating_add(1),
            ..self
        }
    }

    /// Flags a lesson that misfires: at least [`REVIEW_MIN_FAILURES`] failures, and at
    /// least half of its applications failed. Two failures out of two hundred uses is a
    /// good lesson on hard questions; two out of three is a lesson that misleads.
    pub fn needs_review(&self) -> bool {
        let failed = u64::from(self.times_failed_after_applied);
        failed >= u64::from(REVIEW_MIN_FAILURES) && failed * 2 >= u64::from(self.times_applied)
    }
}

/// Who made a change to the memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Actor {
    /// The user, through the page.
    User,
    /// An import of an exported memory file.
    Import,
}

/// Why a record was written or left the current state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeReason {
    /// A correction after a turn: the lesson for this kind of question was replaced.
    Corrected,
    /// A correction after a turn that had this lesson applied and was still misread.
    CorrectedAfterApplied,
    /// The user edited the lesson's text in the memory browser.
    Edited,
    /// The user changed where the lesson applies: marked it "not relevant here" under a
    /// turn, took such a mark back in the memory browser, accepted it for another kind
    /// of question from a suggestion, or set its scope in the memory browser.
    ExceptionsChanged,
    /// The user withdrew the lesson; it stays in history.
    Withdrawn,
    /// The user undid a change; the record was withdrawn or restored by the undo.
    Undone,
}

/// The latest event that touched a record: when, by whom and why. A record written
/// in place of another carries the same note as the one it replaced, so history reads
/// "replaced at T by the user because of an edit" on both sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChangeNote {
    pub at: Timestamp,
    pub by: Actor,
    pub reason: ChangeReason,
}

/// One lesson with its provenance and its place in its key's history. Databases and
/// files hold it as a [`crate::stored_record::StoredRecord`].
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryRecord {
    pub id: RecordId,
    pub key: MemoryKey,
    pub question: String,
    /// What the lesson teaches; the kind carries its own text.
    pub kind: RecordKind,
    pub source: Source,
    pub created_at: Timestamp,
    /// Counts the writes to this key; a write must name the version it read.
    pub version: u32,
    pub supersedes: Option<RecordId>,
    pub superseded_by: Option<RecordId>,
    pub state: RecordState,
    pub stats: RecordStats,
    /// The latest change of this record; absent on records stored before notes existed.
    pub change: Option<ChangeNote>,
    /// The question's embedding under a named model; recomputed when the model changes.
    pub embedding: Option<StoredEmbedding>,
}

/// An embedding cached with the record, tagged with the model that produced it.
///
/// Only a vector retrieval can compare is ever held: every value finite, and of unit
/// length (see [`StoredEmbedding::check`]). The fields are private so that no record,
/// whether stored, imported or computed, carries a vector that would make a similarity
/// NaN and silently turn off matching by meaning.
///
/// Shared, not copied, when a record is cloned: the session's snapshot is a new memory
/// after every change (a usage count included), and copying ten thousand vectors of
/// 384 values each time would cost more than the change.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredEmbedding {
    model: Arc<str>,
    vector: Arc<[f32]>,
    /// The vector's squared length as [`dot_product`] sums it: summed once here rather
    /// than again for every question it is compared with.
    squared_length: f32,
}

/// How far a vector's length may be from 1 and still count as a sentence embedding.
///
/// MiniLM's embeddings are L2-normalised, so a real one has length 1 up to rounding:
/// summing 384 squares in `f32` and a text round trip of each value move it by well
/// under 1e-4. A hundred times that still refuses anything hostile or broken (a vector
/// of 3e38s, a zero vector, an unnormalised one), whose length is nowhere near 1; and
/// within it, cosine (which divides by the lengths) ranks exactly as for a unit vector.
pub const UNIT_LENGTH_TOLERANCE: f64 = 1e-2;

/// Why a vector is not an embedding retrieval can compare. The messages complete a
/// sentence whose subject is the vector (an import names it by its path).
#[derive(Debug, Error, Clone, PartialEq)]
pub enum EmbeddingError {
    /// A value that is not a finite 32-bit number: NaN, an infinity, or (read from
    /// text) a number beyond `f32`'s range, which would become an infinity.
    #[error(
        "holds {} at [{index}], which is not a finite number (an embedding holds 32-bit numbers, at most {:e} in size)",
        readable(*.value),
        f32::MAX
    )]
    NotFinite { index: usize, value: f64 },
    #[error(
        "is not of unit length (its length is {}); a sentence embedding has length 1",
        readable(*.length)
    )]
    NotUnitLength { length: f64 },
}

/// A number as a person reads it: plain when moderate, in exponent form (`1e39`)
/// when not, so a hostile value is not printed as forty digits.
fn readable(x: f64) -> String {
    if x == 0.0 || (1e-3..1e6).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

impl StoredEmbedding {
    /// An embedding of `vector` by `model`, if `vector` passes [`StoredEmbedding::check`].
    pub fn new(model: impl Into<String>, vector: Vec<f32>) -> Result<Self, EmbeddingError> {
        StoredEmbedding::check(&vector)?;
        Ok(StoredEmbedding {
            model: Arc::from(model.into()),
            squared_length: dot_product(&vector, &vector),
            vector: Arc::from(vector),
        })
    }

    /// Whether `vector` can be compared by cosine: every value finite, and its length
    /// within [`UNIT_LENGTH_TOLERANCE`] of 1 (so it is not empty and not zero either).
    pub fn check(vector: &[f32]) -> Result<(), EmbeddingError> {
        if let Some((index, value)) = vector.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(EmbeddingError::NotFinite {
                index,
                value: f64::from(*value),
            });
        }
        // In f64, where the squares of any finite f32 values cannot overflow, so a
        // vector of huge values is reported for its length rather than as infinite.
        let length = vector
            .iter()
            .fold(0.0, |sum, &x| sum + f64::from(x) * f64::from(x))
            .sqrt();
        if (length - 1.0).abs() > UNIT_LENGTH_TOLERANCE {
            return Err(EmbeddingError::NotUnitLength { length });
        }
        Ok(())
    }

    /// The model that produced the vector; a vector of another model is not comparable.
    pub fn model(&self) -> &str {
        &self.model
    }

    pub fn vector(&self) -> &[f32] {
        &self.vector
    }

    /// `dot_product(vector, vector)`, summed when the embedding was made.
    pub fn squared_length(&self) -> f32 {
        self.squared_length
    }
}

impl MemoryRecord {
    pub fn is_current(&self) -> bool {
        self.state == RecordState::Current
    }

    /// A current lesson that misfires often enough to be shown to the user for review.
    pub fn is_flagged(&self) -> bool {
        self.is_current() && self.stats.needs_review()
    }

    /// When this record last changed: its latest note, or its creation.
    pub fn changed_at(&self) -> Timestamp {
        self.change.map_or(self.created_at, |note| note.at)
    }

    /// Whether two records teach the same thing (ids, history and stats aside).
    pub fn same_lesson(&self, other: &MemoryRecord) -> bool {
        self.key == other.key && self.question == other.question && self.kind == other.kind
    }

    /// Whether two records are equal but for their bookkeeping: the usage counters and
    /// the embedding, which a tab updates as it answers and embeds, without changing
    /// the lesson or its history. Every field is named, so a new one must be counted
    /// (the blocks' `stored_alike` adds the usage counters to this).
    pub fn same_but_bookkeeping(&self, other: &MemoryRecord) -> bool {
        let MemoryRecord {
            id,
            key,
            question,
            kind,
            source,
            created_at,
            version,
            supersedes,
            superseded_by,
            state,
            stats: _,
            change,
            embedding: _,
        } = self;
        *id == other.id
            && *key == other.key
            && *question == other.question
            && *kind == other.kind
            && *source == other.source
            && *created_at == other.created_at
            && *version == other.version
            && *supersedes == other.supersedes
            && *superseded_by == other.superseded_by
            && *state == other.state
            && *change == other.change
    }

    /// A clarification's text; `None` for a verified example.
    pub fn clarification(&self) -> Option<&str> {
        self.kind.clarification_text()
    }
}

impl RecordKind {
    /// A clarification for questions like its own.
    pub fn clarification(text: impl Into<String>) -> Self {
        RecordKind::clarification_for(text, Reach::QuestionsLike(Vec::new()))
    }

    pub fn clarification_for(text: impl Into<String>, reach: Reach) -> Self {
        RecordKind::Clarification {
            text: text.into(),
            reach,
            not_for: Vec::new(),
        }
    }

    /// The questions the user marked "not relevant here" for this clarification; none
    /// for a verified example.
    pub fn not_for(&self) -> &[String] {
        match self {
            RecordKind::Clarification { not_for, .. } => not_for,
            RecordKind::VerifiedExample { .. } => &[],
        }
    }

    /// Whether the user said this lesson is not relevant to questions of `key`'s kind.
    pub fn is_excluded_from(&self, key: &MemoryKey) -> bool {
        self.not_for()
            .iter()
            .any(|question| MemoryKey::of_question(question) == *key)
    }

    /// The text when this is a clarification.
    pub fn clarification_text(&self) -> Option<&str> {
        match self {
            RecordKind::Clarification { text, .. } => Some(text),
            RecordKind::VerifiedExample { .. } => None,
        }
    }

    /// Which questions this clarification goes with; `None` for a verified example.
    pub fn reach(&self) -> Option<&Reach> {
        match self {
            RecordKind::Clarification { reach, .. } => Some(reach),
            RecordKind::VerifiedExample { .. } => None,
        }
    }

    /// A clarification sent with every question.
    pub fn is_standing_preference(&self) -> bool {
        self.reach() == Some(&Reach::EveryQuestion)
    }

    /// The patterns of questions this clarification is meant for; none for a standing
    /// preference or a verified example.
    pub fn patterns(&self) -> &[RequestPattern] {
        match self.reach() {
            Some(Reach::QuestionsLike(patterns)) => patterns,
            Some(Reach::EveryQuestion) | None => &[],
        }
    }

    /// The first pattern a question fits, if any; `words` are the question's as
    /// [`crate::request_pattern::question_words`] reads them.
    pub fn pattern_fitting(&self, words: &[String]) -> Option<&RequestPattern> {
        self.patterns().iter().find(|p| p.fits_words(words))
    }

    /// What the lesson says, as one line: the clarification, or "understanding is
    /// answer" for a verified example.
    pub fn text(&self) -> String {
        match self {
            RecordKind::Clarification { text, .. } => text.clone(),
            RecordKind::VerifiedExample {
                understanding,
                answer,
            } => format!("{understanding} is {answer}"),
        }
    }

    pub fn is_clarification(&self) -> bool {
        matches!(self, RecordKind::Clarification { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(applied: u32, failed: u32) -> RecordStats {
        RecordStats {
            times_applied: applied,
            times_failed_after_applied: failed,
        }
    }

    #[test]
    fn records_differing_only_in_usage_counters_and_embedding_are_the_same_but_for_bookkeeping() {
        let memory = crate::memory::FeedbackMemory::default();
        let record = memory
            .plan_write(
                crate::memory::Lesson::user_clarification("What is like < fast > ?", "a synonym"),
                RecordId("r1".into()),
                Timestamp(1),
            )
            .current;
        let counted = MemoryRecord {
            stats: stats(3, 1),
            embedding: Some(StoredEmbedding::new("m", vec![0.6, 0.8]).expect("a unit vector")),
            ..record.clone()
        };
        assert!(record.same_but_bookkeeping(&counted));
        let edited = MemoryRecord {
            change: Some(ChangeNote {
                at: Timestamp(2),
                by: Actor::User,
                reason: ChangeReason::Edited,
            }),
            ..record.clone()
        };
        assert!(!record.same_but_bookkeeping(&edited));
        let newer = MemoryRecord {
            version: record.version + 1,
            ..record.clone()
        };
        assert!(!record.same_but_bookkeeping(&newer));
    }

    #[test]
    fn a_lesson_needs_review_after_two_failures_in_at_most_four_uses() {
        assert!(!stats(1, 1).needs_review());
        assert!(stats(2, 2).needs_review());
        assert!(stats(4, 2).needs_review());
        assert!(!stats(5, 2).needs_review());
        assert!(!stats(200, 2).needs_review());
    }

    #[test]
    fn an_embedding_holds_only_finite_values_of_unit_length() {
        // MiniLM's own output: unit length up to rounding.
        let unit = vec![0.6, 0.8, 1.0e-7];
        let embedding = StoredEmbedding::new("m", unit.clone()).expect("a unit vector");
        assert_eq!((embedding.model(), embedding.vector()), ("m", &unit[..]));
        // Length 1.003: within the tolerance.
        assert!(StoredEmbedding::new("m", vec![0.6, 0.804]).is_ok());

        for (vector, expected) in [
            (
                vec![0.6, f32::NAN],
                "holds NaN at [1], which is not a finite number",
            ),
            (
                vec![f32::INFINITY, 0.0],
                "holds inf at [0], which is not a finite number",
            ),
            (vec![0.0, f32::NEG_INFINITY], "holds -inf at [1]"),
            (vec![3e38; 384], "is not of unit length (its length is 5.87"),
            (vec![0.0; 384], "is not of unit length (its length is 0)"),
            (Vec::new(), "is not of unit length (its length is 0)"),
            (vec![0.6, 0.9], "is not of unit length (its length is 1.08"),
            (vec![0.5, 0.5], "is not of unit length (its length is 0.707"),
        ] {
            let problem = StoredEmbedding::new("m", vector.clone())
                .expect_err("not an embedding")
                .to_string();
            assert!(problem.contains(expected), "{vector:?}: {problem}");
        }
    }

    #[test]
    fn counting_an_application_and_a_failure_adds_one_each() {
        let counted = RecordStats::default()
            .applied()
            .applied()
            .failed_after_applied();
        assert_eq!(counted, stats(2, 1));
        assert_eq!(stats(u32::MAX, 0).applied().times_applied, u32::MAX);
    }
}
