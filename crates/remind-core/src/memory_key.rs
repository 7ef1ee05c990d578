//! What a memory is about: the kind of request a question makes, with its specifics
//! masked.
//!
//! "What is like < fast > ?" and "what is like <happy>?" are the same request about
//! different words, so they share the key `what is like < > ?`. People do not type
//! markers, so a question without one has its specifics masked instead: names (a
//! capitalised word inside a sentence), numbers, codes such as S-47 and quoted text.
//! "How far is Lyon from Paris?" and "How far is Berlin from Munich?" share the key
//! `how far is < > from < > ?`, while "How old is Lyon?" keeps a key of its own.

use serde::{Deserialize, Serialize};

/// The normalised, word-masked form of a question; equal keys mean "the same request".
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MemoryKey(String);

/// The placeholder that replaces the content word inside `< >`.
pub const MASK: &str = "< >";

impl MemoryKey {
    /// Builds the key of a question: lower-case, whitespace collapsed, the `< word >`
    /// masked, or, in a question without a marker, its specifics masked.
    pub fn of_question(question: &str) -> Self {
        if marked_word(question).is_some() {
            return Self::of_exact_question(question);
        }
        normalised(&mask_specifics(question).to_lowercase())
    }

    /// The key the question had before specifics were masked: only a `< word >` is
    /// masked. Verified examples are keyed so (a confirmed reply is about its own
    /// question, not every question of its kind), and lessons stored by earlier
    /// versions of Remind keep this key.
    pub fn of_exact_question(question: &str) -> Self {
        normalised(&mask_marked_word(&question.to_lowercase()))
    }

    /// Whether `self` is a key `question` may be stored under: its key, or the key
    /// earlier versions of Remind gave it.
    pub fn belongs_to(&self, question: &str) -> bool {
        *self == Self::of_question(question) || *self == Self::of_exact_question(question)
    }

