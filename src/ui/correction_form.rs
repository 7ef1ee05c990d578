//! "Not what I meant": the user's clarification, saved only when the write committed.

use leptos::ev::SubmitEvent;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ui::correction_scope::{Scope, ScopeChoice};
use crate::ui::page_context::{AskKind, use_page};
use crate::ui::rule_proposal::RuleProposalView;
use crate::ui::scope_editor::ScopeEditor;
use crate::ui::turn_place::{turn_element_id, turn_group_name};
use crate::ui::turn_source::TurnSource;
use remind_app::correct::{CorrectError, CorrectionOutcome};
use remind_app::revise::ReviseError;
use remind_core::memory::MemoryError;
use remind_core::reflection::RuleProposal;
use remind_core::request_pattern::RequestPattern;

/// The state of the last save, mirrored in `data-state` for tests and styling.
#[derive(Clone, Debug, PartialEq)]
enum SaveState {
    Idle,
    Pending,
    Saved(String),
    /// A clarification for that turn only: nothing stored, the question asked again.
    AskedAgain,
    Error(String),
}

impl SaveState {
    fn tag(&self) -> &'static str {
        match self {
            SaveState::Idle => "idle",
            SaveState::Pending => "pending",
            SaveState::Saved(_) => "saved",
            SaveState::AskedAgain => "asked-again",
            SaveState::Error(_) => "error",
        }
    }

    fn message(&self) -> String {
        match self {
            SaveState::Idle => String::new(),
            SaveState::Pending => "Saving…".into(),
            SaveState::AskedAgain => {
                "Not stored: asked again below with your clarification, for that turn only.".into()
            }
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

/// "Not what I meant" under one turn: its form, its scope and its status are the
/// turn's own, so a correction of an earlier turn never touches a later one.
#[component]
pub fn CorrectionForm(source: TurnSource) -> impl IntoView {
    let page = use_page();
    let open = RwSignal::new(false);
    let text = RwSignal::new(String::new());
    let scope = RwSignal::new(Scope::QuestionsLikeThisOne);
    let words = RwSignal::new(RequestPattern::proposed_for(source.question()));
    let save = RwSignal::new(SaveState::Idle);
    let proposal = RwSignal::new(None::<RuleProposal>);
    let source = StoredValue::new(source);

    // The form opens with the focus in it, where a keyboard user goes next.
    let input = NodeRef::<leptos::html::Textarea>::new();
    let on_open = move |_| {
        open.set(true);
        save.set(SaveState::Idle);
        request_animation_frame(move || {
            if let Some(input) = input.get_untracked() {
                let _ = input.focus();
            }
        });
    };
    let on_submit = move |ev: SubmitEvent| {
        ev.prevent_default();
        let chosen = scope.get_untracked();
        let correction = match chosen.correction(text.get_untracked(), &words.get_untracked()) {
            Ok(correction) => correction,
            Err(why) => {
                save.set(SaveState::Error(format!("Not saved: {why}")));
                return;
            }
        };
        save.set(SaveState::Pending);
        let (session, source) = (page.session(), source.get_value());
        spawn_local(async move {
            let outcome = match source.resolve(&session).await {
                Ok(turn) => session.correct(&turn, correction).await,
                Err(e) => {
                    save.set(SaveState::Error(format!("Not saved: {e}")));
                    return;
                }
            };
            match outcome {
                Ok(CorrectionOutcome::Saved(written)) => {
                    let note = chosen.saved_note(written.replaced.is_some());
                    save.set(SaveState::Saved(note.into()));
                    text.set(String::new());
                }
                Ok(CorrectionOutcome::ThisTurnOnly { clarification }) => {
                    save.set(SaveState::AskedAgain);
                    open.set(false);
                    let kind = AskKind::WithClarificationForThisTurn(clarification);
                    page.ask(source.question().to_string(), kind).await;
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
        let words = text.get_untracked();
        save.set(SaveState::Pending);
        let (session, source) = (page.session(), source.get_value());
        spawn_local(async move {
            let proposed = match source.resolve(&session).await {
                Ok(turn) => session
                    .propose_rule(&turn, &words)
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            match proposed {
                Ok(proposed) => {
                    save.set(SaveState::Idle);
                    proposal.set(Some(proposed));
                }
                Err(e) => save.set(SaveState::Error(e)),
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
    let saving = move || save.get() == SaveState::Pending;
    let input_id = turn_element_id("clarification-input");
    let scope_group = turn_group_name("clarification-scope");
    view! {
        <section class="correction">
            <Show when=move || !open.get()>
                <button id=turn_element_id("not-what-i-meant") class="not-what-i-meant" type="button" on:click=on_open>"Not what I meant"</button>
            </Show>
            <Show when=move || open.get()>
                <form on:submit=on_submit>
                    <label for=input_id>"What did you mean?"</label>
                    <textarea
                        node_ref=input
                        id=input_id
                        class="clarification-input"
                        rows="2"
                        placeholder="when I ask for like, I want a synonym."
                        prop:value=text
                        on:input=move |ev| text.set(event_target_value(&ev))
                    ></textarea>
                    <fieldset class="scope">
                        <legend>"Apply it to"</legend>
                        <ScopeChoice id=turn_element_id("clarification-reach-similar") name=scope_group.clone() label=Scope::QuestionsLikeThisOne.label() value=Scope::QuestionsLikeThisOne scope/>
                        <Show when=move || scope.get() == Scope::QuestionsLikeThisOne>
                            <ScopeEditor words id=turn_element_id("scope")/>
                        </Show>
                        <ScopeChoice id=turn_element_id("clarification-reach-every") name=scope_group.clone() label=Scope::EveryQuestion.label() value=Scope::EveryQuestion scope/>
                        <ScopeChoice id=turn_element_id("clarification-once") name=scope_group.clone() label=Scope::JustThisOnce.label() value=Scope::JustThisOnce scope/>
                    </fieldset>
                    <div class="correction-actions">
                        <button id=turn_element_id("clarification-save") type="submit" prop:disabled=saving>"Save"</button>
                        <button id=turn_element_id("propose-rule") type="button" class="secondary" prop:disabled=saving on:click=on_propose>
                            "Suggest a general rule from this"
                        </button>
                    </div>
                </form>
            </Show>
            {proposal_view}
            <p id=turn_element_id("clarification-status") class="status clarification-status" role="status" data-state=status_tag>{status_text}</p>
        </section>
    }
}
