//! The paper's benchmark streams: task lines and question templates, rendered into the
//! question a user asks, the clarification they would give, and the gold reply.
//!
//! Task files and templates come from outside (the MemPrompt repository, or a user's
//! own file), so parsing never panics: every failure is a [`TaskStreamError`] that
//! names the line and what to fix.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use thiserror::Error;

/// The ten task types of the paper: five lexical relations, five word scramblings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TaskType {
    Synonym,
    Antonym,
    Homonym,
    Definition,
    Sentence,
    Uncycle,
    Anagram1,
    Anagram2,
    Reverse,
    RemoveSymbols,
}

impl TaskType {
    pub const LEXICAL: [TaskType; 5] = [
        TaskType::Synonym,
        TaskType::Antonym,
        TaskType::Homonym,
        TaskType::Definition,
        TaskType::Sentence,
    ];

    pub const ALL: [TaskType; 10] = [
        TaskType::Synonym,
        TaskType::Antonym,
        TaskType::Homonym,
        TaskType::Definition,
        TaskType::Sentence,
        TaskType::Uncycle,
        TaskType::Anagram1,
        TaskType::Anagram2,
        TaskType::Reverse,
        TaskType::RemoveSymbols,
    ];

    /// The code the task files use (`"syn"`, `"anag1"`, …).
    pub fn code(self) -> &'static str {
        match self {
            TaskType::Synonym => "syn",
            TaskType::Antonym => "ant",
            TaskType::Homonym => "hom",
            TaskType::Definition => "defn",
            TaskType::Sentence => "sent",
            TaskType::Uncycle => "cyc",
            TaskType::Anagram1 => "anag1",
            TaskType::Anagram2 => "anag2",
            TaskType::Reverse => "rev",
            TaskType::RemoveSymbols => "randsym",
        }
    }

    pub fn from_code(code: &str) -> Option<TaskType> {
        TaskType::ALL.into_iter().find(|t| t.code() == code)
    }

    /// What the user says they want in a clarification ("… I want a synonym.",
    /// "… I mean anagram 1."), as the templates word it.
    pub fn wanted(self) -> &'static str {
        match self {
            TaskType::Synonym => "a synonym",
            TaskType::Antonym => "an antonym",
            TaskType::Homonym => "a homonym",
            TaskType::Definition => "a definition",
            TaskType::Sentence => "a sentence",
            TaskType::Uncycle => "cycled",
            TaskType::Anagram1 => "anagram 1",
            TaskType::Anagram2 => "anagram 2",
            TaskType::Reverse => "reverse",
            TaskType::RemoveSymbols => "remove symbols",
        }
    }

    /// The task type a clarification asks for: the relation after its last
    /// "I want" / "I mean", as in every template of the paper.
    pub fn named_in_clarification(text: &str) -> Option<TaskType> {
        let lower = text.to_lowercase();
        let at = ["i want ", "i mean "]
            .iter()
            .filter_map(|marker| lower.rfind(marker).map(|i| i + marker.len()))
            .max()?;
        let wanted = lower[at..].trim_end_matches(|c: char| c == '.' || c.is_whitespace());
        TaskType::ALL.into_iter().find(|t| t.wanted() == wanted)
    }

    /// How the paper's replies restate the request, e.g. "the synonym for fast"; the
    /// prefix of every answer template of this type.
    pub fn understanding_of(self, word: &str) -> String {
        match self {
            TaskType::Synonym => format!("the synonym for {word}"),
            TaskType::Antonym => format!("the antonym for {word}"),
            TaskType::Homonym => format!("the homonym for {word}"),
            TaskType::Definition => format!("the definition of {word}"),
            TaskType::Sentence => format!("a sentence with {word}"),
            TaskType::Uncycle => format!("the uncycled version of {word}"),
            TaskType::Anagram1 => format!("the anagram 1 for {word}"),
            TaskType::Anagram2 => format!("the anagram 2 for {word}"),
            TaskType::Reverse => format!("the word after reversing {word}"),
            TaskType::RemoveSymbols => format!("the word after removing symbols from {word}"),
        }
    }
}

