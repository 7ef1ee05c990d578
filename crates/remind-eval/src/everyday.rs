//! The everyday stream: questions as people type them (`tests/fixtures/everyday.jsonl`),
//! replayed through the page's own turn pipeline to measure whether a correction
//! reaches the questions it should, stays away from the ones it should not, and makes
//! the model's answer obey it.
//!
//! Each arm first learns every correction through the write gate (a one-time
//! correction goes through it as "just this once", which never stores it), then asks
//! every follow-up and near miss against the memory it built. Pure but for the two closures
//! it is given: the sentence embedder and, if answers are judged, the endpoint.

pub mod scenario;

use std::collections::{BTreeMap, HashMap};

use remind_app::ports::{Completion, EmbedError, LlmError};
use remind_core::memory::{AdmittedCorrection, FeedbackMemory, Lesson};
use remind_core::memory_key::MemoryKey;
use remind_core::prompt::{PromptMode, PromptTemplate, TokenBudget};
use remind_core::record::{MemoryRecord, Reach, RecordId, StoredEmbedding, Timestamp};
use remind_core::reply::parse_reply;
use remind_core::retrieval::HybridRetriever;
use remind_core::retrieval::embedding_refresh::embedded_text;
use remind_core::turn::{
    CompletionRequest, ExampleSelection, LessonMatching, PAGE_LESSONS_PER_TURN, TurnConfig,
    TurnError, TurnInput, build_turn,
};
use remind_core::write_gate::Durability;

pub use scenario::{Probe, Scenario, ScenarioError, parse_scenarios};

/// How an arm keys and matches lessons. On the command line (`--everyday-arms`), each
/// by its variant's name in kebab case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum EverydayArm {
    /// No lesson is ever attached: how often the model does it right unaided.
    NoMemory,
    /// Remind before keys without markers: a lesson is stored under its question's
    /// whole wording and attaches by the cosine of whole questions. (The pipeline keys
    /// the new question by its kind; against records keyed by wording that only
    /// changes the identical-key shortcut, which an identical question's cosine of 1
    /// takes anyway.)
    WholeQuestion,
    /// Keys of the kind of request: names, numbers, codes and quoted text masked, and
    /// the cosine taken between those masked keys; the best lesson only.
    RequestKind,
    /// The page's configuration: request-kind keys, and every lesson of a distinct key
    /// that passes the gate, up to [`PAGE_LESSONS_PER_TURN`].
    SeveralLessons,
    /// The page's configuration after the user pressed "not relevant here" once under
    /// every lesson a near miss got (a first pass over the near misses), so those kinds
    /// of question are kept off. It shows what the marks cost the follow-ups.
    AfterNotRelevantMarks,
    /// The page with scoped lessons: each correction saved with the scope the page
    /// proposes (the request-kind key's slots), taken as it is.
    ProposedScopes,
    /// The page with scoped lessons, each saved with the scope a person would pick in
    /// the correction form (the fixture's `scope`, or the proposal where it has none).
    ChosenScopes,
}

impl EverydayArm {
    pub const ALL: [EverydayArm; 7] = [
        EverydayArm::NoMemory,
        EverydayArm::WholeQuestion,
        EverydayArm::RequestKind,
        EverydayArm::SeveralLessons,
        EverydayArm::AfterNotRelevantMarks,
        EverydayArm::ProposedScopes,
        EverydayArm::ChosenScopes,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EverydayArm::NoMemory => "no memory",
            EverydayArm::WholeQuestion => "whole question (before)",
            EverydayArm::RequestKind => "request kind, best lesson",
            EverydayArm::SeveralLessons => "request kind, up to 3 lessons (page)",
            EverydayArm::AfterNotRelevantMarks => "page, after \"not relevant here\" marks",
            EverydayArm::ProposedScopes => "scoped lessons, scope as proposed (new)",
            EverydayArm::ChosenScopes => "scoped lessons, scope a person picks (new)",
        }
    }

    /// The key this arm gives a question.
    fn key(self, question: &str) -> MemoryKey {
        match self {
            EverydayArm::WholeQuestion => MemoryKey::of_exact_question(question),
            EverydayArm::NoMemory
            | EverydayArm::RequestKind
            | EverydayArm::SeveralLessons
            | EverydayArm::AfterNotRelevantMarks
            | EverydayArm::ProposedScopes
            | EverydayArm::ChosenScopes => MemoryKey::of_question(question),
        }
    }

    /// Where the arm's simulated user says a lesson applies, in the correction form.
    fn reach(self, scenario: &Scenario) -> Reach {
        match (self, &scenario.scope) {
            (EverydayArm::ChosenScopes, Some(scope)) => Reach::QuestionsLike(vec![scope.clone()]),
            (EverydayArm::ChosenScopes | EverydayArm::ProposedScopes, _) => {
                Reach::proposed_for(&scenario.question)
            }
            _ => Reach::default(),
        }
    }
}

