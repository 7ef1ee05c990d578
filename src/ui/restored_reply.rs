//! A reply kept from an earlier visit: shown as it was, with the lessons that shaped
//! it then, its prompt as sent, and "this is right" (the session makes the turn whole
//! again against today's memory before anything is written).

use leptos::prelude::*;

use crate::ui::confirm_answer::ConfirmAnswer;
use crate::ui::lesson_chip::LessonChip;
use crate::ui::reply_view::ParsedReplyView;
use crate::ui::turn_place::turn_element_id;
use crate::ui::turn_source::TurnSource;
use remind_app::conversation::SavedTurn;

#[component]
pub fn RestoredReply(saved: SavedTurn) -> impl IntoView {
    let applied = (!saved.lessons.is_empty()).then(|| {
        let chips = saved
            .lessons
            .iter()
            .cloned()
            .map(|lesson| view! { <LessonChip lesson/> })
            .collect_view();
        view! {
            <aside id=turn_element_id("applied-memory") class="applied">
                <strong>"Applied memory:"</strong>
                <ul class="lesson-chips">{chips}</ul>
            </aside>
        }
    });
    let confirmable = !saved.stopped_by_user
        && saved.reply.understanding.is_some()
        && saved.reply.answer.is_some();
    let confirm =
        confirmable.then(|| view! { <ConfirmAnswer source=TurnSource::Saved(saved.clone())/> });
    let prompt = saved.prompt.clone();
    view! {
        {applied}
        <ParsedReplyView reply=saved.reply.clone()/>
        {confirm}
        <details class="prompt-panel" id=turn_element_id("prompt-panel")>
            <summary>"Show prompt"</summary>
            <pre id=turn_element_id("prompt-sent") tabindex="0">{prompt}</pre>
        </details>
    }
}
