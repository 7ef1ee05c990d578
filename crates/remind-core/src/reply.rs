//! Splits a model's completion into its understanding `u` and its answer `y`.
//!
//! Completions come from outside: small models ramble, chat models add pleasantries,
//! servers strip or keep `END`. Parsing therefore never fails and never panics; it
//! returns what it found and names what it could not find.

use serde::{Deserialize, Serialize};

use crate::prompt::{END, ReplyForm};

/// A completion read as "understanding is answer".
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParsedReply {
    /// The model's restatement of the request, e.g. "the synonym for fast".
    pub understanding: Option<String>,
    /// What the model answered, e.g. "quick".
    pub answer: Option<String>,
    /// What the parser had to work around or could not find.
    pub problems: Vec<ReplyProblem>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyProblem {
    /// The model returned nothing but whitespace.
    Empty,
    /// No `END` and no stop: the reply may have been cut off by the token limit.
    NoEnd,
    /// The model wrote on past its reply (a new question or separator); the rest was dropped.
    RanOn,
    /// No restatement ("… is …" or an "Understanding:" line): the whole reply is taken
    /// as the answer.
    NoUnderstanding,
    /// A restatement but nothing after it.
    NoAnswer,
}

impl ReplyProblem {
    pub fn describe(self) -> &'static str {
        match self {
            ReplyProblem::Empty => "the model returned an empty reply",
            ReplyProblem::NoEnd => "the reply did not end with END and may be cut off",
            ReplyProblem::RanOn => "the model wrote past its reply; the extra text was dropped",
            ReplyProblem::NoUnderstanding => {
                "the model did not restate the question, so its understanding is unknown"
            }
            ReplyProblem::NoAnswer => "the model restated the question but gave no answer",
        }
    }
}

impl ParsedReply {
    /// The reply as one line, as the paper's keyword checker reads it.
    pub fn full_text(&self) -> String {
        match (&self.understanding, &self.answer) {
            (Some(u), Some(y)) => format!("{u} is {y}"),
            (Some(u), None) => u.clone(),
            (None, Some(y)) => y.clone(),
            (None, None) => String::new(),
        }
    }
}

/// Parses a completion in the form its prompt asked for. `stopped` says whether the
/// server ended it at a stop sequence (then a missing `END` is expected, not a problem).
///
/// In the labelled form a reply is split only at its labels, so an answer of any shape
/// survives whole; a reply without them, or with text before its first label, is all
/// answer. In the paper's form a reply without labels is split at its first " is ".
pub fn parse_reply(form: ReplyForm, completion: &str, stopped: bool) -> ParsedReply {
    let mut problems = Vec::new();
    let (body, ended, ran_on) = cut_at_end(completion, form);
    if ran_on {
        problems.push(ReplyProblem::RanOn);
    }
    let body = strip_chatter(body);
    if body.is_empty() {
        problems.push(ReplyProblem::Empty);
        return ParsedReply {
            understanding: None,
            answer: None,
            problems,
        };
    }
    if !ended && !stopped {
        problems.push(ReplyProblem::NoEnd);
    }
    let split = match form {
        ReplyForm::Restated => labelled(body, Preamble::Ignored).or_else(|| restated(body)),
        ReplyForm::Labelled => labelled(body, Preamble::Unsplit),
    };
    let (understanding, answer) = match split {
        Some((u, y)) => (Some(u), y),
        None => {
            problems.push(ReplyProblem::NoUnderstanding);
            (None, Some(body.to_string()))
        }
    };
    if answer.is_none() {
        problems.push(ReplyProblem::NoAnswer);
    }
    ParsedReply {
        understanding,
        answer,
        problems,
    }
}

/// Cuts the completion at its first `END` word or at a separator the model wrote
/// itself. Returns the body, whether `END` was seen, and whether text was dropped.
/// In the labelled form only a separator on a line of its own counts: "### Steps" is
/// a markdown heading inside an answer.
fn cut_at_end(completion: &str, form: ReplyForm) -> (&str, bool, bool) {
    let end = find_word(completion, END);
    let separators: &[&str] = match form {
        ReplyForm::Restated => &["\n\n###", "\n###", "###"],
        ReplyForm::Labelled => &["\n###\n", "\n###\r\n"],
    };
    let separator = separators.iter().filter_map(|s| completion.find(s)).min();
    let (cut, ended) = match (end, separator) {
        (Some(e), Some(s)) if s < e => (s, false),
        (Some(e), _) => (e, true),
        (None, Some(s)) => (s, false),
        (None, None) => return (completion, false, false),
    };
    let rest = &completion[cut..];
    let rest = if ended { &rest[END.len()..] } else { rest };
    let ran_on = !rest
        .trim_matches(|c: char| c.is_whitespace() || c == '.')
        .is_empty();
    (&completion[..cut], ended, ran_on)
}

