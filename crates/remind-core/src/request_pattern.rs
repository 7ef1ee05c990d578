//! The scope "questions like this one", as the user sees and steers it: the request a
//! lesson was taught on, with its specifics as slots (`how far is ___ from ___`).
//!
//! MemoryKey masks specifics by rule (names, numbers, codes, quoted text); rules miss
//! some ("Define entropy", "Translate 'good morning'"). The page proposes the key's slots
//! and lets the user turn any word into a slot, or back, with one click: MemPrompt's
//! `< >` placed for the user instead of typed by them. A question fits a pattern when its
//! words are the pattern's fixed words, in order, with one or more words in each slot.

mod framing_words;

use std::fmt;

use thiserror::Error;

use crate::memory_key::{MASK, MemoryKey};
use framing_words::{
    AUXILIARIES, LEADING_DETERMINERS, QUESTION_WORDS, frames_a_request, is_closed_class,
};

/// How a slot is written in the pattern's text form (stored, exported, shown).
pub const SLOT: &str = "___";

/// A pattern longer than this is not a request a person would scope by hand.
pub const MAX_PATTERN_PARTS: usize = 64;

/// One part of a pattern: a word the question must contain at that place, or a slot
/// that one or more of its words fill.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PatternPart {
    Word(String),
    Slot,
}

/// A request with slots. Always holds at least one fixed word (a pattern of slots alone
/// would fit every question, which is the other scope, "every question"), never two
/// slots in a row, and its words lower-cased as [`question_words`] reads questions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RequestPattern {
    parts: Vec<PatternPart>,
}

/// One word of the question a lesson was taught on, as the scope editor shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeWord {
    pub text: String,
    pub slot: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum PatternError {
    #[error(
        "a scope needs at least one fixed word; to apply a lesson everywhere, choose \"every question\""
    )]
    NoFixedWord,
    #[error("a scope is limited to {MAX_PATTERN_PARTS} words and slots (this one has {0})")]
    TooLong(usize),
    #[error(
        "\"{0}\" cannot be part of a scope: a word holds letters, digits, apostrophes and hyphens only"
    )]
    NotAWord(String),
}

impl RequestPattern {
    /// The words of `question` with the slots Remind proposes: the specifics its
    /// request-kind key masks (a `< word >`, names, numbers, codes, quoted text), and
    /// every word that does not frame the request, with the article before it. The
    /// first word (the request's verb or question word) and the word a question word
    /// asks about ("how *far*", "what *time*") stay fixed.
    pub fn proposed_for(question: &str) -> Vec<ScopeWord> {
        let words = question_words(question);
        let by_key = RequestPattern::of_key(&MemoryKey::of_question(question))
            .and_then(|key| key.slots_filled_by(&words))
            .unwrap_or_else(|| vec![false; words.len()]);
        let quoted = quoted_words(question);
        let marked: Vec<bool> = (0..words.len())
            .map(|i| by_key[i] || quoted.get(i).copied().unwrap_or(false))
            .collect();
        let asked_about = asked_about(&words, &marked);
        let mut slots: Vec<bool> = (0..words.len())
            .map(|i| {
                marked[i] || (i > 0 && !asked_about.contains(&i) && !frames_a_request(&words[i]))
            })
            .collect();
        // Where the question marks its specifics (a name, a number, quotes) and slotting
        // the unmarked words would leave nothing fixed but the request's verb
        // ("translate ___" from "Translate this menu item: 'pain au chocolat'"), the
        // marks alone say what varies.
        let says_what_is_asked = (1..words.len())
            .any(|i| !slots[i] && (asked_about.contains(&i) || !is_closed_class(&words[i])));
        if marked.contains(&true) && !says_what_is_asked {
            slots = marked.clone();
        }
        // "How much does a blue whale *weigh*": after a question word, "does" and the
        // thing asked about, the last word is the verb that says what is asked.
        if let Some(last) = verb_at_the_end(&words)
            && !marked[last]
        {
            slots[last] = false;
        }
        // "the Eiffel Tower" and "Big Ben" are the same kind of specific.
        for i in (1..words.len().saturating_sub(1)).rev() {
            if slots[i + 1] && LEADING_DETERMINERS.contains(&words[i].as_str()) {
                slots[i] = true;
            }
        }
        if slots.iter().all(|&slot| slot) {
            slots = by_key;
        }
        words
            .into_iter()
            .zip(slots)
            .map(|(text, slot)| ScopeWord { text, slot })
            .collect()
    }

