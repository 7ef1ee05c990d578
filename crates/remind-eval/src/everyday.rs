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
use remind_core::memory::{AdmittedCorrection, FeedbackMemory, Lesson, ScopeChange};
use remind_core::memory_key::MemoryKey;
use remind_core::prompt::{PromptMode, PromptTemplate, TokenBudget};
use remind_core::record::{MemoryRecord, Reach, RecordId, StoredEmbedding, Timestamp};
use remind_core::reply::parse_reply;
use remind_core::retrieval::HybridRetriever;
use remind_core::retrieval::embedding_refresh::embedded_text;
use remind_core::turn::{
    CompletionRequest, ExampleSelection, LessonMatching, PAGE_LESSONS_PER_TURN, PreparedTurn,
    Suggestion, TurnConfig, TurnError, TurnInput, build_turn,
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

    /// Whether the arm's simulated user answers the suggestions under the answers (the
    /// scoped arms: the page that offers them). The other arms stand for pages before
    /// suggestions could be answered.
    fn answers_suggestions(self) -> bool {
        matches!(
            self,
            EverydayArm::ProposedScopes | EverydayArm::ChosenScopes
        )
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

/// Which round a probe was asked in: the second comes after the simulated user
/// answered the first round's suggestions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    First,
    Second,
}

/// What the simulated user did with the suggestion under an answer. It accepts a
/// suggestion of the follow-up's own lesson ("Apply it": the lesson's scope widens to
/// the question and the question is asked again with it) and declines every other
/// ("Not relevant here").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SuggestionAnswer {
    Accepted,
    Declined,
}

/// One asked question and what happened to it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeOutcome {
    pub scenario: String,
    pub kind: String,
    pub question: String,
    pub round: Round,
    /// `true` for a follow-up (should get the lesson), `false` for a near miss.
    pub should_apply: bool,
    /// The scenarios whose lessons were attached, in the query's order.
    pub applied_from: Vec<String>,
    /// For a one-time scenario's near miss: its instruction reached this prompt.
    pub one_time_leaked: bool,
    /// The scenario whose lesson was offered as a suggestion (not sent), if any.
    pub suggested_from: Option<String>,
    /// The simulated user's answer to that suggestion, in the arms that answer them.
    pub suggestion_answer: Option<SuggestionAnswer>,
    /// The lesson did not reach this follow-up, so the simulated user wrote the
    /// correction again on it (first round, the arms that answer suggestions).
    pub taught_again: bool,
    /// The answer obeyed, so the simulated user pressed "This is right" and a lesson
    /// that went by similarity widened to this question.
    pub confirmed: bool,
    /// Whether the final answer obeyed the scenario's lesson: after an accepted
    /// suggestion, the answer asked again with it. Follow-ups, and near misses that got
    /// a lesson, when answers are judged.
    pub obeyed: Option<bool>,
    /// A near miss whose answer shows its scenario's lesson while the same question
    /// without memory does not (judged only when a lesson was attached: otherwise the
    /// prompt is the one without memory). `None` when answers are not judged.
    pub leaked: Option<bool>,
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

    /// A follow-up whose lesson was attached by the first turn, with no help.
    pub fn applied_unaided(&self) -> bool {
        self.should_apply && self.got_own_lesson() && self.suggestion_answer.is_none()
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
    /// Near misses whose answer shows their scenario's lesson only with memory on.
    pub leaked: Share,
    pub obeyed: Share,
    pub prompt_tokens: usize,
    pub requests: usize,
    pub turns: usize,
}

