//! "This is right": keeps a confirmed reply as a verified example, which similar
//! questions later get as a demonstration, and widens the lessons that went with it by
//! similarity to questions like this one.

use leptos::prelude::*;

use crate::ui::page_context::use_page;
use remind_app::ask::Turn;
use remind_app::confirm::Confirmed;

#[component]
pub fn ConfirmAnswer(turn: Turn) -> impl IntoView {
    let page = use_page();
    let turn = StoredValue::new(turn);
    // Its pending state keeps a second click from confirming twice; the outcome goes
    // to the memory notice like every other change to memory.
    let confirm = Action::new_local(move |_: &()| {
        let turn = turn.get_value();
        async move {
            let outcome = page.session().confirm_answer(&turn).await;
            page.report(outcome, confirmed_notice);
        }
    });
    view! {
        <button
            id="confirm-answer"
            type="button"
            class="secondary"
            prop:disabled=confirm.pending()
            on:click=move |_| {
                confirm.dispatch(());
            }
        >
            "This is right"
        </button>
    }
}

fn confirmed_notice(confirmed: Confirmed) -> String {
    let kept = "Kept as a verified example: similar questions will be shown it.";
    let widened: Vec<String> = confirmed
        .widened
        .iter()
        .map(|lesson| format!("“{}”", lesson.clarification().unwrap_or_default()))
        .collect();
    match widened.as_slice() {
        [] => kept.to_string(),
        lessons => format!(
            "{kept} The lesson {} now also applies to questions like this one (undo in the memory browser).",
            lessons.join(", ")
        ),
    }
}
