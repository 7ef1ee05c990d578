//! The reply, split into the model's understanding and its answer, with every stored
//! lesson that was applied and why, the closest lesson that was not (as a suggestion),
//! and any error in words the user can act on.

use leptos::prelude::*;

use crate::ui::applied_lesson::AppliedLesson;
use crate::ui::confirm_answer::ConfirmAnswer;
use crate::ui::lesson_suggestion::LessonSuggestion;
use crate::ui::page_context::{TurnState, use_page};
use crate::ui::prompt_panel::PromptPanel;
use remind_app::ask::Turn;

#[component]
pub fn ReplyView() -> impl IntoView {
    let page = use_page();
    let body = move || match page.turn.get() {
        TurnState::Idle | TurnState::Asking => ().into_any(),
        TurnState::Failed(message) => view! {
            <p id="turn-error" class="error" role="alert">{message}</p>
        }
        .into_any(),
        TurnState::Answered(turn) => view! { <Reply turn=*turn/> }.into_any(),
    };
    view! { <section class="reply" aria-live="polite">{body}</section> }
}

#[component]
fn Reply(turn: Turn) -> impl IntoView {
    let unknown = "(not stated)".to_string();
    let understanding = turn
        .reply
        .understanding
        .clone()
        .unwrap_or_else(|| unknown.clone());
    let answer = turn.reply.answer.clone().unwrap_or(unknown);
    let problems: Vec<&'static str> = turn.reply.problems.iter().map(|p| p.describe()).collect();
    let applied = (!turn.prepared.applied.is_empty()).then(|| {
        let lessons = turn.prepared.applied.clone();
        view! {
            <aside id="applied-memory" class="applied">
                <strong>"Applied memory:"</strong>
                <ul>
                    {lessons
                        .into_iter()
                        .map(|applied| view! { <AppliedLesson applied question=turn.prepared.question.clone()/> })
                        .collect_view()}
                </ul>
            </aside>
        }
    });
    let suggestion = turn.prepared.suggestion.clone().map(|suggestion| {
        view! { <LessonSuggestion suggestion question=turn.prepared.question.clone()/> }
    });
    let confirmable = turn.reply.understanding.is_some() && turn.reply.answer.is_some();
    let confirm = confirmable.then(|| view! { <ConfirmAnswer turn=turn.clone()/> });
    view! {
        {applied}
        <dl class="parsed">
            <dt>"Understanding"</dt>
            <dd id="answer-understanding">{understanding}</dd>
            <dt>"Answer"</dt>
            <dd id="answer-answer">{answer}</dd>
        </dl>
        <ul class="problems">
            {problems.into_iter().map(|p| view! { <li>{p}</li> }).collect_view()}
        </ul>
        {suggestion}
        {confirm}
        <PromptPanel turn/>
    }
}
