//! The few-shot prompt: examples of question → understanding + answer, and the query.
//!
//! One structure renders both the completion-mode text and the chat-mode messages, so
//! the two modes cannot drift apart. The paper's prompts are parsed from their original
//! `[SEP]` form and render byte-for-byte as the reference implementation sends them.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::name_table::NameTable;

/// Separator between a question and its reply, and between examples, as the paper's
/// runtime substitutes it for `[SEP]` (the trailing slash is part of it).
pub const SEPARATOR: &str = "\n\n###\n\n/";
/// The paper's placeholder for [`SEPARATOR`] in its prompt files.
pub const SEP_TOKEN: &str = "[SEP]";
/// Every reply ends with this word; the model must be stopped there, or it runs on
/// into a new question of its own.
pub const END: &str = "END";
/// Stop sequences sent with every request in the paper's form.
pub const STOP_SEQUENCES: [&str; 2] = [END, "\n\n###"];
/// Stop sequences of the labelled form: a markdown heading ("### Steps") belongs to
/// an answer, so only the separator's own line stops it.
pub const LABELLED_STOP_SEQUENCES: [&str; 2] = [END, "\n\n###\n"];

const PAPER_LEXICAL: &str = include_str!("prompt/prompt_lexical_qa.txt");
const PAPER_SCRAMBLING: &str = include_str!("prompt/prompt_gpt3_synthetic_tasks.txt");
const GENERAL: &str = include_str!("prompt/prompt_general.txt");

/// How a template's replies are laid out; the parser reads a reply in the form its
/// prompt asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReplyForm {
    /// The paper's one line, "the synonym for fast is quick END": the understanding
    /// ends at the first " is ". Right for the paper's lexical questions, wrong for any
    /// answer that is itself a sentence with "is" in it.
    #[default]
    Restated,
    /// Two labelled parts, "Understanding: …" then "Answer: …" (a paragraph, a list,
    /// anything) and `END` on its own line: for the questions people type.
    Labelled,
}

impl ReplyForm {
    /// A demonstration reply in this form, with the leading space of the paper's
    /// completion text.
    pub fn reply(self, understanding: &str, answer: &str) -> String {
        match self {
            ReplyForm::Restated => format!(" {} is {} {END}", understanding.trim(), answer.trim()),
            ReplyForm::Labelled => format!(
                " Understanding: {}\nAnswer: {}\n{END}",
                understanding.trim(),
                answer.trim()
            ),
        }
    }

    /// What the endpoint is told to stop at.
    pub fn stop_sequences(self) -> &'static [&'static str] {
        match self {
            ReplyForm::Restated => &STOP_SEQUENCES,
            ReplyForm::Labelled => &LABELLED_STOP_SEQUENCES,
        }
    }

    /// The system message of chat mode, describing this form.
    pub fn chat_instruction(self) -> &'static str {
        match self {
            ReplyForm::Restated => {
                "You answer questions. First restate what is being asked \
(your understanding), then give the answer, in exactly the form of the examples: \
\"<understanding> is <answer> END\". When a question carries a clarification, follow it."
            }
            ReplyForm::Labelled => {
                "You answer questions. Reply in exactly the form of the examples: a line \
\"Understanding: \" restating what is being asked, then \"Answer: \" and the answer (a \
word, a sentence, a paragraph or a list, as the question needs), then END on a line of its \
own. When a question carries a clarification, follow it."
            }
        }
    }
}

/// One demonstration: the query as the model sees it (with any clarification already
/// attached) and the reply it should imitate, ending in `END`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Example {
    pub query: String,
    pub reply: String,
}

/// A few-shot prompt: the examples, in order, and the form their replies take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptTemplate {
    examples: Vec<Example>,
    form: ReplyForm,
}

/// A message of the chat-completions API.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: ChatRole,
    pub content: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatRole {
    System,
    User,
    Assistant,
}

/// The prompt format used when talking to the endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptMode {
    #[default]
    Completion,
    Chat,
}

impl PromptMode {
    /// Each mode's name in settings, export files and command lines; serde's
    /// lower-case names are these (a test holds them together).
    pub const NAMES: NameTable<PromptMode> = NameTable(&[
        (PromptMode::Completion, "completion"),
        (PromptMode::Chat, "chat"),
    ]);
}