impl std::fmt::Display for TaskType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum TaskStreamError {
    #[error("line {line}: not a JSON object ({reason}); each line must be one JSON object")]
    NotJson { line: usize, reason: String },
    #[error("line {line}: the field `{field}` is missing or not a string")]
    MissingField { line: usize, field: &'static str },
    #[error(
        "line {line}: unknown task type `{found}`; expected one of syn, ant, hom, defn, sent, cyc, anag1, anag2, rev, randsym"
    )]
    UnknownType { line: usize, found: String },
    #[error(
        "line {line}: no template `{template_id}` in class `{class}`; check the template file and the stream's language"
    )]
    UnknownTemplate {
        line: usize,
        class: String,
        template_id: String,
    },
    #[error(
        "line {line}: the task is `{task}` but its template `{template_id}` is for `{template}`"
    )]
    TypeMismatch {
        line: usize,
        template_id: String,
        task: TaskType,
        template: TaskType,
    },
    #[error(
        "line {line}: template `{template_id}` needs `{placeholder}` but the task's meta has no such string"
    )]
    MissingPlaceholder {
        line: usize,
        template_id: String,
        placeholder: String,
    },
    #[error(
        "template line {line}: the answer `{answer}` has no `is` before its answer placeholder, so the understanding cannot be told apart"
    )]
    NoUnderstanding { line: usize, answer: String },
}

/// One question template, as `derived/templates.jsonl` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuestionTemplate {
    /// The phrasing family: `linguistic`, `hin`, `pun`, `synthetic`, `synthetic_gpt3`.
    pub class: String,
    pub task_type: TaskType,
    pub template_id: String,
    pub question: String,
    pub clarification: String,
    pub answer: String,
    /// Where the understanding ends in `answer` (before " is" / " is:").
    understanding_len: usize,
}

#[derive(Deserialize)]
struct TemplateLine {
    template_class: String,
    #[serde(rename = "type")]
    task_type: String,
    template_id: String,
    question: String,
    clarification: String,
    answer: String,
}

/// The placeholders that hold the gold answer; everything before them is restatement.
const ANSWER_PLACEHOLDERS: [&str; 3] = ["{word2}", "{definition}", "{sentence}"];

/// All templates, looked up by class and id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TemplateSet {
    templates: Vec<QuestionTemplate>,
}

impl TemplateSet {
    /// Parses one template per line; blank lines are skipped. Line numbers start at 1.
    pub fn parse(text: &str) -> Result<Self, TaskStreamError> {
        let mut templates = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            if raw.trim().is_empty() {
                continue;
            }
            let parsed: TemplateLine =
                serde_json::from_str(raw).map_err(|e| TaskStreamError::NotJson {
                    line,
                    reason: e.to_string(),
                })?;
            let task_type = TaskType::from_code(&parsed.task_type).ok_or_else(|| {
                TaskStreamError::UnknownType {
                    line,
                    found: parsed.task_type.clone(),
                }
            })?;
            let understanding_len = understanding_end(&parsed.answer).ok_or_else(|| {
                TaskStreamError::NoUnderstanding {
                    line,
                    answer: parsed.answer.clone(),
                }
            })?;
            templates.push(QuestionTemplate {
                class: parsed.template_class,
                task_type,
                template_id: parsed.template_id,
                question: parsed.question,
                clarification: parsed.clarification,
                answer: parsed.answer,
                understanding_len,
            });
        }
        Ok(TemplateSet { templates })
    }

    pub fn templates(&self) -> &[QuestionTemplate] {
        &self.templates
    }

    pub fn of_class<'a>(&'a self, class: &'a str) -> impl Iterator<Item = &'a QuestionTemplate> {
        self.templates.iter().filter(move |t| t.class == class)
    }

    pub fn get(&self, class: &str, template_id: &str) -> Option<&QuestionTemplate> {
        self.templates
            .iter()
            .find(|t| t.class == class && t.template_id == template_id)
    }

    /// Renders a task with the template of `class` it names.
    pub fn render(&self, class: &str, task: &TaskItem) -> Result<RenderedTask, TaskStreamError> {
        let template =
            self.get(class, &task.template_id)
                .ok_or_else(|| TaskStreamError::UnknownTemplate {
                    line: task.line,
                    class: class.to_string(),
                    template_id: task.template_id.clone(),
                })?;
        if template.task_type != task.task_type {
            return Err(TaskStreamError::TypeMismatch {
                line: task.line,
                template_id: task.template_id.clone(),
                task: task.task_type,
                template: template.task_type,
            });
        }
        let fill = |text: &str| fill_placeholders(text, &task.meta, task.line, &task.template_id);
        let answer = fill(&template.answer)?;
        let understanding = fill(&template.answer[..template.understanding_len])?;
        let word = ["word1", "word"]
            .iter()
            .find_map(|k| task.meta.get(*k))
            .cloned()
            .unwrap_or_default();
        Ok(RenderedTask {
            line: task.line,
            task_type: task.task_type,
            template_id: task.template_id.clone(),
            word,
            question: fill(&template.question)?,
            clarification: template.clarification.clone(),
            gold_reply: answer,
            gold_understanding: understanding,
        })
    }
}

