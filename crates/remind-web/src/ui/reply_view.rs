//! The reply, split into the model's understanding and its answer, with the stored
//! lesson that was applied and any error in words the user can act on.

use leptos::prelude::*;

use crate::ui::confirm_answer::ConfirmAnswer;
use crate::ui::page_context::{TurnState, use_page};
use crate::ui::prompt_panel::PromptPanel;
use remind_app::ask::{AppliedMemory, Turn};

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
    let applied = turn
        .prepared
        .applied
        .clone()
        .map(|applied| view! { <Applied applied/> });
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
        {confirm}
        <PromptPanel turn/>
    }
}

#[component]
fn Applied(applied: AppliedMemory) -> impl IntoView {
    let score = applied.score.to_string();
    let score_attribute = applied.score.value().to_string();
    view! {
        <aside id="applied-memory" class="applied" data-score=score_attribute>
            <strong>"Applied memory: "</strong>
            <span class="applied-clarification">{applied.record.clarification().unwrap_or_default().to_string()}</span>
            <span class="applied-source">" (taught on: “" {applied.record.question} "”; " {score} ")"</span>
        </aside>
    }
}
