//! One line under the ask form that says how questions are matched to stored lessons:
//! by meaning once the model is ready, by wording while it loads or if it cannot.

use leptos::prelude::*;

use crate::ui::page_context::{BackgroundEmbedding, use_page};
use remind_app::ports::EmbedderStatus;

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1_000_000.0)
}

fn tag(status: &EmbedderStatus) -> &'static str {
    match status {
        EmbedderStatus::Off => "off",
        EmbedderStatus::Downloading { .. } => "downloading",
        EmbedderStatus::Initialising => "initialising",
        EmbedderStatus::Ready { .. } => "ready",
        EmbedderStatus::Failed(_) => "failed",
    }
}

fn message(status: &EmbedderStatus, tau: f32) -> String {
    match status {
        EmbedderStatus::Off => "Questions are matched to lessons by wording.".into(),
        EmbedderStatus::Downloading { loaded, total } => format!(
            "Downloading the matching model ({}{}); until it is ready, questions are matched by wording.",
            megabytes(*loaded),
            total
                .map(|t| format!(" of {}", megabytes(t)))
                .unwrap_or_default()
        ),
        EmbedderStatus::Initialising => {
            "Preparing the matching model; until it is ready, questions are matched by wording."
                .into()
        }
        EmbedderStatus::Ready {
            from_cache,
            load_ms,
            ..
        } => format!(
            "Questions are matched to lessons by meaning (MiniLM, threshold {tau:.2}); model {} in {:.1} s.",
            if *from_cache {
                "loaded from this browser's cache"
            } else {
                "downloaded"
            },
            *load_ms as f64 / 1000.0
        ),
        EmbedderStatus::Failed(error) => format!(
            "The matching model could not load ({error}); questions are matched by wording."
        ),
    }
}

fn background_tag(state: &BackgroundEmbedding) -> &'static str {
    match state {
        BackgroundEmbedding::Idle => "idle",
        BackgroundEmbedding::Running { .. } => "running",
        BackgroundEmbedding::Stopped { .. } => "stopped",
    }
}

fn background_message(state: &BackgroundEmbedding) -> String {
    let waiting = |count: &Option<usize>| match count {
        Some(n) => format!("{n} lessons"),
        None => "Lessons".into(),
    };
    match state {
        BackgroundEmbedding::Idle => String::new(),
        BackgroundEmbedding::Running { waiting: count } => format!(
            " {} still to be prepared for matching by meaning, in the background; until then they are matched by wording.",
            waiting(count)
        ),
        BackgroundEmbedding::Stopped {
            waiting: count,
            why,
        } => format!(
            " {} could not be prepared for matching by meaning ({why}); they are matched by wording until the page is reloaded.",
            waiting(count)
        ),
    }
}

#[component]
pub fn EmbedderStatusLine() -> impl IntoView {
    let page = use_page();
    let status = page.embedder_status;
    let tau = move || page.session().settings().semantic_tau;
    let progress = move || match status.get() {
        EmbedderStatus::Downloading { loaded, total } => {
            Some((loaded as f64, total.unwrap_or(0) as f64))
        }
        _ => None,
    };
    view! {
        <p id="embedder-status" class="status" data-state=move || tag(&status.get())>
            {move || progress().map(|(loaded, total)| view! {
                <progress id="embedder-progress" value=loaded max=total></progress>
            })}
            <span>{move || message(&status.get(), tau())}</span>
            <span id="background-embedding" data-state=move || background_tag(&page.background_embedding.get())>
                {move || background_message(&page.background_embedding.get())}
            </span>
        </p>
    }
}
