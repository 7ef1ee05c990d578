//! The closest lesson when none was close enough to apply: offered under the answer,
//! never sent unasked. "Apply it" widens the lesson to questions like this one and asks
//! again with it; "Not relevant here" keeps it off this kind of question.

use leptos::prelude::*;

use crate::ui::turn_place::turn_element_id;

use crate::ui::page_context::{AskKind, use_page};
use remind_core::memory::ScopeChange;
use remind_core::turn::Suggestion;

#[component]
pub fn LessonSuggestion(suggestion: Suggestion, question: String) -> impl IntoView {
    let page = use_page();
    let record = suggestion.record.clone();
    let (id, version) = (record.id.clone(), record.version);
    // One action per answer to the suggestion: its pending state disables both
    // buttons, its value is the outcome shown.
    let answer = Action::new_local(move |change: &ScopeChange| {
        let (change, id, question) = (*change, id.clone(), question.clone());
        async move {
            let session = page.session();
            session
                .change_scope(&id, version, &question, change)
                .await
                .map_err(|e| e.to_string())?;
            if change == ScopeChange::AppliesHereToo {
                page.ask(question, AskKind::WithMemory).await;
            }
            Ok::<_, String>(change)
        }
    });
    let pending = answer.pending();
    let outcome = move || {
        match answer.value().get() {
        Some(Ok(ScopeChange::NotRelevantHere)) => Some(view! {
            <p class="suggestion-status" data-state="declined">
                "It will not be offered for questions like this one again; undo it in the memory browser."
            </p>
        }.into_any()),
        Some(Ok(_)) | None => None,
        Some(Err(message)) => Some(view! {
            <p class="suggestion-status error" data-state="error" role="alert">{message}</p>
        }.into_any()),
    }
    };
    let answered = move || matches!(answer.value().get(), Some(Ok(_)));
    view! {
        <aside id=turn_element_id("lesson-suggestion") class="suggestion" data-score=suggestion.score.value().to_string()>
            <p>
                "A lesson may apply here: “"
                <span class="suggestion-clarification">{record.clarification().unwrap_or_default().to_string()}</span>
                "” (taught on “" {record.question.clone()} "”; " {suggestion.score.to_string()}
                ", below the match threshold, so it was not sent)."
            </p>
            <Show when=move || !answered()>
                <div class="suggestion-actions">
                    <button
                        id=turn_element_id("suggestion-apply")
                        type="button"
                        prop:disabled=pending
                        on:click=move |_| { answer.dispatch(ScopeChange::AppliesHereToo); }
                    >
                        "Apply it and ask again"
                    </button>
                    <button
                        id=turn_element_id("suggestion-decline")
                        type="button"
                        class="secondary"
                        prop:disabled=pending
                        on:click=move |_| { answer.dispatch(ScopeChange::NotRelevantHere); }
                    >
                        "Not relevant here"
                    </button>
                </div>
            </Show>
            {outcome}
        </aside>
    }
}
