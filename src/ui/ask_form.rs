//! The question box under the conversation: Enter asks, the question becomes the
//! conversation's next turn, and the box is ready for the next one at once.

use leptos::ev::SubmitEvent;
use leptos::prelude::*;

use crate::ui::keyboard_shortcuts::SHORTCUTS_HINT;
use crate::ui::page_context::{AskKind, use_page};

#[component]
pub fn AskForm() -> impl IntoView {
    let page = use_page();
    let question = RwSignal::new(String::new());
    let ask = Action::new_local(move |text: &String| {
        let text = text.clone();
        async move { page.ask(text, AskKind::WithMemory).await }
    });
    let status = move || if page.asking.get() { "Asking…" } else { "" };
    let placeholder = move || {
        if page.temporary.get() {
            "Ask without memory (temporary)…"
        } else {
            "What is like < fast > ?"
        }
    };
    let on_submit = move |ev: SubmitEvent| {
        ev.prevent_default();
        let text = question.get_untracked();
        if page.asking.get_untracked() || text.trim().is_empty() {
            return;
        }
        question.set(String::new());
        ask.dispatch(text);
    };
    view! {
        <form class="ask" on:submit=on_submit data-temporary=move || page.temporary.get().to_string()>
            <label for="ask-input">"Ask"</label>
            <input
                id="ask-input"
                type="text"
                autocomplete="off"
                aria-describedby="ask-shortcuts"
                placeholder=placeholder
                prop:value=question
                on:input=move |ev| question.set(event_target_value(&ev))
            />
            <button id="ask-submit" type="submit" prop:disabled=move || page.asking.get()>"Ask"</button>
            <p id="ask-shortcuts" class="hint">{SHORTCUTS_HINT}</p>
            <span id="turn-status" class="status" role="status">{status}</span>
        </form>
    }
}