/// What is sent for one turn, in the endpoint's mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RenderedPrompt {
    Completion(String),
    Chat(Vec<ChatMessage>),
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PromptError {
    #[error("the prompt file is not in the `question [SEP] reply [SEP] …` form: {0}")]
    Malformed(String),
    #[error(
        "the question alone needs about {needed} tokens but the endpoint's context leaves {available}; shorten the question or raise the context size in settings"
    )]
    TooLong { needed: usize, available: usize },
}

impl PromptTemplate {
    pub fn new(examples: Vec<Example>, form: ReplyForm) -> Self {
        PromptTemplate { examples, form }
    }

    /// The paper's lexical-relations prompt (10 examples, 5 with clarifications).
    pub fn paper_lexical() -> Self {
        Self::from_paper_format(PAPER_LEXICAL).expect("the bundled paper prompt is well formed")
    }

    /// The paper's word-scrambling prompt (23 examples).
    pub fn paper_scrambling() -> Self {
        Self::from_paper_format(PAPER_SCRAMBLING)
            .expect("the bundled scrambling prompt is well formed")
    }

    /// The page's default: the paper's lexical examples mixed with everyday questions
    /// (a paragraph, a list, a sentence with "is" in it, a lasting preference), all in
    /// the labelled form.
    pub fn general() -> Self {
        Self::from_paper_format(GENERAL)
            .expect("the bundled general prompt is well formed")
            .with_form(ReplyForm::Labelled)
    }

    fn with_form(self, form: ReplyForm) -> Self {
        PromptTemplate { form, ..self }
    }

    pub fn form(&self) -> ReplyForm {
        self.form
    }

    /// Parses `q1[SEP] r1[SEP]q2[SEP] r2 …`: an even number of `[SEP]`-separated parts,
    /// replies in the paper's form.
    pub fn from_paper_format(text: &str) -> Result<Self, PromptError> {
        let parts: Vec<&str> = text.split(SEP_TOKEN).collect();
        if !parts.len().is_multiple_of(2) {
            return Err(PromptError::Malformed(format!(
                "{} parts, expected question/reply pairs",
                parts.len()
            )));
        }
        let examples = parts
            .chunks(2)
            .map(|pair| Example {
                query: pair[0].to_string(),
                reply: pair[1].to_string(),
            })
            .collect();
        Ok(PromptTemplate {
            examples,
            form: ReplyForm::Restated,
        })
    }

    pub fn examples(&self) -> &[Example] {
        &self.examples
    }

    /// The examples joined exactly as the paper's runtime joins them.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (i, example) in self.examples.iter().enumerate() {
            if i > 0 {
                out.push_str(SEPARATOR);
            }
            out.push_str(&example.query);
            out.push_str(SEPARATOR);
            out.push_str(&example.reply);
        }
        out
    }

    /// Completion-mode text: the examples, then the query, then the separator after
    /// which the model writes its reply.
    pub fn completion_text(&self, query: &str) -> String {
        let base = self.render();
        if base.is_empty() {
            return format!("{query}{SEPARATOR}");
        }
        format!("{base}{SEPARATOR}{query}{SEPARATOR}")
    }

    /// Chat-mode messages: an instruction, each example as a user/assistant pair, then
    /// the query.
    pub fn chat_messages(&self, query: &str) -> Vec<ChatMessage> {
        let mut messages = vec![ChatMessage {
            role: ChatRole::System,
            content: self.form.chat_instruction().to_string(),
        }];
        for example in &self.examples {
            messages.push(ChatMessage {
                role: ChatRole::User,
                content: example.query.trim().to_string(),
            });
            messages.push(ChatMessage {
                role: ChatRole::Assistant,
                content: example.reply.trim().to_string(),
            });
        }
        messages.push(ChatMessage {
            role: ChatRole::User,
            content: query.to_string(),
        });
        messages
    }

    /// The prompt for a mode with every example, whatever its size.
    pub fn rendered(&self, mode: PromptMode, query: &str) -> RenderedPrompt {
        match mode {
            PromptMode::Completion => RenderedPrompt::Completion(self.completion_text(query)),
            PromptMode::Chat => RenderedPrompt::Chat(self.chat_messages(query)),
        }
    }

    /// Renders the prompt for a mode within a token budget: while the whole prompt
    /// would not fit, the oldest examples are dropped; the query itself is never cut.
    pub fn render_within(
        &self,
        mode: PromptMode,
        query: &str,
        budget: TokenBudget,
    ) -> Result<RenderedPrompt, PromptError> {
        self.fit_within(mode, query, budget)
            .map(|fitted| fitted.prompt)
    }

    /// Like [`PromptTemplate::render_within`], and also says how many of the oldest
    /// examples were dropped, so the page can show exactly which examples were sent.
    pub fn fit_within(
        &self,
        mode: PromptMode,
        query: &str,
        budget: TokenBudget,
    ) -> Result<FittedPrompt, PromptError> {
        let available = budget.prompt_tokens();
        for skip in 0..=self.examples.len() {
            let fitted = PromptTemplate::new(self.examples[skip..].to_vec(), self.form);
            let rendered = fitted.rendered(mode, query);
            if rendered.estimated_tokens() <= available {
                return Ok(FittedPrompt {
                    prompt: rendered,
                    dropped_examples: skip,
                });
            }
        }
        Err(PromptError::TooLong {
            needed: estimate_tokens(query),
            available,
        })
    }
}

