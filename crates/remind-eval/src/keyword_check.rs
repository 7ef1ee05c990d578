//! The paper's accuracy check on the understanding, Acc(u): does the reply name the
//! relation that was asked for?
//!
//! MemPrompt scores a completion by a keyword per task type, tested as a case-sensitive
//! substring of the raw completion; `sent` also needs a `[`, because the prompt's
//! example sentences bracket the word. The faithful check is kept for comparison with
//! the paper's numbers; the understanding-only check is what the harness reports, as
//! gold sentences carry no brackets and would fail the faithful one.

use crate::task_stream::TaskType;

/// The word the paper's checker looks for in a completion of each task type.
pub fn scorer_keyword(task_type: TaskType) -> &'static str {
    match task_type {
        TaskType::Synonym => "synonym",
        TaskType::Antonym => "antonym",
        TaskType::Homonym => "homonym",
        TaskType::Definition => "definition",
        TaskType::Sentence => "sentence",
        TaskType::Uncycle => "uncycled version",
        TaskType::Anagram1 => "anagram 1",
        TaskType::Anagram2 => "anagram 2",
        TaskType::Reverse => "after reversing",
        TaskType::RemoveSymbols => "word after removing symbols",
    }
}

/// The paper's check, exactly: the keyword as a case-sensitive substring of the raw
/// completion, and for `sent` a `[` as well.
pub fn paper_keyword_check(task_type: TaskType, completion: &str) -> bool {
    completion.contains(scorer_keyword(task_type))
        && (task_type != TaskType::Sentence || completion.contains('['))
}

/// Acc(u) on the parsed understanding alone: it names the asked-for relation (case
/// does not matter) and no other one, so "the synonym or antonym of x" does not pass.
pub fn understanding_names_task(task_type: TaskType, understanding: &str) -> bool {
    let lower = understanding.to_lowercase();
    let names = |t: TaskType| lower.contains(scorer_keyword(t));
    names(task_type)
        && TaskType::ALL
            .into_iter()
            .filter(|&other| other != task_type)
            .all(|other| !names(other))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paper_check_is_a_case_sensitive_keyword_match() {
        assert!(paper_keyword_check(
            TaskType::Synonym,
            " the synonym for fast is quick END"
        ));
        assert!(!paper_keyword_check(
            TaskType::Synonym,
            " the Synonym for fast is quick END"
        ));
        assert!(!paper_keyword_check(
            TaskType::Antonym,
            " the synonym for fast is quick END"
        ));
    }

    #[test]
    fn the_paper_check_wants_a_bracket_in_sentences_so_gold_sentences_fail_it() {
        assert!(paper_keyword_check(
            TaskType::Sentence,
            " a sentence with fog is: a rising sun burns the [ fog ] off a city END"
        ));
        assert!(!paper_keyword_check(
            TaskType::Sentence,
            "a sentence with ship is: the ship sails"
        ));
    }

    #[test]
    fn the_understanding_check_accepts_the_gold_restatement_of_every_type() {
        for t in TaskType::ALL {
            assert!(understanding_names_task(t, &t.understanding_of("w")), "{t}");
        }
    }

    #[test]
    fn the_understanding_check_refuses_another_relation_or_a_hedge() {
        assert!(!understanding_names_task(
            TaskType::Synonym,
            "the antonym for fast"
        ));
        assert!(!understanding_names_task(
            TaskType::Synonym,
            "the synonym or antonym for fast"
        ));
        assert!(understanding_names_task(
            TaskType::Homonym,
            "The Homonym for wring"
        ));
    }
}
