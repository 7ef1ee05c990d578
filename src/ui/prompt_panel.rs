//! "Show prompt": exactly what was sent for this turn, and the parts it was made of —
//! the base examples, the verified examples with their similarity, and the attached
//! clarifications with why each was attached.

use leptos::prelude::*;

use crate::ui::turn_place::turn_element_id;
use leptos::task::spawn_local;

use crate::ui::page_context::use_page;
use crate::ui::record_labels::applied_because_label;
use remind_app::ask::Turn;
use remind_core::prompt_breakdown::{AttachedClarification, ClarificationOrigin};
use remind_core::turn::STANDING_PREFERENCES_PER_TURN;
use remind_core::verified_examples::ChosenExample;

fn clarification_line(attached: &AttachedClarification) -> String {
    match &attached.origin {
        ClarificationOrigin::Stored { because, .. } => format!(
            "“{}” — from memory, {}",
            attached.text,
            applied_because_label(because)
        ),
        ClarificationOrigin::OneTime => format!("“{}” — this turn only", attached.text),
    }
}

fn base_line(sent: usize, dropped: usize) -> String {
    match dropped {
        0 => format!("{sent} base examples"),
        n => format!("{sent} base examples ({n} left out to fit the context)"),
    }
}

#[component]
pub fn PromptPanel(turn: Turn) -> impl IntoView {
    let breakdown = turn.prepared.breakdown.clone();
    let sent = turn.prepared.request.prompt.display_text();
    let base = base_line(
        breakdown.base_examples.len(),
        breakdown.base_examples_dropped,
    );
    let clarifications = breakdown
        .clarifications
        .iter()
        .map(|attached| view! { <li>{clarification_line(attached)}</li> })
        .collect_view();
    let standing_left_out = (breakdown.standing_left_out > 0).then(|| {
        let text = format!(
            "{} more “every question” lessons were left out: at most {STANDING_PREFERENCES_PER_TURN} go with a turn, the most recently changed.",
            breakdown.standing_left_out
        );
        view! { <p id=turn_element_id("prompt-standing-left-out")>{text}</p> }
    });
    let none_attached = breakdown.clarifications.is_empty().then_some(" none");
    let examples = breakdown
        .verified_examples
        .into_iter()
        .map(|chosen| view! { <UsedExample chosen/> })
        .collect_view();
    view! {
        <details class="prompt-panel" id=turn_element_id("prompt-panel")>
            <summary>"Show prompt"</summary>
            <p>{base}</p>
            <p>"Attached clarifications:" {none_attached}</p>
            <ul id=turn_element_id("prompt-clarifications")>{clarifications}</ul>
            {standing_left_out}
            <p>"Verified examples used:"</p>
            <ul id=turn_element_id("prompt-examples")>{examples}</ul>
            <pre id=turn_element_id("prompt-sent") tabindex="0">{sent}</pre>
        </details>
    }
}

#[component]
fn UsedExample(chosen: ChosenExample) -> impl IntoView {
    let page = use_page();
    let removed = RwSignal::new(false);
    let text = format!(
        "{} → {} ({})",
        chosen.example.query.trim(),
        chosen.example.reply.trim(),
        chosen.similarity
    );
    let (id, version) = (chosen.record, chosen.version);
    let on_remove = move |_| {
        let id = id.clone();
        spawn_local(async move {
            let outcome = page.session().remove_example(&id, version).await;
            removed.set(outcome.is_ok());
            page.report(outcome, |_| "Example removed; it stays in history.".into());
        });
    };
    view! {
        <li class="prompt-example">
            {text} " "
            <button type="button" class="remove-example" prop:disabled=removed on:click=on_remove>"Remove"</button>
        </li>
    }
}