/// A prompt rendered within a token budget, and how many of the oldest examples had
/// to be left out for it to fit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FittedPrompt {
    pub prompt: RenderedPrompt,
    pub dropped_examples: usize,
}

impl RenderedPrompt {
    pub fn estimated_tokens(&self) -> usize {
        match self {
            RenderedPrompt::Completion(text) => estimate_tokens(text),
            // Chat templates add a few tokens of role markup per message.
            RenderedPrompt::Chat(messages) => messages
                .iter()
                .map(|m| estimate_tokens(&m.content) + 4)
                .sum(),
        }
    }

    /// The bytes shown to the user as "the prompt that was sent": in completion mode
    /// the prompt text itself; in chat mode the `messages` array exactly as it appears
    /// in the request body (compact JSON, keys in the order the body serialises them),
    /// so the page can never show a tidier prompt than the one the model received.
    pub fn display_text(&self) -> String {
        match self {
            RenderedPrompt::Completion(text) => text.clone(),
            // Through `Value`, as the wire body is built, so key order and escaping
            // are the body's own whatever serde_json features the build enables.
            RenderedPrompt::Chat(messages) => serde_json::to_value(messages)
                .map(|value| value.to_string())
                .unwrap_or_default(),
        }
    }
}

/// How many tokens the endpoint's context holds, and how many the reply may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenBudget {
    pub context_tokens: usize,
    pub reply_tokens: usize,
}

impl TokenBudget {
    pub fn prompt_tokens(&self) -> usize {
        self.context_tokens.saturating_sub(self.reply_tokens)
    }
}

impl Default for TokenBudget {
    fn default() -> Self {
        TokenBudget {
            context_tokens: 4096,
            // A paragraph: a short answer stops at END long before this.
            reply_tokens: 320,
        }
    }
}

/// A deliberately pessimistic token estimate (about three characters per token), so
/// that a prompt estimated to fit does fit for the BPE vocabularies in use.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(3)
}

