//! "Edit where it applies" in the memory browser: a current clarification's patterns,
//! each removable, new ones chosen word by word on the question it was taught on, or
//! "every question"; saved as a new version of the lesson, so history keeps the old
//! scope and undo brings it back.

use leptos::prelude::*;

use crate::ui::correction_scope::ScopeChoice;
use crate::ui::page_context::use_page;
use crate::ui::scope_editor::{ScopeEditor, chosen_pattern};
use remind_core::record::{MemoryRecord, Reach};
use remind_core::request_pattern::{RequestPattern, ScopeWord};

/// The two scopes a kept lesson can have ("just this once" is never kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReachChoice {
    QuestionsLikeThese,
    EveryQuestion,
}

/// What the word editor is choosing: nothing (it is closed), a pattern to add, or a new
/// form of the listed pattern at that place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Draft {
    Closed,
    Adding,
    Changing(usize),
}

/// The scope the editor's choices make. The patterns are kept while "every question"
/// is chosen, so choosing "questions like these" again before saving brings them back.
fn chosen_reach(choice: ReachChoice, patterns: &[RequestPattern]) -> Reach {
    match choice {
        ReachChoice::QuestionsLikeThese => Reach::QuestionsLike(patterns.to_vec()),
        ReachChoice::EveryQuestion => Reach::EveryQuestion,
    }
}

/// `patterns` with the pattern the chosen words make in the draft's place, or why it
/// cannot go there (slots alone; already listed).
fn with_draft(
    patterns: &[RequestPattern],
    draft: Draft,
    words: &[ScopeWord],
) -> Result<Vec<RequestPattern>, String> {
    let pattern = chosen_pattern(words)?;
    let listed_elsewhere = patterns
        .iter()
        .enumerate()
        .any(|(i, p)| *p == pattern && draft != Draft::Changing(i));
    if listed_elsewhere {
        return Err(format!("“{pattern}” is already listed"));
    }
    let mut patterns = patterns.to_vec();
    match draft {
        Draft::Changing(i) if i < patterns.len() => patterns[i] = pattern,
        _ => patterns.push(pattern),
    }
    Ok(patterns)
}

