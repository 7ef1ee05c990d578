//! The messages between the page and its embedder worker.
//!
//! Both sides are Rust, but the messages cross `postMessage` as plain JavaScript
//! objects (the benchmark page speaks the same protocol from JavaScript), so they are
//! serde types with a `kind` tag rather than anything wasm-bindgen specific.

use serde::{Deserialize, Serialize};

/// What the page asks of the worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToWorker {
    /// Fetch the model and vocabulary (from the Cache API when they are there) and
    /// build the embedder. `model_id` names the model's content; it tags every
    /// embedding and names the cache, so a new model is downloaded afresh.
    Load {
        model_url: String,
        vocab_url: String,
        model_id: String,
    },
    /// Embed each text; answered by `Embedded` or `EmbedFailed` with the same `id`.
    Embed { id: u32, texts: Vec<String> },
}

/// What the page names its embedder worker with (`WorkerOptions.name`, as JSON): the
/// cache and model whose converted copy the worker's loader starts reading before the
/// worker's wasm is compiled (`crates/remind-worker/remind-embedder_loader.js`), so
/// the read overlaps the compile (0.3–0.4 s each on a 2-core machine). The worker
/// takes what was read only for the model its `Load` names, and only the copy it would
/// have read itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EarlyRead {
    /// [`cache_name`] of the model.
    pub cache: String,
    /// The model's URL, as `Load` gives it.
    pub model_url: String,
}

impl EarlyRead {
    /// What to name the worker that is to load the model at `model_url` of `model_id`.
    pub fn of(model_url: &str, model_id: &str) -> Self {
        Self {
            cache: cache_name(model_id),
            model_url: model_url.to_string(),
        }
    }

