//! The page's load marked on the browser's performance timeline (User Timing marks),
//! so DevTools and `bench/memory-scale.mjs` can tell where a reload's time went.

/// A step of the page's load, by the name its mark has on the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadStep {
    /// The page's wasm is compiled and its `main` runs.
    WasmStarted,
    /// The page is drawn, its memory not yet read.
    Mounted,
    /// The page's connection to the database is open (on a load, and again after
    /// another tab's upgrade made it let go).
    DatabaseOpen,
    /// The records (not their embeddings) are read and decoded, by a load.
    RecordsRead,
}

impl LoadStep {
    pub fn mark_name(self) -> &'static str {
        match self {
            LoadStep::WasmStarted => "remind:wasm-started",
            LoadStep::Mounted => "remind:mounted",
            LoadStep::DatabaseOpen => "remind:database-open",
            LoadStep::RecordsRead => "remind:records-read",
        }
    }
}

/// Marks `step` on the timeline, when the page has one (a worker or an old browser
/// may not: nothing is marked then).
pub fn mark(step: LoadStep) {
    if let Some(performance) = web_sys::window().and_then(|window| window.performance()) {
        let _ = performance.mark(step.mark_name());
    }
}
