//! Reflection: from one correction, the model proposes a general rule the user may
//! accept, edit or reject.
//!
//! Users correct in the moment ("no, I meant the same meaning"); a lesson that helps
//! later questions is phrased generally ("when I ask what is like X, I want a
//! synonym"). The model is good at that rewording, but its text must never become
//! memory on its own: this module only builds the short prompt and reads the reply
//! into a proposal. Storing happens only on the user's explicit accept, through the
//! write gate as [`crate::write_gate::Origin::UserConfirmedProposal`].

use thiserror::Error;

use crate::memory::FeedbackMemory;
use crate::memory_key::MemoryKey;
use crate::prompt::{ChatMessage, ChatRole, END, PromptMode, RenderedPrompt};
use crate::record::{MemoryRecord, RecordId};
use crate::write_gate::{self, Origin, Refusal, StoredText};

/// Where the model must stop: after the rule's `END`, or if it starts a new case.
pub const REFLECTION_STOP_SEQUENCES: [&str; 2] = [END, "\nQuestion:"];
/// A rule is one sentence; more tokens would only let a small model ramble.
pub const REFLECTION_REPLY_TOKENS: usize = 64;
/// Longer "rules" are not rules but rambling; the parser declines them.
pub const MAX_RULE_CHARS: usize = 300;

const INSTRUCTION: &str = "A user corrected how an assistant understood a question. \
Write one short, general rule in the user's voice that would make the assistant \
understand questions of this kind correctly next time. Write only the rule, on one \
line, and end it with END.";

/// The worked case shown before the real one, so even a small completion model sees
/// the form of a good answer: general ("X"), in the user's voice, one line.
const WORKED_QUESTION: &str = "What is like < fast > ?";
const WORKED_UNDERSTANDING: &str = "a word that sounds like fast";
const WORKED_WORDS: &str = "no, I wanted a word with the same meaning";
const WORKED_RULE: &str = "when I ask what is like X, I want a synonym";

/// The correction the model reflects on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReflectionCase<'a> {
    pub question: &'a str,
    /// What the model took the question to mean (the understanding the user rejected).
    pub understanding: &'a str,
    /// What the user said about it.
    pub user_words: &'a str,
}

/// Newlines would let a question or the user's words pose as a new part of the prompt.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn case_text(question: &str, understanding: &str, user_words: &str) -> String {
    format!(
        "Question: {}\nAssistant understood: {}\nUser said: {}\nRule:",
        one_line(question),
        one_line(understanding),
        one_line(user_words)
    )
}

/// The reflection prompt in the endpoint's mode: the instruction, the worked case,
/// then the user's case ending in `Rule:`.
pub fn reflection_prompt(case: &ReflectionCase<'_>, mode: PromptMode) -> RenderedPrompt {
    let worked = case_text(WORKED_QUESTION, WORKED_UNDERSTANDING, WORKED_WORDS);
    let real = case_text(case.question, case.understanding, case.user_words);
    match mode {
        PromptMode::Completion => RenderedPrompt::Completion(format!(
            "{INSTRUCTION}\n\n{worked} {WORKED_RULE} {END}\n\n{real}"
        )),
        PromptMode::Chat => RenderedPrompt::Chat(vec![
            ChatMessage {
                role: ChatRole::System,
                content: INSTRUCTION.to_string(),
            },
            ChatMessage {
                role: ChatRole::User,
                content: worked,
            },
            ChatMessage {
                role: ChatRole::Assistant,
                content: format!("{WORKED_RULE} {END}"),
            },
            ChatMessage {
                role: ChatRole::User,
                content: real,
            },
        ]),
    }
}

/// Why a reply held no usable rule. Nothing is proposed and nothing is written.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum NoProposal {
    #[error("the model proposed no rule (its reply was empty); type your own clarification")]
    Empty,
    #[error("the model's reply was not a rule (no words in it); type your own clarification")]
    NoWords,
    #[error(
        "the model's rule was too long ({len} characters, at most {max}); type your own clarification"
    )]
    TooLong { len: usize, max: usize },
}

/// Reads the model's reply: the first non-empty line before `END`, with any label,
/// list marker or quotes around it removed. Never panics.
pub fn parse_rule(reply: &str) -> Result<String, NoProposal> {
    let before_end = reply.split(END).next().unwrap_or_default();
    let line = before_end
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let rule = strip_decoration(line);
    if rule.is_empty() {
        return Err(NoProposal::Empty);
    }
    if !rule.chars().any(char::is_alphabetic) {
        return Err(NoProposal::NoWords);
    }
    let len = rule.chars().count();
    if len > MAX_RULE_CHARS {
        return Err(NoProposal::TooLong {
            len,
            max: MAX_RULE_CHARS,
        });
    }
    Ok(rule.to_string())
}

fn strip_decoration(line: &str) -> &str {
    let mut rule = line.trim();
    for label in ["rule:", "rule -", "proposed rule:"] {
        if rule
            .get(..label.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(label))
        {
            rule = rule[label.len()..].trim_start();
        }
    }
    rule = rule
        .trim_start_matches(['-', '*', '•'])
        .trim_start()
        .trim_matches(|c: char| c.is_whitespace() || "\"'`“”‘’".contains(c));
    rule
}

