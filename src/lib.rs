//! Remind's page: the Leptos UI, the browser adapters and the composition root that
//! joins them to the use-cases of `remind_app`.
//!
//! Browser-only: built natively the crate is empty, so workspace-wide native builds and
//! lints pass over it.
#![cfg(target_arch = "wasm32")]

pub mod adapters;
pub mod ui;
pub mod wiring;
