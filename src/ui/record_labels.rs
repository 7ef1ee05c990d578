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

/// A local date and time, as `Date.toLocaleString("en-GB")` writes it: "14/11/2023,
/// 22:13:20". Written from the date's fields rather than by the browser's formatter:
/// the first formatter a page makes loads its locale data, 25–30 ms before the memory
/// list can be drawn.
pub fn when_label(at: Timestamp) -> String {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(at.0 as f64));
    format!(
        "{:02}/{:02}/{}, {:02}:{:02}:{:02}",
        date.get_date(),
        date.get_month() + 1,
        date.get_full_year(),
        date.get_hours(),
        date.get_minutes(),
        date.get_seconds()
    )
}

/// What happened to a record last, e.g. "edited on 03/12/2026, 08:10:00".
pub fn change_label(record: &MemoryRecord) -> String {
    match &record.change {
        Some(note) => format!("{} on {}", reason_label(note.reason), when_label(note.at)),
        None => format!("taught on {}", when_label(record.created_at)),
    }
}
