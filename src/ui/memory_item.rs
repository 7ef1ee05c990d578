//! One lesson in the memory browser: what it says, where it came from, how it has
//! fared, and the actions that change it (edit its text or where it applies, withdraw,
//! undo, forget, history).

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ui::memory_exceptions::MemoryExceptions;
use crate::ui::memory_history::MemoryHistory;
use crate::ui::memory_scope_editor::MemoryScopeEditor;
use crate::ui::page_context::use_page;
use crate::ui::record_labels::{change_label, kind_label, scope_label, source_label, state_label};
use remind_core::record::MemoryRecord;
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
    let busy = RwSignal::new(false);

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
    let save_edit = {
        let id = id.clone();
        move |_| {
            let (id, text) = (id.clone(), draft.get_untracked());
            busy.set(true);
            spawn_local(async move {
                let outcome = page.session().edit(&id, version, &text).await;
                busy.set(false);
                page.report(outcome, |_| {
                    "Saved. The edited lesson replaces the old one, which stays in history.".into()
                });
            });
        }
    };
    let withdraw = {
        let id = id.clone();
        move |_| {
            let id = id.clone();
            busy.set(true);
            spawn_local(async move {
                let outcome = page.session().withdraw(&id, version).await;
                busy.set(false);
                page.report(outcome, |_| {
                    "Withdrawn. It no longer applies and stays in history.".into()
                });
            });
        }
    };
    let undo = {
        let id = id.clone();
        move |outcome: UndoOutcome| {
            let id = id.clone();
            busy.set(true);
            spawn_local(async move {
                let result = page.session().undo(&id, version, outcome).await;
                busy.set(false);
                page.report(result, move |_| format!("Undone. {}", outcome.describe()));
            });
        }
    };
    let forget = {
        let key = key.clone();
        move |_| {
            let key = key.clone();
            busy.set(true);
            spawn_local(async move {
                let outcome = page.session().forget(&key).await;
                busy.set(false);
                page.report(outcome, |n| {
                    format!("Forgotten: {n} records erased for good.")
                });
            });
        }
    };

    let undo_buttons = undo_choices
        .into_iter()
        .map(|choice| {
            let undo = undo.clone();
            let name = match choice {
                UndoOutcome::RestorePredecessor => "undo-restore",
                UndoOutcome::WithdrawBoth => "undo-withdraw-both",
            };
            view! {
                <li>
                    <button type="button" class=name prop:disabled=busy on:click=move |_| undo(choice)>
                        {choice.describe()}
                    </button>
                </li>
            }
        })
        .collect_view();

    view! {
        <li class="memory-item" data-id=record.id.0.clone() data-state=state_label(record.state)
            data-flagged=move || flagged().to_string()>
            <p class="memory-question">{record.question.clone()}</p>
            <p class="memory-clarification">{record.clarification().unwrap_or_default().to_string()}</p>
            {verified_label(&record).map(|text| view! { <p class="memory-verified">{text}</p> })}
            <MemoryExceptions record=record.clone() busy/>
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
                    <button type="button" class="memory-withdraw" prop:disabled=busy on:click=withdraw.clone()>"Withdraw"</button>
                    <button type="button" class="memory-undo" on:click=move |_| toggle(Panel::Undo)>"Undo…"</button>
                </Show>
                <button type="button" class="memory-history-toggle" on:click=move |_| show_history.update(|s| *s = !*s)>"History"</button>
                <button type="button" class="memory-forget" on:click=move |_| toggle(Panel::Forget)>"Forget permanently…"</button>
            </div>
            <Show when=move || panel.get() == Panel::Edit>
                <div class="memory-edit-form">
                    <textarea class="memory-edit-input" rows="2" prop:value=draft
                        on:input=move |ev| draft.set(event_target_value(&ev))></textarea>
                    <button type="button" class="memory-edit-save" prop:disabled=busy on:click=save_edit.clone()>"Save edit"</button>
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
                    <button type="button" class="memory-forget-confirm-button" prop:disabled=busy on:click=forget.clone()>"Erase for good"</button>
                </p>
            </Show>
            <Show when=move || show_history.get()>
                <MemoryHistory key=key.clone()/>
            </Show>
        </li>
    }
}
