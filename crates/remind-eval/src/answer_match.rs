//! Acc(y): is the model's answer the gold word? Exact, or equal after a simple lemma.
//!
//! The paper scores answers for the word relations (syn, ant, hom) only; definitions
//! and sentences have no single right wording. Models write "The boats." for "boat",
//! so both sides are lower-cased, stripped of articles and punctuation, and each word
//! loses a plural, -ed or -ing ending before they are compared.

use crate::task_stream::{RenderedTask, TaskType};

/// Whether answers of this type are scored against a gold word.
pub fn has_gold_word(task_type: TaskType) -> bool {
    matches!(
        task_type,
        TaskType::Synonym | TaskType::Antonym | TaskType::Homonym
    )
}

/// The gold answer `y` of a task: its gold reply after the understanding and "is".
pub fn gold_answer(task: &RenderedTask) -> String {
    let rest = task
        .gold_reply
        .strip_prefix(task.gold_understanding.as_str())
        .unwrap_or(&task.gold_reply)
        .trim_start();
    let rest = rest.strip_prefix("is").unwrap_or(rest);
    rest.trim_start_matches(':').trim().to_string()
}

/// Acc(y) of one reply: `None` for task types without a gold word.
pub fn answer_is_correct(task: &RenderedTask, answer: Option<&str>) -> Option<bool> {
    has_gold_word(task.task_type)
        .then(|| answer.is_some_and(|a| answers_match(a, &gold_answer(task))))
}

/// Exact match after normalising, or match after the lemma of every word.
pub fn answers_match(answer: &str, gold: &str) -> bool {
    let (a, g) = (normalise(answer), normalise(gold));
    if a.is_empty() || g.is_empty() {
        return false;
    }
    a == g || lemmas(&a) == lemmas(&g)
}

/// Lower-case words without punctuation and without leading articles.
pub fn normalise(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let words: Vec<String> = lower
        .split(|c: char| c.is_whitespace() || (c.is_ascii_punctuation() && c != '\'' && c != '-'))
        .map(|w| w.trim_matches(|c: char| c == '\'' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    let first_content = words
        .iter()
        .position(|w| !matches!(w.as_str(), "a" | "an" | "the"))
        .unwrap_or(words.len());
    words[first_content..].to_vec()
}

fn lemmas(words: &[String]) -> Vec<String> {
    words.iter().map(|w| lemma(w)).collect()
}

/// A deliberately simple English lemma: drop a plural, then -ing or -ed, undouble a
/// final consonant and drop a final e, so "walked", "walking", "walks" and "walk" meet.
pub fn lemma(word: &str) -> String {
    let mut w = word.to_string();
    let long_enough = |w: &str, suffix: &str| w.chars().count() >= suffix.chars().count() + 3;
    if w.ends_with("ies") && long_enough(&w, "ies") {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if w.ends_with('s') && !w.ends_with("ss") && long_enough(&w, "s") {
        w.pop();
    }
    for suffix in ["ing", "ed"] {
        if w.ends_with(suffix) && long_enough(&w, suffix) {
            w.truncate(w.len() - suffix.len());
            break;
        }
    }
    let chars: Vec<char> = w.chars().collect();
    if let [.., a, b] = chars.as_slice()
        && a == b
        && !"aeiou".contains(*b)
        && chars.len() > 3
    {
        w.pop();
    }
    if w.ends_with('e') && w.chars().count() > 3 {
        w.pop();
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(task_type: TaskType, reply: &str, understanding: &str) -> RenderedTask {
        RenderedTask {
            line: 1,
            task_type,
            template_id: "t".into(),
            word: "w".into(),
            question: "q".into(),
            clarification: "c".into(),
            gold_reply: reply.into(),
            gold_understanding: understanding.into(),
        }
    }

    #[test]
    fn the_gold_answer_follows_the_understanding() {
        let t = task(
            TaskType::Synonym,
            "the synonym for fast is quick",
            "the synonym for fast",
        );
        assert_eq!(gold_answer(&t), "quick");
        let t = task(
            TaskType::Sentence,
            "a sentence with ship is: the ship sails",
            "a sentence with ship",
        );
        assert_eq!(gold_answer(&t), "the ship sails");
    }

    #[test]
    fn case_articles_punctuation_and_endings_do_not_matter() {
        assert!(answers_match("The boats.", "boat"));
        assert!(answers_match("Quick", "quick"));
        assert!(answers_match("walking", "walked"));
        assert!(answers_match("running", "run"));
        assert!(answers_match("an apple", "apples"));
        assert!(answers_match("Cities", "city"));
        assert!(answers_match("made-up", "made-up"));
    }

    #[test]
    fn other_words_and_empty_answers_do_not_match() {
        assert!(!answers_match("slow", "quick"));
        assert!(!answers_match("", "quick"));
        assert!(!answers_match("the", "the"));
        assert!(!answers_match("quick brown", "quick"));
        assert!(!answers_match("class", "cla"));
    }

    #[test]
    fn only_word_relations_are_scored() {
        let t = task(
            TaskType::Definition,
            "the definition of a is b",
            "the definition of a",
        );
        assert_eq!(answer_is_correct(&t, Some("b")), None);
        let t = task(
            TaskType::Antonym,
            "the antonym for hot is cold",
            "the antonym for hot",
        );
        assert_eq!(answer_is_correct(&t, Some("Cold.")), Some(true));
        assert_eq!(answer_is_correct(&t, None), Some(false));
    }

    proptest::proptest! {
        #[test]
        fn matching_never_panics(a in "\\PC{0,40}", b in "\\PC{0,40}") {
            let _ = answers_match(&a, &b);
        }
    }
}
