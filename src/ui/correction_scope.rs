//! Where a correction applies, as the form offers it: questions like this one, every
//! question, or just this once.

use leptos::prelude::*;

use crate::ui::scope_editor::chosen_pattern;
use remind_app::correct::Correction;
use remind_core::record::Reach;
use remind_core::request_pattern::ScopeWord;
use remind_core::write_gate::Durability;

/// Where the user wants the correction to go: the three choices of the form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    QuestionsLikeThisOne,
    EveryQuestion,
    JustThisOnce,
}

impl Scope {
    pub fn label(self) -> &'static str {
        match self {
            Scope::QuestionsLikeThisOne => "questions like this one",
            Scope::EveryQuestion => "every question (a name, a language, a tone, a length)",
            Scope::JustThisOnce => "just this once (apply now, do not remember)",
        }
    }

    /// The correction to send; under "questions like this one", the pattern the chosen
    /// words make, or why they make none.
    pub fn correction(
        self,
        clarification: String,
        words: &[ScopeWord],
    ) -> Result<Correction, String> {
        let (durability, reach) = match self {
            Scope::QuestionsLikeThisOne => (
                Durability::Lasting,
                Reach::QuestionsLike(vec![chosen_pattern(words)?]),
            ),
            Scope::EveryQuestion => (Durability::Lasting, Reach::EveryQuestion),
            Scope::JustThisOnce => (Durability::JustThisOnce, Reach::default()),
        };
        Ok(Correction {
            clarification,
            durability,
            reach,
        })
    }

    pub fn saved_note(self, replaced_one: bool) -> &'static str {
        match (self, replaced_one) {
            (_, true) => "Saved. It replaces the earlier lesson for this kind of question.",
            (Scope::EveryQuestion, false) => "Saved. It will go with every question.",
            _ => "Saved. It will be applied to questions like this one.",
        }
    }
}

/// One radio of a choice of where a lesson goes: the correction form's three, or the
/// memory browser's two. `name` groups the radios of one choice; the memory browser's
/// have no `id` (several lessons' editors may be open) and are found by `class`.
#[component]
pub fn ScopeChoice<T>(
    #[prop(optional, into)] id: Option<Signal<String>>,
    #[prop(optional)] class: Option<&'static str>,
    #[prop(into)] name: String,
    label: &'static str,
    value: T,
    scope: RwSignal<T>,
) -> impl IntoView
where
    T: Copy + PartialEq + Send + Sync + 'static,
{
    view! {
        <label class="scope-choice">
            <input
                id=move || id.map(|id| id.get())
                class=class
                type="radio"
                name=name
                prop:checked=move || scope.get() == value
                on:change=move |_| scope.set(value)
            />
            {label}
        </label>
    }
}
