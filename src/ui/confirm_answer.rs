//! "This is right": keeps a confirmed reply as a verified example, which similar
//! questions later get as a demonstration.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ui::page_context::use_page;
use remind_app::ask::Turn;

#[component]
pub fn ConfirmAnswer(turn: Turn) -> impl IntoView {
    let page = use_page();
    let busy = RwSignal::new(false);
    let turn = StoredValue::new(turn);
    let on_click = move |_| {
        let turn = turn.get_value();
        busy.set(true);
        spawn_local(async move {
            let outcome = page.session().confirm_answer(&turn).await;
            busy.set(false);
            page.report(outcome, |_| {
                "Kept as a verified example: similar questions will be shown it.".into()
            });
        });
    };
    view! {
        <button id="confirm-answer" type="button" class="secondary" prop:disabled=busy on:click=on_click>
            "This is right"
        </button>
    }
}