/// What the replay needs besides the scenarios.
#[derive(Clone, Copy, Debug)]
pub struct EverydaySettings {
    pub tau: f32,
    pub mode: PromptMode,
    pub budget: TokenBudget,
    pub temperature: f32,
}

/// One asked question and what happened to it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeOutcome {
    pub scenario: String,
    pub kind: String,
    pub question: String,
    /// `true` for a follow-up (should get the lesson), `false` for a near miss.
    pub should_apply: bool,
    /// The scenarios whose lessons were attached, in the query's order.
    pub applied_from: Vec<String>,
    /// For a one-time scenario's near miss: its instruction reached this prompt.
    pub one_time_leaked: bool,
    /// The scenario whose lesson was offered as a suggestion (not sent), if any.
    pub suggested_from: Option<String>,
    /// Whether the answer obeyed the lesson (follow-ups, when answers are judged).
    pub obeyed: Option<bool>,
    pub answer: Option<String>,
    pub prompt_tokens: usize,
    pub requests: usize,
}

impl ProbeOutcome {
    fn got_own_lesson(&self) -> bool {
        self.applied_from.contains(&self.scenario)
    }

    fn offered_own_lesson(&self) -> bool {
        self.suggested_from.as_ref() == Some(&self.scenario)
    }

    /// A near miss that got its own scenario's lesson, or a one-time instruction.
    pub fn wrongly_applied(&self) -> bool {
        !self.should_apply && (self.got_own_lesson() || self.one_time_leaked)
    }
}

/// One arm's replay.
#[derive(Clone, Debug, PartialEq)]
pub struct ArmOutcome {
    pub arm: EverydayArm,
    pub probes: Vec<ProbeOutcome>,
    /// Lasting corrections the gate refused (each should be 0; any is a gate defect).
    pub refused: Vec<String>,
    /// Lessons replaced by a later scenario's correction of the same key.
    pub superseded: Vec<String>,
    /// "Not relevant here" marks made before the probes (the marking arm only).
    pub marked_not_relevant: usize,
}

/// Counts out of a total, for the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Share {
    pub hits: usize,
    pub of: usize,
}

impl Share {
    fn add(&mut self, hit: bool) {
        self.hits += usize::from(hit);
        self.of += 1;
    }

    pub fn percent(self) -> f64 {
        if self.of == 0 {
            0.0
        } else {
            100.0 * self.hits as f64 / self.of as f64
        }
    }
}

impl std::fmt::Display for Share {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.hits, self.of)
    }
}

/// The figures of an arm, overall or for one kind.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Figures {
    pub applied: Share,
    pub wrongly_applied: Share,
    /// Follow-ups whose own lesson was offered as a suggestion (one click applies it).
    pub suggested: Share,
    /// Near misses whose scenario's lesson was offered as a suggestion (one click
    /// declines it).
    pub wrongly_suggested: Share,
    pub obeyed: Share,
    pub prompt_tokens: usize,
    pub requests: usize,
    pub turns: usize,
}

impl Figures {
    fn add(&mut self, probe: &ProbeOutcome) {
        if probe.should_apply {
            self.applied.add(probe.got_own_lesson());
            self.suggested.add(probe.offered_own_lesson());
            if let Some(obeyed) = probe.obeyed {
                self.obeyed.add(obeyed);
            }
        } else {
            self.wrongly_applied.add(probe.wrongly_applied());
            self.wrongly_suggested.add(probe.offered_own_lesson());
        }
        self.prompt_tokens += probe.prompt_tokens;
        self.requests += probe.requests;
        self.turns += 1;
    }

