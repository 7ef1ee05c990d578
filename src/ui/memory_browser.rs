//! The memory browser: every lesson the assistant keeps, searchable and filterable,
//! each with the actions that change it.
//!
//! The list draws a page of [`PAGE_SIZE`] lessons at a time, with the count of all
//! that match: a memory of thousands (a large import) drawn whole would take the
//! page seconds, and a search finds a lesson sooner than scrolling. It is drawn only
//! while the browser is open: closed, as the page opens, nothing of it is built or
//! filtered, so neither a reload nor each new snapshot (a background step, a usage
//! count) pays for a hundred hidden items (about 20 ms at 10 000 lessons).

use leptos::prelude::*;

use crate::ui::memory_item::MemoryItem;
use crate::ui::page_context::use_page;
use crate::ui::record_labels::{kind_filter_label, state_filter_label};
use crate::ui::unreadable_records::UnreadableRecords;
use remind_core::memory_query::{self, KindFilter, MemoryFilter, StateFilter};
use remind_core::record::MemoryRecord;

/// Scrolls the memory browser's item for lesson `id` into view and focuses it, so a
/// keyboard or screen-reader user lands where the chip pointed.
fn show_lesson_item(id: &str) {
    let Some(document) = web_sys::window().and_then(|window| window.document()) else {
        return;
    };
    let selector = format!(".memory-item[data-id=\"{}\"]", id.replace('"', ""));
    if let Ok(Some(item)) = document.query_selector(&selector) {
        item.scroll_into_view();
        if let Ok(item) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(item) {
            let _ = item.focus();
        }
    }
}

/// Lessons drawn at first, and added by each "Show more".
const PAGE_SIZE: usize = 100;

/// Changes when the item becomes another lesson (a new version, a withdrawal), so it
/// is redrawn then. Its statistics follow the memory signal inside the item instead:
/// another tab merely asking a question must not close an edit open here.
fn item_key(record: &MemoryRecord) -> String {
    format!("{}:{}:{:?}", record.id.0, record.version, record.state)
}

#[component]
pub fn MemoryBrowser() -> impl IntoView {
    let page = use_page();
    let text = RwSignal::new(String::new());
    let kind = RwSignal::new(KindFilter::Any);
    let state = RwSignal::new(StateFilter::Current);
    let flagged_only = RwSignal::new(false);

    let filter = Memo::new(move |_| MemoryFilter {
        text: text.get(),
        kind: kind.get(),
        state: state.get(),
        flagged_only: flagged_only.get(),
    });
    let shown = RwSignal::new(PAGE_SIZE);
    // How many lessons match, and the ones drawn: only those are copied out of the
    // memory, however many it holds.
    let matching = Memo::new(move |_| {
        filter.with(|filter| {
            page.memory.with(|memory| {
                let (count, first) = memory_query::first_listed(memory, filter, shown.get());
                let drawn = first.into_iter().cloned().collect::<Vec<MemoryRecord>>();
                (count, drawn)
            })
        })
    });
    let records = Memo::new(move |_| matching.with(|(_, drawn)| drawn.clone()));
    let matched = move || matching.with(|(count, _)| *count);
    let more = move || matched().saturating_sub(shown.get());
    let flagged = Memo::new(move |_| {
        page.memory
            .with(|memory| memory_query::flagged_count(memory))
    });
    let flagged_text = move || match flagged.get() {
        0 => String::new(),
        n => format!(" ({n} to review)"),
    };
    // A chip under an answer asks for one lesson: the browser opens on it alone,
    // whatever its state, and brings it into view with the focus on it.
    let open = RwSignal::new(false);
    Effect::new(move |_| {
        let Some(id) = page.shown_lesson.get() else {
            return;
        };
        let record = page
            .memory
            .with_untracked(|memory| memory.get(&id).cloned());
        if let Some(record) = record {
            text.set(record.kind.text());
            kind.set(KindFilter::Any);
            state.set(StateFilter::Any);
            flagged_only.set(false);
        }
        open.set(true);
        request_animation_frame(move || show_lesson_item(&id.0));
        page.shown_lesson.set(None);
    });
    let empty = move || records.with(Vec::is_empty);
    let kind_options = KindFilter::NAMES
        .values()
        .map(|k| view! { <option value=KindFilter::NAMES.name(k)>{kind_filter_label(k)}</option> })
        .collect_view();
    let state_options = StateFilter::NAMES
        .values()
        .map(
            |s| view! { <option value=StateFilter::NAMES.name(s)>{state_filter_label(s)}</option> },
        )
        .collect_view();

    view! {
        <details class="memory-browser" id="memory-browser" prop:open=open
            on:toggle=move |ev| open.set(event_target::<web_sys::HtmlDetailsElement>(&ev).open())>
            <summary>"Memory"
                <span class="flagged-count" data-count=flagged>{flagged_text}</span>
            </summary>
            <div class="memory-filters">
                <input id="memory-search" type="search" placeholder="Search questions and clarifications" aria-label="Search lessons"
                    prop:value=text on:input=move |ev| text.set(event_target_value(&ev))/>
                <select id="memory-kind" aria-label="Kind of lesson" prop:value=move || KindFilter::NAMES.name(kind.get())
                    on:change=move |ev| kind.set(KindFilter::NAMES.find(&event_target_value(&ev)).unwrap_or_default())>
                    {kind_options}
                </select>
                <select id="memory-state" aria-label="State of lesson" prop:value=move || StateFilter::NAMES.name(state.get())
                    on:change=move |ev| state.set(StateFilter::NAMES.find(&event_target_value(&ev)).unwrap_or_default())>
                    {state_options}
                </select>
                <label class="inline">
                    <input id="memory-flagged" type="checkbox" prop:checked=flagged_only
                        on:change=move |ev| flagged_only.set(event_target_checked(&ev))/>
                    "needs review only"
                </label>
            </div>
            <UnreadableRecords/>
            <Show when=move || open.get()>
                <Show when=empty>
                    <p class="status" id="memory-empty">"No lessons match."</p>
                </Show>
                <ul class="memory-list" id="memory-list">
                    <For
                        each=move || records.get()
                        key=item_key
                        children=move |record| view! { <MemoryItem record/> }
                    />
                </ul>
                <Show when=move || more() != 0>
                    <p class="status" id="memory-more">
                        {move || format!("Showing {} of {} lessons; search or filter to find others. ", shown.get(), matched())}
                        <button id="memory-show-more" type="button"
                            on:click=move |_| shown.update(|n| *n += PAGE_SIZE)>
                            {move || format!("Show {} more", more().min(PAGE_SIZE))}
                        </button>
                    </p>
                </Show>
            </Show>
        </details>
    }
}
