//! Where a correction applies, as the form offers it: questions like this one, every
//! question, or just this once.

use leptos::prelude::*;

use remind_app::correct::Correction;
use remind_core::record::Reach;
use remind_core::write_gate::Durability;

/// Where the user wants the correction to go: the three choices of the form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Remember(Reach),
    JustThisOnce,
}

impl Scope {
    pub fn correction(self, clarification: String) -> Correction {
        let (durability, reach) = match self {
            Scope::Remember(reach) => (Durability::Lasting, reach),
            Scope::JustThisOnce => (Durability::JustThisOnce, Reach::default()),
        };
        Correction {
            clarification,
            durability,
            reach,
        }
    }

    pub fn saved_note(self, replaced_one: bool) -> &'static str {
        match (self, replaced_one) {
            (_, true) => "Saved. It replaces the earlier lesson for this kind of question.",
            (Scope::Remember(Reach::EveryQuestion), false) => {
                "Saved. It will go with every question."
            }
            _ => "Saved. It will be applied to similar questions.",
        }
    }
}

#[component]
pub fn ScopeChoice(
    id: &'static str,
    value: Scope,
    scope: RwSignal<Scope>,
    label: &'static str,
) -> impl IntoView {
    view! {
        <label class="scope-choice">
            <input
                id=id
                type="radio"
                name="clarification-scope"
                prop:checked=move || scope.get() == value
                on:change=move |_| scope.set(value)
            />
            {label}
        </label>
    }
}
