//! The page's keyboard shortcuts, listed under the question box: `/` goes to the
//! question box from anywhere but a text field, Escape stops a reply being generated.

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::ui::page_context::{PageContext, TurnState};

/// What the question box's hint lists, so the page and its shortcuts say the same.
pub const SHORTCUTS_HINT: &str = "Enter asks · / goes to the question box · Esc stops a reply · Tab reaches each turn's controls";

/// Listens for the shortcuts for as long as the page lives.
pub fn listen_for_shortcuts(page: PageContext) {
    let handle = window_event_listener(ev::keydown, move |event| match event.key().as_str() {
        "Escape" => stop_the_reply_being_generated(page),
        "/" if !typing_in_a_field(&event) => {
            event.prevent_default();
            focus_question_box();
        }
        _ => {}
    });
    on_cleanup(move || handle.remove());
}

fn stop_the_reply_being_generated(page: PageContext) {
    page.conversation.with_untracked(|entries| {
        if let Some(latest) = entries.last()
            && latest.state.get_untracked() == TurnState::Asking
        {
            latest.stop.stop();
        }
    });
}

/// A `/` typed into a text field is text, not a shortcut.
fn typing_in_a_field(event: &web_sys::KeyboardEvent) -> bool {
    event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|element| {
            matches!(element.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT")
                || element.has_attribute("contenteditable")
        })
}

/// Puts the focus in the question box: after the conversation in view changed
/// wholesale, and on `/`.
pub fn focus_question_box() {
    let input = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.get_element_by_id("ask-input"))
        .and_then(|element| element.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(input) = input {
        let _ = input.focus();
    }
}