/// The end of the restatement in an answer template: just before the " is" that
/// precedes the first answer placeholder.
fn understanding_end(answer: &str) -> Option<usize> {
    let placeholder_at = ANSWER_PLACEHOLDERS
        .iter()
        .filter_map(|p| answer.find(p))
        .min()?;
    answer[..placeholder_at].rfind(" is")
}

fn fill_placeholders(
    text: &str,
    meta: &BTreeMap<String, String>,
    line: usize,
    template_id: &str,
) -> Result<String, TaskStreamError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let Some(len) = rest[open..].find('}') else {
            break;
        };
        let name = &rest[open + 1..open + len];
        let value = meta
            .get(name)
            .ok_or_else(|| TaskStreamError::MissingPlaceholder {
                line,
                template_id: template_id.to_string(),
                placeholder: name.to_string(),
            })?;
        out.push_str(&rest[..open]);
        out.push_str(value);
        rest = &rest[open + len + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// One line of a task file: `{"meta": {...}, "type": T, "template_id": ID}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskItem {
    /// 1-based line in the file, so errors and reports can point at it.
    pub line: usize,
    pub task_type: TaskType,
    pub template_id: String,
    /// The string fields of `meta` (`word1`/`word2`, `word`/`definition`, …).
    pub meta: BTreeMap<String, String>,
}

/// Parses one task line; `line` is its 1-based number in the file.
pub fn parse_task_line(line: usize, text: &str) -> Result<TaskItem, TaskStreamError> {
    let value: Value = serde_json::from_str(text).map_err(|e| TaskStreamError::NotJson {
        line,
        reason: e.to_string(),
    })?;
    let Value::Object(object) = value else {
        return Err(TaskStreamError::NotJson {
            line,
            reason: "the line is JSON but not an object".into(),
        });
    };
    let string = |field: &'static str| {
        object
            .get(field)
            .and_then(Value::as_str)
            .ok_or(TaskStreamError::MissingField { line, field })
    };
    let code = string("type")?;
    let task_type = TaskType::from_code(code).ok_or_else(|| TaskStreamError::UnknownType {
        line,
        found: code.to_string(),
    })?;
    let template_id = string("template_id")?.to_string();
    let meta = object
        .get("meta")
        .and_then(Value::as_object)
        .ok_or(TaskStreamError::MissingField {
            line,
            field: "meta",
        })?
        .iter()
        .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
        .collect();
    Ok(TaskItem {
        line,
        task_type,
        template_id,
        meta,
    })
}

/// Parses a whole task file, skipping blank lines; stops at the first bad line.
pub fn parse_task_stream(text: &str) -> Result<Vec<TaskItem>, TaskStreamError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| parse_task_line(i + 1, l))
        .collect()
}

