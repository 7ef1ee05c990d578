//! The page: Leptos components, one per file, sharing [`page_context::PageContext`].
//!
//! Components hold view state only; every operation goes through the session's
//! use-cases.

pub mod app;
mod applied_lesson;
mod ask_form;
mod confirm_answer;
mod conversation_bar;
mod conversation_view;
mod correction_form;
mod correction_scope;
mod embedder_status;
mod endpoint_preset_picker;
mod import_preview;
mod json_download;
mod keyboard_shortcuts;
mod learning_chart;
mod lesson_chip;
mod lesson_suggestion;
mod memory_browser;
mod memory_exceptions;
mod memory_history;
mod memory_item;
mod memory_notice;
mod memory_scope_editor;
mod page_context;
mod prompt_panel;
mod record_labels;
mod reply_view;
mod restored_reply;
mod rule_proposal;
mod scope_editor;
mod settings_panel;
mod storage_status;
mod transfer_panel;
mod turn_place;
mod turn_source;
mod unreadable_records;
mod yield_to_browser;