/// Finds `word` standing on its own (not inside "ENDING" or "BEND").
fn find_word(text: &str, word: &str) -> Option<usize> {
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Drops what chat models put around the reply: a leading slash from the separator,
/// role labels, markdown emphasis and quotes.
fn strip_chatter(body: &str) -> &str {
    let mut text = body.trim();
    for prefix in ["/", "assistant:", "Assistant:", "A:", "Answer -"] {
        if let Some(rest) = text.strip_prefix(prefix) {
            text = rest.trim_start();
        }
    }
    text.trim_matches(|c: char| c.is_whitespace() || c == '*' || c == '"' || c == '`')
}

/// What to make of text before the "Understanding:" label.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Preamble {
    /// Dropped as chatter: the paper's form has no room for it anyway.
    Ignored,
    /// The reply is not split, so nothing the model wrote is hidden.
    Unsplit,
}

/// The explicit form: "Understanding: … Answer: …".
fn labelled(body: &str, preamble: Preamble) -> Option<(String, Option<String>)> {
    // ASCII lower-casing keeps every byte offset, so positions found in `lower` are
    // valid in `body` (full Unicode lower-casing can change a character's length).
    let lower = body.to_ascii_lowercase();
    let u_at = lower.find("understanding:")?;
    let before = body[..u_at].trim_matches(|c: char| c.is_whitespace() || c == '*');
    if preamble == Preamble::Unsplit && !before.is_empty() {
        return None;
    }
    let after_u = u_at + "understanding:".len();
    let a_at = lower[after_u..].find("answer:").map(|i| i + after_u);
    let understanding = clean(&body[after_u..a_at.unwrap_or(body.len())]);
    let answer = a_at.map(|a| clean(&body[a + "answer:".len()..]));
    Some((understanding, answer.filter(|a| !a.is_empty())))
}

/// The paper's form: "the synonym for fast is quick", "a sentence with x is: …".
/// An explicit " is: " wins over the first " is ", so answers may contain "is".
fn restated(body: &str) -> Option<(String, Option<String>)> {
    let line = body.lines().find(|l| !l.trim().is_empty())?.trim();
    let (split, width) = match line.find(" is: ") {
        Some(i) => (i, " is: ".len()),
        None => (line.find(" is ")?, " is ".len()),
    };
    let understanding = clean(&line[..split]);
    if understanding.is_empty() {
        return None;
    }
    let mut answer = clean(&line[split + width..]);
    let continuation: Vec<&str> = body
        .lines()
        .skip_while(|l| l.trim() != line)
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if !continuation.is_empty() {
        answer = clean(&format!("{answer}\n{}", continuation.join("\n")));
    }
    Some((understanding, Some(answer).filter(|a| !a.is_empty())))
}

