//! The write gate: what may become a durable memory, and what must not.
//!
//! Memory is only as trustworthy as what gets in. Only the user's own words (or a
//! proposal the user confirmed) are stored; one-time instructions stay in the turn;
//! text that came from the model or from retrieved memory never writes on its own;
//! anything that looks like a secret is refused with the reason shown. Every text a
//! record stores passes here: the clarification or rule ([`admit`], [`admit_text`]),
//! the question it answers ([`admit_question`]), a confirmed reply
//! ([`admit_confirmed_reply`]), an edit (through `FeedbackMemory::plan_edit`) and
//! imported records ([`find_secret`]). A refusal names the text it is about
//! ([`StoredText`]), so the user knows which one to change.
//!
//! What counts as a secret is the scanner's job (`write_gate/secret_scan.rs`); the gate
//! decides who may write, for how long and how much.

use std::fmt;

use thiserror::Error;

mod secret_scan;

pub use secret_scan::find_secret;

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

/// Which text of a record a write would store, so a refusal names the one the user
/// can change: a 100 KB answer is refused as the answer, not as "a clarification".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoredText {
    /// Typed into the correction form.
    Clarification,
    /// Proposed by the model from the user's words and accepted (or edited).
    Rule,
    /// A lesson's new text, typed in the memory browser.
    EditedLesson,
    /// The understanding of a reply the user confirmed.
    Understanding,
    /// The answer of a reply the user confirmed.
    Answer,
    /// The question a lesson or an example is stored with.
    Question,
}

impl StoredText {
    /// The most characters the text may have: every stored text is shown in the
    /// prompts it applies to, so each is bounded.
    pub const fn max_chars(self) -> usize {
        match self {
            StoredText::Question => MAX_QUESTION_CHARS,
            StoredText::Clarification
            | StoredText::Rule
            | StoredText::EditedLesson
            | StoredText::Understanding
            | StoredText::Answer => MAX_CLARIFICATION_CHARS,
        }
    }

    /// What the user can do about a secret in the text.
    fn when_secret(self) -> &'static str {
        match self {
            StoredText::Clarification | StoredText::Rule | StoredText::EditedLesson => {
                "remove it and save again"
            }
            StoredText::Understanding | StoredText::Answer => {
                "correct the reply instead of confirming it"
            }
            StoredText::Question => "remove it from the question and ask again",
        }
    }

    /// How a refusal of this text begins: a question is refused before anything of
    /// the turn is kept, so nothing at all was saved.
    fn nothing_saved(self) -> &'static str {
        match self {
            StoredText::Question => "nothing was saved",
            StoredText::Clarification
            | StoredText::Rule
            | StoredText::EditedLesson
            | StoredText::Understanding
            | StoredText::Answer => "not saved",
        }
    }

    /// What the user can do about a text too long to keep.
    fn when_too_long(self) -> &'static str {
        match self {
            StoredText::Clarification | StoredText::Rule | StoredText::EditedLesson => {
                "shorten it and save again"
            }
            // The model wrote these; the user can only correct the reply.
            StoredText::Understanding | StoredText::Answer => {
                "correct the reply instead of confirming it"
            }
            StoredText::Question => "ask a shorter question",
        }
    }
}

/// The text's name in a refusal's message, spelled here only.
impl fmt::Display for StoredText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StoredText::Clarification => "the clarification",
            StoredText::Rule => "the rule",
            StoredText::EditedLesson => "the edited text",
            StoredText::Understanding => "the understanding",
            StoredText::Answer => "the answer",
            StoredText::Question => "the question",
        })
    }
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Refusal {
    #[error("nothing to save: {0} is empty")]
    Empty(StoredText),
    #[error("not saved: this text came from the model's reply, not from you")]
    FromModel,
    #[error("not saved: this text came from stored memory, not from you")]
    FromRetrieval,
    /// A secret in a text the record would store; the message names that text and
    /// what the user can do about it.
    #[error(
        "{saved}: {text} looks like it contains {kind}; {advice} (memories must never hold secrets)",
        saved = .text.nothing_saved(),
        advice = .text.when_secret()
    )]
    Secret {
        text: StoredText,
        kind: &'static str,
    },
    #[error(
        "not saved: {text} is limited to {max} characters (this one has {len}); {advice}",
        advice = .text.when_too_long()
    )]
    TooLong {
        text: StoredText,
        len: usize,
        max: usize,
    },
}

pub const MAX_CLARIFICATION_CHARS: usize = 2000;
/// A question is stored beside its lesson and shown in every prompt it applies to,
/// so it gets the same bound as the lesson itself.
pub const MAX_QUESTION_CHARS: usize = 2000;

