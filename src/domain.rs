//! The pure core: prompts, reply parsing, feedback memory and retrieval.
//!
//! Nothing in here performs I/O, reads a clock or touches the browser; time and ids are
//! passed in, so every rule is testable natively and shared by page, harness and tests.

pub mod baseline;
pub mod export;
pub mod import;
pub mod import_plan;
pub mod keyword_check;
pub mod learning_curve;
pub mod levenshtein;
pub mod memory;
pub mod memory_key;
pub mod memory_query;
pub mod prompt;
pub mod prompt_breakdown;
pub mod record;
pub mod reflection;
pub mod reply;
pub mod retrieval;
pub mod simulated_user;
pub mod split_mix64;
pub mod task_stream;
pub mod verified_examples;
pub mod withdrawal;
pub mod wordpiece;
pub mod write_gate;
