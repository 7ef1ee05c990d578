//! The kinds of question a lesson is kept off ("not relevant here"), listed in the
//! memory browser with a way to take each mark back.

use leptos::prelude::*;

use crate::ui::memory_item::LessonChange;
use remind_core::record::MemoryRecord;

/// The kinds of question the user marked this lesson "not relevant" to, each with a way
/// to take the mark back (a current lesson only: history is read, not changed).
#[component]
pub fn MemoryExceptions(record: MemoryRecord, change: Action<LessonChange, ()>) -> impl IntoView {
    let questions = record.kind.not_for().to_vec();
    if questions.is_empty() {
        return ().into_any();
    }
    let is_current = record.is_current();
    let busy = change.pending();
    let items = questions
        .into_iter()
        .map(|question| {
            let text = question.clone();
            let take_back = move |_| {
                change.dispatch(LessonChange::RelevantAgain(question.clone()));
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