/// What the gate lets an admitted clarification become.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Kept as a lasting lesson.
    Lasting,
    /// "Just this once": it goes with this turn and is never stored, so neither its
    /// length nor a secret in it matters to the memory.
    ThisTurnOnly,
}

/// Decides what a clarification may become: a lasting lesson, or (when the user said
/// "just this once") an instruction for this turn only. A refusal names the
/// clarification. [`admit_text`] admits the other texts a record stores.
pub fn admit(text: &str, origin: Origin, durability: Durability) -> Result<Admission, Refusal> {
    match durability {
        Durability::Lasting => {
            admit_text(StoredText::Clarification, text, origin).map(|()| Admission::Lasting)
        }
        Durability::JustThisOnce => {
            admit_author(StoredText::Clarification, text, origin)?;
            Ok(Admission::ThisTurnOnly)
        }
    }
}

/// Decides whether `text`, stored as `what`, may be kept as a lasting memory: it must
/// be the user's own (or confirmed), within `what`'s length and free of secrets. A
/// refusal names `what`.
pub fn admit_text(what: StoredText, text: &str, origin: Origin) -> Result<(), Refusal> {
    admit_author(what, text, origin)?;
    let text = text.trim();
    let len = text.chars().count();
    let max = what.max_chars();
    if len > max {
        return Err(Refusal::TooLong {
            text: what,
            len,
            max,
        });
    }
    match find_secret(text) {
        Some(kind) => Err(Refusal::Secret { text: what, kind }),
        None => Ok(()),
    }
}

/// The checks even a one-time instruction passes: it says something, and the user is
/// the one saying it (model or retrieved text never instructs on its own).
fn admit_author(what: StoredText, text: &str, origin: Origin) -> Result<(), Refusal> {
    if text.trim().is_empty() {
        return Err(Refusal::Empty(what));
    }
    match origin {
        Origin::ModelReply => Err(Refusal::FromModel),
        Origin::Retrieved => Err(Refusal::FromRetrieval),
        Origin::UserTyped | Origin::UserConfirmedProposal => Ok(()),
    }
}

/// Decides whether the question that goes with a lasting lesson may be stored. The
/// question is the user's own text, but it is stored and exported exactly like the
/// lesson, so a key typed into it must be refused as firmly.
pub fn admit_question(question: &str) -> Result<(), Refusal> {
    admit_text(StoredText::Question, question, Origin::UserTyped)
}

