//! Adapters: each holds one platform dependency behind a port of [`crate::app::ports`].
//!
//! Browser adapters compile only for wasm32; their native twins (in-memory store,
//! fixed clock) let the use-cases be tested without a browser.

#[cfg(not(target_arch = "wasm32"))]
pub mod blocking_http_llm;
pub mod embedder_wire;
pub mod in_memory_store;
pub mod in_process_embeddings;
pub mod openai_wire;
#[cfg(any(not(target_arch = "wasm32"), feature = "embedder"))]
pub mod tract_embedder;

#[cfg(target_arch = "wasm32")]
pub mod browser_clock;
#[cfg(target_arch = "wasm32")]
pub mod http_llm;
#[cfg(target_arch = "wasm32")]
pub mod idb_store;
#[cfg(target_arch = "wasm32")]
pub mod local_settings;
#[cfg(all(target_arch = "wasm32", feature = "embedder"))]
pub mod model_cache;
#[cfg(target_arch = "wasm32")]
pub mod tab_broadcast;
#[cfg(target_arch = "wasm32")]
pub mod worker_embedder;
