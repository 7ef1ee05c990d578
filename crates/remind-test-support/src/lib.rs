//! Test-only stand-ins and fixtures shared by the crates' test suites: native twins of
//! the store and the embedding service, a scripted model and counting clock for
//! sessions, reads of a session's memory only the suites need, the MemPrompt data set
//! beside the repository, and the MiniLM reference embeddings the parity tests hold
//! tract to.

pub mod in_memory_store;
pub mod in_process_embeddings;
pub mod memprompt_data;
pub mod minilm_reference;
pub mod scripted;
pub mod session_reads;
