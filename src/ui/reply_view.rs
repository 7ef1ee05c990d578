//! A reply of this visit, split into the model's understanding and its answer, with
//! every stored lesson that was applied and why, the closest lesson that was not (as a
//! suggestion), and the turn's own "this is right" and "show prompt".

use leptos::prelude::*;

use crate::ui::applied_lesson::AppliedLesson;
use crate::ui::confirm_answer::ConfirmAnswer;
use crate::ui::lesson_suggestion::LessonSuggestion;
use crate::ui::prompt_panel::PromptPanel;
use crate::ui::turn_place::turn_element_id;
use crate::ui::turn_source::TurnSource;
use remind_app::ask::Turn;
use remind_core::reply::{ParsedReply, ReplyProblem};

/// Shown where the model gave no understanding or no answer.
const NOT_STATED: &str = "(not stated)";

/// `temporary`: asked in a temporary conversation, so nothing of it may be kept.
#[component]
pub fn Reply(turn: Turn, temporary: bool) -> impl IntoView {
    let stopped = turn.completion.is_stopped_by_user();
    // A reply the user stopped has no end, and that is no fault of the model's.
    let problems: Vec<&'static str> = turn
        .reply
        .problems
        .iter()
        .filter(|p| !(stopped && **p == ReplyProblem::NoEnd))
        .map(|p| p.describe())
        .collect();
    let applied = (!turn.prepared.applied.is_empty()).then(|| {
        let lessons = turn.prepared.applied.clone();
        view! {
            <aside id=turn_element_id("applied-memory") class="applied">
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
    let stopped_note = stopped.then(|| {
        view! { <p class="turn-stopped hint">"You stopped this reply before it finished; ask again for the whole answer."</p> }
    });
    let confirmable =
        !temporary && !stopped && turn.reply.understanding.is_some() && turn.reply.answer.is_some();
    let confirm = confirmable
        .then(|| view! { <ConfirmAnswer source=TurnSource::Live(Box::new(turn.clone()))/> });
    view! {
        {applied}
        <ParsedReplyView reply=turn.reply.clone()/>
        {stopped_note}
        <ul class="problems">
            {problems.into_iter().map(|p| view! { <li>{p}</li> }).collect_view()}
        </ul>
        {suggestion}
        {confirm}
        <PromptPanel turn/>
    }
}

/// The understanding and the answer, line breaks kept; text, never HTML.
#[component]
pub fn ParsedReplyView(reply: ParsedReply) -> impl IntoView {
    let stated = |part: Option<String>| part.unwrap_or_else(|| NOT_STATED.to_string());
    let (understanding, answer) = (stated(reply.understanding), stated(reply.answer));
    view! {
        <dl class="parsed">
            <dt>"Understanding"</dt>
            <dd id=turn_element_id("answer-understanding") class="answer-understanding">{understanding}</dd>
            <dt>"Answer"</dt>
            <dd id=turn_element_id("answer-answer") class="answer-answer">{answer}</dd>
        </dl>
    }
}