impl Figures {
    fn add(&mut self, probe: &ProbeOutcome) {
        if probe.should_apply {
            self.applied.add(probe.applied_unaided());
            self.suggested.add(probe.offered_own_lesson());
            if let Some(obeyed) = probe.obeyed {
                self.obeyed.add(obeyed);
            }
        } else {
            self.wrongly_applied.add(probe.wrongly_applied());
            self.wrongly_suggested.add(probe.offered_own_lesson());
            if let Some(leaked) = probe.leaked {
                self.leaked.add(leaked);
            }
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
    /// The first round's figures.
    pub fn figures(&self) -> Figures {
        self.round_figures(Round::First)
    }

    pub fn round_figures(&self, round: Round) -> Figures {
        let mut figures = Figures::default();
        self.probes
            .iter()
            .filter(|p| p.round == round)
            .for_each(|p| figures.add(p));
        figures
    }

    pub fn figures_by_kind(&self) -> BTreeMap<String, Figures> {
        let mut by_kind: BTreeMap<String, Figures> = BTreeMap::new();
        for probe in self.probes.iter().filter(|p| p.round == Round::First) {
            by_kind.entry(probe.kind.clone()).or_default().add(probe);
        }
        by_kind
    }

    /// The issue's summary line for the first round, exactly in its form.
    pub fn summary_line(&self) -> String {
        let f = self.figures();
        format!(
            "everyday: applied {}, suggested {}, wrongly applied {}, leaked {}, obeyed {}",
            f.applied, f.suggested, f.wrongly_applied, f.leaked, f.obeyed
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
    ask: Option<AskEndpoint<'_>>,
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
    let no_memory = TurnConfig {
        lessons: LessonMatching::Off,
        ..config
    };
    let mut replay = Replay {
        arm,
        memory: learned.memory,
        config: &config,
        no_memory: &no_memory,
        scenario_of: scenarios
            .iter()
            .map(|s| (s.question.clone(), s.id.clone()))
            .collect(),
        feedback: FeedbackIds::default(),
        embed,
        ask,
    };
    let mut probes = Vec::new();
    for (round, follow_ups, near_misses) in [
        (
            Round::First,
            (|s: &Scenario| &s.follow_ups) as fn(&Scenario) -> &Vec<Probe>,
            (|s: &Scenario| &s.near_misses) as fn(&Scenario) -> &Vec<Probe>,
        ),
        (
            Round::Second,
            |s: &Scenario| &s.second_follow_ups,
            |s: &Scenario| &s.second_near_misses,
        ),
    ] {
        for scenario in scenarios {
            let asked = follow_ups(scenario)
                .iter()
                .map(|p| (p, true))
                .chain(near_misses(scenario).iter().map(|p| (p, false)));
            for (probe, should_apply) in asked {
                probes.push(replay.ask_probe(scenario, probe, should_apply, round)?);
            }
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

/// Ids and times of the records the simulated user's feedback writes, one after
/// another, after every time the learning pass used.
#[derive(Default)]
struct FeedbackIds {
    written: usize,
}

impl FeedbackIds {
    /// The time the next record is written at.
    fn now(&self) -> Timestamp {
        Timestamp(2_000_000 + self.written as i64)
    }

    fn next(&mut self) -> (RecordId, Timestamp) {
        let next = (
            RecordId(format!("everyday-feedback-{}", self.written)),
            self.now(),
        );
        self.written += 1;
        next
    }
}

/// One arm's memory as the simulated user asks and answers suggestions.
struct Replay<'r, 'c, 'a> {
    arm: EverydayArm,
    memory: FeedbackMemory,
    config: &'r TurnConfig<'c>,
    no_memory: &'r TurnConfig<'c>,
    /// Each scenario's id by the question its lesson was taught on.
    scenario_of: HashMap<String, String>,
    /// Ids and times for the records the simulated user's answers write.
    feedback: FeedbackIds,
    embed: &'r mut dyn FnMut(&str) -> Result<Vec<f32>, EmbedError>,
    ask: Option<AskEndpoint<'a>>,
}

impl Replay<'_, '_, '_> {
    fn ask_probe(
        &mut self,
        scenario: &Scenario,
        probe: &Probe,
        should_apply: bool,
        round: Round,
    ) -> Result<ProbeOutcome, EverydayError> {
        let key = self.arm.key(&probe.question);
        let vector = (self.embed)(embedded_text(&key))?;
        let input = TurnInput {
            question: &probe.question,
            question_embedding: Some(&vector),
            one_time_clarification: None,
        };
        let turn_error = |source| EverydayError::Turn {
            scenario: scenario.id.clone(),
            source,
        };
        let first = build_turn(&self.memory, self.config, &input).map_err(turn_error)?;
        let suggested_from = first
            .suggestion
            .as_ref()
            .and_then(|s| self.scenario_of.get(&s.record.question))
            .cloned();
        let suggestion_answer = match &first.suggestion {
            Some(suggestion) if self.arm.answers_suggestions() => {
                Some(self.answer_suggestion(suggestion, scenario, &probe.question, should_apply))
            }
            _ => None,
        };
        // "Apply it" asks the question again, now within the lesson's widened scope.
        let prepared = if suggestion_answer == Some(SuggestionAnswer::Accepted) {
            build_turn(&self.memory, self.config, &input).map_err(turn_error)?
        } else {
            first
        };
        let applied_from: Vec<String> = prepared
            .applied
            .iter()
            .filter_map(|a| self.scenario_of.get(&a.record.question))
            .cloned()
            .collect();
        let one_time_leaked = !scenario.lasting
            && prepared
                .request
                .prompt
                .display_text()
                .contains(&scenario.correction);
        // Follow-ups are judged by their answer; a near miss only when a lesson went
        // with it, against the same question without memory.
        let (obeyed, answer, leaked) = match (&mut self.ask, should_apply) {
            (None, _) => (None, None, None),
            (Some(ask), true) => {
                let answer = answer_of(ask, &prepared, scenario)?;
                (Some(scenario.is_obeyed_by(&answer)), Some(answer), None)
            }
            (Some(ask), false) if !prepared.applied.is_empty() => {
                let with_memory = answer_of(ask, &prepared, scenario)?;
                let bare = build_turn(&self.memory, self.no_memory, &input).map_err(turn_error)?;
                let obeyed = scenario.is_obeyed_by(&with_memory);
                let leaked = obeyed && !scenario.is_obeyed_by(&answer_of(ask, &bare, scenario)?);
                (Some(obeyed), Some(with_memory), Some(leaked))
            }
            (Some(_), false) => (None, None, Some(false)),
        };
        // What the page sends: the turn, and the turn again after "Apply it".
        let requests = 1 + usize::from(suggestion_answer == Some(SuggestionAnswer::Accepted));
        // A first-round follow-up whose answer obeys its lesson (unjudged: that got it):
        // the user presses "This is right", and the lessons that went by similarity
        // widen to it, as the page plans it (the verified example the page also keeps
        // is left out: no arm here shows examples).
        let own_lesson_applied = applied_from.contains(&scenario.id);
        let confirmed = self.arm.answers_suggestions()
            && round == Round::First
            && should_apply
            && own_lesson_applied
            && obeyed != Some(false)
            && {
                let now = self.feedback.now();
                let feedback = &mut self.feedback;
                let widened = self.memory.plan_confirmed_here(
                    &probe.question,
                    &prepared.applied_by_similarity(),
                    || feedback.next().0,
                    now,
                );
                widened.iter().for_each(|w| self.memory.apply(w));
                !widened.is_empty()
            };
        // A first-round follow-up its lesson did not reach, and whose answer shows it
        // (or, unjudged, any such follow-up): the user corrects it again.
        let taught_again = self.arm.answers_suggestions()
            && round == Round::First
            && should_apply
            && !own_lesson_applied
            && obeyed != Some(true)
            && self.teach_again(scenario, &probe.question)?;
        Ok(ProbeOutcome {
            scenario: scenario.id.clone(),
            kind: scenario.kind.clone(),
            question: probe.question.clone(),
            round,
            taught_again,
            confirmed,
            should_apply,
            applied_from,
            one_time_leaked,
            suggested_from,
            suggestion_answer,
            obeyed,
            leaked,
            answer,
            prompt_tokens: prepared.request.prompt.estimated_tokens(),
            requests,
        })
    }

    /// The correction written again on `question`, saved with the scope the page
    /// proposes for it, as a new lesson of that kind of question. `false` if the gate
    /// or the memory refused it.
    fn teach_again(&mut self, scenario: &Scenario, question: &str) -> Result<bool, EmbedError> {
        let Ok(AdmittedCorrection::Lesson(lesson)) = Lesson::from_correction(
            question,
            &scenario.correction,
            Durability::Lasting,
            Reach::proposed_for(question),
        ) else {
            return Ok(false);
        };
        let (id, now) = self.feedback.next();
        let seen = self.memory.current_version(&lesson.key());
        let Ok(mut written) = self.memory.plan_correction(lesson, seen, &[], id, now) else {
            return Ok(false);
        };
        let vector = (self.embed)(embedded_text(&written.current.key))?;
        written.current.embedding = StoredEmbedding::new("everyday", vector).ok();
        self.memory.apply(&written);
        self.scenario_of
            .insert(question.to_string(), scenario.id.clone());
        Ok(true)
    }

    /// The simulated user's click on a suggestion, written as the page writes it: a
    /// follow-up's own lesson is applied here too, anything else is not relevant here.
    fn answer_suggestion(
        &mut self,
        suggestion: &Suggestion,
        scenario: &Scenario,
        question: &str,
        should_apply: bool,
    ) -> SuggestionAnswer {
        let record = &suggestion.record;
        let (answer, change) = if should_apply && record.question == scenario.question {
            (SuggestionAnswer::Accepted, ScopeChange::AppliesHereToo)
        } else {
            (SuggestionAnswer::Declined, ScopeChange::NotRelevantHere)
        };
        let (id, now) = self.feedback.next();
        // The page shows a refusal and changes nothing; so does the replay.
        if let Ok(written) =
            self.memory
                .plan_scope_change(&record.id, record.version, question, change, id, now)
        {
            self.memory.apply(&written);
        }
        answer
    }
}

/// Sends a turn and reads the answer out of the reply.
fn answer_of(
    ask: &mut AskEndpoint<'_>,
    prepared: &PreparedTurn,
    scenario: &Scenario,
) -> Result<String, EverydayError> {
    let completion = ask(&prepared.request).map_err(|source| EverydayError::Endpoint {
        scenario: scenario.id.clone(),
        source,
    })?;
    let reply = parse_reply(
        prepared.breakdown.form,
        &completion.text,
        completion.at_stop_sequence(),
    );
    Ok(reply.answer.clone().unwrap_or_else(|| reply.full_text()))
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
                remind_core::memory::PlannedWrite {
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
        .to_records()
        .into_iter()
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

/// How a report line marks a probe of the second round.
fn round_note(round: Round) -> &'static str {
    match round {
        Round::First => "",
        Round::Second => " (second round)",
    }
}

/// An answer on one line, cut to what a report row can hold.
fn one_line(answer: &str) -> String {
    answer
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(140)
        .collect()
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
        "| arm | follow-ups that got the lesson | follow-ups only offered it (suggestion) | near misses that wrongly got it | near misses offered it | near misses where it leaked into the answer | follow-ups whose answer obeys | second round: follow-ups that got it | second round: near misses that got it | prompt tokens per turn (est.) | requests per turn |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for outcome in outcomes {
        let f = outcome.figures();
        let second = outcome.round_figures(Round::Second);
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} | {:.2} |\n",
            outcome.arm.name(),
            percent_cell(f.applied),
            percent_cell(f.suggested),
            percent_cell(f.wrongly_applied),
            percent_cell(f.wrongly_suggested),
            percent_cell(f.leaked),
            percent_cell(f.obeyed),
            percent_cell(second.applied),
            percent_cell(second.wrongly_applied),
            f.prompt_tokens_per_turn(),
            f.requests_per_turn()
        ));
    }
    out.push_str(
        "\nThe first round: follow-ups and near misses asked once; the simulated user accepts a suggestion of the follow-up's own lesson (the scope widens, the question is asked again, and that answer is judged) and declines any other. \"Got the lesson\" counts only lessons attached without that help. The second round asks other specifics and the first round's rephrasings again, against the memory the first round's answers left.\n",
    );
    for outcome in outcomes {
        let first_round = || outcome.probes.iter().filter(|p| p.round == Round::First);
        let answered = |answer| {
            first_round()
                .filter(|p| p.suggestion_answer == Some(answer))
                .count()
        };
        let taught_again = first_round().filter(|p| p.taught_again).count();
        let confirmed = first_round().filter(|p| p.confirmed).count();
        if answered(SuggestionAnswer::Accepted)
            + answered(SuggestionAnswer::Declined)
            + taught_again
            + confirmed
            > 0
        {
            out.push_str(&format!(
                "\n{}, first round: {} suggestions accepted, {} declined, {} answers confirmed (a lesson matched by similarity widened to them), {} follow-ups corrected again.\n",
                outcome.arm.name(),
                answered(SuggestionAnswer::Accepted),
                answered(SuggestionAnswer::Declined),
                confirmed,
                taught_again
            ));
        }
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
        .filter(|p| (p.should_apply && !p.applied_unaided()) || p.wrongly_applied())
        .collect();
    if !missed.is_empty() {
        out.push_str(&format!("\n## Where {} went wrong\n\n", last.arm.name()));
        for p in missed {
            let round = round_note(p.round);
            let what = match (p.should_apply, p.applied_from.as_slice()) {
                (true, _) if p.suggestion_answer == Some(SuggestionAnswer::Accepted) => {
                    "offered, accepted".to_string()
                }
                (true, []) if p.offered_own_lesson() => "offered only".to_string(),
                (true, []) => "no lesson".to_string(),
                (true, others) => format!("got the lessons of {}", others.join(", ")),
                (false, _) if p.one_time_leaked => "got the one-time instruction".to_string(),
                (false, _) => "got the lesson (a near miss)".to_string(),
            };
            out.push_str(&format!(
                "- {} · \"{}\"{round}: {what}\n",
                p.scenario, p.question
            ));
        }
    }
    let disobeyed: Vec<&ProbeOutcome> = last
        .probes
        .iter()
        .filter(|p| p.should_apply && p.got_own_lesson() && p.obeyed == Some(false))
        .collect();
    if !disobeyed.is_empty() {
        out.push_str("\n## Got the lesson, answer did not obey\n\n");
        for p in disobeyed {
            out.push_str(&format!(
                "- {} · \"{}\"{}: {}\n",
                p.scenario,
                p.question,
                round_note(p.round),
                one_line(p.answer.as_deref().unwrap_or_default())
            ));
        }
    }
    let leaked: Vec<&ProbeOutcome> = last
        .probes
        .iter()
        .filter(|p| p.leaked == Some(true))
        .collect();
    if !leaked.is_empty() {
        out.push_str("\n## Near misses whose answer showed the lesson only with memory on\n\n");
        for p in leaked {
            out.push_str(&format!(
                "- {} · \"{}\" (attached: {}): {}\n",
                p.scenario,
                p.question,
                p.applied_from.join(", "),
                one_line(p.answer.as_deref().unwrap_or_default())
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
        let near_misses_with_their_own_lesson = before
            .probes
            .iter()
            .filter(|p| p.round == Round::First && p.wrongly_applied())
            .count();
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
        let sent = std::cell::Cell::new(0);
        let mut ask = |_: &CompletionRequest| {
            sent.set(sent.get() + 1);
            Ok(Completion {
                text: " Understanding: the distance\nAnswer: About 465 km.\nEND".into(),
                ending: remind_app::ports::Ending::StopSequence,
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
        assert_eq!(f.requests, f.turns, "the page sends one request a turn");
        // Every near miss is judged; one that got a lesson is also asked without memory,
        // and answers in km either way, so nothing leaked.
        assert_eq!(f.leaked, Share { hits: 0, of: 2 });
        let with_a_lesson = outcome
            .probes
            .iter()
            .filter(|p| !p.should_apply && !p.applied_from.is_empty())
            .count();
        let follow_ups = outcome.probes.iter().filter(|p| p.should_apply).count();
        assert_eq!(sent.get(), follow_ups + 2 * with_a_lesson);
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
