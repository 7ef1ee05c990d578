//! The question box under the conversation: Enter asks, the question becomes the
//! conversation's next turn, and the box is ready for the next one at once.

use std::time::Duration;

use leptos::ev::{Event, SubmitEvent};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ui::keyboard_shortcuts::SHORTCUTS_HINT;
use crate::ui::page_context::{AskKind, use_page};

/// How long typing pauses before the question so far is embedded: long enough not to
/// embed every keystroke, short enough to be done before Enter.
const TYPING_PAUSE: Duration = Duration::from_millis(150);

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
    // Once typing pauses, the question is embedded, so asking it does not wait for the
    // model (the session's embedder remembers it). A temporary conversation reads no
    // memory, so it needs none.
    let on_input = move |ev: Event| {
        let text = event_target_value(&ev);
        question.set(text.clone());
        page.note_person_at_the_question_box();
        set_timeout(
            move || {
                let still_typed = question.try_with_untracked(|now| *now == text) == Some(true);
                if still_typed && !text.trim().is_empty() && !page.temporary.get_untracked() {
                    spawn_local(async move { page.session().prepare_question(&text).await });
                }
            },
            TYPING_PAUSE,
        );
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
                on:input=on_input
            />
            <button id="ask-submit" type="submit" prop:disabled=move || page.asking.get()>"Ask"</button>
            <p id="ask-shortcuts" class="hint">{SHORTCUTS_HINT}</p>
            <span id="turn-status" class="status" role="status">{status}</span>
        </form>
    }
}
