//! One line of `tests/fixtures/everyday.jsonl`: a question as a person types it, the
//! correction they would give, and the later questions that should and should not get
//! the lesson.

use regex::Regex;
use remind_core::request_pattern::RequestPattern;
use serde::Deserialize;
use thiserror::Error;

/// A later question and why it is there (rephrased, entity-swapped, or the near miss's
/// reason: negation, another attribute, another task).
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Probe {
    pub question: String,
    #[serde(alias = "variation", alias = "why")]
    pub reason: String,
}

#[derive(Clone, Debug, Deserialize)]
struct ScenarioLine {
    id: String,
    kind: String,
    question: String,
    correction: String,
    lasting: bool,
    #[serde(default)]
    scope: Option<String>,
    follow_ups: Vec<Probe>,
    near_misses: Vec<Probe>,
    #[serde(default)]
    second_follow_ups: Vec<Probe>,
    #[serde(default)]
    second_near_misses: Vec<Probe>,
    obeys: Option<String>,
    obeys_not: Option<String>,
}

/// A scenario, with its answer checks compiled.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub id: String,
    pub kind: String,
    pub question: String,
    pub correction: String,
    /// `false`: the user marks the correction "just this once"; it must never reach a
    /// later question.
    pub lasting: bool,
    /// The scope a person would pick in the correction form, where it differs from the
    /// page's proposal; `None`: they keep the proposal.
    pub scope: Option<RequestPattern>,
    pub follow_ups: Vec<Probe>,
    pub near_misses: Vec<Probe>,
    /// The second round: asked after the simulated user answered the first round's
    /// suggestions, other specifics and the first round's rephrasings again.
    pub second_follow_ups: Vec<Probe>,
    pub second_near_misses: Vec<Probe>,
    obeys: Option<Regex>,
    obeys_not: Option<Regex>,
}

impl Scenario {
    /// Whether an answer follows the lesson: it matches `obeys` (if set) and does not
    /// match `obeys_not` (if set).
    pub fn is_obeyed_by(&self, answer: &str) -> bool {
        self.obeys.as_ref().is_none_or(|r| r.is_match(answer))
            && self.obeys_not.as_ref().is_none_or(|r| !r.is_match(answer))
    }
}

#[derive(Debug, Error, PartialEq)]
pub enum ScenarioError {
    #[error("line {line}: {reason}")]
    Line { line: usize, reason: String },
}

/// Parses the fixture: one JSON object per non-empty line. A lasting scenario needs
/// follow-ups and an answer check; ids are unique.
pub fn parse_scenarios(text: &str) -> Result<Vec<Scenario>, ScenarioError> {
    let mut scenarios: Vec<Scenario> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let error = |reason: String| ScenarioError::Line { line, reason };
        let parsed: ScenarioLine = serde_json::from_str(raw).map_err(|e| error(e.to_string()))?;
        let compile = |pattern: &Option<String>| {
            pattern
                .as_deref()
                .map(Regex::new)
                .transpose()
                .map_err(|e| error(format!("scenario {}: {e}", parsed.id)))
        };
        let scope = parsed
            .scope
            .as_deref()
            .map(RequestPattern::parse)
            .transpose()
            .map_err(|e| error(format!("scenario {}: scope: {e}", parsed.id)))?;
        let scenario = Scenario {
            scope,
            obeys: compile(&parsed.obeys)?,
            obeys_not: compile(&parsed.obeys_not)?,
            id: parsed.id,
            kind: parsed.kind,
            question: parsed.question,
            correction: parsed.correction,
            lasting: parsed.lasting,
            follow_ups: parsed.follow_ups,
            near_misses: parsed.near_misses,
            second_follow_ups: parsed.second_follow_ups,
            second_near_misses: parsed.second_near_misses,
        };
        if scenarios.iter().any(|s| s.id == scenario.id) {
            return Err(error(format!("the id {} is used twice", scenario.id)));
        }
        if scenario.lasting
            && (scenario.follow_ups.is_empty()
                || (scenario.obeys.is_none() && scenario.obeys_not.is_none()))
        {
            return Err(error(format!(
                "scenario {} is lasting, so it needs follow-ups and an obeys or obeys_not check",
                scenario.id
            )));
        }
        scenarios.push(scenario);
    }
    Ok(scenarios)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../../../tests/fixtures/everyday.jsonl");

    #[test]
    fn the_fixture_has_at_least_forty_scenarios_in_at_least_eight_kinds() {
        let scenarios = parse_scenarios(FIXTURE).expect("the fixture parses");
        assert!(scenarios.len() >= 40, "{} scenarios", scenarios.len());
        let mut kinds: Vec<&str> = scenarios.iter().map(|s| s.kind.as_str()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        assert!(kinds.len() >= 8, "{kinds:?}");
        assert!(kinds.contains(&"one-time"));
        assert!(
            scenarios
                .iter()
                .all(|s| !s.near_misses.is_empty() && (s.lasting || s.follow_ups.is_empty()))
        );
    }

    #[test]
    fn an_answer_is_checked_by_its_scenarios_patterns() {
        let scenarios = parse_scenarios(FIXTURE).unwrap();
        let by_id = |id: &str| scenarios.iter().find(|s| s.id == id).unwrap();
        assert!(by_id("distance-km").is_obeyed_by("It is about 392 km."));
        assert!(!by_id("distance-km").is_obeyed_by("About 244 miles."));
        assert!(by_id("vegetarian").is_obeyed_by("A mushroom risotto."));
        assert!(!by_id("vegetarian").is_obeyed_by("Roast chicken with potatoes."));
    }

    #[test]
    fn a_bad_line_is_named() {
        let err = parse_scenarios("\n{\"id\": 1}\n").unwrap_err();
        assert!(matches!(err, ScenarioError::Line { line: 2, .. }), "{err}");
        let twice = format!(
            "{}\n{}",
            FIXTURE.lines().next().unwrap(),
            FIXTURE.lines().next().unwrap()
        );
        assert!(
            parse_scenarios(&twice)
                .unwrap_err()
                .to_string()
                .contains("used twice")
        );
        let bad_regex =
            FIXTURE
                .lines()
                .next()
                .unwrap()
                .replacen("\"obeys\": \"", "\"obeys\": \"(", 1);
        assert!(parse_scenarios(&bad_regex).is_err());
    }
}
