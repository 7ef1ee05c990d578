//! The learning curve: does the assistant need fewer corrections as the memory grows?
//!
//! The session appends one small event per thing that happens to a turn (asked,
//! corrected, confirmed); no question text, only what is needed to count. Events are
//! append-only so that a later correction never rewrites an earlier entry, and the
//! curve is a pure fold over them: per block of consecutive questions, the share the
//! user had to correct, and the share of turns with memory applied that needed none.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::record::Timestamp;

/// Identifies one asked question across its events.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TurnId(pub String);

/// One thing that happened to a turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnEvent {
    pub turn: TurnId,
    pub at: Timestamp,
    #[serde(flatten)]
    pub kind: TurnEventKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum TurnEventKind {
    /// A new question was sent, with or without memory.
    Asked {
        /// A stored clarification was attached.
        lesson_applied: bool,
        /// How many verified examples joined the prompt.
        examples_used: u32,
    },
    /// The user said the understanding was wrong (typed a correction, or asked for a
    /// rule proposal).
    Corrected,
    /// The user confirmed the reply as right.
    Confirmed,
}

/// Everything known about one turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnSummary {
    pub turn: TurnId,
    pub asked_at: Timestamp,
    pub memory_applied: bool,
    pub corrected: bool,
    pub confirmed: bool,
}

/// Folds events into one summary per asked turn, in the order the questions were
/// asked. Events of a turn with no `Asked` event (a retry with a one-time
/// clarification, or a log that lost its first entry) are ignored: they are not
/// questions of their own. Repeated events count once.
pub fn summarise(events: &[TurnEvent]) -> Vec<TurnSummary> {
    let mut turns: Vec<TurnSummary> = Vec::new();
    let mut index: HashMap<&TurnId, usize> = HashMap::new();
    for event in events {
        if let TurnEventKind::Asked {
            lesson_applied,
            examples_used,
        } = event.kind
            && !index.contains_key(&event.turn)
        {
            index.insert(&event.turn, turns.len());
            turns.push(TurnSummary {
                turn: event.turn.clone(),
                asked_at: event.at,
                memory_applied: lesson_applied || examples_used > 0,
                corrected: false,
                confirmed: false,
            });
        }
    }
    for event in events {
        let Some(&i) = index.get(&event.turn) else {
            continue;
        };
        match event.kind {
            TurnEventKind::Asked { .. } => {}
            TurnEventKind::Corrected => turns[i].corrected = true,
            TurnEventKind::Confirmed => turns[i].confirmed = true,
        }
    }
    turns.sort_by(|a, b| a.asked_at.cmp(&b.asked_at).then(a.turn.cmp(&b.turn)));
    turns
}

/// The default block size: twenty questions per point of the curve.
pub const QUESTIONS_PER_BUCKET: usize = 20;

/// The counts of one block of consecutive questions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CurveBucket {
    /// 1-based number of the block's first question.
    pub first_question: usize,
    pub questions: usize,
    pub corrected: usize,
    pub confirmed: usize,
    pub memory_applied: usize,
    pub memory_applied_uncorrected: usize,
}

impl CurveBucket {
    /// Share of the block's questions whose understanding the user had to correct.
    pub fn corrected_share(&self) -> f32 {
        share(self.corrected, self.questions).unwrap_or(0.0)
    }

    /// Share of the turns with memory applied that needed no correction; `None` when
    /// no memory was applied in the block (there is nothing to judge).
    pub fn applied_success_share(&self) -> Option<f32> {
        share(self.memory_applied_uncorrected, self.memory_applied)
    }
}

fn share(part: usize, whole: usize) -> Option<f32> {
    (whole > 0).then(|| part as f32 / whole as f32)
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LearningCurve {
    pub questions_per_bucket: usize,
    /// Oldest block first; the last one may hold fewer questions (it is still filling).
    pub buckets: Vec<CurveBucket>,
}

/// The curve over `events` in blocks of `questions_per_bucket` questions (at least 1).
pub fn learning_curve(events: &[TurnEvent], questions_per_bucket: usize) -> LearningCurve {
    let size = questions_per_bucket.max(1);
    let buckets = summarise(events)
        .chunks(size)
        .enumerate()
        .map(|(i, block)| {
            let count = |keep: fn(&TurnSummary) -> bool| block.iter().filter(|t| keep(t)).count();
            CurveBucket {
                first_question: i * size + 1,
                questions: block.len(),
                corrected: count(|t| t.corrected),
                confirmed: count(|t| t.confirmed),
                memory_applied: count(|t| t.memory_applied),
                memory_applied_uncorrected: count(|t| t.memory_applied && !t.corrected),
            }
        })
        .collect();
    LearningCurve {
        questions_per_bucket: size,
        buckets,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(turn: &str, at: i64, kind: TurnEventKind) -> TurnEvent {
        TurnEvent {
            turn: TurnId(turn.into()),
            at: Timestamp(at),
            kind,
        }
    }

    #[test]
    fn an_event_reads_back_from_its_stored_json() {
        let asked = event(
            "t1",
            5,
            TurnEventKind::Asked {
                lesson_applied: true,
                examples_used: 2,
            },
        );
        let json = serde_json::to_string(&asked).unwrap();
        assert_eq!(
            json,
            r#"{"turn":"t1","at":5,"event":"asked","lesson_applied":true,"examples_used":2}"#
        );
        assert_eq!(serde_json::from_str::<TurnEvent>(&json).unwrap(), asked);
        let corrected = event("t1", 6, TurnEventKind::Corrected);
        let json = serde_json::to_string(&corrected).unwrap();
        assert_eq!(json, r#"{"turn":"t1","at":6,"event":"corrected"}"#);
        assert_eq!(serde_json::from_str::<TurnEvent>(&json).unwrap(), corrected);
    }

    #[test]
    fn events_without_a_question_and_repeated_events_count_once_or_not_at_all() {
        let events = [
            event("retry", 1, TurnEventKind::Corrected),
            event(
                "t",
                2,
                TurnEventKind::Asked {
                    lesson_applied: false,
                    examples_used: 1,
                },
            ),
            event("t", 3, TurnEventKind::Corrected),
            event("t", 4, TurnEventKind::Corrected),
        ];
        let turns = summarise(&events);
        assert_eq!(turns.len(), 1);
        assert!(turns[0].memory_applied && turns[0].corrected && !turns[0].confirmed);
    }
}
