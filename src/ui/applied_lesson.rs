//! One stored lesson applied to a turn: what it says, why it went with the turn, and
//! "not relevant here", which keeps it off questions of this kind from then on.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ui::lesson_chip::LessonLink;
use crate::ui::page_context::use_page;
use crate::ui::record_labels::applied_because_label;
use remind_app::ask::AppliedMemory;
use remind_core::memory::ScopeChange;
use remind_core::turn::AppliedBecause;

/// Where a "not relevant here" mark on one applied lesson stands.
#[derive(Clone, Debug, PartialEq)]
enum MarkState {
    Unmarked,
    Saving,
    Saved,
    Failed(String),
}

/// One applied lesson, and "not relevant here" to keep it off questions of this kind.
/// `data-score` carries the retrieval score, absent for a standing preference and for a
/// lesson whose scope the question fits, which are not retrieved.
#[component]
pub fn AppliedLesson(applied: AppliedMemory, question: String) -> impl IntoView {
    let page = use_page();
    let mark = RwSignal::new(MarkState::Unmarked);
    let (because_tag, score_attribute) = match &applied.because {
        AppliedBecause::FitsScope(_) => ("fits-scope", None),
        AppliedBecause::Similar { score, .. } => ("similar", Some(score.value().to_string())),
        AppliedBecause::EveryQuestion => ("every-question", None),
    };
    let because = applied_because_label(&applied.because);
    let (id, version) = (applied.record.id.clone(), applied.record.version);
    let on_not_relevant = move |_| {
        let (id, question) = (id.clone(), question.clone());
        mark.set(MarkState::Saving);
        spawn_local(async move {
            let outcome = page
                .session()
                .change_scope(&id, version, &question, ScopeChange::NotRelevantHere)
                .await;
            mark.set(match outcome {
                Ok(_) => MarkState::Saved,
                Err(e) => MarkState::Failed(e.to_string()),
            });
        });
    };
    let status = move || {
        match mark.get() {
        MarkState::Unmarked | MarkState::Saving => None,
        MarkState::Saved => Some(view! {
            <span class="applied-mark-status" data-state="saved">
                " It will not be attached to questions like this one again; undo it in the memory browser."
            </span>
        }.into_any()),
        MarkState::Failed(message) => Some(view! {
            <span class="applied-mark-status error" data-state="error" role="alert">" " {message}</span>
        }.into_any()),
    }
    };
    let can_mark = move || matches!(mark.get(), MarkState::Unmarked | MarkState::Failed(_));
    view! {
        <li class="applied-lesson" data-because=because_tag data-score=score_attribute>
            <LessonLink id=applied.record.id.clone() text=applied.record.clarification().unwrap_or_default().to_string()/>
            <span class="applied-source">" (taught on: “" {applied.record.question} "”; " {because} ")"</span>
            <Show when=can_mark>
                <button type="button" class="applied-not-relevant secondary" on:click=on_not_relevant.clone()>
                    "Not relevant here"
                </button>
            </Show>
            {status}
        </li>
    }
}
