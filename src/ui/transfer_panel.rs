//! Export and import of the memory as a JSON file: a download, and a file picked or
//! dropped, previewed, then merged or replacing what is here.
//!
//! A file may hold thousands of lessons: it is checked a slice at a time, yielding to
//! the browser between slices, and the panel says how far it has come (a live region,
//! so a screen reader hears it too); the page never freezes while it works.

use std::sync::Arc;

use leptos::ev::{DragEvent, Event};
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen_futures::JsFuture;
use web_sys::{File, HtmlInputElement};

use crate::ui::import_preview::ImportPreviewView;
use crate::ui::json_download::offer_json_download;
use crate::ui::page_context::{Notice, PageContext, use_page};
use crate::ui::yield_to_browser::yield_to_browser;
use remind_app::transfer::PendingImport;
use remind_core::export::Embeddings;
use remind_core::import::{CheckProgress, MAX_IMPORT_FILE_BYTES};
use remind_core::import_plan::{ImportMode, ImportPlan};

#[component]
pub fn TransferPanel() -> impl IntoView {
    let page = use_page();
    // Shared, so drawing the preview and applying it never copy a file of thousands.
    let pending = RwSignal::new(None::<Arc<PendingImport>>);
    // What the import is doing now ("Checking 3 000 of 11 500 records…"), if anything.
    let progress = RwSignal::new(None::<String>);
    // Whether the chosen import is being written; the store then says how far it came.
    let writing = RwSignal::new(false);

    // Embeddings are left out unless asked for: they make the file five to six times
    // larger (2 kB a lesson against about 450 bytes), and an importer
    // recomputes them with whichever model it runs (a lesson is matched by wording
    // until then). One running the same model uses those the file carries.
    let with_embeddings = RwSignal::new(false);
    let on_export = move |_| {
        let embeddings = if with_embeddings.get_untracked() {
            Embeddings::Include
        } else {
            Embeddings::Omit
        };
        spawn_local(async move {
            let notice = match page.session().export_json(embeddings).await {
                Ok(json) => match offer_download(&json) {
                    Ok(()) => Notice::done("Exported: the file is in your downloads."),
                    Err(e) => Notice::failed(format!("The download could not start: {e}")),
                },
                Err(e) => Notice::failed(e),
            };
            page.memory_notice.set(Some(notice));
        });
    };
    let on_pick = move |ev: Event| {
        let input: HtmlInputElement = event_target(&ev);
        if let Some(file) = input.files().and_then(|files| files.get(0)) {
            spawn_local(preview_file(page, pending, progress, file));
        }
        input.set_value("");
    };
    let on_drop = move |ev: DragEvent| {
        ev.prevent_default();
        let file = ev
            .data_transfer()
            .and_then(|dt| dt.files())
            .and_then(|files| files.get(0));
        if let Some(file) = file {
            spawn_local(preview_file(page, pending, progress, file));
        }
    };
    let apply = move |mode: ImportMode| {
        let Some(chosen) = pending.get_untracked() else {
            return;
        };
        progress.set(Some(format!(
            "Writing {} records…",
            grouped(chosen.document.records.len())
        )));
        page.write_progress.set(None);
        writing.set(true);
        spawn_local(async move {
            // Let the browser show "Writing…" before the store call takes the thread.
            yield_to_browser().await;
            let outcome = page
                .session()
                .apply_import_paced(&chosen, mode, yield_to_browser)
                .await;
            progress.set(None);
            writing.set(false);
            let written = outcome.is_ok();
            page.report(outcome, |plan| import_report(&plan));
            if written {
                // Letting go of a file of thousands of records takes a moment of its
                // own; not in the task that draws the new memory.
                yield_to_browser().await;
                pending.set(None);
            }
        });
    };
    let has_pending = move || pending.with(Option::is_some);
    // The page stays responsive while an import is written, so a second click could
    // start a second write (refused, as the memory changed) or a cancel that comes too
    // late: the choices wait until the write has ended.
    let working = move || progress.with(Option::is_some);
    let preview = move || {
        pending
            .get()
            .map(|p| view! { <ImportPreviewView pending=p/> })
    };
    let progress_text = move || {
        let stored = page.write_progress.get().filter(|_| writing.get());
        match stored {
            Some(p) if p.written < p.total => format!(
                "Writing {} of {} records…",
                grouped(p.written),
                grouped(p.total)
            ),
            // Every put is done; the transaction is committing them to disk.
            Some(p) => format!("Saving {} records…", grouped(p.total)),
            None => progress.get().unwrap_or_default(),
        }
    };

    view! {
        <details class="transfer" id="transfer">
            <summary>"Export and import"</summary>
            <div class="transfer-export">
                <button id="export-button" type="button" on:click=on_export>"Export memory (JSON)"</button>
                <label class="inline">
                    <input id="export-embeddings" type="checkbox" prop:checked=with_embeddings
                        on:change=move |ev| with_embeddings.set(event_target_checked(&ev))/>
                    " With the embeddings (about 2 kB a lesson more; a browser running the same model then needs no time to compute them)"
                </label>
                <p class="status">"Settings and API keys are never exported."</p>
            </div>
            <div class="drop-zone" id="import-drop" on:dragover=|ev: DragEvent| ev.prevent_default() on:drop=on_drop>
                <label for="import-file">"Import a memory file: pick it or drop it here"</label>
                <input id="import-file" type="file" accept=".json,application/json" on:change=on_pick/>
            </div>
            <p class="status" id="import-progress" role="status" aria-live="polite">
                {progress_text}
            </p>
            {preview}
            <Show when=has_pending>
                <div class="import-actions">
                    <button id="import-merge" type="button" prop:disabled=working on:click=move |_| apply(ImportMode::Merge)>"Merge into my memory"</button>
                    <button id="import-replace" type="button" prop:disabled=working on:click=move |_| apply(ImportMode::Replace)>"Replace my memory with the file"</button>
                    <button id="import-cancel" type="button" prop:disabled=working on:click=move |_| pending.set(None)>"Cancel"</button>
                </div>
            </Show>
        </details>
    }
}

