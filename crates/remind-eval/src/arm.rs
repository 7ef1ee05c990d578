//! The arms of the experiment, and how each one builds a prompt and learns from a step.
//!
//! An arm's state is a value that changes only through [`ArmState::observe`], from the
//! task, the model's reply and the seeded simulated user. So the state after any number
//! of steps can be rebuilt exactly from the logged replies, which is what makes the step
//! log a checkpoint. Every arm builds its prompt through the page's own turn pipeline
//! (`remind_core::turn::build_turn`); arms differ only in the [`TurnConfig`] they pass:
//! the template (GROW-PROMPT's grown one), the retriever, and which verified examples.

use crate::baseline::GrowPrompt;
use crate::keyword_check::understanding_names_task;
use crate::simulated_user::SimulatedUser;
use crate::task_stream::{RenderedTask, TaskType};
use remind_core::memory::{AdmittedCorrection, FeedbackMemory, Lesson};
use remind_core::prompt::{PromptMode, PromptTemplate, ReplyForm, TokenBudget};
use remind_core::record::{Reach, RecordId, StoredEmbedding, Timestamp};
use remind_core::reply::ParsedReply;
use remind_core::retrieval::{HybridRetriever, LevenshteinRetriever, Retriever, SemanticRetriever};
use remind_core::turn::{
    AppliedBecause, CompletionRequest, ExampleSelection, LessonMatching, TurnConfig, TurnError,
    TurnInput, build_turn,
};
use remind_core::verified_examples::ExampleBudget;
use remind_core::write_gate::Durability;

/// How MEM-PROMPT finds the stored clarification for a question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LessonRetrieval {
    /// The paper's low-resource retriever (the page's default): masked-key edit distance < 6.
    Levenshtein,
    /// Same masked key outright, else cosine ≥ τ unless the keys differ by a negation.
    /// Without an embedder only the first rule can fire.
    Hybrid,
    /// Cosine ≥ τ over sentence embeddings.
    Semantic,
}

/// How the VERIFIED arm picks which of its confirmed answers join the prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DemoSelection {
    /// The k nearest by masked-key edit distance.
    Levenshtein,
    /// The k most similar by embedding cosine.
    Semantic,
    /// The k most recent, whatever they are about (the control).
    Recency,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArmKind {
    /// The question alone after the paper's few-shot prompt.
    NoMemory,
    /// Every clarified question with its gold reply appended to the prompt.
    GrowPrompt,
    /// The paper's method: the best stored clarification attached to the question.
    MemPrompt(LessonRetrieval),
    /// MEM-PROMPT (edit distance, as the page) plus the k selected answers that were
    /// right as extra few-shot demonstrations.
    Verified(DemoSelection),
}

impl ArmKind {
    pub const ALL: [ArmKind; 8] = [
        ArmKind::NoMemory,
        ArmKind::GrowPrompt,
        ArmKind::MemPrompt(LessonRetrieval::Levenshtein),
        ArmKind::MemPrompt(LessonRetrieval::Hybrid),
        ArmKind::MemPrompt(LessonRetrieval::Semantic),
        ArmKind::Verified(DemoSelection::Levenshtein),
        ArmKind::Verified(DemoSelection::Semantic),
        ArmKind::Verified(DemoSelection::Recency),
    ];

    pub fn name(self) -> &'static str {
        match self {
            ArmKind::NoMemory => "no-mem",
            ArmKind::GrowPrompt => "grow-prompt",
            ArmKind::MemPrompt(LessonRetrieval::Levenshtein) => "mem-prompt-lev",
            ArmKind::MemPrompt(LessonRetrieval::Hybrid) => "mem-prompt-hybrid",
            ArmKind::MemPrompt(LessonRetrieval::Semantic) => "mem-prompt-semantic",
            ArmKind::Verified(DemoSelection::Levenshtein) => "verified",
            ArmKind::Verified(DemoSelection::Semantic) => "verified-semantic",
            ArmKind::Verified(DemoSelection::Recency) => "verified-recency",
        }
    }

    pub fn from_name(name: &str) -> Option<ArmKind> {
        ArmKind::ALL.into_iter().find(|a| a.name() == name.trim())
    }

    /// Whether the arm cannot run without question embeddings.
    pub fn needs_embeddings(self) -> bool {
        matches!(
            self,
            ArmKind::MemPrompt(LessonRetrieval::Semantic)
                | ArmKind::Verified(DemoSelection::Semantic)
        )
    }

    /// Whether the arm uses embeddings when they are available (hybrid does, optionally).
    pub fn uses_embeddings(self) -> bool {
        self.needs_embeddings() || self == ArmKind::MemPrompt(LessonRetrieval::Hybrid)
    }
}

