//! The words the page uses for a record's kind, source, state and time, in one
//! place so every view names them the same way.

use crate::domain::record::{
    ChangeReason, MemoryRecord, RecordKind, RecordState, Source, Timestamp,
};

pub fn kind_label(record: &MemoryRecord) -> &'static str {
    match record.kind {
        RecordKind::Clarification => "clarification",
        RecordKind::VerifiedExample { .. } => "verified example",
    }
}

pub fn source_label(source: Source) -> &'static str {
    match source {
        Source::UserStated => "you said it",
        Source::UserConfirmedProposal => "you confirmed a proposed rule",
    }
}

pub fn state_label(state: RecordState) -> &'static str {
    match state {
        RecordState::Current => "current",
        RecordState::Superseded => "replaced",
        RecordState::Withdrawn => "withdrawn",
    }
}

pub fn reason_label(reason: ChangeReason) -> &'static str {
    match reason {
        ChangeReason::Corrected => "corrected",
        ChangeReason::CorrectedAfterApplied => "corrected after it was applied and still misread",
        ChangeReason::Edited => "edited",
        ChangeReason::Withdrawn => "withdrawn",
        ChangeReason::Undone => "undone",
    }
}

/// A local date and time, as the browser formats it.
pub fn when_label(at: Timestamp) -> String {
    js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(at.0 as f64))
        .to_locale_string("en-GB", &wasm_bindgen::JsValue::UNDEFINED)
        .into()
}

/// What happened to a record last, e.g. "edited on 3/12/2026, 08:10:00".
pub fn change_label(record: &MemoryRecord) -> String {
    match &record.change {
        Some(note) => format!("{} on {}", reason_label(note.reason), when_label(note.at)),
        None => format!("taught on {}", when_label(record.created_at)),
    }
}
