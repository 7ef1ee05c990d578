//! What an import file would change, key by key, before the user chooses merge or
//! replace.
//!
//! The summary counts every key; the table shows the first [`PREVIEW_ROWS`] of them,
//! since a row per key of a file of thousands would take the page seconds to draw.

use std::sync::Arc;

use leptos::prelude::*;

use crate::ui::page_context::use_page;
use remind_app::ports::EmbedderStatus;
use remind_app::transfer::{FileEmbeddings, PendingImport};
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

/// What becomes of the file's embeddings here, as far as the model this page runs is
/// known: those of its model are used as they are, any others computed again.
fn embeddings_note(embeddings: &FileEmbeddings, status: &EmbedderStatus) -> String {
    let carried = embeddings.carried();
    if carried == 0 {
        return "The file carries no embeddings: they are computed here after the import, \
                and its lessons are matched by wording until then."
            .to_string();
    }
    let models = || {
        let names: Vec<&str> = embeddings.by_model.keys().map(String::as_str).collect();
        names.join(", ")
    };
    let how_many = |n: usize| {
        if n == embeddings.records {
            "Every record of the file carries".to_string()
        } else {
            format!("{n} of the file's {} records carry", embeddings.records)
        }
    };
    let EmbedderStatus::Ready { model_id, .. } = status else {
        return format!(
            "{} an embedding ({}); they are used as they are if the model this page loads is the same.",
            how_many(carried),
            models()
        );
    };
    let usable = embeddings.of_model(model_id);
    let others = carried - usable;
    match (usable, others) {
        (_, 0) => format!(
            "{} an embedding from this page's model: they are used as they are.",
            how_many(usable)
        ),
        (0, _) => format!(
            "The file's embeddings ({carried}) are from another model ({}): this page computes its own after the import.",
            models()
        ),
        _ => format!(
            "{usable} of the file's {} records carry an embedding from this page's model, used as they are; {others} from another model are computed again here.",
            embeddings.records
        ),
    }
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
    let page = use_page();
    let embeddings = FileEmbeddings::of(&pending.document);
    let embeddings_note = move || {
        page.embedder_status
            .with(|status| embeddings_note(&embeddings, status))
    };
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
            <p class="status" id="import-embeddings">{embeddings_note}</p>
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
