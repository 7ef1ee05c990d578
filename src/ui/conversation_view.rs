//! The conversation: every turn in the order asked, each with its question, its reply
//! and its own controls, the latest at the bottom next to the question box.

use leptos::prelude::*;

use crate::ui::correction_form::CorrectionForm;
use crate::ui::page_context::{ConversationEntry, TurnState, use_page};
use crate::ui::reply_view::Reply;
use crate::ui::restored_reply::RestoredReply;
use crate::ui::turn_place::{TurnPlace, turn_element_id};
use crate::ui::turn_source::TurnSource;

fn bring_latest_turn_into_view() {
    let latest = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| {
            document
                .query_selector("#conversation-turns > .turn:last-child")
                .ok()
        })
        .flatten();
    if let Some(turn) = latest {
        turn.scroll_into_view_with_bool(false);
    }
}

#[component]
pub fn ConversationView() -> impl IntoView {
    let page = use_page();
    let latest_key = Memo::new(move |_| {
        page.conversation
            .with(|entries| entries.last().map(|entry| entry.key))
    });
    // A new turn is brought into view above the question box.
    Effect::new(move |_| {
        if latest_key.get().is_some() {
            request_animation_frame(bring_latest_turn_into_view);
        }
    });
    let empty = move || page.conversation.with(Vec::is_empty);
    let empty_hint = move || {
        if page.temporary.get() {
            "A temporary conversation: memory is not read and nothing is kept, not even the conversation."
        } else {
            "Ask anything below. When an answer shows Remind misread you, say what you meant: it remembers, and the next similar question gets it right."
        }
    };
    view! {
        <section class="conversation" aria-label="Conversation" data-temporary=move || page.temporary.get().to_string()>
            <Show when=empty>
                <p id="conversation-empty" class="hint">{empty_hint}</p>
            </Show>
            <ol id="conversation-turns" class="turns">
                <For
                    each=move || page.conversation.get()
                    key=|entry| entry.key
                    children=move |entry| {
                        let key = entry.key;
                        let latest = Signal::derive(move || latest_key.get() == Some(key));
                        view! { <TurnView entry latest/> }
                    }
                />
            </ol>
        </section>
    }
}

#[component]
fn TurnView(entry: ConversationEntry, latest: Signal<bool>) -> impl IntoView {
    provide_context(TurnPlace::new(entry.key, latest));
    let ConversationEntry {
        question,
        temporary,
        state,
        streamed,
        stop,
        ..
    } = entry;
    let stop = StoredValue::new(stop);
    let state_tag = move || match state.get() {
        TurnState::Asking => "asking",
        TurnState::Answered(_) => "answered",
        TurnState::Restored(_) => "restored",
        TurnState::Failed(_) => "failed",
    };
    let error_id = turn_element_id("turn-error");
    let stop_id = turn_element_id("turn-stop");
    let body = move || match state.get() {
        TurnState::Asking => view! {
            <p class="turn-streamed" aria-busy="true">
                {move || {
                    let text = streamed.get();
                    if text.is_empty() { "Asking…".to_string() } else { text }
                }}
            </p>
            <button id=stop_id type="button" class="secondary turn-stop"
                on:click=move |_| stop.with_value(|stop| stop.stop())>
                "Stop"
            </button>
        }
        .into_any(),
        TurnState::Failed(message) => view! {
            <p id=error_id class="error turn-error" role="alert">{message}</p>
        }
        .into_any(),
        TurnState::Answered(turn) => {
            let correction = (!temporary)
                .then(|| view! { <CorrectionForm source=TurnSource::Live(turn.clone())/> });
            view! {
                <Reply turn=*turn temporary/>
                {correction}
            }
            .into_any()
        }
        TurnState::Restored(saved) => view! {
            <RestoredReply saved=(*saved).clone()/>
            <CorrectionForm source=TurnSource::Saved(*saved)/>
        }
        .into_any(),
    };
    let temporary_note = temporary.then(|| {
        view! { <p class="turn-temporary hint">"Temporary: memory was not read and nothing of this turn is kept."</p> }
    });
    view! {
        <li class="turn" data-state=state_tag data-latest=move || latest.get().to_string()>
            <p class="turn-question"><span class="visually-hidden">"You asked: "</span>{question}</p>
            <div class="turn-reply" aria-live="polite">{body}</div>
            {temporary_note}
        </li>
    }
}