/// What every arm of one run shares.
#[derive(Clone, Debug, PartialEq)]
pub struct ArmSettings {
    pub mode: PromptMode,
    pub budget: TokenBudget,
    pub temperature: f32,
    /// Demonstrations per prompt for the VERIFIED arms.
    pub demos_k: usize,
    /// The cosine threshold of the semantic and hybrid retrievers.
    pub tau: f32,
    pub p_feedback: f64,
    pub seed: u64,
}

/// A stored clarification that was attached to this step's question.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryUse {
    pub question: String,
    pub clarification: String,
    pub score: f32,
    /// The task type the clarification asks for, if it names one.
    pub lesson_type: Option<TaskType>,
}

/// One step ready to send.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedStep {
    /// The question as the model sees it (with any clarification attached).
    pub query: String,
    pub request: CompletionRequest,
    /// The form the prompt asks replies in, which is the form they are read in.
    pub form: ReplyForm,
    pub memory: Option<MemoryUse>,
    /// The questions of the demonstrations in the prompt, in prompt order.
    pub demonstrations: Vec<String>,
}

/// How one reply was judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    /// Acc(u): the understanding names the asked-for relation and no other.
    pub understood: bool,
    /// The simulated user's clarification, given only after a misread.
    pub feedback: Option<String>,
}

/// One arm's memory, prompt and simulated user after the steps it has seen.
#[derive(Clone, Debug)]
pub struct ArmState {
    kind: ArmKind,
    base: PromptTemplate,
    settings: ArmSettings,
    memory: FeedbackMemory,
    grow: GrowPrompt,
    user: SimulatedUser,
}

impl ArmState {
    pub fn new(kind: ArmKind, base: PromptTemplate, settings: ArmSettings) -> Self {
        ArmState {
            kind,
            grow: GrowPrompt::new(base.clone(), settings.budget),
            user: SimulatedUser::new(settings.p_feedback, settings.seed),
            base,
            settings,
            memory: FeedbackMemory::default(),
        }
    }

    pub fn kind(&self) -> ArmKind {
        self.kind
    }

    /// Builds the request for `task` through the page's turn pipeline
    /// ([`build_turn`]); the arm decides only the configuration. `embedding` is the
    /// question's, when available.
    pub fn prepare(
        &self,
        task: &RenderedTask,
        embedding: Option<&[f32]>,
    ) -> Result<PreparedStep, TurnError> {
        let question = task.question.trim();
        let tau = self.settings.tau;
        let by_wording = LevenshteinRetriever::default();
        let hybrid = HybridRetriever { tau };
        let semantic = SemanticRetriever { tau };
        let similar = ExampleSelection::Similar(ExampleBudget {
            max_examples: self.settings.demos_k,
            // The experiment measures demonstrations by count, and keeps every one it
            // ranks, however unlike; the token budget still applies to the prompt.
            max_tokens: usize::MAX,
            min_similarity: f32::NEG_INFINITY,
        });
        let grown;
        let (template, lessons, examples, embedding): (_, _, _, Option<&[f32]>) = match self.kind {
            ArmKind::NoMemory => (
                &self.base,
                LessonMatching::Off,
                ExampleSelection::None,
                None,
            ),
            ArmKind::GrowPrompt => {
                grown = self.grow.template_for(self.settings.mode, question);
                (&grown, LessonMatching::Off, ExampleSelection::None, None)
            }
            ArmKind::MemPrompt(retrieval) => {
                let retriever: &dyn Retriever = match retrieval {
                    LessonRetrieval::Levenshtein => &by_wording,
                    LessonRetrieval::Hybrid => &hybrid,
                    LessonRetrieval::Semantic => &semantic,
                };
                (
                    &self.base,
                    LessonMatching::best(retriever),
                    ExampleSelection::None,
                    embedding,
                )
            }
            ArmKind::Verified(selection) => {
                let (examples, embedding) = match selection {
                    DemoSelection::Levenshtein => (similar, None),
                    DemoSelection::Semantic => (similar, embedding),
                    DemoSelection::Recency => {
                        (ExampleSelection::MostRecent(self.settings.demos_k), None)
                    }
                };
                (
                    &self.base,
                    LessonMatching::best(&by_wording),
                    examples,
                    embedding,
                )
            }
        };
        let config = TurnConfig {
            template,
            mode: self.settings.mode,
            budget: self.settings.budget,
            temperature: self.settings.temperature,
            lessons,
            examples,
        };
        let input = TurnInput {
            question,
            question_embedding: embedding,
            one_time_clarification: None,
        };
        let turn = build_turn(&self.memory, &config, &input)?;
        // The paper's arms retrieve one lesson and store no standing preference.
        let memory = turn.applied.iter().find_map(|applied| {
            let AppliedBecause::Similar { score, .. } = applied.because else {
                return None;
            };
            let clarification = applied.record.clarification().unwrap_or_default();
            Some(MemoryUse {
                question: applied.record.question.clone(),
                clarification: clarification.to_string(),
                score: score.value(),
                lesson_type: TaskType::named_in_clarification(clarification),
            })
        });
        Ok(PreparedStep {
            demonstrations: turn
                .examples
                .iter()
                .map(|chosen| chosen.example.query.clone())
                .collect(),
            query: turn.query,
            form: turn.breakdown.form,
            request: turn.request,
            memory,
        })
    }

