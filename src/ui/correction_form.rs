//! "Not what I meant": the user's clarification, saved only when the write committed.

use leptos::ev::SubmitEvent;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ui::correction_scope::{Scope, ScopeChoice};
use crate::ui::page_context::{TurnState, use_page};
use crate::ui::rule_proposal::RuleProposalView;
use crate::ui::scope_editor::ScopeEditor;
use remind_app::correct::{CorrectError, CorrectionOutcome};
use remind_app::revise::ReviseError;
use remind_core::memory::MemoryError;
use remind_core::reflection::RuleProposal;
use remind_core::request_pattern::{RequestPattern, ScopeWord};

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
    let scope = RwSignal::new(Scope::QuestionsLikeThisOne);
    let words = RwSignal::new(Vec::<ScopeWord>::new());
    let save = RwSignal::new(SaveState::Idle);
    let proposal = RwSignal::new(None::<RuleProposal>);
    let answered = move || matches!(page.turn.get(), TurnState::Answered(_));

    // A new question closes the form and clears its last status: a "Saved" or a
    // refusal belongs to the turn it was about. Where the next correction applies is
    // chosen afresh, so an "every question" choice never carries over unseen.
    Effect::new(move |_| {
        if !answered() {
            open.set(false);
            proposal.set(None);
            save.set(SaveState::Idle);
            scope.set(Scope::QuestionsLikeThisOne);
        }
    });

    let on_open = move |_| {
        if let Some(turn) = page.answered_turn() {
            words.set(RequestPattern::proposed_for(&turn.prepared.question));
        }
        open.set(true);
        save.set(SaveState::Idle);
    };
    let on_submit = move |ev: SubmitEvent| {
        ev.prevent_default();
        let Some(turn) = page.answered_turn() else {
            return;
        };
        let chosen = scope.get_untracked();
        let correction = match chosen.correction(text.get_untracked(), &words.get_untracked()) {
            Ok(correction) => correction,
            Err(why) => {
                save.set(SaveState::Error(format!("Not saved: {why}")));
                return;
            }
        };
        save.set(SaveState::Pending);
        let session = page.session();
        spawn_local(async move {
            match session.correct(&turn, correction).await {
                Ok(CorrectionOutcome::Saved(written)) => {
                    let note = chosen.saved_note(written.replaced.is_some());
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
                    <fieldset class="scope">
                        <legend>"Apply it to"</legend>
                        <ScopeChoice id="clarification-reach-similar" name="clarification-scope" label=Scope::QuestionsLikeThisOne.label() value=Scope::QuestionsLikeThisOne scope/>
                        <Show when=move || scope.get() == Scope::QuestionsLikeThisOne>
                            <ScopeEditor words id="scope"/>
                        </Show>
                        <ScopeChoice id="clarification-reach-every" name="clarification-scope" label=Scope::EveryQuestion.label() value=Scope::EveryQuestion scope/>
                        <ScopeChoice id="clarification-once" name="clarification-scope" label=Scope::JustThisOnce.label() value=Scope::JustThisOnce scope/>
                    </fieldset>
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
