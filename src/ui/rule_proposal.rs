//! A general rule the model proposed from the user's correction, shown beside the
//! user's own words: accepted, edited or rejected. Only an accepted (or edited) rule
//! is stored, and the page says beforehand which lesson it would replace.

use leptos::prelude::*;

use crate::ui::turn_place::turn_element_id;

use crate::ui::page_context::{Notice, use_page};
use remind_core::reflection::{AcceptPreview, RuleProposal};

fn replaces_line(preview: &AcceptPreview) -> String {
    match &preview.replaces {
        Some(current) => format!(
            "Accepting replaces the current lesson: “{}”",
            current.kind.text()
        ),
        None => "Accepting adds a new lesson for this kind of question.".into(),
    }
}

#[component]
pub fn RuleProposalView(
    proposal: RuleProposal,
    /// Set to `None` when the user is done with the proposal.
    open: RwSignal<Option<RuleProposal>>,
) -> impl IntoView {
    let page = use_page();
    let draft = RwSignal::new(proposal.rule.clone());
    let user_words = proposal.user_words.clone();
    let proposal = StoredValue::new(proposal);

    let edited = move || {
        let text = draft.get();
        (text.trim() != proposal.with_value(|p| p.rule.trim().to_string())).then_some(text)
    };
    let preview =
        move || proposal.with_value(|p| page.session().preview_accept(p, edited().as_deref()));
    let replaces = move || replaces_line(&preview());
    let refusal = move || preview().refusal.map(|r| r.to_string());
    // Its pending state keeps a second click from storing the rule twice.
    let accept = Action::new_local(move |_: &()| {
        let (chosen, text, expected) = (proposal.get_value(), edited(), preview().expected_version);
        async move {
            let outcome = page.session().accept_rule(&chosen, text, expected).await;
            if outcome.is_ok() {
                open.set(None);
            }
            page.report(outcome, |_| {
                "Rule saved. It applies to similar questions from now on.".into()
            });
        }
    });
    let on_accept = move |_| {
        accept.dispatch(());
    };
    let on_reject = move |_| {
        open.set(None);
        page.memory_notice
            .set(Some(Notice::done("Rule rejected: nothing was stored.")));
    };

    view! {
        <div class="rule-proposal" id=turn_element_id("rule-proposal")>
            <p>"Your words: " <q id=turn_element_id("rule-user-words")>{user_words}</q></p>
            <label for=turn_element_id("rule-text")>"Proposed general rule (edit it if you like)"</label>
            <textarea id=turn_element_id("rule-text") rows="2" prop:value=draft
                on:input=move |ev| draft.set(event_target_value(&ev))></textarea>
            <p id=turn_element_id("rule-replaces") class="status">{replaces}</p>
            <p id=turn_element_id("rule-refusal") class="error">{refusal}</p>
            <div class="rule-actions">
                <button id=turn_element_id("rule-accept") type="button" prop:disabled=accept.pending() on:click=on_accept>"Accept rule"</button>
                <button id=turn_element_id("rule-reject") type="button" class="secondary" on:click=on_reject>"Reject"</button>
            </div>
        </div>
    }
}
