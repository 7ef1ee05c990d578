//! Warns before the tab is closed or left while a memory write is still in flight, so
//! a correction is not lost to a closed tab between "Saving…" and "Saved".
//!
//! The store holds a [`WriteInFlight`] for the length of each write; one
//! `beforeunload` listener, installed with the first write, asks the browser to
//! confirm leaving while any is held.

use std::cell::Cell;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::BeforeUnloadEvent;

thread_local! {
    static WRITES_IN_FLIGHT: Cell<u32> = const { Cell::new(0) };
    static LISTENING: Cell<bool> = const { Cell::new(false) };
}

/// Held while a write is in flight; dropping it ends the write's claim.
pub struct WriteInFlight(());

impl WriteInFlight {
    pub fn begin() -> Self {
        listen_once();
        WRITES_IN_FLIGHT.with(|n| n.set(n.get() + 1));
        WriteInFlight(())
    }
}

impl Drop for WriteInFlight {
    fn drop(&mut self) {
        WRITES_IN_FLIGHT.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

/// Whether a write is in flight now (the page's "Saving…" means one is).
pub fn writes_in_flight() -> u32 {
    WRITES_IN_FLIGHT.with(Cell::get)
}

fn listen_once() {
    if LISTENING.with(|l| l.replace(true)) {
        return;
    }
    let Some(window) = web_sys::window() else {
        return;
    };
    let on_leave = Closure::<dyn Fn(BeforeUnloadEvent)>::new(|event: BeforeUnloadEvent| {
        if writes_in_flight() > 0 {
            // Both, for the browsers that read either: the text itself is never shown.
            event.prevent_default();
            event.set_return_value("A change to your memory is still being saved.");
        }
    });
    let _ =
        window.add_event_listener_with_callback("beforeunload", on_leave.as_ref().unchecked_ref());
    // The listener lives as long as the page.
    on_leave.forget();
}
