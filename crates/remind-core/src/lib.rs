//! Remind's pure core: memory keys, lessons and their history, the write gate, prompts,
//! reply parsing, retrieval, export and import.
//!
//! Nothing in here performs I/O, reads a clock or touches the browser; time and ids are
//! passed in, so every rule is testable natively and shared by the page, the harness and
//! the tests. The crate depends on no platform crate, so the compiler keeps it so.

pub mod dot_product;
pub mod export;
pub mod import;
pub mod import_plan;
pub mod learning_curve;
pub mod levenshtein;
pub mod memory;
pub mod memory_key;
pub mod memory_query;
pub mod name_table;
pub mod packed_vector;
pub mod prompt;
pub mod prompt_breakdown;
pub mod record;
pub mod record_blocks;
pub mod reflection;
pub mod reply;
pub mod request_pattern;
pub mod retrieval;
pub mod sentence_embedding;
pub mod stored_record;
pub mod stored_rows;
pub mod turn;
pub mod verified_examples;
pub mod withdrawal;
pub mod write_gate;