fn clean(text: &str) -> String {
    text.trim()
        .trim_matches(|c: char| c == '*' || c == '"' || c == '`')
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(reply: &ParsedReply) -> (Option<&str>, Option<&str>) {
        (reply.understanding.as_deref(), reply.answer.as_deref())
    }

    #[test]
    fn the_paper_form_splits_at_is() {
        let reply = parse_reply(
            ReplyForm::Restated,
            " the synonym for provident is prudent END",
            false,
        );
        assert_eq!(
            parts(&reply),
            (Some("the synonym for provident"), Some("prudent"))
        );
        assert!(reply.problems.is_empty());
    }

    #[test]
    fn a_sentence_answer_splits_at_is_colon_even_if_it_contains_is() {
        let reply = parse_reply(
            ReplyForm::Restated,
            " a sentence with fog is: the fog is thick today END",
            false,
        );
        assert_eq!(
            parts(&reply),
            (Some("a sentence with fog"), Some("the fog is thick today"))
        );
    }

    #[test]
    fn a_stopped_reply_without_end_is_not_a_problem() {
        let reply = parse_reply(ReplyForm::Restated, " the homonym for fast is fasst", true);
        assert_eq!(parts(&reply), (Some("the homonym for fast"), Some("fasst")));
        assert!(reply.problems.is_empty());
    }

    #[test]
    fn a_reply_cut_off_without_end_says_so() {
        let reply = parse_reply(ReplyForm::Restated, " the homonym for fast is", false);
        assert!(reply.problems.contains(&ReplyProblem::NoEnd));
    }

    #[test]
    fn text_after_end_is_dropped_and_reported() {
        let reply = parse_reply(
            ReplyForm::Restated,
            " the antonym for hot is cold END\n\n###\n\n/What is like < x > ?",
            false,
        );
        assert_eq!(parts(&reply), (Some("the antonym for hot"), Some("cold")));
        assert_eq!(reply.problems, vec![ReplyProblem::RanOn]);
    }

    #[test]
    fn a_separator_written_by_the_model_ends_the_reply() {
        let reply = parse_reply(
            ReplyForm::Restated,
            " the antonym for hot is cold\n\n###\n\n/next",
            true,
        );
        assert_eq!(reply.answer.as_deref(), Some("cold"));
        assert!(reply.problems.contains(&ReplyProblem::RanOn));
    }

    #[test]
    fn chat_chatter_and_labels_are_understood() {
        let reply = parse_reply(
            ReplyForm::Restated,
            "**Understanding:** you want a synonym of fast\n**Answer:** quick END",
            false,
        );
        assert_eq!(
            parts(&reply),
            (Some("you want a synonym of fast"), Some("quick"))
        );
        let reply = parse_reply(
            ReplyForm::Restated,
            "Assistant: the synonym for fast is quick END",
            false,
        );
        assert_eq!(parts(&reply), (Some("the synonym for fast"), Some("quick")));
    }

    #[test]
    fn a_reply_without_restatement_is_all_answer() {
        let reply = parse_reply(ReplyForm::Restated, "Paris END", false);
        assert_eq!(parts(&reply), (None, Some("Paris")));
        assert_eq!(reply.problems, vec![ReplyProblem::NoUnderstanding]);
    }

    #[test]
    fn an_empty_reply_reports_empty() {
        for text in ["", "   ", " END", "\n\n###"] {
            let reply = parse_reply(ReplyForm::Restated, text, true);
            assert_eq!(parts(&reply), (None, None), "{text:?}");
            assert!(reply.problems.contains(&ReplyProblem::Empty), "{text:?}");
        }
    }

    #[test]
    fn end_inside_a_word_does_not_end_the_reply() {
        let reply = parse_reply(
            ReplyForm::Restated,
            " the definition of BEND is to curve END",
            false,
        );
        assert_eq!(reply.answer.as_deref(), Some("to curve"));
    }

    #[test]
    fn a_character_whose_lowercase_is_shorter_does_not_break_the_labels() {
        // The Kelvin sign (3 bytes) lower-cases to "k" (1 byte).
        let reply = parse_reply(
            ReplyForm::Restated,
            "\u{212A}elvin Understanding: a unit\nAnswer: K END",
            false,
        );
        assert_eq!(reply.understanding.as_deref(), Some("a unit"));
        assert_eq!(reply.answer.as_deref(), Some("K"));
    }

    fn labelled_parts(text: &str) -> (Option<String>, Option<String>) {
        let reply = parse_reply(ReplyForm::Labelled, text, true);
        (reply.understanding, reply.answer)
    }

    #[test]
    fn a_labelled_answer_with_is_in_it_is_never_cut() {
        let (u, y) = labelled_parts(
            " Understanding: a two-sentence summary of why the sky is blue\nAnswer: The sky is blue because air scatters blue light. It is the same everywhere.\nEND",
        );
        assert_eq!(
            u.as_deref(),
            Some("a two-sentence summary of why the sky is blue")
        );
        assert_eq!(
            y.as_deref(),
            Some("The sky is blue because air scatters blue light. It is the same everywhere.")
        );
    }

    #[test]
    fn a_labelled_list_and_paragraphs_keep_their_line_breaks() {
        let (_, y) = labelled_parts(
            "Understanding: a packing list\nAnswer:\n- water\n- a jacket\n\nAnd check the weather.\nEND",
        );
        assert_eq!(
            y.as_deref(),
            Some("- water\n- a jacket\n\nAnd check the weather.")
        );
    }

    #[test]
    fn a_reply_without_labels_is_shown_whole_in_the_labelled_form() {
        let reply = parse_reply(
            ReplyForm::Labelled,
            "The sky is blue because of scattering.",
            true,
        );
        assert_eq!(reply.understanding, None);
        assert_eq!(
            reply.answer.as_deref(),
            Some("The sky is blue because of scattering.")
        );
        assert_eq!(reply.problems, vec![ReplyProblem::NoUnderstanding]);
    }

    #[test]
    fn text_before_the_first_label_keeps_the_reply_whole() {
        let text = "Sure! Understanding: a unit\nAnswer: K";
        assert_eq!(labelled_parts(text), (None, Some(text.to_string())));
    }

    #[test]
    fn a_markdown_heading_in_a_labelled_answer_is_kept() {
        let (_, y) = labelled_parts(
            "Understanding: steps\nAnswer:\n### Steps\n1. open\n\n### Notes\nnone\nEND",
        );
        assert_eq!(y.as_deref(), Some("### Steps\n1. open\n\n### Notes\nnone"));
        let reply = parse_reply(
            ReplyForm::Labelled,
            "Understanding: a\nAnswer: b\n\n###\n\n/next question",
            true,
        );
        assert_eq!(reply.answer.as_deref(), Some("b"));
        assert!(reply.problems.contains(&ReplyProblem::RanOn));
    }

    #[test]
    fn bold_labels_are_read_in_the_labelled_form() {
        assert_eq!(
            labelled_parts("**Understanding:** distances in km\n**Answer:** 392 km\nEND"),
            (Some("distances in km".into()), Some("392 km".into()))
        );
    }

    /// The letters and digits of a text, in order: what "no text dropped" compares.
    fn alphanumerics(text: &str) -> String {
        text.chars().filter(|c| c.is_alphanumeric()).collect()
    }

    fn free_of_markers(text: &str) -> bool {
        let lower = text.to_lowercase();
        !lower.contains("understanding")
            && !lower.contains("answer")
            && !text.contains("END")
            && !text.contains("###")
    }

    proptest::proptest! {
        #[test]
        fn a_labelled_reply_keeps_every_word_of_both_parts(
            understanding in "\\PC{0,80}",
            answer in "\\PC{0,200}",
        ) {
            proptest::prop_assume!(free_of_markers(&understanding) && free_of_markers(&answer));
            let reply = parse_reply(
                ReplyForm::Labelled,
                &format!(" Understanding: {understanding}\nAnswer: {answer}\nEND"),
                true,
            );
            proptest::prop_assert_eq!(
                alphanumerics(reply.understanding.as_deref().unwrap_or_default()),
                alphanumerics(&understanding)
            );
            proptest::prop_assert_eq!(
                alphanumerics(reply.answer.as_deref().unwrap_or_default()),
                alphanumerics(&answer)
            );
        }

        #[test]
        fn an_unlabelled_reply_is_never_cut(text in "\\PC{0,200}") {
            proptest::prop_assume!(free_of_markers(&text));
            let trimmed = text.trim_start();
            proptest::prop_assume!(!["/", "assistant:", "Assistant:", "A:"].iter().any(|p| trimmed.starts_with(p)));
            let reply = parse_reply(ReplyForm::Labelled, &text, true);
            let shown = format!(
                "{}{}",
                reply.understanding.unwrap_or_default(),
                reply.answer.unwrap_or_default()
            );
            proptest::prop_assert_eq!(alphanumerics(&shown), alphanumerics(&text));
        }

        #[test]
        fn parsing_never_panics_in_the_labelled_form(text in "\\PC{0,200}", stopped: bool) {
            let _ = parse_reply(ReplyForm::Labelled, &text, stopped);
        }

        #[test]
        fn parsing_never_panics_on_arbitrary_text(text in "\\PC{0,200}", stopped: bool) {
            let _ = parse_reply(ReplyForm::Restated, &text, stopped);
        }

        #[test]
        fn parsing_never_panics_on_reply_shaped_noise(
            text in "[ a-zA-Z:*/#\\n]{0,20}( is:? )?[ a-zA-Z:*/#\\n]{0,20}(END)?[ a-z#/\\n]{0,10}",
            stopped: bool,
        ) {
            let reply = parse_reply(ReplyForm::Restated, &text, stopped);
            proptest::prop_assert!(reply.understanding.is_some() || reply.answer.is_some() || reply.problems.contains(&ReplyProblem::Empty));
        }
    }
}
