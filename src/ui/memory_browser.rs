//! The memory browser: every lesson the assistant keeps, searchable and filterable,
//! each with the actions that change it.

use leptos::prelude::*;

use crate::domain::memory_query::{KindFilter, MemoryFilter, StateFilter};
use crate::domain::record::MemoryRecord;
use crate::ui::memory_item::MemoryItem;
use crate::ui::page_context::use_page;

fn kind_from(name: &str) -> KindFilter {
    match name {
        "clarification" => KindFilter::Clarification,
        "verified" => KindFilter::VerifiedExample,
        _ => KindFilter::Any,
    }
}

fn state_from(name: &str) -> StateFilter {
    match name {
        "superseded" => StateFilter::Superseded,
        "withdrawn" => StateFilter::Withdrawn,
        "any" => StateFilter::Any,
        _ => StateFilter::Current,
    }
}

/// Changes whenever anything the item shows changes, so the item is redrawn.
fn item_key(record: &MemoryRecord) -> String {
    format!(
        "{}:{}:{:?}:{}:{}",
        record.id.0,
        record.version,
        record.state,
        record.stats.times_applied,
        record.stats.times_failed_after_applied
    )
}

#[component]
pub fn MemoryBrowser() -> impl IntoView {
    let page = use_page();
    let text = RwSignal::new(String::new());
    let kind = RwSignal::new("any".to_string());
    let state = RwSignal::new("current".to_string());
    let flagged_only = RwSignal::new(false);

    let filter = move || MemoryFilter {
        text: text.get(),
        kind: kind_from(&kind.get()),
        state: state_from(&state.get()),
        flagged_only: flagged_only.get(),
    };
    let records = move || {
        page.memory_revision.track();
        page.session().list(&filter())
    };
    let flagged = move || {
        page.memory_revision.track();
        page.session().flagged_count()
    };
    let flagged_text = move || match flagged() {
        0 => String::new(),
        n => format!(" ({n} to review)"),
    };
    let empty = move || records().is_empty();

    view! {
        <details class="memory-browser" id="memory-browser">
            <summary>"Memory"
                <span class="flagged-count" data-count=flagged>{flagged_text}</span>
            </summary>
            <div class="memory-filters">
                <input id="memory-search" type="search" placeholder="Search questions and clarifications"
                    prop:value=text on:input=move |ev| text.set(event_target_value(&ev))/>
                <select id="memory-kind" prop:value=kind on:change=move |ev| kind.set(event_target_value(&ev))>
                    <option value="any">"all kinds"</option>
                    <option value="clarification">"clarifications"</option>
                    <option value="verified">"verified examples"</option>
                </select>
                <select id="memory-state" prop:value=state on:change=move |ev| state.set(event_target_value(&ev))>
                    <option value="current">"current"</option>
                    <option value="superseded">"replaced"</option>
                    <option value="withdrawn">"withdrawn"</option>
                    <option value="any">"all states"</option>
                </select>
                <label class="inline">
                    <input id="memory-flagged" type="checkbox" prop:checked=flagged_only
                        on:change=move |ev| flagged_only.set(event_target_checked(&ev))/>
                    "needs review only"
                </label>
            </div>
            <Show when=empty>
                <p class="status" id="memory-empty">"No lessons match."</p>
            </Show>
            <ul class="memory-list" id="memory-list">
                <For
                    each=records
                    key=item_key
                    children=move |record| view! { <MemoryItem record/> }
                />
            </ul>
        </details>
    }
}