    /// The pattern Remind proposes for `question`, before the user changed anything.
    pub fn proposal(question: &str) -> Result<Self, PatternError> {
        Self::from_words(&Self::proposed_for(question))
    }

    /// `question`'s words with this pattern's slots marked, for the scope editor to
    /// change this pattern word by word; `None` when `question` does not fit it (a
    /// pattern added from another question's suggestion can be removed, not re-chosen).
    pub fn words_of(&self, question: &str) -> Option<Vec<ScopeWord>> {
        let words = question_words(question);
        let slots = self.slots_filled_by(&words)?;
        Some(
            words
                .into_iter()
                .zip(slots)
                .map(|(text, slot)| ScopeWord { text, slot })
                .collect(),
        )
    }

    /// The pattern the user chose: each slot word becomes a slot, runs of slots one slot.
    pub fn from_words(words: &[ScopeWord]) -> Result<Self, PatternError> {
        let mut parts = Vec::with_capacity(words.len());
        for word in words {
            if word.slot {
                if parts.last() != Some(&PatternPart::Slot) {
                    parts.push(PatternPart::Slot);
                }
            } else {
                parts.push(PatternPart::Word(checked_word(&word.text)?));
            }
        }
        Self::new(parts)
    }

    /// Reads the text form ([`fmt::Display`]): words and [`SLOT`]s separated by spaces.
    /// Outside input (stored rows, import files): never panics.
    pub fn parse(text: &str) -> Result<Self, PatternError> {
        let mut parts = Vec::new();
        for token in text.split_whitespace() {
            if token == SLOT {
                if parts.last() != Some(&PatternPart::Slot) {
                    parts.push(PatternPart::Slot);
                }
            } else {
                parts.push(PatternPart::Word(checked_word(token)?));
            }
        }
        Self::new(parts)
    }

    fn new(parts: Vec<PatternPart>) -> Result<Self, PatternError> {
        if parts.len() > MAX_PATTERN_PARTS {
            return Err(PatternError::TooLong(parts.len()));
        }
        if !parts.iter().any(|p| matches!(p, PatternPart::Word(_))) {
            return Err(PatternError::NoFixedWord);
        }
        Ok(RequestPattern { parts })
    }

    /// The key's own pattern: its masks as slots. `None` for a key without a fixed word.
    fn of_key(key: &MemoryKey) -> Option<Self> {
        let mut parts = Vec::new();
        for (i, piece) in key.as_str().split(MASK).enumerate() {
            if i > 0 && parts.last() != Some(&PatternPart::Slot) {
                parts.push(PatternPart::Slot);
            }
            parts.extend(question_words(piece).into_iter().map(PatternPart::Word));
        }
        Self::new(parts).ok()
    }

    pub fn parts(&self) -> &[PatternPart] {
        &self.parts
    }

    /// Whether `question` asks this request: its words are the fixed words in order,
    /// with one or more words in each slot.
    pub fn fits(&self, question: &str) -> bool {
        self.fits_words(&question_words(question))
    }

    /// [`RequestPattern::fits`] for a question already read by [`question_words`], so a
    /// turn reads its question once for every lesson's patterns.
    pub fn fits_words(&self, words: &[String]) -> bool {
        self.slots_filled_by(words).is_some()
    }

    /// For each word, whether a slot took it; `None` when the words do not fit.
    fn slots_filled_by(&self, words: &[String]) -> Option<Vec<bool>> {
        let (p, w) = (self.parts.len(), words.len());
        // fits[i][j]: parts[i..] fit words[j..]. Filled from the end.
        let mut fits = vec![vec![false; w + 1]; p + 1];
        fits[p][w] = true;
        for i in (0..p).rev() {
            for j in (0..=w).rev() {
                fits[i][j] = match &self.parts[i] {
                    PatternPart::Word(fixed) => j < w && words[j] == *fixed && fits[i + 1][j + 1],
                    // One word here, then either the slot goes on or the next part starts.
                    PatternPart::Slot => j < w && (fits[i + 1][j + 1] || fits[i][j + 1]),
                };
            }
        }
        if !fits[0][0] {
            return None;
        }
        let mut slots = Vec::with_capacity(w);
        let (mut i, mut j) = (0, 0);
        while j < w {
            match &self.parts[i] {
                PatternPart::Word(_) => {
                    slots.push(false);
                    i += 1;
                }
                PatternPart::Slot => {
                    slots.push(true);
                    // Close the slot as early as the rest allows.
                    if !fits[i + 1][j + 1] {
                        j += 1;
                        continue;
                    }
                    i += 1;
                }
            }
            j += 1;
        }
        Some(slots)
    }
}