/// A rule the model proposed for a corrected turn; shown to the user, never stored
/// unless they accept it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleProposal {
    /// The corrected question; the rule is stored as the lesson of its key.
    pub question: String,
    pub key: MemoryKey,
    /// The understanding the user rejected.
    pub misread: String,
    /// The user's own words, kept so the page can offer them instead of the rule.
    pub user_words: String,
    /// The rule as the model proposed it.
    pub rule: String,
    /// The lessons retrieved for the corrected turn: accepting the rule counts their
    /// failures, as a typed correction would.
    pub applied: Vec<RecordId>,
}

impl RuleProposal {
    /// The text accepting would store: the user's edit if they made one, else the rule.
    pub fn text_to_store<'a>(&'a self, edited: Option<&'a str>) -> &'a str {
        edited.unwrap_or(&self.rule).trim()
    }
}

/// What accepting a proposal would do, told before it is done.
#[derive(Clone, Debug, PartialEq)]
pub struct AcceptPreview {
    pub key: MemoryKey,
    /// The text that would be stored (the edit, if any, trimmed).
    pub text: String,
    /// The current lesson of the key, which accepting would replace ("this replaces: …").
    pub replaces: Option<MemoryRecord>,
    /// The version to pass to accept: the replaced lesson's, `None` if there is none.
    pub expected_version: Option<u32>,
    /// Why the write gate would refuse the text (a secret, empty, too long), or the
    /// question stored beside it (a secret in it), if it would.
    pub refusal: Option<Refusal>,
}

/// Previews accepting `proposal` (with the user's `edited` text, if any) against
/// `memory`, without writing anything.
pub fn preview_accept(
    memory: &FeedbackMemory,
    proposal: &RuleProposal,
    edited: Option<&str>,
) -> AcceptPreview {
    let text = proposal.text_to_store(edited).to_string();
    let replaces = memory.current_for(&proposal.key).cloned();
    AcceptPreview {
        key: proposal.key.clone(),
        refusal: write_gate::admit_text(StoredText::Rule, &text, Origin::UserConfirmedProposal)
            .and_then(|()| write_gate::admit_question(&proposal.question))
            .err(),
        expected_version: replaces.as_ref().map(|r| r.version),
        replaces,
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CASE: ReflectionCase<'static> = ReflectionCase {
        question: "What is like < happy > ?",
        understanding: "a word that sounds like happy",
        user_words: "no!\nI meant\tsame meaning",
    };

    #[test]
    fn the_completion_prompt_ends_with_the_users_case_awaiting_the_rule() {
        let RenderedPrompt::Completion(text) = reflection_prompt(&CASE, PromptMode::Completion)
        else {
            panic!("completion mode renders text")
        };
        assert!(text.starts_with(INSTRUCTION));
        assert!(text.contains("Rule: when I ask what is like X, I want a synonym END"));
        assert!(text.ends_with(
            "Question: What is like < happy > ?\nAssistant understood: a word that sounds like happy\nUser said: no! I meant same meaning\nRule:"
        ));
    }

    #[test]
    fn the_chat_prompt_carries_the_worked_case_as_a_turn() {
        let RenderedPrompt::Chat(messages) = reflection_prompt(&CASE, PromptMode::Chat) else {
            panic!("chat mode renders messages")
        };
        assert_eq!(messages.len(), 4);
        assert_eq!(messages[2].content, format!("{WORKED_RULE} END"));
        assert!(messages[3].content.ends_with("Rule:"));
    }

    #[test]
    fn a_rule_is_read_from_labelled_quoted_or_listed_replies() {
        for reply in [
            " when I ask what is like X, I want a synonym END",
            "Rule: \"when I ask what is like X, I want a synonym\"\nQuestion: next",
            "\n\n- when I ask what is like X, I want a synonym",
            "RULE: `when I ask what is like X, I want a synonym` END and more",
        ] {
            assert_eq!(
                parse_rule(reply).as_deref(),
                Ok("when I ask what is like X, I want a synonym"),
                "{reply:?}"
            );
        }
    }

    #[test]
    fn empty_wordless_or_rambling_replies_propose_nothing() {
        assert_eq!(parse_rule(""), Err(NoProposal::Empty));
        assert_eq!(parse_rule("  END rule after end"), Err(NoProposal::Empty));
        assert_eq!(parse_rule("Rule: \"\""), Err(NoProposal::Empty));
        assert_eq!(parse_rule("!!! 42 ???"), Err(NoProposal::NoWords));
        assert!(matches!(
            parse_rule(&"word ".repeat(100)),
            Err(NoProposal::TooLong { .. })
        ));
    }

    #[test]
    fn a_preview_warns_when_the_question_holds_a_secret() {
        let question = "What is like < fast > ? pw: hunter2";
        let proposal = RuleProposal {
            question: question.into(),
            key: MemoryKey::of_question(question),
            misread: CASE.understanding.into(),
            user_words: CASE.user_words.into(),
            rule: WORKED_RULE.into(),
            applied: Vec::new(),
        };
        let preview = preview_accept(&FeedbackMemory::default(), &proposal, None);
        assert_eq!(
            preview.refusal,
            Some(Refusal::Secret {
                text: StoredText::Question,
                kind: "a password or key"
            })
        );
    }

    proptest::proptest! {
        #[test]
        fn any_reply_is_a_rule_or_no_proposal_never_a_panic(reply in "\\PC{0,200}") {
            if let Ok(rule) = parse_rule(&reply) {
                proptest::prop_assert!(!rule.is_empty() && !rule.contains('\n'));
            }
        }
    }
}
