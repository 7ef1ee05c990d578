//! The write gate: what may become a durable memory, and what must not.
//!
//! Memory is only as trustworthy as what gets in. Only the user's own words (or a
//! proposal the user confirmed) are stored; one-time instructions stay in the turn;
//! text that came from the model or from retrieved memory never writes on its own;
//! anything that looks like a secret is refused with the reason shown.

use thiserror::Error;

/// Where the text of a proposed write came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Typed by the user in the correction form.
    UserTyped,
    /// Proposed by the model and explicitly accepted (or edited) by the user.
    UserConfirmedProposal,
    /// Copied from the model's reply, with no confirmation.
    ModelReply,
    /// Read back from stored memory or another retrieved text.
    Retrieved,
}

/// How long the user wants the instruction to hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    Lasting,
    JustThisOnce,
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Refusal {
    #[error("nothing to save: the clarification is empty")]
    Empty,
    #[error("not saved: marked \"just this once\", so it applies to this question only")]
    OneTime,
    #[error("not saved: this text came from the model's reply, not from you")]
    FromModel,
    #[error("not saved: this text came from stored memory, not from you")]
    FromRetrieval,
    #[error("not saved: it looks like it contains {0}; memories must never hold secrets")]
    Secret(&'static str),
    #[error("not saved: a clarification is limited to {max} characters (this one has {len})")]
    TooLong { len: usize, max: usize },
}

pub const MAX_CLARIFICATION_CHARS: usize = 2000;

/// Decides whether `text` may be stored as a lasting memory.
pub fn admit(text: &str, origin: Origin, durability: Durability) -> Result<(), Refusal> {
    let text = text.trim();
    if text.is_empty() {
        return Err(Refusal::Empty);
    }
    match origin {
        Origin::ModelReply => return Err(Refusal::FromModel),
        Origin::Retrieved => return Err(Refusal::FromRetrieval),
        Origin::UserTyped | Origin::UserConfirmedProposal => {}
    }
    if durability == Durability::JustThisOnce {
        return Err(Refusal::OneTime);
    }
    let len = text.chars().count();
    if len > MAX_CLARIFICATION_CHARS {
        return Err(Refusal::TooLong {
            len,
            max: MAX_CLARIFICATION_CHARS,
        });
    }
    match find_secret(text) {
        Some(kind) => Err(Refusal::Secret(kind)),
        None => Ok(()),
    }
}

/// Decides whether a reply the model gave may be stored as a verified example. Its
/// understanding and answer are the model's text, so they are stored only because the
/// user confirmed them: the caller must say so with [`Origin::UserConfirmedProposal`]
/// (any other origin of model text is refused). The question is the user's own; all
/// three are checked for secrets and size like any lasting memory.
pub fn admit_confirmed_reply(
    question: &str,
    understanding: &str,
    answer: &str,
    origin: Origin,
) -> Result<(), Refusal> {
    let origin = match origin {
        Origin::UserTyped => Origin::ModelReply,
        other => other,
    };
    admit(question, Origin::UserTyped, Durability::Lasting)?;
    admit(understanding, origin, Durability::Lasting)?;
    admit(answer, origin, Durability::Lasting)
}

/// Names the kind of secret `text` seems to hold, if any.
pub fn find_secret(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    const KEY_PREFIXES: &[&str] = &[
        "sk-", "sk_live_", "sk_test_", "ghp_", "gho_", "xoxb-", "xoxp-", "akia", "aiza", "hf_",
    ];
    for word in text.split(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == ',') {
        let w = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_');
        let wl = w.to_lowercase();
        if w.len() >= 16 && KEY_PREFIXES.iter().any(|p| wl.starts_with(p)) {
            return Some("an API key");
        }
        if looks_like_token(w) {
            return Some("an access token");
        }
    }
    for label in [
        "password",
        "passwd",
        "passcode",
        "api key",
        "api_key",
        "apikey",
        "secret key",
        "private key",
        "pin code",
        "bearer ",
    ] {
        if let Some(at) = lower.find(label) {
            let after = lower[at + label.len()..].trim_start();
            if after.starts_with(':')
                || after.starts_with('=')
                || after.starts_with("is ")
                || label == "bearer "
            {
                return Some("a password or key");
            }
        }
    }
    if lower.contains("-----begin") {
        return Some("a private key");
    }
    if has_card_number(text) {
        return Some("a card number");
    }
    None
}

/// A long run of mixed letters and digits, as tokens and keys are.
fn looks_like_token(word: &str) -> bool {
    word.len() >= 32
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && word.chars().any(|c| c.is_ascii_digit())
        && word.chars().any(|c| c.is_ascii_alphabetic())
}

/// 13 to 19 digits (spaces and dashes allowed between) that pass the Luhn check.
fn has_card_number(text: &str) -> bool {
    let mut digits: Vec<u32> = Vec::new();
    let flush = |digits: &mut Vec<u32>| -> bool {
        let found = (13..=19).contains(&digits.len()) && luhn(digits);
        digits.clear();
        found
    };
    for c in text.chars() {
        match c {
            '0'..='9' => digits.push(c as u32 - '0' as u32),
            ' ' | '-' if !digits.is_empty() => {}
            _ => {
                if flush(&mut digits) {
                    return true;
                }
            }
        }
    }
    flush(&mut digits)
}

fn luhn(digits: &[u32]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                if d * 2 > 9 { d * 2 - 9 } else { d * 2 }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LASTING: Durability = Durability::Lasting;

    #[test]
    fn the_users_own_lasting_words_are_admitted() {
        assert_eq!(
            admit(
                "when I ask for like, I want a synonym.",
                Origin::UserTyped,
                LASTING
            ),
            Ok(())
        );
        assert_eq!(
            admit(
                "use British spelling",
                Origin::UserConfirmedProposal,
                LASTING
            ),
            Ok(())
        );
    }

    #[test]
    fn a_one_time_instruction_stays_in_the_turn() {
        assert_eq!(
            admit(
                "answer in French",
                Origin::UserTyped,
                Durability::JustThisOnce
            ),
            Err(Refusal::OneTime)
        );
    }

    #[test]
    fn model_output_and_retrieved_text_never_write_on_their_own() {
        assert_eq!(
            admit("the synonym for fast is quick", Origin::ModelReply, LASTING),
            Err(Refusal::FromModel)
        );
        assert_eq!(
            admit("I want a synonym", Origin::Retrieved, LASTING),
            Err(Refusal::FromRetrieval)
        );
    }

    #[test]
    fn secrets_are_refused_with_their_kind() {
        let cases = [
            ("my key is sk-proj-abcdefghijklmnop1234", "an API key"),
            ("password: hunter2", "a password or key"),
            ("use Bearer abc", "a password or key"),
            ("card 4111 1111 1111 1111 please", "a card number"),
            (
                "token 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                "an access token",
            ),
            ("-----BEGIN PRIVATE KEY-----", "a private key"),
        ];
        for (text, kind) in cases {
            assert_eq!(
                admit(text, Origin::UserTyped, LASTING),
                Err(Refusal::Secret(kind)),
                "{text}"
            );
        }
    }

    #[test]
    fn ordinary_numbers_and_words_are_not_secrets() {
        for text in [
            "I want 3 synonyms, not 1",
            "the order number 1234 5678 is fine",
            "when I say password I mean the word itself",
            "a very long word like antidisestablishmentarianism",
        ] {
            assert_eq!(find_secret(text), None, "{text}");
        }
    }

    #[test]
    fn a_reply_is_stored_as_an_example_only_when_the_user_confirmed_it() {
        let (q, u, y) = ("What is like < fast > ?", "the synonym for fast", "quick");
        assert_eq!(
            admit_confirmed_reply(q, u, y, Origin::UserConfirmedProposal),
            Ok(())
        );
        for origin in [Origin::ModelReply, Origin::UserTyped] {
            assert_eq!(
                admit_confirmed_reply(q, u, y, origin),
                Err(Refusal::FromModel)
            );
        }
        assert_eq!(
            admit_confirmed_reply(q, u, "password: hunter2", Origin::UserConfirmedProposal),
            Err(Refusal::Secret("a password or key"))
        );
    }

    #[test]
    fn empty_and_oversized_clarifications_are_refused() {
        assert_eq!(
            admit("   ", Origin::UserTyped, LASTING),
            Err(Refusal::Empty)
        );
        let long = "a".repeat(MAX_CLARIFICATION_CHARS + 1);
        assert!(matches!(
            admit(&long, Origin::UserTyped, LASTING),
            Err(Refusal::TooLong { .. })
        ));
    }
}
