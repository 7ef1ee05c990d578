//! What an import file would change, key by key, before the user chooses merge or
//! replace.
//!
//! The summary counts every key; the table shows the first [`PREVIEW_ROWS`] of them,
//! since a row per key of a file of thousands would take the page seconds to draw.

use std::sync::Arc;

use leptos::prelude::*;

use remind_app::transfer::PendingImport;
use remind_core::import_plan::{ImportPreview, KeyPreview, KeyStatus};

/// Rows of the table drawn; the summary above it counts all keys.
const PREVIEW_ROWS: usize = 100;

fn status_label(status: KeyStatus) -> &'static str {
    match status {
        KeyStatus::New => "new",
        KeyStatus::Identical => "identical",
        KeyStatus::Newer => "newer in the file",
        KeyStatus::Older => "older in the file",
        KeyStatus::Conflict => "conflict",
    }
}

fn summary(preview: &ImportPreview) -> String {
    let counts: Vec<String> = [
        KeyStatus::New,
        KeyStatus::Identical,
        KeyStatus::Newer,
        KeyStatus::Older,
        KeyStatus::Conflict,
    ]
    .into_iter()
    .map(|status| format!("{} {}", preview.count(status), status_label(status)))
    .collect();
    format!(
        "{}; {} records here are not in the file (merge keeps them, replace erases them).",
        counts.join(", "),
        preview.only_here.len()
    )
}

fn existing_text(line: &KeyPreview) -> String {
    line.existing
        .as_ref()
        .map_or_else(|| "—".to_string(), |r| r.kind.text())
}

#[component]
pub fn ImportPreviewView(pending: Arc<PendingImport>) -> impl IntoView {
    // Shared, not copied: a preview of thousands of keys is drawn from it in part.
    let preview = &pending.preview;
    let summary = summary(preview);
    // A reused id is why a key is a conflict: say so, since merging keeps the lesson
    // here and replacing writes the file's record over it.
    let reused = preview
        .keys
        .iter()
        .flat_map(|line| line.reused_ids.iter())
        .map(|reused| view! { <li>{reused.to_string()}</li> })
        .collect_view();
    let more = match preview.keys.len().saturating_sub(PREVIEW_ROWS) {
        0 => String::new(),
        n => format!("and {n} more questions, counted in the summary above."),
    };
    let rows = preview
        .keys
        .iter()
        .take(PREVIEW_ROWS)
        .map(|line| {
            let existing = existing_text(line);
            view! {
                <tr data-status=status_label(line.status)>
                    <td>{line.imported.question.clone()}</td>
                    <td>{status_label(line.status)}</td>
                    <td>{line.imported.kind.text()}</td>
                    <td>{existing}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="import-preview" id="import-preview">
            <p id="import-summary">{summary}</p>
            <table>
                <thead>
                    <tr><th>"Question"</th><th>"Status"</th><th>"In the file"</th><th>"Here"</th></tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
            <p class="status" id="import-more">{more}</p>
            <ul class="import-reused" id="import-reused">{reused}</ul>
        </div>
    }
}
