//! Use-cases: what the user can do (ask, correct, revise, reflect, confirm, transfer),
//! over port traits.
//!
//! The page and the tests drive the same [`session::Session`]; only the adapters that
//! fill its ports differ (IndexedDB and `fetch` in the browser, the in-memory twins of
//! `remind-test-support` in the tests). The crate depends on no platform crate:
//! adapters live in `remind-web`, `remind-embedder` and `remind-eval`.

pub mod announced_store;
pub mod ask;
pub mod confirm;
pub mod connection_check;
pub mod conversation;
pub mod correct;
pub mod deadline;
pub mod endpoint_presets;
pub mod failure_text;
pub mod llm_error;
pub mod model_catalog;
pub mod openai_wire;
pub mod ports;
pub mod question_embedding;
pub mod redaction;
pub mod reflect;
pub mod remembered_embeddings;
pub mod reply_stream;
pub mod retry;
pub mod revise;
pub mod session;
pub mod settings;
pub mod status_class;
pub mod transfer;
pub mod watched;