impl fmt::Display for RequestPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            match part {
                PatternPart::Word(word) => f.write_str(word)?,
                PatternPart::Slot => f.write_str(SLOT)?,
            }
        }
        Ok(())
    }
}

/// For each of [`question_words`]`(question)`, whether it stands between quotes: a
/// quote that opens after a space or at the start and closes before one or at the end
/// ('good luck', "thank you", ‘ciao’, “merci”). An apostrophe inside a word ("what's")
/// neither opens nor closes one.
fn quoted_words(question: &str) -> Vec<bool> {
    let chars: Vec<(usize, char)> = question.char_indices().collect();
    let boundary = |k: Option<&(usize, char)>| k.is_none_or(|(_, c)| !c.is_alphanumeric());
    let closer = |open: char| match open {
        '‘' => '’',
        '“' => '”',
        other => other,
    };
    let mut flags = Vec::new();
    let mut from = 0;
    let mut k = 0;
    while k < chars.len() {
        let (at, open) = chars[k];
        let opens = matches!(open, '\'' | '"' | '‘' | '“')
            && boundary(k.checked_sub(1).and_then(|p| chars.get(p)));
        let close = opens
            .then(|| {
                (k + 1..chars.len()).find(|&e| {
                    (chars[e].1 == closer(open) || (open == '\'' && chars[e].1 == '’'))
                        && boundary(chars.get(e + 1))
                })
            })
            .flatten();
        let Some(end) = close else {
            k += 1;
            continue;
        };
        let inner_start = at + open.len_utf8();
        let inner_end = chars[end].0;
        flags.extend(question_words(&question[from..at]).iter().map(|_| false));
        flags.extend(
            question_words(&question[inner_start..inner_end])
                .iter()
                .map(|_| true),
        );
        from = inner_end + chars[end].1.len_utf8();
        k = end + 1;
    }
    flags.extend(question_words(&question[from..]).iter().map(|_| false));
    flags
}

/// The index of the last word when the question reads "question word, (word asked
/// about,) do/does/did/can/could, a thing, verb": "How fast can a cheetah *run*?".
/// Not for "How do I say ...", where the verb follows the person at once.
fn verb_at_the_end(words: &[String]) -> Option<usize> {
    const DO_OR_CAN: &[&str] = &["do", "does", "did", "can", "could"];
    const PEOPLE: &[&str] = &["i", "you", "we", "they", "he", "she", "it", "people"];
    if !QUESTION_WORDS.contains(&words.first()?.as_str()) {
        return None;
    }
    let aux = (1..words.len().min(3)).find(|&i| DO_OR_CAN.contains(&words[i].as_str()))?;
    let subject = words.get(aux + 1)?;
    let last = words.len() - 1;
    (!PEOPLE.contains(&subject.as_str()) && last > aux + 1).then_some(last)
}

/// Where each question word's subject is: the first word after it that is neither an
/// auxiliary, an article nor a masked specific ("what is 15 *percent* of 80").
fn asked_about(words: &[String], masked: &[bool]) -> Vec<usize> {
    let mut found = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if !QUESTION_WORDS.contains(&word.as_str()) {
            continue;
        }
        let subject = (i + 1..words.len()).find(|&j| {
            let w = words[j].as_str();
            !masked[j] && !AUXILIARIES.contains(&w) && !LEADING_DETERMINERS.contains(&w)
        });
        found.extend(subject);
    }
    found
}

/// The words of a question as patterns compare them: lower-cased, punctuation and
/// `< >` markers dropped, apostrophes and hyphens inside a word kept ("what's",
/// "S-47"); curly apostrophes read as straight ones.
pub fn question_words(question: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    for c in question.chars().flat_map(char::to_lowercase) {
        let c = if c == '\u{2019}' { '\'' } else { c };
        if c.is_alphanumeric() || (is_joiner(c) && !current.is_empty()) {
            current.push(c);
        } else {
            push_word(&mut words, &mut current);
        }
    }
    push_word(&mut words, &mut current);
    words
}

