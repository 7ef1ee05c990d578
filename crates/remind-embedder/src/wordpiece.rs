//! BERT's uncased WordPiece tokeniser, as the sentence embedder's model expects its input.
//!
//! It reproduces Hugging Face's `BertTokenizer` (fast) with the MiniLM settings: clean
//! the text, isolate CJK ideographs, strip accents, lower-case, split on whitespace and
//! punctuation, then greedy longest-match WordPiece, wrapped in `[CLS]` … `[SEP]`. A
//! different split changes the embedding, so the parity test pins the ids against the
//! reference tokeniser. The vocabulary is outside input: parsing it never panics.

use std::collections::HashMap;

use thiserror::Error;
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// BERT gives up on words longer than this and emits `[UNK]` for them.
const MAX_CHARS_PER_WORD: usize = 100;

/// What is wrong with a vocabulary file.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum VocabError {
    #[error("the vocabulary is empty; expected BERT's vocab.txt (one token per line)")]
    Empty,
    #[error(
        "the vocabulary lacks the special token {0}; is this BERT's uncased vocab.txt (30522 lines)?"
    )]
    MissingSpecialToken(&'static str),
    #[error("the vocabulary has {0} lines, more than token ids can number")]
    TooLarge(usize),
}

/// The token ids of one text, `[CLS]` first and `[SEP]` last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoding {
    pub ids: Vec<u32>,
    /// Whether the text had more tokens than fit and its end was dropped.
    pub truncated: bool,
}

/// A parsed vocabulary with the special tokens' ids resolved.
#[derive(Clone, Debug)]
pub struct WordPieceTokenizer {
    ids: HashMap<String, u32>,
    cls: u32,
    sep: u32,
    unk: u32,
    pad: u32,
}

impl WordPieceTokenizer {
    /// Reads a `vocab.txt`: the token on line n has id n.
    pub fn from_vocab(vocab: &str) -> Result<Self, VocabError> {
        let mut ids = HashMap::new();
        for (line_index, line) in vocab.lines().enumerate() {
            let id = u32::try_from(line_index).map_err(|_| VocabError::TooLarge(line_index))?;
            // A later duplicate must not move a token already placed: the first line wins,
            // as in the reference loader's id order.
            ids.entry(line.trim_end_matches('\r').to_string())
                .or_insert(id);
        }
        if ids.is_empty() {
            return Err(VocabError::Empty);
        }
        let special = |token: &'static str| {
            ids.get(token)
                .copied()
                .ok_or(VocabError::MissingSpecialToken(token))
        };
        Ok(WordPieceTokenizer {
            cls: special("[CLS]")?,
            sep: special("[SEP]")?,
            unk: special("[UNK]")?,
            pad: special("[PAD]")?,
            ids,
        })
    }

    /// The id the model's padding positions carry.
    pub fn pad_id(&self) -> u32 {
        self.pad
    }

    /// Encodes `text` into at most `max_len` ids (at least `[CLS]` and `[SEP]`).
    pub fn encode(&self, text: &str, max_len: usize) -> Encoding {
        let room = max_len.max(2) - 2;
        let mut ids = vec![self.cls];
        let mut truncated = false;
        'words: for word in pre_tokenize(&normalize(text)) {
            for id in self.word_pieces(&word) {
                if ids.len() - 1 == room {
                    truncated = true;
                    break 'words;
                }
                ids.push(id);
            }
        }
        ids.push(self.sep);
        Encoding { ids, truncated }
    }

    /// Greedy longest-match-first pieces of one word; `[UNK]` alone if any part has none.
    fn word_pieces(&self, word: &str) -> Vec<u32> {
        let chars: Vec<char> = word.chars().collect();
        if chars.len() > MAX_CHARS_PER_WORD {
            return vec![self.unk];
        }
        let mut pieces = Vec::new();
        let mut start = 0;
        while start < chars.len() {
            let mut end = chars.len();
            let mut found = None;
            while start < end {
                let mut candidate: String = chars[start..end].iter().collect();
                if start > 0 {
                    candidate.insert_str(0, "##");
                }
                if let Some(&id) = self.ids.get(&candidate) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => pieces.push(id),
                None => return vec![self.unk],
            }
            start = end;
        }
        pieces
    }
}

/// BERT's normaliser: drop control characters, whitespace to spaces, spaces around CJK
/// ideographs, accents stripped (NFD without nonspacing marks), then lower case.
fn normalize(text: &str) -> String {
    let mut cleaned = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if is_whitespace(c) {
            cleaned.push(' ');
        } else if is_cjk_ideograph(c) {
            cleaned.push(' ');
            cleaned.push(c);
            cleaned.push(' ');
        } else {
            cleaned.push(c);
        }
    }
    cleaned
        .nfd()
        .filter(|&c| get_general_category(c) != GeneralCategory::NonspacingMark)
        .collect::<String>()
        .to_lowercase()
}

