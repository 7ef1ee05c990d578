//! Stored records this Remind cannot read, shown with their raw text so the user can
//! save or delete them: one bad row never hides the rest of the memory, and nothing is
//! removed without the user seeing what it was.

use leptos::prelude::*;

use crate::ui::json_download::offer_json_download;
use crate::ui::page_context::{Notice, use_page};
use remind_core::stored_rows::UnreadableRecord;

/// A file name for one row's download, from its key, keeping only safe characters.
fn download_name(row: &UnreadableRecord) -> String {
    let safe: String = row
        .key
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(40)
        .collect();
    format!("remind-unreadable-{safe}.json")
}

#[component]
pub fn UnreadableRecords() -> impl IntoView {
    let page = use_page();
    let count = move || page.unreadable.with(|rows| rows.len());
    let any = move || count() > 0;
    let summary = move || match count() {
        1 => "1 stored record could not be read".to_string(),
        n => format!("{n} stored records could not be read"),
    };
    view! {
        <Show when=any>
            <details class="unreadable-records" id="unreadable-records" data-count=count>
                <summary class="error">{summary}</summary>
                <p class="status">
                    "They are kept as they are and never used or overwritten; a newer Remind may have written them. "
                    "Save a copy, then delete them, or open this memory with the newer Remind."
                </p>
                <ul>
                    <For
                        each=move || page.unreadable.get().as_ref().clone()
                        key=|row| row.key.clone()
                        children=move |row| view! { <UnreadableRow row/> }
                    />
                </ul>
            </details>
        </Show>
    }
}

#[component]
fn UnreadableRow(row: UnreadableRecord) -> impl IntoView {
    let page = use_page();
    let confirming = RwSignal::new(false);
    let download = {
        let row = row.clone();
        move |_| {
            let notice = match offer_json_download(&row.raw, &download_name(&row)) {
                Ok(()) => Notice::done("Saved a copy of the unreadable record to your downloads."),
                Err(e) => Notice::failed(format!("The download could not start: {e}")),
            };
            page.memory_notice.set(Some(notice));
        }
    };
    // Its pending state keeps a second click from deleting twice.
    let delete = {
        let key = row.key.clone();
        Action::new_local(move |_: &()| {
            let key = key.clone();
            async move {
                let outcome = page.session().erase_unreadable(&[key]).await;
                page.report(outcome, |_| {
                    "Deleted the unreadable record for good.".into()
                });
            }
        })
    };
    view! {
        <li class="unreadable-record" data-key=row.key.clone()>
            <p class="unreadable-problem">{row.problem.clone()}</p>
            <pre class="unreadable-raw">{row.raw.clone()}</pre>
            <button type="button" class="unreadable-download" on:click=download>"Save a copy"</button>
            <button type="button" class="unreadable-delete" on:click=move |_| confirming.set(true)>"Delete…"</button>
            <Show when=move || confirming.get()>
                <p class="unreadable-delete-confirm">
                    "Delete this record for good? It cannot be brought back. "
                    <button type="button" class="unreadable-delete-confirm-button" prop:disabled=delete.pending()
                        on:click=move |_| { delete.dispatch(()); }>"Delete for good"</button>
                </p>
            </Show>
        </li>
    }
}