    /// Scores a reply, asks the simulated user, and learns what the arm learns from it:
    /// clarifications into memory (MEM-PROMPT, VERIFIED) or the prompt (GROW-PROMPT),
    /// right answers into the demonstrations (VERIFIED).
    pub fn observe(
        &mut self,
        index: usize,
        task: &RenderedTask,
        embedding: Option<&[f32]>,
        reply: &ParsedReply,
    ) -> Judgement {
        let understood = reply
            .understanding
            .as_deref()
            .is_some_and(|u| understanding_names_task(task.task_type, u));
        let feedback = self.user.feedback(task, understood);
        if let Some(fb) = &feedback {
            match self.kind {
                ArmKind::NoMemory => {}
                ArmKind::GrowPrompt => {
                    self.grow = self
                        .grow
                        .with_feedback(&task.question, fb, &task.gold_reply);
                }
                ArmKind::MemPrompt(_) | ArmKind::Verified(_) => {
                    self.remember(index, task, Taught::Clarification(fb), embedding);
                }
            }
        }
        if let (true, ArmKind::Verified(_), Some(understanding), Some(answer)) = (
            understood,
            self.kind,
            reply.understanding.as_deref(),
            reply.answer.as_deref(),
        ) {
            // The page's verified example: the confirmed reply, under the question's
            // example key, chosen for later prompts by the page's own rule.
            let taught = Taught::ConfirmedReply {
                understanding,
                answer,
            };
            self.remember(index, task, taught, embedding);
        }
        Judgement {
            understood,
            feedback,
        }
    }

    /// Stores what the simulated user taught as the page stores it: through the write
    /// gate (`Lesson::from_correction`, `Lesson::from_confirmed_reply`) and the same
    /// planning against the memory. A lesson the gate refuses is not stored, as in the
    /// page. The paper's lessons apply by retrieval alone (`Reach::default()`).
    fn remember(
        &mut self,
        index: usize,
        task: &RenderedTask,
        taught: Taught<'_>,
        embedding: Option<&[f32]>,
    ) {
        let (lesson, id) = match taught {
            Taught::Clarification(clarification) => (
                match Lesson::from_correction(
                    &task.question,
                    clarification,
                    Durability::Lasting,
                    Reach::default(),
                ) {
                    Ok(AdmittedCorrection::Lesson(lesson)) => lesson,
                    Ok(AdmittedCorrection::ThisTurnOnly { .. }) | Err(_) => return,
                },
                format!("{}-{index}", self.kind.name()),
            ),
            Taught::ConfirmedReply {
                understanding,
                answer,
            } => (
                match Lesson::from_confirmed_reply(&task.question, understanding, answer) {
                    Ok(lesson) => lesson,
                    Err(_) => return,
                },
                format!("{}-{index}-example", self.kind.name()),
            ),
        };
        let seen = self.memory.current_version(&self.memory.key_of(&lesson));
        let Ok(mut written) =
            self.memory
                .plan_correction(lesson, seen, &[], RecordId(id), Timestamp(index as i64))
        else {
            return;
        };
        if self.kind.uses_embeddings() {
            // As the page does: a vector retrieval cannot compare is no embedding.
            written.current.embedding = embedding
                .and_then(|vector| StoredEmbedding::new("remind-eval", vector.to_vec()).ok());
        }
        self.memory.apply(&written);
    }