/// Attaches a clarification to a question as the paper does: `x | clarification: fb`.
/// A clarification that already starts with `clarification:` is not prefixed twice.
pub fn attach_clarification(question: &str, clarification: &str) -> String {
    let fb = clarification.trim();
    let fb = fb
        .strip_prefix("clarification:")
        .map(str::trim_start)
        .unwrap_or(fb);
    format!("{} | clarification: {fb}", question.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_modes_name_is_its_serde_name() {
        for mode in [PromptMode::Completion, PromptMode::Chat] {
            let name = PromptMode::NAMES.name(mode);
            assert_eq!(serde_json::to_value(mode).unwrap(), name);
            assert_eq!(PromptMode::NAMES.find(name), Some(mode));
        }
        assert_eq!(PromptMode::NAMES.find("instruct"), None);
    }

    #[test]
    fn the_paper_lexical_prompt_has_ten_examples_five_with_clarifications() {
        let prompt = PromptTemplate::paper_lexical();
        assert_eq!(prompt.examples().len(), 10);
        let clarified = prompt
            .examples()
            .iter()
            .filter(|e| e.query.contains("| clarification:"))
            .count();
        assert_eq!(clarified, 5);
        assert!(prompt.examples().iter().all(|e| e.reply.ends_with("END")));
    }

    #[test]
    fn the_scrambling_prompt_has_twenty_three_examples() {
        assert_eq!(PromptTemplate::paper_scrambling().examples().len(), 23);
    }

    #[test]
    fn the_query_follows_the_examples_between_separators() {
        let prompt = PromptTemplate::new(
            vec![Example {
                query: "q1".into(),
                reply: " r1 END".into(),
            }],
            ReplyForm::Restated,
        );
        assert_eq!(
            prompt.completion_text("q2"),
            "q1\n\n###\n\n/ r1 END\n\n###\n\n/q2\n\n###\n\n/"
        );
    }

    #[test]
    fn chat_messages_carry_each_example_as_a_user_assistant_pair() {
        let messages = PromptTemplate::paper_lexical().chat_messages("What is like < fast > ?");
        assert_eq!(messages.len(), 1 + 2 * 10 + 1);
        assert_eq!(messages[0].role, ChatRole::System);
        assert_eq!(messages[2].content, "the homonym for wring is ring END");
        assert_eq!(messages.last().unwrap().content, "What is like < fast > ?");
    }

    #[test]
    fn a_clarification_is_attached_with_the_paper_separator() {
        assert_eq!(
            attach_clarification(
                "What is like < fast > ?",
                "when I ask for like, I want a synonym."
            ),
            "What is like < fast > ? | clarification: when I ask for like, I want a synonym."
        );
        assert_eq!(
            attach_clarification("x ", "clarification: fb"),
            "x | clarification: fb"
        );
    }

    #[test]
    fn a_tight_budget_drops_the_oldest_examples_first() {
        let prompt = PromptTemplate::paper_lexical();
        let full = prompt.completion_text("q");
        let budget = TokenBudget {
            context_tokens: estimate_tokens(&full) - 1 + 10,
            reply_tokens: 10,
        };
        let RenderedPrompt::Completion(text) = prompt
            .render_within(PromptMode::Completion, "q", budget)
            .unwrap()
        else {
            panic!("completion mode renders text");
        };
        assert!(!text.starts_with("What is the homonym for < wring >"));
        assert!(text.ends_with("q\n\n###\n\n/"));
        assert!(estimate_tokens(&text) <= budget.prompt_tokens());
    }

    #[test]
    fn a_question_longer_than_the_context_is_refused_not_cut() {
        let budget = TokenBudget {
            context_tokens: 20,
            reply_tokens: 10,
        };
        let err = PromptTemplate::general()
            .render_within(PromptMode::Chat, &"word ".repeat(50), budget)
            .unwrap_err();
        assert!(matches!(err, PromptError::TooLong { available: 10, .. }));
    }

    #[test]
    fn the_general_prompt_asks_for_labelled_replies_in_both_modes() {
        let prompt = PromptTemplate::general();
        assert_eq!(prompt.form(), ReplyForm::Labelled);
        assert!(prompt.examples().iter().all(|e| {
            e.reply.starts_with(" Understanding: ")
                && e.reply.contains("\nAnswer: ")
                && e.reply.ends_with("\nEND")
        }));
        let messages = prompt.chat_messages("How far is Lyon from Paris?");
        assert!(messages[0].content.contains("\"Understanding: \""));
    }

    #[test]
    fn a_demonstration_is_written_in_its_templates_form() {
        assert_eq!(
            ReplyForm::Restated.reply("the synonym for fast", "quick"),
            " the synonym for fast is quick END"
        );
        assert_eq!(
            ReplyForm::Labelled.reply("why the sky is blue", "Air scatters blue light."),
            " Understanding: why the sky is blue\nAnswer: Air scatters blue light.\nEND"
        );
    }

    #[test]
    fn an_odd_number_of_parts_is_a_malformed_prompt() {
        assert!(PromptTemplate::from_paper_format("q[SEP] r[SEP]q2").is_err());
    }
}
