//! One lesson in the memory browser: what it says, where it came from, how it has
//! fared, and the actions that change it (edit its text or where it applies, withdraw,
//! undo, forget, history).

use leptos::prelude::*;

use crate::ui::memory_exceptions::MemoryExceptions;
use crate::ui::memory_history::MemoryHistory;
use crate::ui::memory_scope_editor::MemoryScopeEditor;
use crate::ui::page_context::PageContext;
use crate::ui::page_context::use_page;
use crate::ui::record_labels::{change_label, kind_label, scope_label, source_label, state_label};
use remind_core::memory::ScopeChange;
use remind_core::memory_key::MemoryKey;
use remind_core::record::{MemoryRecord, RecordId};
use remind_core::withdrawal::UndoOutcome;

/// Which inline panel of the item is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Panel {
    None,
    Edit,
    Scope,
    Undo,
    Forget,
}

/// What the memory browser can do to one lesson; each is one use-case of the session,
/// and its outcome goes to the memory notice.
#[derive(Clone, Debug, PartialEq)]
pub enum LessonChange {
    Edit(String),
    Withdraw,
    Undo(UndoOutcome),
    Forget,
    /// Takes back a "not relevant here" mark, given as the lesson holds it.
    RelevantAgain(String),
}

impl LessonChange {
    async fn run(self, page: PageContext, id: &RecordId, version: u32, key: &MemoryKey) {
        let session = page.session();
        match self {
            LessonChange::Edit(text) => page.report(session.edit(id, version, &text).await, |_| {
                "Saved. The edited lesson replaces the old one, which stays in history.".into()
            }),
            LessonChange::Withdraw => page.report(session.withdraw(id, version).await, |_| {
                "Withdrawn. It no longer applies and stays in history.".into()
            }),
            LessonChange::Undo(outcome) => page
                .report(session.undo(id, version, outcome).await, move |_| {
                    format!("Undone. {}", outcome.describe())
                }),
            LessonChange::Forget => page.report(session.forget(key).await, |n| {
                format!("Forgotten: {n} records erased for good.")
            }),
            LessonChange::RelevantAgain(question) => page.report(
                session
                    .change_scope(id, version, &question, ScopeChange::RelevantAgain)
                    .await,
                |_| "It applies to questions like that one again.".into(),
            ),
        }
    }
}

fn stats_label(record: &MemoryRecord) -> String {
    format!(
        "applied {} times, still misread {} times",
        record.stats.times_applied, record.stats.times_failed_after_applied
    )
}

fn verified_label(record: &MemoryRecord) -> Option<String> {
    (!record.kind.is_clarification()).then(|| record.kind.text())
}

