//! Test-only stand-ins and fixtures shared by the crates' test suites: a scripted model
//! and counting clock for sessions, the MemPrompt data set beside the repository, and
//! the MiniLM reference embeddings the parity tests hold tract to.

pub mod memprompt_data;
pub mod minilm_reference;
pub mod scripted;
