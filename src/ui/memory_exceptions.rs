//! The kinds of question a lesson is kept off ("not relevant here"), listed in the
//! memory browser with a way to take each mark back.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ui::page_context::use_page;
use remind_core::memory::ScopeChange;
use remind_core::record::MemoryRecord;

/// The kinds of question the user marked this lesson "not relevant" to, each with a way
/// to take the mark back (a current lesson only: history is read, not changed).
#[component]
pub fn MemoryExceptions(record: MemoryRecord, busy: RwSignal<bool>) -> impl IntoView {
    let page = use_page();
    let questions = record.kind.not_for().to_vec();
    if questions.is_empty() {
        return ().into_any();
    }
    let (id, version, is_current) = (record.id.clone(), record.version, record.is_current());
    let items = questions
        .into_iter()
        .map(|question| {
            let id = id.clone();
            let text = question.clone();
            let take_back = move |_| {
                let (id, question) = (id.clone(), question.clone());
                busy.set(true);
                spawn_local(async move {
                    let outcome = page
                        .session()
                        .change_scope(&id, version, &question, ScopeChange::RelevantAgain)
                        .await;
                    busy.set(false);
                    page.report(outcome, |_| {
                        "It applies to questions like that one again.".into()
                    });
                });
            };
            view! {
                <li>
                    "“" {text} "”"
                    <Show when=move || is_current>
                        <button type="button" class="memory-relevant-again secondary" prop:disabled=busy
                            on:click=take_back.clone()>"Apply there again"</button>
                    </Show>
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="memory-not-for">
            <p>"Not attached to questions like:"</p>
            <ul>{items}</ul>
        </div>
    }
    .into_any()
}