#[component]
pub fn MemoryItem(record: MemoryRecord) -> impl IntoView {
    let page = use_page();
    let panel = RwSignal::new(Panel::None);
    let show_history = RwSignal::new(false);
    let draft = RwSignal::new(record.clarification().unwrap_or_default().to_string());

    let is_current = record.is_current();
    // A verified example is a confirmed reply, not text to rewrite.
    let editable = is_current && record.kind.is_clarification();
    let id = record.id.clone();
    // The counts change without the lesson changing (a question asked here or in
    // another tab), so they are read from the memory, not from the item's copy.
    let live = {
        let id = id.clone();
        let initial = (stats_label(&record), record.is_flagged());
        Memo::new(move |_| {
            page.memory.with(|memory| {
                memory
                    .get(&id)
                    .map_or_else(|| initial.clone(), |r| (stats_label(r), r.is_flagged()))
            })
        })
    };
    let flagged = move || live.with(|(_, flagged)| *flagged);
    let key = record.key.clone();
    let version = record.version;
    let undo_choices = page
        .memory
        .with_untracked(|memory| memory.undo_choices(&id));

    let close_scope = Callback::new(move |()| panel.set(Panel::None));
    let scoped = record.clone();
    let toggle = move |which: Panel| {
        panel.update(|p| *p = if *p == which { Panel::None } else { which });
    };
    // One action for every change to this lesson: its pending state disables the
    // buttons that write, so a second click cannot write twice.
    let change = {
        let (id, key) = (id.clone(), key.clone());
        Action::new_local(move |change: &LessonChange| {
            let (change, id, key) = (change.clone(), id.clone(), key.clone());
            async move { change.run(page, &id, version, &key).await }
        })
    };
    let busy = change.pending();
    let undo_buttons = undo_choices
        .into_iter()
        .map(|choice| {
            let name = match choice {
                UndoOutcome::RestorePredecessor => "undo-restore",
                UndoOutcome::WithdrawBoth => "undo-withdraw-both",
            };
            view! {
                <li>
                    <button type="button" class=name prop:disabled=busy
                        on:click=move |_| { change.dispatch(LessonChange::Undo(choice)); }>
                        {choice.describe()}
                    </button>
                </li>
            }
        })
        .collect_view();

    view! {
        <li class="memory-item" tabindex="-1" data-id=record.id.0.clone() data-state=state_label(record.state)
            data-flagged=move || flagged().to_string()>
            <p class="memory-question">{record.question.clone()}</p>
            <p class="memory-clarification">{record.clarification().unwrap_or_default().to_string()}</p>
            {verified_label(&record).map(|text| view! { <p class="memory-verified">{text}</p> })}
            <MemoryExceptions record=record.clone() change/>
            <p class="memory-meta">
                {kind_label(&record)} " · " {state_label(record.state)} " · "
                <span class="memory-scope">{scope_label(&record)}</span> " · "
                {source_label(record.source)} " · " {change_label(&record)} " · "
                <span class="memory-stats">{move || live.with(|(stats, _)| stats.clone())}</span>
                <Show when=flagged>
                    <strong class="memory-flag">" · needs review: it keeps being misread"</strong>
                </Show>
            </p>
            <div class="memory-actions">
                <Show when=move || editable>
                    <button type="button" class="memory-edit" on:click=move |_| toggle(Panel::Edit)>"Edit"</button>
                    <button type="button" class="memory-scope-edit" on:click=move |_| toggle(Panel::Scope)>"Edit where it applies"</button>
                </Show>
                <Show when=move || is_current>
                    <button type="button" class="memory-withdraw" prop:disabled=busy
                        on:click=move |_| { change.dispatch(LessonChange::Withdraw); }>"Withdraw"</button>
                    <button type="button" class="memory-undo" on:click=move |_| toggle(Panel::Undo)>"Undo…"</button>
                </Show>
                <button type="button" class="memory-history-toggle" on:click=move |_| show_history.update(|s| *s = !*s)>"History"</button>
                <button type="button" class="memory-forget" on:click=move |_| toggle(Panel::Forget)>"Forget permanently…"</button>
            </div>
            <Show when=move || panel.get() == Panel::Edit>
                <div class="memory-edit-form">
                    <textarea class="memory-edit-input" rows="2" aria-label="The lesson's new text" prop:value=draft
                        on:input=move |ev| draft.set(event_target_value(&ev))></textarea>
                    <button type="button" class="memory-edit-save" prop:disabled=busy
                        on:click=move |_| { change.dispatch(LessonChange::Edit(draft.get_untracked())); }>"Save edit"</button>
                </div>
            </Show>
            <Show when=move || panel.get() == Panel::Scope>
                <MemoryScopeEditor record=scoped.clone() close=close_scope/>
            </Show>
            <Show when=move || panel.get() == Panel::Undo>
                <ul class="memory-undo-choices">{undo_buttons.clone()}</ul>
            </Show>
            <Show when=move || panel.get() == Panel::Forget>
                <p class="memory-forget-confirm">
                    "Erase every record of this question, history included? This cannot be undone. "
                    <button type="button" class="memory-forget-confirm-button" prop:disabled=busy
                        on:click=move |_| { change.dispatch(LessonChange::Forget); }>"Erase for good"</button>
                </p>
            </Show>
            <Show when=move || show_history.get()>
                <MemoryHistory key=key.clone()/>
            </Show>
        </li>
    }
}
