//! The outcome of the last change to the memory, in words, where the user looks.

use leptos::prelude::*;

use crate::ui::page_context::use_page;

#[component]
pub fn MemoryNotice() -> impl IntoView {
    let page = use_page();
    let text = move || page.memory_notice.get().map(|n| n.text).unwrap_or_default();
    let state = move || match page.memory_notice.get() {
        Some(notice) if notice.is_error => "error",
        Some(_) => "done",
        None => "idle",
    };
    let role = move || {
        if state() == "error" {
            "alert"
        } else {
            "status"
        }
    };
    view! { <p id="memory-notice" class="status" data-state=state role=role>{text}</p> }
}
