//! The question box: sends a question through the session and records the outcome.

use leptos::ev::SubmitEvent;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ui::page_context::{TurnState, use_page};

#[component]
pub fn AskForm() -> impl IntoView {
    let page = use_page();
    let question = RwSignal::new(String::new());
    let asking = move || page.turn.get() == TurnState::Asking;
    let status = move || if asking() { "Asking…" } else { "" };
    let on_submit = move |ev: SubmitEvent| {
        ev.prevent_default();
        if asking() {
            return;
        }
        let text = question.get_untracked();
        page.turn.set(TurnState::Asking);
        let session = page.session();
        spawn_local(async move {
            let state = match session.ask(&text).await {
                Ok(turn) => TurnState::Answered(Box::new(turn)),
                Err(e) => TurnState::Failed(e.to_string()),
            };
            page.turn.set(state);
        });
    };
    view! {
        <form class="ask" on:submit=on_submit>
            <label for="ask-input">"Ask"</label>
            <input
                id="ask-input"
                type="text"
                autocomplete="off"
                placeholder="What is like < fast > ?"
                prop:value=question
                on:input=move |ev| question.set(event_target_value(&ev))
            />
            <button id="ask-submit" type="submit" prop:disabled=asking>"Ask"</button>
            <span id="turn-status" class="status">{status}</span>
        </form>
    }
}
