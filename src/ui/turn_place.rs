//! Which turn of the conversation a control belongs to. The latest turn's controls
//! carry the page's plain element ids (what the page's tests and a returning keyboard
//! user reach for); an earlier turn's carry the same ids with its number appended, so
//! every id on the page stays unique and every label still names its field.

use leptos::prelude::*;

#[derive(Clone, Copy)]
pub struct TurnPlace {
    key: u64,
    latest: Signal<bool>,
}

impl TurnPlace {
    pub fn new(key: u64, latest: Signal<bool>) -> Self {
        TurnPlace { key, latest }
    }

    /// The element id `name` within this turn.
    pub fn id(self, name: &'static str) -> Signal<String> {
        Signal::derive(move || {
            if self.latest.get() {
                name.to_string()
            } else {
                format!("{name}-turn-{}", self.key)
            }
        })
    }
}

/// The element id `name` within the turn the calling component is part of; the plain
/// name outside any turn.
pub fn turn_element_id(name: &'static str) -> Signal<String> {
    match use_context::<TurnPlace>() {
        Some(place) => place.id(name),
        None => Signal::stored(name.to_string()),
    }
}

/// A name that groups form controls (radios) within the calling component's turn: it
/// never changes as turns are added, so two turns' open forms never share a group.
pub fn turn_group_name(name: &'static str) -> String {
    match use_context::<TurnPlace>() {
        Some(place) => format!("{name}-turn-{}", place.key),
        None => name.to_string(),
    }
}
