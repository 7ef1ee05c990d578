//! "This is right": keeps a confirmed reply as a verified example, which similar
//! questions later get as a demonstration, and widens the lessons that went with it by
//! similarity to questions like this one.

use leptos::prelude::*;

use crate::ui::turn_place::turn_element_id;

use crate::ui::page_context::use_page;
use crate::ui::turn_source::TurnSource;
use remind_app::confirm::Confirmed;

#[component]
pub fn ConfirmAnswer(source: TurnSource) -> impl IntoView {
    let page = use_page();
    let source = StoredValue::new(source);
    // Its pending state keeps a second click from confirming twice; the outcome goes
    // to the memory notice like every other change to memory.
    let confirm = Action::new_local(move |_: &()| {
        let source = source.get_value();
        async move {
            let session = page.session();
            match source.resolve(&session).await {
                Ok(turn) => page.report(session.confirm_answer(&turn).await, confirmed_notice),
                Err(error) => page.report(Err::<Confirmed, _>(error), confirmed_notice),
            }
        }
    });
    view! {
        <button
            id=turn_element_id("confirm-answer")
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
