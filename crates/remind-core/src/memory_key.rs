//! What a memory is about: the question with its content word masked.
//!
//! "What is like < fast > ?" and "what is like <happy>?" are the same request about
//! different words, so they share the key `what is like < > ?`. Questions without the
//! paper's `< word >` marker are keyed by their whole normalised text.

use serde::{Deserialize, Serialize};

/// The normalised, word-masked form of a question; equal keys mean "the same request".
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MemoryKey(String);

/// The placeholder that replaces the content word inside `< >`.
pub const MASK: &str = "< >";

impl MemoryKey {
    /// Builds the key of a question: lower-case, whitespace collapsed, `< word >` masked.
    pub fn of_question(question: &str) -> Self {
        let lowered = question.to_lowercase();
        let masked = mask_marked_word(&lowered);
        let spaced = masked.replace(MASK, &format!(" {MASK} "));
        MemoryKey(spaced.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    /// Rebuilds a key that was stored earlier; the text is trusted to be normalised.
    pub fn from_stored(text: String) -> Self {
        MemoryKey(text)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the question carried a `< word >` marker that was masked.
    pub fn is_masked(&self) -> bool {
        self.0.contains(MASK)
    }
}

/// The word inside the first `< >` pair, if the question marks one.
pub fn marked_word(question: &str) -> Option<&str> {
    let open = question.find('<')?;
    let close = open + question[open..].find('>')?;
    let word = question[open + 1..close].trim();
    (!word.is_empty()).then_some(word)
}

fn mask_marked_word(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        match rest[open..].find('>') {
            Some(len) => {
                out.push_str(&rest[..open]);
                out.push_str(MASK);
                rest = &rest[open + len + 1..];
            }
            None => break,
        }
    }
    out.push_str(rest);
    out
}

impl std::fmt::Display for MemoryKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_request_about_another_word_has_the_same_key() {
        assert_eq!(
            MemoryKey::of_question("What is like < fast > ?"),
            MemoryKey::of_question("what is like <happy>?")
        );
        assert_eq!(
            MemoryKey::of_question("What is like < fast > ?").as_str(),
            "what is like < > ?"
        );
    }

    #[test]
    fn different_requests_keep_different_keys() {
        assert_ne!(
            MemoryKey::of_question("What is like < fast > ?"),
            MemoryKey::of_question("What is unlike < fast > ?")
        );
    }

    #[test]
    fn a_question_without_a_marker_is_keyed_by_its_normalised_text() {
        let key = MemoryKey::of_question("  How   do I\tboil an Egg? ");
        assert_eq!(key.as_str(), "how do i boil an egg?");
        assert!(!key.is_masked());
    }

    #[test]
    fn an_unclosed_marker_is_kept_as_text() {
        assert_eq!(MemoryKey::of_question("a < b").as_str(), "a < b");
    }

    #[test]
    fn the_marked_word_is_found_inside_the_brackets() {
        assert_eq!(marked_word("What is like < fast > ?"), Some("fast"));
        assert_eq!(marked_word("no marker"), None);
        assert_eq!(marked_word("empty < > marker"), None);
    }
}
