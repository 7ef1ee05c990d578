//! The words the page uses for a record's kind, source, state and time, and for why a
//! lesson was or was not matched, in one place so every view names them the same way.

use remind_core::memory_query::{KindFilter, StateFilter};
use remind_core::record::{
    ChangeReason, MemoryRecord, Reach, RecordKind, RecordState, Source, Timestamp,
};
use remind_core::retrieval::Decision;
use remind_core::turn::AppliedBecause;

/// Why retrieval attached a lesson to a question, or did not.
pub fn decision_label(decision: Decision) -> String {
    match decision {
        Decision::NothingStored => "no lessons stored yet".into(),
        Decision::NotConsulted => "this turn does not consult memory".into(),
        Decision::NoQuestionEmbedding => {
            "the question has no embedding (the model is not loaded)".into()
        }
        Decision::EditDistance { distance, limit } => format!(
            "nearest stored question is {distance} edits away ({} {limit})",
            if distance < limit {
                "below"
            } else {
                "not below"
            }
        ),
        Decision::Cosine { cosine, tau } => format!(
            "most similar stored question has cosine {cosine:.3} ({} τ = {tau:.2})",
            if cosine >= tau { "at least" } else { "below" }
        ),
        Decision::Measured {
            measure,
            distance,
            limit,
        } => format!(
            "nearest stored question is at {measure} {distance:.2} ({} the limit {limit:.2})",
            if distance <= limit {
                "within"
            } else {
                "beyond"
            }
        ),
        Decision::SameRequest => "a stored question is the same request about another word".into(),
        Decision::Opposite { cosine, .. } => format!(
            "most similar stored question has cosine {cosine:.3}, but one asks for the opposite of the other"
        ),
    }
}

pub fn kind_label(record: &MemoryRecord) -> &'static str {
    match record.kind {
        RecordKind::Clarification { .. } => "clarification",
        RecordKind::VerifiedExample { .. } => "verified example",
    }
}

/// Which questions a stored record goes with, for the memory browser.
pub fn scope_label(record: &MemoryRecord) -> String {
    match record.kind.reach() {
        Some(Reach::EveryQuestion) => "applies to every question".into(),
        Some(Reach::QuestionsLike(patterns)) if patterns.is_empty() => {
            "applies to questions close enough in meaning".into()
        }
        Some(Reach::QuestionsLike(patterns)) => {
            let patterns: Vec<String> = patterns.iter().map(|p| format!("“{p}”")).collect();
            format!(
                "applies to {}, and to questions close enough in meaning",
                patterns.join(", ")
            )
        }
        None => "shown as an example for similar questions".into(),
    }
}

/// Why a stored lesson went with this turn, in words.
pub fn applied_because_label(because: &AppliedBecause) -> String {
    match because {
        AppliedBecause::FitsScope(pattern) => format!("fits its scope “{pattern}”"),
        AppliedBecause::Similar { score, decision } => {
            format!("{score}; {}", decision_label(*decision))
        }
        AppliedBecause::EveryQuestion => "you asked for it on every question".into(),
    }
}

pub fn kind_filter_label(filter: KindFilter) -> &'static str {
    match filter {
        KindFilter::Any => "all kinds",
        KindFilter::Clarification => "clarifications",
        KindFilter::VerifiedExample => "verified examples",
    }
}

pub fn state_filter_label(filter: StateFilter) -> &'static str {
    match filter {
        StateFilter::Current => "current",
        StateFilter::Superseded => "replaced",
        StateFilter::Withdrawn => "withdrawn",
        StateFilter::Any => "all states",
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
        ChangeReason::ExceptionsChanged => "changed where it applies",
        ChangeReason::Withdrawn => "withdrawn",
        ChangeReason::Undone => "undone",
    }
}

thread_local! {
    /// `Date.toLocaleString("en-GB")`'s format, made once: the browser builds a
    /// formatter on every `toLocaleString` call, about half a millisecond each, which a
    /// memory list of a hundred records paid a hundred times.
    static DAY_AND_TIME: js_sys::Function = {
        let options = js_sys::Object::new();
        for (field, form) in [
            ("year", "numeric"),
            ("month", "2-digit"),
            ("day", "2-digit"),
            ("hour", "2-digit"),
            ("minute", "2-digit"),
            ("second", "2-digit"),
        ] {
            let _ = js_sys::Reflect::set(&options, &field.into(), &form.into());
        }
        let locales = js_sys::Array::of1(&"en-GB".into());
        js_sys::Intl::DateTimeFormat::new(&locales, &options).format()
    };
}

/// A local date and time, as the browser formats it: "14/11/2023, 22:13:20".
pub fn when_label(at: Timestamp) -> String {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(at.0 as f64));
    DAY_AND_TIME
        .with(|format| format.call1(&wasm_bindgen::JsValue::NULL, &date))
        .ok()
        .and_then(|text| text.as_string())
        .unwrap_or_default()
}

/// What happened to a record last, e.g. "edited on 03/12/2026, 08:10:00".
pub fn change_label(record: &MemoryRecord) -> String {
    match &record.change {
        Some(note) => format!("{} on {}", reason_label(note.reason), when_label(note.at)),
        None => format!("taught on {}", when_label(record.created_at)),
    }
}