    /// The worker's name: this as JSON text.
    pub fn to_worker_name(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// What the worker tells the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FromWorker {
    /// The worker's handler is installed. Messages posted before this are lost (the
    /// worker's wasm is still instantiating), so the page sends `Load` only after it.
    Started,
    /// Bytes of the model downloaded so far; `total` when the server said.
    Progress {
        loaded: f64,
        total: Option<f64>,
    },
    /// The files are here; the model is being parsed and optimised.
    Initialising,
    Ready {
        model_id: String,
        from_cache: bool,
        download_ms: f64,
        init_ms: f64,
        /// The worker's wasm memory: it only grows, so this is its peak so far.
        memory_bytes: f64,
        /// Which build of the worker runs: `relaxed-simd` or `simd128`.
        build: String,
        /// The matrix-product kernels its plans run, as `name ×count` (tract-linalg's
        /// names, e.g. `wasm_f32_8x8 ×36`), so a benchmark or test can see them.
        matmul_kernels: Vec<String>,
        /// Whether the model came from the converted copy the worker keeps beside the
        /// ONNX in the cache (tract's own format, which skips parsing, typing and
        /// decluttering the ONNX), rather than from the ONNX file.
        from_converted: bool,
        /// Why the ONNX file was loaded instead of a converted copy, when it was: none
        /// kept yet, or the kept one did not load (with its error).
        onnx_because: Option<String>,
        /// Whether the converted copy came from the read the worker's loader began
        /// before the wasm ran ([`EarlyRead`]) rather than from a read of its own.
        read_early: bool,
    },
    /// After `Ready`, once the worker has built the plans a later question may need (the
    /// 24- and 32-token ones, and every plan again with its weight products on int8 weights): the
    /// kernels its plans now run, as in `Ready`, and how long building them held the
    /// worker (a question that came meanwhile waited for it).
    Plans {
        matmul_kernels: Vec<String>,
        build_ms: f64,
    },
    /// After a load from the ONNX file: the converted copy was written and kept in the
    /// cache for the next load (`stored`), or why not (`error`). Sent once the worker
    /// has had no request for a second after `Ready`.
    Converted {
        stored: bool,
        bytes: f64,
        convert_ms: f64,
        error: Option<String>,
    },
    Failed {
        error: String,
    },
    Embedded {
        id: u32,
        vectors: Vec<Vec<f32>>,
        token_counts: Vec<usize>,
        compute_ms: f64,
        memory_bytes: f64,
    },
    EmbedFailed {
        id: u32,
        error: String,
    },
}

/// The cache that holds the files of `model_id`; other `remind-minilm-` caches hold
/// models no longer used and are deleted.
pub fn cache_name(model_id: &str) -> String {
    format!("{CACHE_PREFIX}{model_id}")
}

pub const CACHE_PREFIX: &str = "remind-minilm-";

/// A message as the plain object `postMessage` carries (through JSON, so both sides and
/// the benchmark's JavaScript read the same shape).
#[cfg(target_arch = "wasm32")]
pub fn to_js(message: &impl Serialize) -> Option<wasm_bindgen::JsValue> {
    let json = serde_json::to_string(message).ok()?;
    js_sys::JSON::parse(&json).ok()
}

/// The message a `postMessage` payload holds, if it is one.
#[cfg(target_arch = "wasm32")]
pub fn from_js<T: serde::de::DeserializeOwned>(value: &wasm_bindgen::JsValue) -> Result<T, String> {
    let json = js_sys::JSON::stringify(value)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or("the message is not JSON-shaped")?;
    serde_json::from_str(&json).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_a_snake_case_kind_tag_the_benchmark_page_can_read() {
        let json = serde_json::to_value(ToWorker::Embed {
            id: 7,
            texts: vec!["what is like < > ?".into()],
        })
        .unwrap();
        assert_eq!(json["kind"], "embed");
        assert_eq!(json["id"], 7);
        let failed: FromWorker =
            serde_json::from_str(r#"{"kind":"embed_failed","id":3,"error":"x"}"#).unwrap();
        assert_eq!(
            failed,
            FromWorker::EmbedFailed {
                id: 3,
                error: "x".into()
            }
        );
    }

    #[test]
    fn ready_says_whether_the_converted_model_was_used_and_why_not() {
        let json = serde_json::to_value(FromWorker::Ready {
            model_id: "m".into(),
            from_cache: true,
            download_ms: 1.0,
            init_ms: 2.0,
            memory_bytes: 3.0,
            build: "relaxed-simd".into(),
            matmul_kernels: vec![],
            from_converted: false,
            onnx_because: Some("no converted model in the cache yet".into()),
            read_early: false,
        })
        .unwrap();
        // The names the benchmark page and the e2e test read.
        assert_eq!(json["kind"], "ready");
        assert_eq!(json["from_converted"], false);
        assert_eq!(json["read_early"], false);
        assert_eq!(json["onnx_because"], "no converted model in the cache yet");
        let kept: FromWorker = serde_json::from_str(
            r#"{"kind":"converted","stored":true,"bytes":55392768,"convert_ms":400,"error":null}"#,
        )
        .unwrap();
        assert_eq!(
            kept,
            FromWorker::Converted {
                stored: true,
                bytes: 55392768.0,
                convert_ms: 400.0,
                error: None
            }
        );
    }

    #[test]
    fn the_worker_is_named_with_the_cache_and_model_its_loader_reads_early() {
        let name = EarlyRead::of("./minilm/model.onnx", "all-minilm-abc").to_worker_name();
        // The names the loader's JavaScript reads.
        let json: serde_json::Value = serde_json::from_str(&name).unwrap();
        assert_eq!(json["cache"], "remind-minilm-all-minilm-abc");
        assert_eq!(json["model_url"], "./minilm/model.onnx");
    }

    #[test]
    fn progress_without_a_known_total_reads_as_none() {
        let progress: FromWorker =
            serde_json::from_str(r#"{"kind":"progress","loaded":10,"total":null}"#).unwrap();
        assert_eq!(
            progress,
            FromWorker::Progress {
                loaded: 10.0,
                total: None
            }
        );
    }
}