/// Decides whether a reply the model gave may be stored as a verified example. Its
/// understanding and answer are the model's text, so they are stored only because the
/// user confirmed them: the caller must say so with [`Origin::UserConfirmedProposal`]
/// (any other origin of model text is refused). The question is the user's own; all
/// three are checked for secrets and size like any lasting memory, each refused by
/// its own name.
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
    admit_question(question)?;
    admit_text(StoredText::Understanding, understanding, origin)?;
    admit_text(StoredText::Answer, answer, origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LASTING: Durability = Durability::Lasting;

    fn refused_as(text: &str, kind: &str) {
        assert_eq!(find_secret(text), Some(kind), "{text:?} holds {kind}");
        assert_eq!(
            admit(text, Origin::UserTyped, LASTING),
            Err(Refusal::Secret {
                text: StoredText::Clarification,
                kind: find_secret(text).unwrap_or_default()
            }),
            "{text:?}"
        );
    }

    // --- The gate -------------------------------------------------------------------

    #[test]
    fn the_users_own_lasting_words_are_admitted() {
        assert_eq!(
            admit(
                "when I ask for like, I want a synonym.",
                Origin::UserTyped,
                LASTING
            ),
            Ok(Admission::Lasting)
        );
        assert_eq!(
            admit(
                "use British spelling",
                Origin::UserConfirmedProposal,
                LASTING
            ),
            Ok(Admission::Lasting)
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
            Ok(Admission::ThisTurnOnly)
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
            ("use Bearer abc123def456ghi", "a bearer token"),
            ("card 4111 1111 1111 1111 please", "a card number"),
            (
                "token 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                "an access token",
            ),
            ("-----BEGIN PRIVATE KEY-----", "a private key"),
        ];
        for (text, kind) in cases {
            refused_as(text, kind);
        }
    }

    #[test]
    fn a_secret_says_what_to_do() {
        let message = Refusal::Secret {
            text: StoredText::Clarification,
            kind: "a JWT",
        }
        .to_string();
        assert!(
            message.contains("a JWT") && message.contains("remove it"),
            "{message}"
        );
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
            Err(Refusal::Secret {
                text: StoredText::Answer,
                kind: "a password or key"
            })
        );
    }

    #[test]
    fn a_confirmed_reply_whose_question_holds_a_secret_is_refused_as_the_question() {
        assert_eq!(
            admit_confirmed_reply(
                "what is like < fast > ? my pw: hunter2",
                "the synonym for fast",
                "quick",
                Origin::UserConfirmedProposal
            ),
            Err(Refusal::Secret {
                text: StoredText::Question,
                kind: "a password or key"
            })
        );
    }

    #[test]
    fn empty_and_oversized_clarifications_are_refused() {
        assert_eq!(
            admit("   ", Origin::UserTyped, LASTING),
            Err(Refusal::Empty(StoredText::Clarification))
        );
        let long = "a".repeat(MAX_CLARIFICATION_CHARS + 1);
        assert_eq!(
            admit(&long, Origin::UserTyped, LASTING),
            Err(Refusal::TooLong {
                text: StoredText::Clarification,
                len: MAX_CLARIFICATION_CHARS + 1,
                max: MAX_CLARIFICATION_CHARS
            })
        );
    }

    // --- The question -----------------------------------------------------------------

    #[test]
    fn an_ordinary_question_is_admitted() {
        for question in [
            "What is like < fast > ?",
            "I forgot my password, how do I reset it?",
            "What makes a strong password?",
        ] {
            assert_eq!(admit_question(question), Ok(()), "{question}");
        }
    }

    #[test]
    fn a_question_holding_a_secret_is_refused_naming_the_question() {
        assert_eq!(
            admit_question("what does AKIAIOSFODNN7EXAMPLE give access to?"),
            Err(Refusal::Secret {
                text: StoredText::Question,
                kind: "an AWS access key ID"
            })
        );
        assert_eq!(
            admit_question("my bank password is hunter2, is it strong?"),
            Err(Refusal::Secret {
                text: StoredText::Question,
                kind: "a password or key"
            })
        );
        let message = Refusal::Secret {
            text: StoredText::Question,
            kind: "a password or key",
        }
        .to_string();
        assert!(
            message.contains("the question")
                && message.contains("nothing was saved")
                && message.contains("ask again"),
            "{message}"
        );
    }

    #[test]
    fn an_empty_or_oversized_question_is_refused() {
        assert_eq!(
            admit_question("  "),
            Err(Refusal::Empty(StoredText::Question))
        );
        let long = "why ".repeat(MAX_QUESTION_CHARS);
        assert!(matches!(
            admit_question(&long),
            Err(Refusal::TooLong {
                text: StoredText::Question,
                max: MAX_QUESTION_CHARS,
                ..
            })
        ));
        assert_eq!(admit_question(&"a".repeat(MAX_QUESTION_CHARS)), Ok(()));
        let message = admit_question(&long).unwrap_err().to_string();
        assert!(
            message.contains("the question is limited to") && message.contains("ask a shorter"),
            "{message}"
        );
    }

    // --- Which text a refusal names ------------------------------------------------------

    const QUESTION: &str = "What is like < fast > ?";
    const UNDERSTANDING: &str = "the synonym for fast";

    #[test]
    fn a_confirmed_reply_with_an_oversized_answer_is_refused_as_the_answer() {
        let answer = "quick ".repeat(20_000);
        let refusal = admit_confirmed_reply(
            QUESTION,
            UNDERSTANDING,
            &answer,
            Origin::UserConfirmedProposal,
        )
        .unwrap_err();
        let len = answer.trim().chars().count();
        assert_eq!(
            refusal,
            Refusal::TooLong {
                text: StoredText::Answer,
                len,
                max: MAX_CLARIFICATION_CHARS
            }
        );
        let message = refusal.to_string();
        assert!(
            message.starts_with(&format!(
                "not saved: the answer is limited to {MAX_CLARIFICATION_CHARS} characters (this one has {len})"
            )),
            "{message}"
        );
        assert!(!message.contains("clarification"), "{message}");
    }

    #[test]
    fn a_confirmed_reply_with_an_oversized_understanding_is_refused_as_the_understanding() {
        let understanding = "fast ".repeat(1_000);
        let refusal = admit_confirmed_reply(
            QUESTION,
            &understanding,
            "quick",
            Origin::UserConfirmedProposal,
        )
        .unwrap_err();
        assert!(
            matches!(
                refusal,
                Refusal::TooLong {
                    text: StoredText::Understanding,
                    ..
                }
            ),
            "{refusal:?}"
        );
        let message = refusal.to_string();
        assert!(
            message.contains("the understanding is limited to")
                && message.contains("correct the reply"),
            "{message}"
        );
    }

    #[test]
    fn an_empty_answer_or_understanding_is_refused_by_its_name() {
        assert_eq!(
            admit_confirmed_reply(QUESTION, " ", "quick", Origin::UserConfirmedProposal),
            Err(Refusal::Empty(StoredText::Understanding))
        );
        assert_eq!(
            admit_confirmed_reply(QUESTION, UNDERSTANDING, "", Origin::UserConfirmedProposal),
            Err(Refusal::Empty(StoredText::Answer))
        );
        assert_eq!(
            Refusal::Empty(StoredText::Answer).to_string(),
            "nothing to save: the answer is empty"
        );
    }

    #[test]
    fn each_stored_text_is_refused_by_its_own_name_when_too_long() {
        for (what, name) in [
            (StoredText::Clarification, "the clarification"),
            (StoredText::Rule, "the rule"),
            (StoredText::EditedLesson, "the edited text"),
            (StoredText::Understanding, "the understanding"),
            (StoredText::Answer, "the answer"),
            (StoredText::Question, "the question"),
        ] {
            let long = "a".repeat(what.max_chars() + 1);
            let refusal = admit_text(what, &long, Origin::UserConfirmedProposal).unwrap_err();
            let message = refusal.to_string();
            assert!(
                message.starts_with(&format!("not saved: {name} is limited to")),
                "{message}"
            );
            assert_eq!(
                admit_text(what, " ", Origin::UserTyped)
                    .unwrap_err()
                    .to_string(),
                format!("nothing to save: {name} is empty")
            );
        }
    }

    #[test]
    fn a_rule_or_an_edit_is_refused_as_itself_not_as_a_clarification() {
        let long = "b".repeat(MAX_CLARIFICATION_CHARS + 7);
        let rule = admit_text(StoredText::Rule, &long, Origin::UserConfirmedProposal);
        assert!(
            matches!(
                rule,
                Err(Refusal::TooLong {
                    text: StoredText::Rule,
                    ..
                })
            ),
            "{rule:?}"
        );
        let edit = admit_text(StoredText::EditedLesson, "", Origin::UserTyped);
        assert_eq!(edit, Err(Refusal::Empty(StoredText::EditedLesson)));
    }

    // --- Passphrases in every stored text ----------------------------------------------

    const PASSPHRASE: &str = "passphrase correct horse battery staple";
    const RECOVERY_PHRASE: &str = "my recovery phrase is witch collapse practice feed shame open despair creek road again ice least";

    #[test]
    fn a_labelled_passphrase_is_refused_in_every_stored_text() {
        for (text, kind) in [
            (PASSPHRASE, "a passphrase"),
            (RECOVERY_PHRASE, "a recovery phrase"),
        ] {
            assert_eq!(
                admit(text, Origin::UserTyped, LASTING),
                Err(Refusal::Secret {
                    text: StoredText::Clarification,
                    kind
                }),
                "clarification: {text}"
            );
            assert_eq!(
                admit_text(StoredText::Rule, text, Origin::UserConfirmedProposal),
                Err(Refusal::Secret {
                    text: StoredText::Rule,
                    kind
                }),
                "rule: {text}"
            );
            assert_eq!(
                admit_question(text),
                Err(Refusal::Secret {
                    text: StoredText::Question,
                    kind
                }),
                "question: {text}"
            );
            assert_eq!(
                admit_confirmed_reply(QUESTION, text, "quick", Origin::UserConfirmedProposal),
                Err(Refusal::Secret {
                    text: StoredText::Understanding,
                    kind
                }),
                "understanding: {text}"
            );
            assert_eq!(
                admit_confirmed_reply(QUESTION, UNDERSTANDING, text, Origin::UserConfirmedProposal),
                Err(Refusal::Secret {
                    text: StoredText::Answer,
                    kind
                }),
                "answer: {text}"
            );
        }
    }

    #[test]
    fn a_sentence_about_passphrases_is_admitted_in_every_stored_text() {
        for text in [
            "when I ask about passphrases, I want advice on choosing one",
            "what makes a good passphrase?",
            "explain what a recovery phrase is",
        ] {
            assert_eq!(
                admit(text, Origin::UserTyped, LASTING),
                Ok(Admission::Lasting),
                "{text}"
            );
            assert_eq!(admit_question(text), Ok(()), "{text}");
            assert_eq!(
                admit_confirmed_reply(text, text, text, Origin::UserConfirmedProposal),
                Ok(()),
                "{text}"
            );
        }
    }
}