fn is_joiner(c: char) -> bool {
    c == '\'' || c == '-'
}

fn push_word(words: &mut Vec<String>, current: &mut String) {
    let word = current.trim_end_matches(is_joiner);
    if !word.is_empty() {
        words.push(word.to_string());
    }
    current.clear();
}

/// A word as the user or a file gave it, in the form [`question_words`] produces.
fn checked_word(text: &str) -> Result<String, PatternError> {
    match question_words(text).as_slice() {
        [word] if *word == text.to_lowercase().replace('\u{2019}', "'") => Ok(word.clone()),
        _ => Err(PatternError::NotAWord(text.chars().take(40).collect())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn proposed(question: &str) -> String {
        RequestPattern::proposal(question).unwrap().to_string()
    }

    fn chosen(question: &str, slots: &[&str]) -> RequestPattern {
        let words: Vec<ScopeWord> = RequestPattern::proposed_for(question)
            .into_iter()
            .map(|w| ScopeWord {
                slot: w.slot || slots.contains(&w.text.as_str()),
                text: w.text,
            })
            .collect();
        RequestPattern::from_words(&words).unwrap()
    }

    #[test]
    fn the_proposal_makes_the_keys_specifics_slots() {
        assert_eq!(
            proposed("How far is Lyon from Paris?"),
            "how far is ___ from ___"
        );
        assert_eq!(proposed("What is like < fast > ?"), "what is like ___");
        assert_eq!(
            proposed("Convert 30 miles to kilometres."),
            "convert ___ miles to kilometres"
        );
        assert_eq!(
            proposed("How far is New York from Los Angeles?"),
            "how far is ___ from ___"
        );
    }

    #[test]
    fn the_proposal_also_slots_the_words_that_do_not_frame_the_request() {
        assert_eq!(proposed("Define entropy."), "define ___");
        assert_eq!(
            proposed("How much does a blue whale weigh?"),
            "how much does ___ weigh"
        );
        assert_eq!(
            proposed("How fast can a cheetah run?"),
            "how fast can ___ run"
        );
        assert_eq!(proposed("How do I say good morning?"), "how do i say ___");
        assert_eq!(
            proposed("What's the opposite of generous?"),
            "what's the opposite of ___"
        );
        assert_eq!(
            proposed("Give me the steps to reset a router."),
            "give me the steps to ___"
        );
    }

    #[test]
    fn quoted_text_is_a_specific_and_an_article_goes_with_the_specific_after_it() {
        assert_eq!(
            proposed("Translate 'where is the station' for me."),
            "translate ___ for me"
        );
        assert_eq!(proposed("How tall is the Eiffel Tower?"), "how tall is ___");
        assert!(
            RequestPattern::proposal("How tall is the Eiffel Tower?")
                .unwrap()
                .fits("How tall is Big Ben?")
        );
        assert_eq!(
            quoted_words("Say “merci” or ‘ciao’, don't 'shout'"),
            [false, true, false, true, false, true]
        );
    }

    #[test]
    fn where_the_question_marks_its_specifics_a_proposal_keeps_its_content_words() {
        assert_eq!(
            proposed("Translate this menu item: 'pain au chocolat'."),
            "translate this menu item ___"
        );
        // Unless something besides the verb still says what is asked ("how *much*").
        assert_eq!(
            proposed("How much is a coffee in Zurich?"),
            "how much is ___ in ___"
        );
        assert_eq!(
            proposed("How much does an African elephant weigh?"),
            "how much does ___ weigh"
        );
        // "that" starts a clause here; it is not the specific's article.
        assert_eq!(
            proposed("Suggest a name for a function that sums prices."),
            "suggest a name for ___ that ___"
        );
        let tall = RequestPattern::proposal("How tall is the Eiffel Tower?").unwrap();
        assert!(!tall.fits("How old is the Eiffel Tower?"));
    }

    #[test]
    fn a_proposed_pattern_fits_the_same_request_about_other_specifics_and_nothing_else() {
        let scope = RequestPattern::proposal("How far is Lyon from Paris?").unwrap();
        assert!(scope.fits("How far is Berlin from Munich?"));
        assert!(scope.fits("how far is new york from los angeles"));
        assert!(!scope.fits("How old is Lyon?"));
        assert!(!scope.fits("How far is it?"));
        assert!(!scope.fits("Tell me how far is Lyon from Paris?"));
    }

    #[test]
    fn a_word_the_user_turns_into_a_slot_lets_other_words_in_its_place() {
        let define = chosen("Define entropy", &["entropy"]);
        assert_eq!(define.to_string(), "define ___");
        assert!(define.fits("Define inflation."));
        assert!(!define.fits("Define"));
        let translate = chosen("Translate 'good morning' into French", &["good", "morning"]);
        assert_eq!(translate.to_string(), "translate ___ into ___");
        assert!(translate.fits("Translate 'thank you' into French"));
        assert!(translate.fits("Translate 'thank you' into Spanish"));
    }

    #[test]
    fn a_slot_the_user_turns_back_into_a_word_must_match_again() {
        let words: Vec<ScopeWord> = RequestPattern::proposed_for("How far is Lyon from Paris?")
            .into_iter()
            .map(|w| ScopeWord {
                slot: w.slot && w.text != "paris",
                text: w.text,
            })
            .collect();
        let to_paris = RequestPattern::from_words(&words).unwrap();
        assert_eq!(to_paris.to_string(), "how far is ___ from paris");
        assert!(to_paris.fits("How far is Berlin from Paris?"));
        assert!(!to_paris.fits("How far is Berlin from Munich?"));
    }

    #[test]
    fn a_stored_pattern_reopens_on_the_question_it_fits_with_its_own_slots() {
        let question = "How far is Lyon from Paris?";
        let to_paris = RequestPattern::parse("how far is ___ from paris").unwrap();
        let words = to_paris.words_of(question).expect("the question fits");
        let slots: Vec<&str> = words
            .iter()
            .filter(|w| w.slot)
            .map(|w| w.text.as_str())
            .collect();
        assert_eq!(slots, ["lyon"]);
        assert_eq!(RequestPattern::from_words(&words), Ok(to_paris));
        let other = RequestPattern::parse("what's the distance between ___ and ___").unwrap();
        assert_eq!(other.words_of(question), None);
    }

    #[test]
    fn a_pattern_of_slots_alone_is_refused() {
        let words = vec![ScopeWord {
            text: "hello".into(),
            slot: true,
        }];
        assert_eq!(
            RequestPattern::from_words(&words),
            Err(PatternError::NoFixedWord)
        );
        assert_eq!(
            RequestPattern::parse("___ ___"),
            Err(PatternError::NoFixedWord)
        );
        assert_eq!(RequestPattern::parse(""), Err(PatternError::NoFixedWord));
    }

    #[test]
    fn the_text_form_reads_back_and_refuses_what_is_not_a_word() {
        let scope = RequestPattern::parse("how far is ___ from ___").unwrap();
        assert_eq!(scope.to_string(), "how far is ___ from ___");
        assert_eq!(
            RequestPattern::parse("how far is ___ ___ from ___").unwrap(),
            scope
        );
        assert!(matches!(
            RequestPattern::parse("how far is <script>"),
            Err(PatternError::NotAWord(_))
        ));
        assert!(matches!(
            RequestPattern::parse("How far"),
            Ok(p) if p.to_string() == "how far"
        ));
        let long = vec!["word"; MAX_PATTERN_PARTS + 1].join(" ");
        assert_eq!(
            RequestPattern::parse(&long),
            Err(PatternError::TooLong(MAX_PATTERN_PARTS + 1))
        );
    }

    #[test]
    fn question_words_ignore_case_punctuation_and_markers_and_keep_inner_apostrophes() {
        assert_eq!(
            question_words("What’s the plural of < cactus > ?"),
            ["what's", "the", "plural", "of", "cactus"]
        );
        assert_eq!(question_words("Where is S-47?"), ["where", "is", "s-47"]);
        assert_eq!(question_words("'quoted' -- text"), ["quoted", "text"]);
    }

    proptest! {
        #[test]
        fn parsing_any_text_never_panics_and_what_parses_prints_back_the_same(text in "\\PC{0,80}") {
            if let Ok(pattern) = RequestPattern::parse(&text) {
                prop_assert_eq!(RequestPattern::parse(&pattern.to_string()), Ok(pattern));
            }
        }

        #[test]
        fn every_question_fits_its_own_proposal(question in "[A-Za-z0-9 ,.?'<>\"-]{1,60}") {
            if let Ok(pattern) = RequestPattern::proposal(&question) {
                prop_assert!(pattern.fits(&question), "{} does not fit {}", question, pattern);
            }
        }
    }
}
