//! The conversation's own controls: start a new one (the current one is set aside),
//! clear it from the device, switch to a temporary conversation, reopen an earlier one.

use leptos::prelude::*;

use crate::ui::keyboard_shortcuts::focus_question_box;
use crate::ui::page_context::use_page;
use remind_app::conversation::SavedTurn;

#[component]
pub fn ConversationBar() -> impl IntoView {
    let page = use_page();
    let temporary = move || page.temporary.get();
    // The conversation in view does not change under a question still being asked.
    let asking = move || page.asking.get();
    let has_turns = move || page.conversation.with(|entries| !entries.is_empty());
    let earlier = move || {
        page.earlier_conversations
            .get()
            .into_iter()
            .enumerate()
            .map(|(index, turns)| view! { <EarlierConversation index turns/> })
            .collect_view()
    };
    let earlier_count = move || page.earlier_conversations.with(Vec::len);
    view! {
        <nav class="conversation-bar" aria-label="Conversation">
            <button id="conversation-new" type="button" class="secondary" prop:disabled=asking
                on:click=move |_| {
                    page.start_new_conversation();
                    focus_question_box();
                }>
                "New conversation"
            </button>
            <button id="conversation-clear" type="button" class="secondary"
                prop:disabled=move || asking() || !has_turns()
                on:click=move |_| {
                    page.clear_conversation();
                    focus_question_box();
                }>
                "Clear"
            </button>
            <button id="conversation-temporary" type="button" class="secondary toggle"
                aria-pressed=move || temporary().to_string() prop:disabled=asking
                title="Memory is not read, nothing is written, and the conversation is not kept"
                on:click=move |_| page.set_temporary(!page.temporary.get_untracked())>
                {move || if temporary() { "Temporary: on" } else { "Temporary: off" }}
            </button>
            <Show when=move || earlier_count() != 0>
                <details id="earlier-conversations" class="earlier">
                    <summary>{move || format!("Earlier conversations ({})", earlier_count())}</summary>
                    <ul>{earlier}</ul>
                </details>
            </Show>
            <p id="conversation-error" class="error" role="alert">{move || page.conversation_error.get()}</p>
        </nav>
        <Show when=temporary>
            <p id="temporary-banner" class="temporary-banner" role="status">
                "Temporary conversation: Remind does not read its memory and keeps nothing from it. "
                "Switch it off to return to your conversation."
            </p>
        </Show>
    }
}

#[component]
fn EarlierConversation(index: usize, turns: Vec<SavedTurn>) -> impl IntoView {
    let page = use_page();
    let first = turns
        .first()
        .map(|turn| turn.question.clone())
        .unwrap_or_default();
    let label = match turns.len() {
        1 => format!("“{first}”, 1 turn"),
        n => format!("“{first}”, {n} turns"),
    };
    view! {
        <li>
            <button type="button" class="secondary earlier-open"
                on:click=move |_| page.reopen_conversation(index)>
                {label}
            </button>
        </li>
    }
}