/// Splits on whitespace and makes every punctuation character a word of its own.
fn pre_tokenize(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for chunk in text.split(char::is_whitespace) {
        let mut word = String::new();
        for c in chunk.chars() {
            if is_punctuation(c) {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                words.push(c.to_string());
            } else {
                word.push(c);
            }
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    words
}

/// Tab, newline and carriage return count as whitespace, not control, as in BERT.
fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r')
        && matches!(
            get_general_category(c),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::Surrogate
                | GeneralCategory::PrivateUse
                | GeneralCategory::Unassigned
        )
}

/// ASCII symbols such as `$`, `<` and `^` are punctuation to BERT though Unicode calls
/// them symbols; that is why `< word >` markers become tokens of their own.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(
            get_general_category(c),
            GeneralCategory::ConnectorPunctuation
                | GeneralCategory::DashPunctuation
                | GeneralCategory::OpenPunctuation
                | GeneralCategory::ClosePunctuation
                | GeneralCategory::InitialPunctuation
                | GeneralCategory::FinalPunctuation
                | GeneralCategory::OtherPunctuation
        )
}

/// The CJK Unified Ideograph blocks BERT splits character by character.
fn is_cjk_ideograph(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B820..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A few real BERT ids, enough to exercise splitting without the 30522-line file.
    fn tokenizer() -> WordPieceTokenizer {
        let mut lines = vec![String::new(); 30522];
        for (token, id) in [
            ("[PAD]", 0),
            ("[UNK]", 100),
            ("[CLS]", 101),
            ("[SEP]", 102),
            ("'", 1005),
            (",", 1010),
            ("<", 1026),
            (">", 1028),
            ("?", 1029),
            ("what", 2054),
            ("is", 2003),
            ("hello", 7592),
            ("cafe", 7668),
            ("una", 14477),
            ("##ffa", 20961),
            ("##ble", 3468),
            ("東", 1879),
            ("京", 1755),
        ] {
            lines[id] = token.to_string();
        }
        for (i, line) in lines.iter_mut().enumerate() {
            if line.is_empty() {
                *line = format!("[unused{i}]");
            }
        }
        WordPieceTokenizer::from_vocab(&lines.join("\n")).expect("vocab parses")
    }

    #[test]
    fn punctuation_accents_case_and_cjk_split_as_bert_does() {
        let t = tokenizer();
        assert_eq!(
            t.encode("Héllo, CAFÉ東京 unaffable?", 128).ids,
            vec![
                101, 7592, 1010, 7668, 1879, 1755, 14477, 20961, 3468, 1029, 102
            ]
        );
        assert_eq!(
            t.encode("What is < x >", 128).ids,
            vec![101, 2054, 2003, 1026, 100, 1028, 102]
        );
    }

    #[test]
    fn a_word_without_a_full_split_is_one_unknown_token() {
        let t = tokenizer();
        assert_eq!(t.encode("unaffablez", 128).ids, vec![101, 100, 102]);
        assert_eq!(t.encode(&"a".repeat(101), 128).ids, vec![101, 100, 102]);
    }

    #[test]
    fn long_text_is_cut_to_the_limit_with_sep_kept() {
        let t = tokenizer();
        let encoding = t.encode(&"what ".repeat(200), 16);
        assert_eq!(encoding.ids.len(), 16);
        assert!(encoding.truncated);
        assert_eq!(encoding.ids.first(), Some(&101));
        assert_eq!(encoding.ids.last(), Some(&102));
        assert!(!t.encode("what", 16).truncated);
    }

    #[test]
    fn a_vocabulary_without_special_tokens_is_refused_with_the_missing_one_named() {
        assert_eq!(
            WordPieceTokenizer::from_vocab("").unwrap_err(),
            VocabError::Empty
        );
        assert_eq!(
            WordPieceTokenizer::from_vocab("[PAD]\nhello\n").unwrap_err(),
            VocabError::MissingSpecialToken("[CLS]")
        );
    }

    proptest! {
        #[test]
        fn any_text_encodes_within_the_limit(text in "\\PC{0,300}", max_len in 0usize..140) {
            let encoding = tokenizer().encode(&text, max_len);
            prop_assert!(encoding.ids.len() <= max_len.max(2));
            prop_assert_eq!(encoding.ids.first(), Some(&101));
            prop_assert_eq!(encoding.ids.last(), Some(&102));
        }

        #[test]
        fn any_vocabulary_text_parses_or_is_refused(vocab in "\\PC{0,500}") {
            let _ = WordPieceTokenizer::from_vocab(&vocab);
        }
    }
}