    pub fn prompt_tokens_per_turn(&self) -> f64 {
        self.prompt_tokens as f64 / self.turns.max(1) as f64
    }

    pub fn requests_per_turn(&self) -> f64 {
        self.requests as f64 / self.turns.max(1) as f64
    }
}

impl ArmOutcome {
    pub fn figures(&self) -> Figures {
        let mut figures = Figures::default();
        self.probes.iter().for_each(|p| figures.add(p));
        figures
    }

    pub fn figures_by_kind(&self) -> BTreeMap<String, Figures> {
        let mut by_kind: BTreeMap<String, Figures> = BTreeMap::new();
        for probe in &self.probes {
            by_kind.entry(probe.kind.clone()).or_default().add(probe);
        }
        by_kind
    }

    /// The issue's summary line, exactly in its form.
    pub fn summary_line(&self) -> String {
        let f = self.figures();
        format!(
            "everyday: applied {}, wrongly applied {}, obeyed {}",
            f.applied, f.wrongly_applied, f.obeyed
        )
    }
}

/// Why a replay stopped.
#[derive(Debug, thiserror::Error)]
pub enum EverydayError {
    #[error("scenario {scenario}: {source}")]
    Turn { scenario: String, source: TurnError },
    #[error("scenario {scenario}: the endpoint failed: {source}")]
    Endpoint { scenario: String, source: LlmError },
    #[error("the sentence embedder failed: {0}")]
    Embed(#[from] EmbedError),
}

/// Sends one request to the endpoint, blocking.
pub type AskEndpoint<'a> = &'a mut dyn FnMut(&CompletionRequest) -> Result<Completion, LlmError>;

/// Replays `scenarios` in one arm. `embed` gives a text's sentence embedding; `ask`,
/// when given, sends a request and its answers are judged (follow-ups only: a near miss
/// is judged by what was attached, not by what the model said).
pub fn replay_arm(
    arm: EverydayArm,
    scenarios: &[Scenario],
    settings: &EverydaySettings,
    embed: &mut dyn FnMut(&str) -> Result<Vec<f32>, EmbedError>,
    mut ask: Option<AskEndpoint<'_>>,
) -> Result<ArmOutcome, EverydayError> {
    let template = PromptTemplate::general();
    let retriever = HybridRetriever { tau: settings.tau };
    let config = TurnConfig {
        template: &template,
        mode: settings.mode,
        budget: settings.budget,
        temperature: settings.temperature,
        lessons: match arm {
            EverydayArm::NoMemory => LessonMatching::Off,
            EverydayArm::WholeQuestion | EverydayArm::RequestKind => {
                LessonMatching::best(&retriever)
            }
            EverydayArm::SeveralLessons
            | EverydayArm::AfterNotRelevantMarks
            | EverydayArm::ProposedScopes
            | EverydayArm::ChosenScopes => LessonMatching::By {
                retriever: &retriever,
                at_most: PAGE_LESSONS_PER_TURN,
            },
        },
        examples: ExampleSelection::None,
    };
    let mut learned = learn(arm, scenarios, embed)?;
    let marked_not_relevant = if arm == EverydayArm::AfterNotRelevantMarks {
        mark_near_misses(&mut learned.memory, &config, scenarios, arm, embed)?
    } else {
        0
    };
    let scenario_of: HashMap<&str, &str> = scenarios
        .iter()
        .map(|s| (s.question.as_str(), s.id.as_str()))
        .collect();
    let mut probes = Vec::new();
    for scenario in scenarios {
        let asked = scenario
            .follow_ups
            .iter()
            .map(|p| (p, true))
            .chain(scenario.near_misses.iter().map(|p| (p, false)));
        for (probe, should_apply) in asked {
            let key = arm.key(&probe.question);
            let vector = embed(embedded_text(&key))?;
            let turn_error = |source| EverydayError::Turn {
                scenario: scenario.id.clone(),
                source,
            };
            let input = TurnInput {
                question: &probe.question,
                question_embedding: Some(&vector),
                one_time_clarification: None,
            };
            let prepared = build_turn(&learned.memory, &config, &input).map_err(turn_error)?;
            let applied_from = prepared
                .applied
                .iter()
                .filter_map(|a| scenario_of.get(a.record.question.as_str()))
                .map(|id| id.to_string())
                .collect();
            let suggested_from = prepared
                .suggestion
                .as_ref()
                .and_then(|s| scenario_of.get(s.record.question.as_str()))
                .map(|id| id.to_string());
            let one_time_leaked = !scenario.lasting
                && prepared
                    .request
                    .prompt
                    .display_text()
                    .contains(&scenario.correction);
            let judged = match (&mut ask, should_apply) {
                (Some(ask), true) => {
                    let completion =
                        ask(&prepared.request).map_err(|source| EverydayError::Endpoint {
                            scenario: scenario.id.clone(),
                            source,
                        })?;
                    let reply = parse_reply(
                        prepared.breakdown.form,
                        &completion.text,
                        completion.stopped,
                    );
                    let answer = reply.answer.clone().unwrap_or_else(|| reply.full_text());
                    Some((scenario.is_obeyed_by(&answer), answer))
                }
                _ => None,
            };
            probes.push(ProbeOutcome {
                scenario: scenario.id.clone(),
                kind: scenario.kind.clone(),
                question: probe.question.clone(),
                should_apply,
                applied_from,
                one_time_leaked,
                suggested_from,
                obeyed: judged.as_ref().map(|(obeyed, _)| *obeyed),
                answer: judged.map(|(_, answer)| answer),
                prompt_tokens: prepared.request.prompt.estimated_tokens(),
                requests: usize::from(ask.is_some() && should_apply),
            });
        }
    }
    Ok(ArmOutcome {
        arm,
        probes,
        refused: learned.refused,
        superseded: learned.superseded,
        marked_not_relevant,
    })
}

/// The user's first pass over the near misses: every retrieved lesson a near miss got
/// is marked "not relevant here" for that question. Returns how many marks were made.
fn mark_near_misses(
    memory: &mut FeedbackMemory,
    config: &TurnConfig<'_>,
    scenarios: &[Scenario],
    arm: EverydayArm,
    embed: &mut dyn FnMut(&str) -> Result<Vec<f32>, EmbedError>,
) -> Result<usize, EverydayError> {
    let mut marks = 0;
    for scenario in scenarios {
        for probe in &scenario.near_misses {
            let vector = embed(embedded_text(&arm.key(&probe.question)))?;
            let input = TurnInput {
                question: &probe.question,
                question_embedding: Some(&vector),
                one_time_clarification: None,
            };
            let prepared =
                build_turn(memory, config, &input).map_err(|source| EverydayError::Turn {
                    scenario: scenario.id.clone(),
                    source,
                })?;
            // Only the near miss's own lesson counts as wrongly applied; another
            // scenario's lesson there may be right (a summary lesson on "Summarise
            // King Lear"), and marking it would teach the memory something false.
            let wrong = prepared
                .applied
                .iter()
                .filter(|a| a.record.question == scenario.question);
            for applied in wrong {
                let id = RecordId(format!("everyday-mark-{marks}"));
                let marked = memory.plan_not_relevant(
                    &applied.record.id,
                    applied.record.version,
                    &probe.question,
                    id,
                    Timestamp(1_000_000 + marks as i64),
                );
                if let Ok(written) = marked {
                    memory.apply(&written);
                    marks += 1;
                }
            }
        }
    }
    Ok(marks)
}

struct Learned {
    memory: FeedbackMemory,
    refused: Vec<String>,
    superseded: Vec<String>,
}

/// Writes every lasting correction as the page would after the gate admitted it, under
/// the arm's key, with the embedding of that key's text.
fn learn(
    arm: EverydayArm,
    scenarios: &[Scenario],
    embed: &mut dyn FnMut(&str) -> Result<Vec<f32>, EmbedError>,
) -> Result<Learned, EmbedError> {
    let mut memory = FeedbackMemory::default();
    let mut refused = Vec::new();
    let mut superseded = Vec::new();
    if arm == EverydayArm::NoMemory {
        return Ok(Learned {
            memory,
            refused,
            superseded,
        });
    }
    for (i, scenario) in scenarios.iter().enumerate() {
        let durability = if scenario.lasting {
            Durability::Lasting
        } else {
            Durability::JustThisOnce
        };
        // The page's path from a typed correction to a lesson: the same gate, the same
        // scope, the same planning against the memory.
        let lesson = match Lesson::from_correction(
            &scenario.question,
            &scenario.correction,
            durability,
            arm.reach(scenario),
        ) {
            Ok(AdmittedCorrection::Lesson(lesson)) => lesson,
            // A one-time instruction stays in its turn: it reaches no later question.
            Ok(AdmittedCorrection::ThisTurnOnly { .. }) => continue,
            Err(_) => {
                if scenario.lasting {
                    refused.push(scenario.id.clone());
                }
                continue;
            }
        };
        let id = RecordId(format!("everyday-{i}"));
        let written = match arm {
            // Before masking, every question was its own key: write into the arm's
            // memory under the whole wording, so nothing is superseded by a mask.
            EverydayArm::WholeQuestion => {
                let mut record = FeedbackMemory::default()
                    .plan_write(lesson, id, Timestamp(i as i64))
                    .current;
                record.key = arm.key(&scenario.question);
                remind_core::memory::Written {
                    current: record,
                    replaced: memory.current_for(&arm.key(&scenario.question)).cloned(),
                    misfired: Vec::new(),
                }
            }
            EverydayArm::RequestKind
            | EverydayArm::SeveralLessons
            | EverydayArm::AfterNotRelevantMarks
            | EverydayArm::ProposedScopes
            | EverydayArm::ChosenScopes
            | EverydayArm::NoMemory => {
                let seen = memory.current_version(&lesson.key());
                match memory.plan_correction(lesson, seen, &[], id, Timestamp(i as i64)) {
                    Ok(written) => written,
                    Err(_) => {
                        refused.push(scenario.id.clone());
                        continue;
                    }
                }
            }
        };
        if let Some(replaced) = &written.replaced {
            superseded.push(format!("{} replaced by {}", replaced.question, scenario.id));
        }
        memory.apply(&written);
    }
    let records = memory
        .records()
        .iter()
        .cloned()
        .map(|mut record| {
            // As the page does: a vector retrieval cannot compare is no embedding.
            record.embedding =
                StoredEmbedding::new("everyday", embed(embedded_text(&record.key))?).ok();
            Ok(record)
        })
        .collect::<Result<Vec<MemoryRecord>, EmbedError>>()?;
    Ok(Learned {
        memory: FeedbackMemory::from_records(records),
        refused,
        superseded,
    })
}

/// How the run was made, for the report's header.
#[derive(Clone, Debug)]
pub struct EverydayRun {
    pub command: String,
    pub model: String,
    pub mode: String,
    pub tau: f32,
    pub answers_judged: bool,
}

fn percent_cell(share: Share) -> String {
    if share.of == 0 {
        "–".into()
    } else {
        format!("{:.1} % ({share})", share.percent())
    }
}

/// The arm the report details and sums up: the page's configuration before any user
/// feedback (each lesson saved with the scope the page proposes), when it was
/// replayed; else the last arm.
pub fn headline(outcomes: &[ArmOutcome]) -> Option<&ArmOutcome> {
    outcomes
        .iter()
        .find(|o| o.arm == EverydayArm::ProposedScopes)
        .or(outcomes.last())
}

/// The report: one row per arm, the headline arm by kind, what it missed, and its
/// summary line.
pub fn render_report(run: &EverydayRun, outcomes: &[ArmOutcome]) -> String {
    let mut out = String::new();
    out.push_str("# Everyday questions\n\n");
    out.push_str(&format!(
        "Model `{}` ({} mode), τ = {}, {}.\n\n```sh\n{}\n```\n\n",
        run.model,
        run.mode,
        run.tau,
        if run.answers_judged {
            "answers judged by each scenario's check"
        } else {
            "retrieval only (answers not requested)"
        },
        run.command
    ));
    out.push_str(
        "| arm | follow-ups that got the lesson | near misses that wrongly got it | follow-ups offered it (suggestion) | near misses offered it | follow-ups whose answer obeys | prompt tokens per turn (est.) | requests per turn |\n|---|---|---|---|---|---|---|---|\n",
    );
    for outcome in outcomes {
        let f = outcome.figures();
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:.0} | {:.2} |\n",
            outcome.arm.name(),
            percent_cell(f.applied),
            percent_cell(f.wrongly_applied),
            percent_cell(f.suggested),
            percent_cell(f.wrongly_suggested),
            percent_cell(f.obeyed),
            f.prompt_tokens_per_turn(),
            f.requests_per_turn()
        ));
    }
    for outcome in outcomes.iter().filter(|o| o.marked_not_relevant > 0) {
        out.push_str(&format!(
            "\n{}: {} \"not relevant here\" marks, one per lesson a near miss got in a first pass.\n",
            outcome.arm.name(),
            outcome.marked_not_relevant
        ));
    }
    let Some(last) = headline(outcomes) else {
        return out;
    };
    out.push_str(&format!("\n## {} by kind\n\n", last.arm.name()));
    out.push_str("| kind | got the lesson | wrongly got it | obeys |\n|---|---|---|---|\n");
    for (kind, f) in last.figures_by_kind() {
        out.push_str(&format!(
            "| {kind} | {} | {} | {} |\n",
            percent_cell(f.applied),
            percent_cell(f.wrongly_applied),
            percent_cell(f.obeyed)
        ));
    }
    let missed: Vec<&ProbeOutcome> = last
        .probes
        .iter()
        .filter(|p| (p.should_apply && !p.got_own_lesson()) || p.wrongly_applied())
        .collect();
    if !missed.is_empty() {
        out.push_str(&format!("\n## Where {} went wrong\n\n", last.arm.name()));
        for p in missed {
            let what = match (p.should_apply, p.applied_from.as_slice()) {
                (true, []) => "no lesson".to_string(),
                (true, others) => format!("got the lessons of {}", others.join(", ")),
                (false, _) if p.one_time_leaked => "got the one-time instruction".to_string(),
                (false, _) => "got the lesson (a near miss)".to_string(),
            };
            out.push_str(&format!("- {} · \"{}\": {what}\n", p.scenario, p.question));
        }
    }
    let disobeyed: Vec<&ProbeOutcome> = last
        .probes
        .iter()
        .filter(|p| p.got_own_lesson() && p.obeyed == Some(false))
        .collect();
    if !disobeyed.is_empty() {
        out.push_str("\n## Got the lesson, answer did not obey\n\n");
        for p in disobeyed {
            let answer: String = p
                .answer
                .as_deref()
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .chars()
                .take(140)
                .collect();
            out.push_str(&format!(
                "- {} · \"{}\": {answer}\n",
                p.scenario, p.question
            ));
        }
    }
    if !last.superseded.is_empty() || !last.refused.is_empty() {
        out.push_str("\n## Learning\n\n");
        for s in &last.superseded {
            out.push_str(&format!("- superseded: {s}\n"));
        }
        for s in &last.refused {
            out.push_str(&format!("- refused by the write gate: {s}\n"));
        }
    }
    out.push_str(&format!("\n{}\n", last.summary_line()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../../tests/fixtures/everyday.jsonl");

    /// A bag-of-words embedding: enough to tell the arms apart without a model.
    /// Scaled to unit length, as a sentence embedding is (cosine ignores the scale).
    fn words(text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut vector = vec![0.0f32; 64];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let slot = word
                .bytes()
                .fold(7usize, |h, b| h.wrapping_mul(31) + b as usize)
                % 64;
            vector[slot] += 1.0;
        }
        let length = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        if length > 0.0 {
            vector.iter_mut().for_each(|x| *x /= length);
        }
        Ok(vector)
    }

    fn settings() -> EverydaySettings {
        EverydaySettings {
            tau: 0.8,
            mode: PromptMode::Completion,
            budget: TokenBudget::default(),
            temperature: 0.0,
        }
    }

    fn scenarios() -> Vec<Scenario> {
        parse_scenarios(FIXTURE).unwrap()
    }

    fn probe<'a>(outcome: &'a ArmOutcome, question: &str) -> &'a ProbeOutcome {
        outcome
            .probes
            .iter()
            .find(|p| p.question == question)
            .unwrap()
    }

    #[test]
    fn without_memory_nothing_is_applied_and_every_probe_is_one_turn() {
        let scenarios = scenarios();
        let outcome = replay_arm(
            EverydayArm::NoMemory,
            &scenarios,
            &settings(),
            &mut words,
            None,
        )
        .unwrap();
        let f = outcome.figures();
        assert_eq!(f.applied.hits, 0);
        assert_eq!(f.wrongly_applied.hits, 0);
        let probes: usize = scenarios
            .iter()
            .map(|s| s.follow_ups.len() + s.near_misses.len())
            .sum();
        assert_eq!(f.turns, probes);
        assert_eq!(f.obeyed.of, 0, "answers are judged only when asked for");
    }

    #[test]
    fn not_relevant_marks_on_the_near_misses_keep_every_marked_lesson_off_them() {
        let scenarios = scenarios();
        let run = |arm| replay_arm(arm, &scenarios, &settings(), &mut words, None).unwrap();
        let before = run(EverydayArm::SeveralLessons);
        let after = run(EverydayArm::AfterNotRelevantMarks);
        let near_misses_with_their_own_lesson =
            before.probes.iter().filter(|p| p.wrongly_applied()).count();
        assert!(
            near_misses_with_their_own_lesson > 0,
            "the word-count embedder misfires somewhere"
        );
        // One mark per wrongly applied lesson, none on a lesson that was right there.
        assert_eq!(after.marked_not_relevant, near_misses_with_their_own_lesson);
        assert_eq!(
            after.figures().wrongly_applied.hits,
            0,
            "a marked near miss no longer gets the lesson it was marked under"
        );
        assert_eq!(before.marked_not_relevant, 0);
    }

    #[test]
    fn a_lesson_on_lyon_reaches_berlin_by_its_request_kind_and_not_by_whole_wording() {
        let scenarios = scenarios();
        let mut embed = words;
        let new = replay_arm(
            EverydayArm::RequestKind,
            &scenarios,
            &settings(),
            &mut embed,
            None,
        )
        .unwrap();
        let before = replay_arm(
            EverydayArm::WholeQuestion,
            &scenarios,
            &settings(),
            &mut embed,
            None,
        )
        .unwrap();
        let berlin = "How far is Berlin from Munich?";
        assert_eq!(probe(&new, berlin).applied_from, ["distance-km"]);
        assert!(probe(&before, berlin).applied_from.is_empty());
        assert!(!probe(&new, "How old is Lyon?").wrongly_applied());
    }

    #[test]
    fn a_one_time_correction_is_never_stored_so_it_reaches_no_later_question() {
        let scenarios = scenarios();
        let outcome = replay_arm(
            EverydayArm::RequestKind,
            &scenarios,
            &settings(),
            &mut words,
            None,
        )
        .unwrap();
        assert!(
            outcome
                .probes
                .iter()
                .filter(|p| p.kind == "one-time")
                .all(|p| !p.one_time_leaked && !p.applied_from.contains(&p.scenario))
        );
        assert!(outcome.refused.is_empty(), "{:?}", outcome.refused);
    }

    #[test]
    fn answers_are_judged_by_the_scenarios_check_when_an_endpoint_is_given() {
        let scenarios: Vec<Scenario> = scenarios().into_iter().take(1).collect();
        let mut ask = |_: &CompletionRequest| {
            Ok(Completion {
                text: " Understanding: the distance\nAnswer: About 465 km.\nEND".into(),
                stopped: true,
            })
        };
        let outcome = replay_arm(
            EverydayArm::RequestKind,
            &scenarios,
            &settings(),
            &mut words,
            Some(&mut ask),
        )
        .unwrap();
        let f = outcome.figures();
        assert_eq!(f.obeyed, Share { hits: 2, of: 2 });
        assert_eq!(f.requests, 2, "only follow-ups are sent");
        let report = render_report(
            &EverydayRun {
                command: "remind-eval --stream everyday".into(),
                model: "m".into(),
                mode: "completion".into(),
                tau: 0.8,
                answers_judged: true,
            },
            std::slice::from_ref(&outcome),
        );
        assert!(report.ends_with(&format!("{}\n", outcome.summary_line())));
        assert!(outcome.summary_line().starts_with("everyday: applied "));
    }
}
