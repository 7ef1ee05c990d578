//! The history of one key: every lesson it has had, oldest first, with who changed it
//! when and why.

use leptos::prelude::*;

use crate::ui::page_context::use_page;
use crate::ui::record_labels::{change_label, source_label, state_label};
use remind_core::memory_key::MemoryKey;

#[component]
pub fn MemoryHistory(key: MemoryKey) -> impl IntoView {
    let page = use_page();
    let records = move || {
        page.memory.with(|memory| {
            memory
                .history(&key)
                .into_iter()
                .cloned()
                .collect::<Vec<_>>()
        })
    };
    view! {
        <ol class="memory-history">
            <For
                each=records
                key=|record| format!("{}:{:?}", record.id.0, record.state)
                children=move |record| view! {
                    <li class="memory-history-entry" data-state=state_label(record.state)>
                        "v" {record.version} " · " {state_label(record.state)} ": “"
                        {record.kind.text()} "” — " {source_label(record.source)} ", "
                        {change_label(&record)}
                    </li>
                }
            />
        </ol>
    }
}
