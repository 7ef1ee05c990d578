//! Use-cases: what the user can do (ask, correct, load, configure), over port traits.
//!
//! The page and the tests drive the same [`session::Session`]; only the adapters that
//! fill its ports differ (IndexedDB and `fetch` in the browser, in-memory twins here).

pub mod announced_store;
pub mod ask;
pub mod confirm;
pub mod correct;
pub mod ports;
pub mod question_embedding;
pub mod reflect;
pub mod revise;
pub mod session;
pub mod settings;
pub mod transfer;
