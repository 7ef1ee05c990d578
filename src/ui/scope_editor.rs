//! "Questions like this one", shown as the request with its specifics as slots: one
//! click on a word makes it a slot (any words may stand there) or a fixed word again.
//! The correction form and the memory browser's scope editor both choose patterns
//! with it, so a pattern is made the same way wherever the user makes one.

use leptos::prelude::*;

use remind_core::request_pattern::{RequestPattern, SLOT, ScopeWord};

/// The pattern the chosen words make, or why they make none.
pub fn chosen_pattern(words: &[ScopeWord]) -> Result<RequestPattern, String> {
    RequestPattern::from_words(words).map_err(|e| e.to_string())
}

/// `id` names the word group `{id}-words` and the pattern line `{id}-pattern`; without
/// it (several editors may be open in the memory browser) they go by class alone.
#[component]
pub fn ScopeEditor(
    words: RwSignal<Vec<ScopeWord>>,
    #[prop(optional, into)] id: Option<Signal<String>>,
) -> impl IntoView {
    let words_id = move || id.map(|id| format!("{}-words", id.get()));
    let pattern_id = move || id.map(|id| format!("{}-pattern", id.get()));
    let toggle = move |index: usize| {
        words.update(|words| {
            if let Some(word) = words.get_mut(index) {
                word.slot = !word.slot;
            }
        })
    };
    let chips = move || {
        words
            .get()
            .into_iter()
            .enumerate()
            .map(|(index, word)| {
                let title = if word.slot {
                    format!(
                        "\"{}\" is a slot: any words may stand here. Click to require it.",
                        word.text
                    )
                } else {
                    format!(
                        "Click to let other words stand in place of \"{}\".",
                        word.text
                    )
                };
                view! {
                    <button
                        type="button"
                        class="scope-word"
                        class:slot=word.slot
                        aria-pressed=if word.slot { "true" } else { "false" }
                        title=title
                        on:click=move |_| toggle(index)
                    >
                        {word.text}
                    </button>
                }
            })
            .collect_view()
    };
    let summary = move || match chosen_pattern(&words.get()) {
        Ok(pattern) => pattern.to_string(),
        Err(why) => why,
    };
    let valid = move || chosen_pattern(&words.get()).is_ok();
    view! {
        <div class="scope-editor">
            <p class="hint">
                "Click the words that may change from question to question; they become "
                <code>{SLOT}</code>"."
            </p>
            <div id=words_id class="scope-words" role="group" aria-label="Words of the question">
                {chips}
            </div>
            <p id=pattern_id class="scope-pattern" data-valid=move || valid().to_string() aria-live="polite">
                {summary}
            </p>
        </div>
    }
}