    /// Rebuilds a key that was stored earlier; the text is trusted to be normalised.
    pub fn from_stored(text: String) -> Self {
        MemoryKey(text)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The word inside the first `< >` pair, if the question marks one.
pub fn marked_word(question: &str) -> Option<&str> {
    let open = question.find('<')?;
    let close = open + question[open..].find('>')?;
    let word = question[open + 1..close].trim();
    (!word.is_empty()).then_some(word)
}

fn normalised(masked: &str) -> MemoryKey {
    let spaced = masked.replace(MASK, &format!(" {MASK} "));
    MemoryKey(spaced.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Replaces each run of specific words (names, numbers, codes, quoted text) with one
/// [`MASK`]; the words that say what is asked stay. Case is read before lower-casing:
/// a capital letter inside a sentence marks a name.
fn mask_specifics(question: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut masking = false;
    let mut sentence_start = true;
    let mut quote: Option<char> = None;
    for token in question.split_whitespace() {
        let (lead, word, trail) = split_punctuation(token);
        let opened = match quote {
            Some(_) => None,
            None => lead.chars().find_map(closing_quote),
        };
        quote = quote.or(opened);
        let specific = quote.is_some() || is_specific(word, sentence_start);
        let closed = quote.filter(|close| trail.contains(*close));
        // Inside quotes every word and mark belongs to the quoted text; after the
        // closing quote, the sentence's own punctuation is kept.
        let kept_trail: &str = match (quote, closed) {
            (Some(_), Some(close)) => trail.rsplit(close).next().unwrap_or(""),
            (Some(_), None) => "",
            (None, _) => trail,
        };
        if closed.is_some() {
            quote = None;
        }
        if specific {
            let kept_lead: String = lead
                .chars()
                .filter(|c| closing_quote(*c).is_none())
                .collect();
            if !masking || !kept_lead.is_empty() {
                out.push(format!("{kept_lead}{MASK}"));
            }
            masking = kept_trail.is_empty();
            if let Some(last) = out.last_mut() {
                last.push_str(kept_trail);
            }
        } else {
            out.push(token.to_string());
            masking = false;
        }
        let ends_sentence = kept_trail.contains(['.', '!', '?', ':', ';']);
        sentence_start = ends_sentence || (word.is_empty() && sentence_start);
    }
    out.join(" ")
}

/// Whether a bare word (punctuation stripped) is a specific rather than part of the
/// request: it holds a digit (a number, a date, a code like S-47), or it is a
/// capitalised word that does not start a sentence (a name; "I" is not one).
fn is_specific(word: &str, sentence_start: bool) -> bool {
    if word.chars().any(|c| c.is_ascii_digit()) {
        return true;
    }
    let Some(first) = word.chars().next() else {
        return false;
    };
    let pronoun = word == "I" || word.starts_with("I'") || word.starts_with("I\u{2019}");
    first.is_uppercase() && !sentence_start && !pronoun
}

/// A token's leading punctuation, its word, and its trailing punctuation.
fn split_punctuation(token: &str) -> (&str, &str, &str) {
    let is_edge = |c: char| !c.is_alphanumeric();
    let word_start = token.find(|c: char| !is_edge(c)).unwrap_or(token.len());
    let lead = &token[..word_start];
    let rest = &token[word_start..];
    let word_end = rest
        .char_indices()
        .rev()
        .find(|(_, c)| !is_edge(*c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    (lead, &rest[..word_end], &rest[word_end..])
}

fn closing_quote(open: char) -> Option<char> {
    match open {
        '"' => Some('"'),
        '\u{201C}' => Some('\u{201D}'),
        '\u{2018}' => Some('\u{2019}'),
        '\u{AB}' => Some('\u{BB}'),
        '`' => Some('`'),
        _ => None,
    }
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
    fn a_question_without_specifics_is_keyed_by_its_normalised_text() {
        let key = MemoryKey::of_question("  How   do I\tboil an egg? ");
        assert_eq!(key.as_str(), "how do i boil an egg?");
    }

    fn key(question: &str) -> String {
        MemoryKey::of_question(question).as_str().to_string()
    }

    #[test]
    fn the_same_request_about_other_places_has_the_same_key() {
        assert_eq!(
            key("How far is Lyon from Paris?"),
            "how far is < > from < > ?"
        );
        assert_eq!(
            key("How far is Berlin from Munich?"),
            key("How far is Lyon from Paris?")
        );
    }

    #[test]
    fn another_attribute_of_the_same_place_keeps_its_own_key() {
        assert_ne!(key("How old is Lyon?"), key("How far is Lyon from Paris?"));
        assert_eq!(key("How old is Lyon?"), "how old is < > ?");
    }

    #[test]
    fn a_name_of_several_words_is_one_mask() {
        assert_eq!(
            key("How far is New York from Boston?"),
            key("How far is Lyon from Paris?")
        );
    }

    #[test]
    fn numbers_dates_and_codes_are_masked() {
        assert_eq!(key("Convert 12.5 miles to km"), "convert < > miles to km");
        assert_eq!(
            key("Where is my order S-47?"),
            key("Where is my order B-1203?")
        );
        assert_eq!(
            key("what happened on 14/07/1789?"),
            "what happened on < > ?"
        );
    }

    #[test]
    fn quoted_text_is_masked_whatever_its_case() {
        assert_eq!(
            key("Translate \"good morning, my friend\" into French"),
            "translate < > into < >"
        );
        assert_eq!(
            key("Translate \u{201C}thank you\u{201D} into German"),
            key("Translate \"see you tomorrow\" into French")
        );
    }

    #[test]
    fn the_first_word_of_a_sentence_and_i_are_not_names() {
        assert_eq!(
            key("Which editor should I use?"),
            "which editor should i use?"
        );
        assert_eq!(
            key("I moved. Where should I live?"),
            "i moved. where should i live?"
        );
    }

    #[test]
    fn a_marked_question_keeps_todays_key_even_with_names_in_it() {
        assert_eq!(
            key("What does Anna mean by < fast > ?"),
            "what does anna mean by < > ?"
        );
    }

    #[test]
    fn a_question_belongs_to_its_key_and_to_the_key_earlier_versions_gave_it() {
        let question = "How far is Lyon from Paris?";
        assert!(MemoryKey::of_question(question).belongs_to(question));
        assert!(MemoryKey::of_exact_question(question).belongs_to(question));
        assert_eq!(
            MemoryKey::of_exact_question(question).as_str(),
            "how far is lyon from paris?"
        );
        assert!(!MemoryKey::of_question("How old is Lyon?").belongs_to(question));
    }

    proptest::proptest! {
        #[test]
        fn any_question_gets_a_key_without_a_panic(question in "\\PC{0,80}") {
            let key = MemoryKey::of_question(&question);
            proptest::prop_assert!(key.belongs_to(&question));
            proptest::prop_assert!(!key.as_str().contains("  "));
        }
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
