//! remind-eval: replays the MemPrompt paper's experiment through the page's own turn
//! pipeline against any OpenAI-compatible endpoint, and reports it like the paper's
//! tables.
//!
//! Everything only the experiment uses lives here, not in the product's core: the task
//! streams, the paper's baselines, the simulated user, the keyword checker, the seeded
//! generator, a gate's confusion matrix on labelled pairs and the HNSW vector index.
//!
//! This is its own outer layer, beside the UI: it reads task files, writes reports and
//! talks to the endpoint through an adapter. Everything that decides a number (arms,
//! scoring, metrics, table, plot) is a pure function in a submodule, unit-tested; only
//! [`runner`] and [`stream_source`] touch files, threads and the network.
//!
//! Besides the paper's streams, [`everyday`] replays questions as people type them
//! (`--stream everyday`).

pub mod accuracy_plot;
pub mod answer_match;
pub mod arm;
pub mod baseline;
pub mod blocking_http_llm;
pub mod config;
pub mod everyday;
pub mod gate_confusion;
pub mod keyword_check;
pub mod metrics;
pub mod normalised_retriever;
pub mod progress;
pub mod runner;
pub mod simulated_user;
pub mod split_mix64;
pub mod step_log;
pub mod stream_source;
pub mod table;
pub mod task_stream;
pub mod vector_index;

use std::path::PathBuf;

use thiserror::Error;

use crate::task_stream::TaskStreamError;
use remind_app::ports::{EmbedError, LlmError};
use remind_core::turn::TurnError;

pub use config::{EvalConfig, parse_args};
pub use runner::{RunReport, run};

/// Everything that can stop an evaluation, each with what to do about it.
#[derive(Debug, Error)]
pub enum EvalError {
    #[error("{0}; run `remind-eval --help` for the flags")]
    Usage(String),
    #[error("cannot read {path}: {source}; check the path (see --stream, --templates, --data)")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}; check that --out is a writable directory")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Stream {
        path: PathBuf,
        source: TaskStreamError,
    },
    #[error(
        "{path} line {line} is not a step record ({reason}); delete the line or start again with a fresh --out"
    )]
    BadLog {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error(
        "the logged step {index} of arm {arm} does not replay ({what}); the log was made with other flags or another stream, so resume with the same flags or use a fresh --out"
    )]
    LogMismatch {
        arm: String,
        index: usize,
        what: String,
    },
    #[error("arm {arm}, step {index}: the prompt cannot be built: {source}")]
    Prompt {
        arm: String,
        index: usize,
        source: TurnError,
    },
    #[error(
        "arm {arm}, step {index}: the request failed after {attempts} attempt(s): {source} The steps so far are logged; rerun the same command to resume."
    )]
    Llm {
        arm: String,
        index: usize,
        attempts: u32,
        source: LlmError,
    },
    #[error("the sentence embedder could not be used: {0}")]
    Embed(#[from] EmbedError),
    #[error(
        "arm {arm} compares questions by embeddings; pass --embedder-dir DIR with model.onnx and vocab.txt (scripts/setup-embedder installs them into ~/.cache/remind/minilm)"
    )]
    NeedsEmbedder { arm: String },
    #[error("{path}: {source}; fix the line or point --stream at another file")]
    Scenarios {
        path: PathBuf,
        source: everyday::ScenarioError,
    },
    #[error(
        "the everyday stream compares questions by embeddings; pass --embedder-dir DIR with model.onnx and vocab.txt (scripts/setup-embedder installs them into ~/.cache/remind/minilm)"
    )]
    EverydayNeedsEmbedder,
    #[error("{0} The run stopped; rerun it once the endpoint answers, or pass --retrieval-only.")]
    Everyday(#[from] everyday::EverydayError),
}