    /// The arm's memory as its lessons left it.
    pub fn memory(&self) -> &FeedbackMemory {
        &self.memory
    }
}

/// What the simulated user taught on a step.
enum Taught<'a> {
    Clarification(&'a str),
    ConfirmedReply {
        understanding: &'a str,
        answer: &'a str,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use remind_core::prompt::RenderedPrompt;
    use remind_core::reply::parse_reply;

    fn task(template: &str, task_type: TaskType, word: &str, fb: &str) -> RenderedTask {
        let understanding = task_type.understanding_of(word);
        RenderedTask {
            line: 1,
            task_type,
            template_id: "t".into(),
            word: word.into(),
            question: template.replace("{w}", word),
            clarification: fb.into(),
            gold_reply: format!("{understanding} is gold"),
            gold_understanding: understanding,
        }
    }

    fn settings() -> ArmSettings {
        ArmSettings {
            mode: PromptMode::Completion,
            budget: TokenBudget::default(),
            temperature: 0.0,
            demos_k: 2,
            tau: 0.8,
            p_feedback: 1.0,
            seed: 1,
        }
    }

    fn text(step: &PreparedStep) -> String {
        match &step.request.prompt {
            RenderedPrompt::Completion(t) => t.clone(),
            RenderedPrompt::Chat(_) => panic!("completion mode"),
        }
    }

    const UNLIKE_FB: &str = "clarification: when I ask for unlike , I want an antonym.";

    #[test]
    fn arm_names_round_trip() {
        for arm in ArmKind::ALL {
            assert_eq!(ArmKind::from_name(arm.name()), Some(arm));
        }
        assert_eq!(ArmKind::from_name("mem-prompt"), None);
    }

    #[test]
    fn mem_prompt_attaches_the_clarification_after_feedback_and_no_mem_never_does() {
        let first = task(
            "What is unlike < {w} > ?",
            TaskType::Antonym,
            "hot",
            UNLIKE_FB,
        );
        let again = task(
            "What is unlike < {w} > ?",
            TaskType::Antonym,
            "cold",
            UNLIKE_FB,
        );
        let misread = parse_reply(ReplyForm::Restated, " the synonym for hot is warm", true);
        for kind in [
            ArmKind::NoMemory,
            ArmKind::MemPrompt(LessonRetrieval::Levenshtein),
        ] {
            let mut arm = ArmState::new(kind, PromptTemplate::paper_lexical(), settings());
            let judged = arm.observe(0, &first, None, &misread);
            assert!(!judged.understood);
            assert_eq!(judged.feedback.as_deref(), Some(UNLIKE_FB));
            let step = arm.prepare(&again, None).unwrap();
            let clarified = step.query.contains("| clarification:");
            assert_eq!(clarified, kind != ArmKind::NoMemory, "{kind:?}");
            assert!(text(&step).ends_with(&format!("{}\n\n###\n\n/", step.query)));
        }
    }

    #[test]
    fn the_like_question_pulls_the_unlike_lesson_by_edit_distance_but_not_in_hybrid() {
        let unlike = task(
            "What is unlike < {w} > ?",
            TaskType::Antonym,
            "hot",
            UNLIKE_FB,
        );
        let like = task("What is like < {w} > ?", TaskType::Synonym, "fast", "fb");
        let misread = parse_reply(ReplyForm::Restated, " the synonym for hot is warm", true);
        let mut lev = ArmState::new(
            ArmKind::MemPrompt(LessonRetrieval::Levenshtein),
            PromptTemplate::paper_lexical(),
            settings(),
        );
        let mut hybrid = ArmState::new(
            ArmKind::MemPrompt(LessonRetrieval::Hybrid),
            PromptTemplate::paper_lexical(),
            settings(),
        );
        lev.observe(0, &unlike, None, &misread);
        hybrid.observe(0, &unlike, None, &misread);
        let used = lev.prepare(&like, None).unwrap().memory.unwrap();
        assert_eq!(used.lesson_type, Some(TaskType::Antonym));
        assert_eq!(used.score, 2.0);
        assert!(hybrid.prepare(&like, None).unwrap().memory.is_none());
    }

    #[test]
    fn grow_prompt_carries_the_clarified_gold_example() {
        let first = task(
            "What is unlike < {w} > ?",
            TaskType::Antonym,
            "hot",
            UNLIKE_FB,
        );
        let mut arm = ArmState::new(
            ArmKind::GrowPrompt,
            PromptTemplate::paper_lexical(),
            settings(),
        );
        arm.observe(
            0,
            &first,
            None,
            &parse_reply(ReplyForm::Restated, " the synonym for hot is warm", true),
        );
        let step = arm.prepare(&first, None).unwrap();
        assert!(text(&step).contains("What is unlike < hot > ? | clarification: when I ask for unlike , I want an antonym.\n\n###\n\n/ the antonym for hot is gold END"));
        assert_eq!(step.query, "What is unlike < hot > ?");
    }

    #[test]
    fn verified_keeps_right_answers_and_picks_the_nearest_or_the_newest() {
        let questions = [
            ("What is unlike < {w} > ?", TaskType::Antonym, "hot"),
            ("< {w} > means what ?", TaskType::Definition, "fog"),
            (
                "what can one confuse with < {w} > ?",
                TaskType::Homonym,
                "ring",
            ),
        ];
        let mut near = ArmState::new(
            ArmKind::Verified(DemoSelection::Levenshtein),
            PromptTemplate::paper_lexical(),
            settings(),
        );
        let mut recent = ArmState::new(
            ArmKind::Verified(DemoSelection::Recency),
            PromptTemplate::paper_lexical(),
            settings(),
        );
        for (i, (template, t, w)) in questions.iter().enumerate() {
            let task = task(template, *t, w, "fb");
            let right = parse_reply(
                ReplyForm::Restated,
                &format!(" {} is x", t.understanding_of(w)),
                true,
            );
            assert!(near.observe(i, &task, None, &right).understood);
            recent.observe(i, &task, None, &right);
        }
        let next = task("What is unlike < {w} > ?", TaskType::Antonym, "cold", "fb");
        let chosen = near.prepare(&next, None).unwrap().demonstrations;
        assert_eq!(chosen.len(), 2);
        assert_eq!(chosen.last().unwrap(), "What is unlike < hot > ?");
        let chosen = recent.prepare(&next, None).unwrap().demonstrations;
        assert_eq!(
            chosen,
            vec![
                "< fog > means what ?",
                "what can one confuse with < ring > ?"
            ]
        );
        let sent = text(&near.prepare(&next, None).unwrap());
        assert!(sent.contains("What is unlike < hot > ?\n\n###\n\n/ the antonym for hot is x END"));
    }

    #[test]
    fn semantic_arms_compare_embeddings() {
        let stored = task(
            "What is unlike < {w} > ?",
            TaskType::Antonym,
            "hot",
            UNLIKE_FB,
        );
        let next = task(
            "What is the reverse of < {w} > ?",
            TaskType::Antonym,
            "up",
            "fb",
        );
        let mut arm = ArmState::new(
            ArmKind::MemPrompt(LessonRetrieval::Semantic),
            PromptTemplate::paper_lexical(),
            settings(),
        );
        arm.observe(
            0,
            &stored,
            Some(&[1.0, 0.0]),
            &parse_reply(ReplyForm::Restated, "nothing", true),
        );
        assert!(
            arm.prepare(&next, Some(&[0.9, 0.435_889_9]))
                .unwrap()
                .memory
                .is_some()
        );
        assert!(
            arm.prepare(&next, Some(&[0.0, 1.0]))
                .unwrap()
                .memory
                .is_none()
        );
    }
}
