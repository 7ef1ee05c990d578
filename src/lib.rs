//! Remind: a feedback memory (MemPrompt) around any OpenAI-compatible language model.
//!
//! Layers, innermost first: [`domain`] is pure (values in, values out); [`app`] holds
//! the use-cases over port traits; [`adapters`] hold one platform dependency each; `ui`
//! (wasm only) renders the page and calls use-cases. `ARCHITECTURE.md` names the rules.

pub mod adapters;
pub mod app;
pub mod domain;
#[cfg(all(target_arch = "wasm32", feature = "embedder"))]
pub mod embedder_worker;
#[cfg(not(target_arch = "wasm32"))]
pub mod eval;
#[cfg(target_arch = "wasm32")]
pub mod ui;
#[cfg(target_arch = "wasm32")]
pub mod wiring;
