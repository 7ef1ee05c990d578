//! "Not what I meant": the user's clarification, saved only when the write committed.

use leptos::ev::SubmitEvent;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ui::page_context::{TurnState, use_page};
use crate::ui::rule_proposal::RuleProposalView;
use remind_app::correct::{CorrectError, Correction, CorrectionOutcome};
use remind_app::revise::ReviseError;
use remind_core::memory::MemoryError;
use remind_core::reflection::RuleProposal;
use remind_core::write_gate::Durability;

/// The state of the last save, mirrored in `data-state` for tests and styling.
#[derive(Clone, Debug, PartialEq)]
enum SaveState {
    Idle,
    Pending,
    Saved(String),
    Error(String),
}

impl SaveState {
    fn tag(&self) -> &'static str {
        match self {
            SaveState::Idle => "idle",
            SaveState::Pending => "pending",
            SaveState::Saved(_) => "saved",
            SaveState::Error(_) => "error",
        }
    }

    fn message(&self) -> String {
        match self {
            SaveState::Idle => String::new(),
            SaveState::Pending => "Saving…".into(),
            SaveState::Saved(m) | SaveState::Error(m) => m.clone(),
        }
    }
}

/// A stale refusal belongs to the turn: the correction was about an answer the old
/// lesson produced, so the way forward is to ask again, not to press Save again.
fn correction_error_text(error: &CorrectError) -> String {
    match error {
        CorrectError::Revise(ReviseError::Memory(MemoryError::Stale { .. })) => {
            format!("{error}. Ask the question again: the page now uses the current lesson.")
        }
        other => other.to_string(),
    }
}

#[component]
pub fn CorrectionForm() -> impl IntoView {
    let page = use_page();
    let open = RwSignal::new(false);
    let text = RwSignal::new(String::new());
    let once = RwSignal::new(false);
    let save = RwSignal::new(SaveState::Idle);
    let proposal = RwSignal::new(None::<RuleProposal>);
    let answered = move || matches!(page.turn.get(), TurnState::Answered(_));

    // A new question closes the form and clears its last status: a "Saved" or a
    // refusal belongs to the turn it was about.
    Effect::new(move |_| {
        if !answered() {
            open.set(false);
            proposal.set(None);
            save.set(SaveState::Idle);
        }
    });

    let on_open = move |_| {
        open.set(true);
        save.set(SaveState::Idle);
    };
    let on_submit = move |ev: SubmitEvent| {
        ev.prevent_default();
        let Some(turn) = page.answered_turn() else {
            return;
        };
        let correction = Correction {
            clarification: text.get_untracked(),
            durability: if once.get_untracked() {
                Durability::JustThisOnce
            } else {
                Durability::Lasting
            },
        };
        save.set(SaveState::Pending);
        let session = page.session();
        spawn_local(async move {
            match session.correct(&turn, correction).await {
                Ok(CorrectionOutcome::Saved(written)) => {
                    let note = if written.replaced.is_some() {
                        "Saved. It replaces the earlier lesson for this kind of question."
                    } else {
                        "Saved. It will be applied to similar questions."
                    };
                    save.set(SaveState::Saved(note.into()));
                    text.set(String::new());
                }
                Ok(CorrectionOutcome::ThisTurnOnly { clarification }) => {
                    save.set(SaveState::Idle);
                    page.turn.set(TurnState::Asking);
                    let state = match session
                        .ask_with(&turn.prepared.question, Some(&clarification))
                        .await
                    {
                        Ok(turn) => TurnState::Answered(Box::new(turn)),
                        Err(e) => TurnState::Failed(e.to_string()),
                    };
                    page.turn.set(state);
                }
                Err(e) => {
                    save.set(SaveState::Error(correction_error_text(&e)));
                }
            }
        });
    };

    // Reflection: the model turns the user's words into a general rule; nothing is
    // stored until the user accepts it in the proposal view.
    let on_propose = move |_| {
        let Some(turn) = page.answered_turn() else {
            return;
        };
        let words = text.get_untracked();
        save.set(SaveState::Pending);
        spawn_local(async move {
            match page.session().propose_rule(&turn, &words).await {
                Ok(proposed) => {
                    save.set(SaveState::Idle);
                    proposal.set(Some(proposed));
                }
                Err(e) => save.set(SaveState::Error(e.to_string())),
            }
        });
    };
    let proposal_view = move || {
        proposal
            .get()
            .map(|proposed| view! { <RuleProposalView proposal=proposed open=proposal/> })
    };

    let status_tag = move || save.get().tag();
    let status_text = move || save.get().message();
    let show_button = move || answered() && !open.get();
    let show_form = move || answered() && open.get();
    let saving = move || save.get() == SaveState::Pending;
    view! {
        <section class="correction">
            <Show when=show_button>
                <button id="not-what-i-meant" type="button" on:click=on_open>"Not what I meant"</button>
            </Show>
            <Show when=show_form>
                <form on:submit=on_submit>
                    <label for="clarification-input">"What did you mean?"</label>
                    <textarea
                        id="clarification-input"
                        rows="2"
                        placeholder="when I ask for like, I want a synonym."
                        prop:value=text
                        on:input=move |ev| text.set(event_target_value(&ev))
                    ></textarea>
                    <label class="once">
                        <input
                            id="clarification-once"
                            type="checkbox"
                            prop:checked=once
                            on:change=move |ev| once.set(event_target_checked(&ev))
                        />
                        "Just this once (apply now, do not remember)"
                    </label>
                    <div class="correction-actions">
                        <button id="clarification-save" type="submit" prop:disabled=saving>"Save"</button>
                        <button id="propose-rule" type="button" class="secondary" prop:disabled=saving on:click=on_propose>
                            "Suggest a general rule from this"
                        </button>
                    </div>
                </form>
            </Show>
            {proposal_view}
            <p id="clarification-status" class="status" data-state=status_tag>{status_text}</p>
        </section>
    }
}
