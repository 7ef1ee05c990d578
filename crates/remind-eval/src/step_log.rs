//! `steps.jsonl`: one JSON line per answered step, the run's record and its checkpoint.
//!
//! A run appends each step as soon as it is judged. On restart the lines already there
//! are replayed instead of re-requested, so the log must hold everything the replay
//! needs (the completion and whether the server stopped it) besides what a reader
//! wants to see (prompt, parse, memory use, correctness).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use remind_core::reply::ReplyProblem;

/// The stored clarification attached to a step's question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryHit {
    pub question: String,
    pub clarification: String,
    pub score: f32,
    /// The task type the clarification asks for (`syn`, …), if it names one.
    pub lesson_type: Option<String>,
    /// Whether that is the step's own task type (a hit) or another one (wrong-type).
    pub right_type: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub arm: String,
    /// 0-based position in the stream.
    pub index: usize,
    /// 1-based line of the task in the stream file.
    pub line: usize,
    pub task_type: String,
    pub question: String,
    /// The question as sent (with any clarification).
    pub query: String,
    /// The whole prompt, as the page would show it.
    pub prompt: String,
    pub prompt_tokens: usize,
    pub completion: String,
    pub stopped: bool,
    pub understanding: Option<String>,
    pub answer: Option<String>,
    pub problems: Vec<ReplyProblem>,
    pub memory: Option<MemoryHit>,
    pub demonstrations: Vec<String>,
    /// Acc(u) of this step.
    pub understood: bool,
    /// Acc(y) of this step; absent for task types without a gold word.
    pub answer_correct: Option<bool>,
    pub feedback: Option<String>,
    /// Requests made for this step (1 unless some failed and were retried).
    pub attempts: u32,
    /// The errors of the failed attempts, oldest first.
    pub errors: Vec<String>,
    /// Wall-clock time of the step, retries and waits included.
    pub seconds: f64,
}

/// Why a log line could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based.
    pub line: usize,
    pub reason: String,
}

/// The readable records of a log, and whether its last line was cut off mid-write (a
/// run killed while appending); that line is dropped and its step is simply redone.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParsedLog {
    pub records: Vec<StepRecord>,
    /// Byte length of the complete lines; the file is truncated to it before appending.
    pub complete_len: usize,
}

pub fn parse_log(text: &str) -> Result<ParsedLog, BadLine> {
    let mut records = Vec::new();
    let mut complete_len = 0;
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        offset += line.len();
        let finished = line.ends_with('\n');
        if line.trim().is_empty() {
            if finished {
                complete_len = offset;
            }
            continue;
        }
        // An unterminated last line is a write the previous run did not finish.
        if !finished {
            break;
        }
        let record = serde_json::from_str::<StepRecord>(line).map_err(|e| BadLine {
            line: i + 1,
            reason: e.to_string(),
        })?;
        records.push(record);
        complete_len = offset;
    }
    Ok(ParsedLog {
        records,
        complete_len,
    })
}

/// One line of the log, newline included.
pub fn render_line(record: &StepRecord) -> String {
    let mut line = serde_json::to_string(record).unwrap_or_else(|e| {
        // Serialising plain strings and numbers cannot fail; keep the log valid anyway.
        format!("{{\"error\":\"unserialisable step: {e}\"}}")
    });
    line.push('\n');
    line
}

/// Each arm's steps by index: the first record of every index, so a log that somehow
/// holds a step twice still replays each step once.
pub fn by_arm(records: &[StepRecord]) -> BTreeMap<String, BTreeMap<usize, StepRecord>> {
    let mut arms: BTreeMap<String, BTreeMap<usize, StepRecord>> = BTreeMap::new();
    for record in records {
        arms.entry(record.arm.clone())
            .or_default()
            .entry(record.index)
            .or_insert_with(|| record.clone());
    }
    arms
}

#[cfg(test)]
pub(crate) fn sample(arm: &str, index: usize) -> StepRecord {
    StepRecord {
        arm: arm.into(),
        index,
        line: index + 1,
        task_type: "syn".into(),
        question: "q".into(),
        query: "q".into(),
        prompt: "p".into(),
        prompt_tokens: 1,
        completion: " the synonym for a is b".into(),
        stopped: true,
        understanding: Some("the synonym for a".into()),
        answer: Some("b".into()),
        problems: vec![],
        memory: None,
        demonstrations: vec![],
        understood: true,
        answer_correct: Some(false),
        feedback: None,
        attempts: 1,
        errors: vec![],
        seconds: 0.5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip() {
        let text = render_line(&sample("a", 0)) + &render_line(&sample("a", 1));
        let parsed = parse_log(&text).unwrap();
        assert_eq!(parsed.records, vec![sample("a", 0), sample("a", 1)]);
        assert_eq!(parsed.complete_len, text.len());
    }

    #[test]
    fn a_cut_off_last_line_is_dropped_and_a_bad_middle_line_is_an_error() {
        let whole = render_line(&sample("a", 0));
        let text = format!("{whole}{}", &whole[..20]);
        let parsed = parse_log(&text).unwrap();
        assert_eq!(parsed.records.len(), 1);
        assert_eq!(parsed.complete_len, whole.len());
        let err = parse_log(&format!("{whole}not json\n{whole}")).unwrap_err();
        assert_eq!(err.line, 2);
    }

    #[test]
    fn a_step_logged_twice_counts_once() {
        let mut again = sample("a", 0);
        again.completion = "other".into();
        let arms = by_arm(&[sample("a", 0), again, sample("b", 3)]);
        assert_eq!(arms["a"].len(), 1);
        assert_eq!(arms["a"][&0], sample("a", 0));
        assert!(arms["b"].contains_key(&3));
    }

    proptest::proptest! {
        #[test]
        fn parsing_any_text_never_panics(text in "\\PC{0,200}") {
            let _ = parse_log(&text);
        }
    }
}