/// A task as it is played: what is asked, what the user would clarify, what is right.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderedTask {
    pub line: usize,
    pub task_type: TaskType,
    pub template_id: String,
    /// The content word the question is about (`word1` or `word`).
    pub word: String,
    /// The question `x`, e.g. "What is like < fast > ?".
    pub question: String,
    /// The simulated user's feedback `fb`, e.g. "clarification: when I ask for like, I
    /// want a synonym." (the template's own wording).
    pub clarification: String,
    /// The gold reply "u is y" without `END`, e.g. "the synonym for fast is quick".
    pub gold_reply: String,
    /// The gold understanding `u`, e.g. "the synonym for fast".
    pub gold_understanding: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATES: &str = r#"{"template_class": "linguistic", "type": "syn", "template_id": "syn0", "question": "What is like < {word1} > ?", "clarification": "clarification: when I ask for like, I want a synonym.", "answer": "the synonym for {word1} is {word2}"}
{"template_class": "linguistic", "type": "sent", "template_id": "sent1", "question": "< {word} > can be used how ?", "clarification": "clarification: when I ask for can be used how , I want a sentence.", "answer": "a sentence with {word} is: {sentence}"}"#;

    fn templates() -> TemplateSet {
        TemplateSet::parse(TEMPLATES).unwrap()
    }

    #[test]
    fn a_task_line_renders_its_question_clarification_and_gold() {
        let task = parse_task_line(
            3,
            r#"{"meta": {"word1": "fast", "word2": "quick"}, "type": "syn", "template_id": "syn0"}"#,
        )
        .unwrap();
        let rendered = templates().render("linguistic", &task).unwrap();
        assert_eq!(rendered.question, "What is like < fast > ?");
        assert_eq!(rendered.gold_reply, "the synonym for fast is quick");
        assert_eq!(rendered.gold_understanding, "the synonym for fast");
        assert_eq!(rendered.word, "fast");
        assert_eq!(
            TaskType::named_in_clarification(&rendered.clarification),
            Some(TaskType::Synonym)
        );
    }

    #[test]
    fn a_sentence_answer_keeps_its_colon_out_of_the_understanding() {
        let task = parse_task_line(
            1,
            r#"{"meta": {"word": "ship", "sentence": "the ship sails"}, "type": "sent", "template_id": "sent1"}"#,
        )
        .unwrap();
        let rendered = templates().render("linguistic", &task).unwrap();
        assert_eq!(rendered.gold_understanding, "a sentence with ship");
        assert_eq!(
            rendered.gold_reply,
            "a sentence with ship is: the ship sails"
        );
    }

    #[test]
    fn bad_lines_are_typed_errors_that_name_the_line() {
        assert!(matches!(
            parse_task_line(7, "{not json"),
            Err(TaskStreamError::NotJson { line: 7, .. })
        ));
        assert!(matches!(
            parse_task_line(8, "[1, 2]"),
            Err(TaskStreamError::NotJson { line: 8, .. })
        ));
        assert_eq!(
            parse_task_line(9, r#"{"meta": {}, "type": "syn"}"#),
            Err(TaskStreamError::MissingField {
                line: 9,
                field: "template_id"
            })
        );
        assert!(matches!(
            parse_task_line(10, r#"{"meta": {}, "type": "pun", "template_id": "x"}"#),
            Err(TaskStreamError::UnknownType { line: 10, .. })
        ));
        let err = parse_task_stream(
            "\n{\"meta\": {}, \"type\": \"syn\", \"template_id\": \"syn0\"}\nnope",
        )
        .unwrap_err();
        assert!(err.to_string().starts_with("line 3:"), "{err}");
    }

    #[test]
    fn a_task_that_does_not_fit_its_template_is_refused() {
        let task = parse_task_line(
            4,
            r#"{"meta": {"word1": "fast"}, "type": "syn", "template_id": "syn0"}"#,
        )
        .unwrap();
        assert_eq!(
            templates().render("linguistic", &task),
            Err(TaskStreamError::MissingPlaceholder {
                line: 4,
                template_id: "syn0".into(),
                placeholder: "word2".into()
            })
        );
        let task = parse_task_line(
            5,
            r#"{"meta": {"word1": "a", "word2": "b"}, "type": "ant", "template_id": "syn0"}"#,
        )
        .unwrap();
        assert!(matches!(
            templates().render("linguistic", &task),
            Err(TaskStreamError::TypeMismatch { line: 5, .. })
        ));
        assert!(matches!(
            templates().render("hin", &task),
            Err(TaskStreamError::UnknownTemplate { line: 5, .. })
        ));
    }

    #[test]
    fn clarifications_name_their_task_type() {
        for t in TaskType::ALL {
            let text = format!("clarification: when I ask for x, I want {}.", t.wanted());
            assert_eq!(TaskType::named_in_clarification(&text), Some(t));
        }
        assert_eq!(
            TaskType::named_in_clarification("when I ask for SYNYI, I want a synonym."),
            Some(TaskType::Synonym)
        );
        assert_eq!(TaskType::named_in_clarification("be brief"), None);
    }

    proptest::proptest! {
        #[test]
        fn parsing_a_task_line_never_panics(text in "\\PC{0,120}") {
            let _ = parse_task_line(1, &text);
        }

        #[test]
        fn parsing_templates_never_panics(text in "[{}\":a-z ,\\n]{0,120}") {
            let _ = TemplateSet::parse(&text);
        }
    }
}
