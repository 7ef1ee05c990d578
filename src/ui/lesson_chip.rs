//! Which lessons shaped an answer, as chips: each names the lesson as it read then
//! and opens it in the memory browser, where it can be read in full, edited or undone.

use leptos::prelude::*;

use crate::ui::page_context::use_page;
use remind_app::conversation::SavedLesson;
use remind_core::record::RecordId;

/// A lesson applied to a turn kept from an earlier visit.
#[component]
pub fn LessonChip(lesson: SavedLesson) -> impl IntoView {
    let data_id = lesson.id.0.clone();
    view! {
        <li class="applied-lesson lesson-chip" data-id=data_id>
            <LessonLink id=lesson.id text=lesson.clarification/>
            <span class="applied-source">" (taught on: “" {lesson.taught_on} "”; " {lesson.because} ")"</span>
        </li>
    }
}

/// The lesson's words as a link to it in the memory browser.
#[component]
pub fn LessonLink(id: RecordId, text: String) -> impl IntoView {
    let page = use_page();
    let id = StoredValue::new(id);
    view! {
        <a
            class="applied-clarification lesson-link"
            href="#memory-browser"
            title="Show this lesson in the memory browser"
            on:click=move |ev| {
                ev.prevent_default();
                page.shown_lesson.set(Some(id.get_value()));
            }
        >
            {text}
        </a>
    }
}