/// Reads, validates and previews a file; nothing is written.
async fn preview_file(
    page: PageContext,
    pending: RwSignal<Option<Arc<PendingImport>>>,
    progress: RwSignal<Option<String>>,
    file: File,
) {
    pending.set(None);
    if file.size() > MAX_IMPORT_FILE_BYTES as f64 {
        page.memory_notice.set(Some(Notice::failed(format!(
            "Not imported: {} is {:.1} MB; an import file may be at most {} MB.",
            file.name(),
            file.size() / 1_048_576.0,
            MAX_IMPORT_FILE_BYTES / 1_048_576
        ))));
        return;
    }
    let bytes = match JsFuture::from(file.array_buffer()).await {
        Ok(buffer) => js_sys::Uint8Array::new(&buffer).to_vec(),
        Err(_) => {
            page.memory_notice.set(Some(Notice::failed(format!(
                "Not imported: {} could not be read.",
                file.name()
            ))));
            return;
        }
    };
    progress.set(Some(format!("Reading {}…", file.name())));
    yield_to_browser().await;
    let checked = page
        .session()
        .preview_import_paced(&bytes, |so_far: CheckProgress| {
            progress.set(Some(format!(
                "Checking {} of {} records…",
                grouped(so_far.checked),
                grouped(so_far.total)
            )));
            yield_to_browser()
        })
        .await;
    progress.set(None);
    match checked {
        Ok(preview) => {
            page.memory_notice.set(Some(Notice::done(format!(
                "{} is valid. Check the preview, then merge or replace; nothing has changed yet.",
                file.name()
            ))));
            pending.set(Some(Arc::new(preview)));
        }
        Err(e) => page
            .memory_notice
            .set(Some(Notice::failed(format!("Nothing changed: {e}")))),
    }
}

fn import_report(plan: &ImportPlan) -> String {
    let mode = match plan.mode {
        ImportMode::Merge => "Merged",
        ImportMode::Replace => "Replaced",
    };
    let kept = if plan.kept_here.is_empty() {
        String::new()
    } else {
        format!(
            "; kept your version of {} conflicting questions",
            plan.kept_here.len()
        )
    };
    format!(
        "{mode}: {} records written, {} erased{kept}.",
        plan.put.len(),
        plan.erase.len()
    )
}

/// Hands the export to the browser as a dated file download.
fn offer_download(json: &str) -> Result<(), String> {
    let day = js_sys::Date::new_0()
        .to_iso_string()
        .as_string()
        .unwrap_or_default();
    let name = format!("remind-memory-{}.json", day.get(..10).unwrap_or("export"));
    offer_json_download(json, &name)
}

/// A count with its thousands apart, as people read them: "11 500".
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(digit);
    }
    out
}
