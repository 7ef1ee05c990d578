//! The embedder worker's composition root: the message loop that loads MiniLM and
//! answers embedding requests, off the page's thread so typing never stalls.
//!
//! `src/main.rs` calls [`start`]; the page talks to it through
//! `remind_web::adapters::worker_embedder`. Messages are `remind_embedder_wire` values.
//! Browser-only: built natively the crate is empty.
#![cfg(target_arch = "wasm32")]

pub mod model_cache;

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use remind_embedder::tract_embedder::TractEmbedder;
use remind_embedder_wire::{FromWorker, ToWorker, cache_name, from_js, to_js};

/// Which of the worker's two builds this is (`scripts/build-relaxed-worker` builds the
/// relaxed-SIMD one, Trunk the simd128 one); tract-linalg's kernels follow the same flag.
const BUILD: &str = if cfg!(target_feature = "relaxed-simd") {
    "relaxed-simd"
} else if cfg!(target_feature = "simd128") {
    "simd128"
} else {
    "scalar"
};

enum State {
    Empty,
    Loading,
    Ready(Box<TractEmbedder>),
    Failed(String),
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post(message: &FromWorker) {
    if let Some(value) = to_js(message) {
        let _ = scope().post_message(&value);
    }
}

fn now_ms() -> f64 {
    scope().performance().map(|p| p.now()).unwrap_or(0.0)
}

fn memory_bytes() -> f64 {
    wasm_bindgen::memory()
        .unchecked_into::<js_sys::WebAssembly::Memory>()
        .buffer()
        .unchecked_into::<js_sys::ArrayBuffer>()
        .byte_length() as f64
}

/// Installs the message handler and says so; the worker then waits for `load`.
pub fn start() {
    let state = Rc::new(RefCell::new(State::Empty));
    let on_message =
        Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
            match from_js::<ToWorker>(&event.data()) {
                Ok(ToWorker::Load {
                    model_url,
                    vocab_url,
                    model_id,
                }) => {
                    if matches!(*state.borrow(), State::Empty | State::Failed(_)) {
                        *state.borrow_mut() = State::Loading;
                        let state = state.clone();
                        wasm_bindgen_futures::spawn_local(async move {
                            let loaded = load(&model_url, &vocab_url, &model_id).await;
                            *state.borrow_mut() = match loaded {
                                Ok(embedder) => State::Ready(Box::new(embedder)),
                                Err(error) => {
                                    post(&FromWorker::Failed {
                                        error: error.clone(),
                                    });
                                    State::Failed(error)
                                }
                            };
                        });
                    }
                }
                Ok(ToWorker::Embed { id, texts }) => post(&embed(&state.borrow(), id, &texts)),
                Err(e) => post(&FromWorker::Failed {
                    error: format!("the worker got a message it does not understand ({e})"),
                }),
            }
        });
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_message.forget();
    post(&FromWorker::Started);
}

fn embed(state: &State, id: u32, texts: &[String]) -> FromWorker {
    let embedder = match state {
        State::Ready(embedder) => embedder,
        State::Failed(error) => {
            return FromWorker::EmbedFailed {
                id,
                error: error.clone(),
            };
        }
        State::Empty | State::Loading => {
            return FromWorker::EmbedFailed {
                id,
                error: "the model is still loading".into(),
            };
        }
    };
    let started = now_ms();
    let embedded: Result<Vec<(Vec<f32>, usize)>, _> = texts
        .iter()
        .map(|t| embedder.embed_counting_tokens(t))
        .collect();
    match embedded {
        Ok(embedded) => {
            let (vectors, token_counts) = embedded.into_iter().unzip();
            FromWorker::Embedded {
                id,
                vectors,
                token_counts,
                compute_ms: now_ms() - started,
                memory_bytes: memory_bytes(),
            }
        }
        Err(e) => FromWorker::EmbedFailed {
            id,
            error: e.to_string(),
        },
    }
}

async fn load(model_url: &str, vocab_url: &str, model_id: &str) -> Result<TractEmbedder, String> {
    let started = now_ms();
    // Without the Cache API (e.g. a non-secure origin) the files are simply downloaded
    // on every visit.
    let cache = model_cache::open(&cache_name(model_id)).await.ok();
    let progress = |loaded: f64, total: Option<f64>| post(&FromWorker::Progress { loaded, total });
    let model = model_cache::fetch(cache.as_ref(), model_url, &progress)
        .await
        .map_err(|e| e.to_string())?;
    let vocab = model_cache::fetch(cache.as_ref(), vocab_url, &|_, _| {})
        .await
        .map_err(|e| e.to_string())?;
    let download_ms = now_ms() - started;
    post(&FromWorker::Initialising);
    let vocab = String::from_utf8(vocab.bytes)
        .map_err(|_| format!("{vocab_url} is not UTF-8 text; is it BERT's vocab.txt?"))?;
    let init_started = now_ms();
    let embedder = TractEmbedder::new(model_id, &model.bytes, &vocab).map_err(|e| e.to_string())?;
    // Plans for the two short buckets are built now, so the first question does not
    // wait for an optimisation; longer buckets are built when first needed.
    embedder.warm_up_up_to(32).map_err(|e| e.to_string())?;
    post(&FromWorker::Ready {
        model_id: model_id.to_string(),
        from_cache: model.from_cache,
        download_ms,
        init_ms: now_ms() - init_started,
        memory_bytes: memory_bytes(),
        build: BUILD.to_string(),
        matmul_kernels: embedder.matmul_kernels(),
    });
    Ok(embedder)
}
