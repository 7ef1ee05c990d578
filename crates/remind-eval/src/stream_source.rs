//! Reads a task stream and its templates from disk and renders the tasks to play.
//!
//! The files come from outside (the MemPrompt repository or a user's own), so every
//! failure names the file and the line through the domain's `TaskStreamError`.

use std::path::Path;

use crate::EvalError;
use crate::config::{EvalConfig, PromptChoice};
use crate::task_stream::{RenderedTask, TemplateSet, parse_task_stream};
use remind_core::prompt::PromptTemplate;

pub fn read_text(path: &Path) -> Result<String, EvalError> {
    std::fs::read_to_string(path).map_err(|source| EvalError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The first `limit` tasks of the configured stream, rendered with its templates.
pub fn load_tasks(config: &EvalConfig) -> Result<Vec<RenderedTask>, EvalError> {
    let templates =
        TemplateSet::parse(&read_text(&config.templates)?).map_err(|source| EvalError::Stream {
            path: config.templates.clone(),
            source,
        })?;
    let stream_error = |source| EvalError::Stream {
        path: config.stream.clone(),
        source,
    };
    let items = parse_task_stream(&read_text(&config.stream)?).map_err(stream_error)?;
    let limit = config.limit.unwrap_or(items.len());
    items
        .iter()
        .take(limit)
        .map(|item| {
            templates
                .render(&config.template_class, item)
                .map_err(stream_error)
        })
        .collect()
}

pub fn base_prompt(choice: PromptChoice) -> PromptTemplate {
    match choice {
        PromptChoice::Lexical => PromptTemplate::paper_lexical(),
        PromptChoice::Scrambling => PromptTemplate::paper_scrambling(),
    }
}