#[component]
pub fn MemoryScopeEditor(record: MemoryRecord, close: Callback<()>) -> impl IntoView {
    let page = use_page();
    let question = record.question.clone();
    let (first_choice, first_patterns) = match record.kind.reach() {
        Some(Reach::EveryQuestion) => (ReachChoice::EveryQuestion, Vec::new()),
        _ => (
            ReachChoice::QuestionsLikeThese,
            record.kind.patterns().to_vec(),
        ),
    };
    let choice = RwSignal::new(first_choice);
    let patterns = RwSignal::new(first_patterns);
    let draft = RwSignal::new(Draft::Closed);
    let words = RwSignal::new(Vec::<ScopeWord>::new());
    let draft_error = RwSignal::new(None::<String>);
    // One radio group per lesson: several editors may be open at once.
    let group = format!("reach-{}", record.id.0);

    let (id, version) = (record.id.clone(), record.version);
    // The save: its pending state disables the buttons, its value holds a refusal to
    // show here. A saved scope is a new version, so the item is redrawn and this
    // editor closes; the notice says so.
    let save = Action::new_local(move |reach: &Reach| {
        let (id, reach) = (id.clone(), reach.clone());
        async move {
            page.session()
                .change_reach(&id, version, reach)
                .await
                .map_err(|e| e.to_string())?;
            page.report(Ok::<_, String>(()), |_| {
                "Saved. It applies where you chose; the earlier scope stays in history.".into()
            });
            Ok::<_, String>(())
        }
    });
    let pending = save.pending();
    let refusal = move || match save.value().get() {
        Some(Err(message)) => Some(message),
        _ => None,
    };

    // Puts the drafted pattern in the list; false (with the reason shown) if it cannot.
    let take_draft = move || {
        if draft.get_untracked() == Draft::Closed {
            return true;
        }
        let taken = patterns.with_untracked(|listed| {
            words.with_untracked(|chosen| with_draft(listed, draft.get_untracked(), chosen))
        });
        match taken {
            Ok(listed) => {
                patterns.set(listed);
                draft.set(Draft::Closed);
                draft_error.set(None);
                true
            }
            Err(why) => {
                draft_error.set(Some(why));
                false
            }
        }
    };
    let open_draft = move |chosen: Vec<ScopeWord>, which: Draft| {
        words.set(chosen);
        draft.set(which);
        draft_error.set(None);
    };
    let add = {
        let question = question.clone();
        move |_| open_draft(RequestPattern::proposed_for(&question), Draft::Adding)
    };
    let on_save = move |_| {
        // A pattern being chosen when Save is pressed is part of what the user saves.
        if take_draft() {
            save.dispatch(chosen_reach(
                choice.get_untracked(),
                &patterns.get_untracked(),
            ));
        }
    };
    let rows = move || {
        patterns
            .get()
            .into_iter()
            .enumerate()
            .map(|(index, pattern)| {
                // A pattern the taught question fits is re-chosen on its words; one
                // added from another question's suggestion can only be removed.
                let change = pattern.words_of(&question).map(|chosen| {
                    view! {
                        <button type="button" class="memory-scope-change secondary"
                            on:click=move |_| open_draft(chosen.clone(), Draft::Changing(index))>
                            "Change"
                        </button>
                    }
                });
                let remove = move |_| {
                    patterns.update(|listed| {
                        if index < listed.len() {
                            listed.remove(index);
                        }
                    });
                    draft.set(Draft::Closed);
                };
                view! {
                    <li>
                        <code class="memory-scope-pattern">{pattern.to_string()}</code>
                        {change}
                        <button type="button" class="memory-scope-remove secondary" on:click=remove>"Remove"</button>
                    </li>
                }
            })
            .collect_view()
    };
    let no_patterns = move || patterns.with(Vec::is_empty);
    let like_these = move || choice.get() == ReachChoice::QuestionsLikeThese;
    let drafting = move || draft.get() != Draft::Closed;
    let add_button = move || {
        let add = add.clone();
        view! {
            <button type="button" class="memory-scope-add secondary" on:click=add>
                "Add a kind of question"
            </button>
        }
    };

    view! {
        <fieldset class="memory-scope-editor">
            <legend>"Apply it to"</legend>
            <ScopeChoice class="memory-reach-like" name=group.clone() label="questions like these"
                value=ReachChoice::QuestionsLikeThese scope=choice/>
            <Show when=like_these>
                <ul class="memory-scope-patterns" aria-label="Kinds of question it applies to">{rows.clone()}</ul>
                <Show when=no_patterns>
                    <p class="hint">"No pattern: it goes with questions close enough in meaning."</p>
                </Show>
                <Show when=drafting fallback=add_button.clone()>
                    <ScopeEditor words/>
                    <button type="button" class="memory-scope-use secondary" on:click=move |_| { take_draft(); }>
                        "Use this pattern"
                    </button>
                    <button type="button" class="memory-scope-discard secondary" on:click=move |_| draft.set(Draft::Closed)>
                        "Discard"
                    </button>
                    <p class="memory-scope-draft-error error" role="alert">{move || draft_error.get()}</p>
                </Show>
            </Show>
            <ScopeChoice class="memory-reach-every" name=group label="every question"
                value=ReachChoice::EveryQuestion scope=choice/>
            <div class="memory-scope-actions">
                <button type="button" class="memory-scope-save" prop:disabled=pending on:click=on_save>"Save"</button>
                <button type="button" class="memory-scope-cancel secondary" prop:disabled=pending
                    on:click=move |_| close.run(())>"Cancel"</button>
            </div>
            <p class="memory-scope-refusal error" role="alert">{refusal}</p>
        </fieldset>
    }
}
