//! The pure core: prompts, reply parsing, feedback memory and retrieval.
//!
//! Nothing in here performs I/O, reads a clock or touches the browser; time and ids are
//! passed in, so every rule is testable natively and shared by page, harness and tests.

pub mod levenshtein;
pub mod memory;
pub mod memory_key;
pub mod prompt;
pub mod record;
pub mod reply;
pub mod retrieval;
pub mod write_gate;
