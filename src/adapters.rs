//! The page's adapters: each holds one browser dependency behind a port of
//! [`remind_app::ports`].

pub mod browser_clock;
pub mod http_llm;
pub mod http_model_catalog;
pub mod idb_store;
pub mod leave_guard;
pub mod load_marks;
pub mod local_conversations;
pub mod local_settings;
pub mod tab_broadcast;
pub mod worker_embedder;
