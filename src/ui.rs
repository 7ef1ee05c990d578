//! The page: Leptos components, one per file, sharing [`page_context::PageContext`].
//!
//! Components hold view state only; every operation goes through the session's
//! use-cases.

pub mod app;
mod ask_form;
mod correction_form;
mod page_context;
mod reply_view;
mod settings_panel;
