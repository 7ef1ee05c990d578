//! The embedder worker's composition root: the message loop that loads MiniLM and
//! answers embedding requests, off the page's thread so typing never stalls.
//!
//! `src/main.rs` calls [`start`]; the page talks to it through
//! `remind_web::adapters::worker_embedder`. Messages are `remind_embedder_wire` values.
//! Browser-only: built natively the crate is empty.
#![cfg(target_arch = "wasm32")]

pub mod model_cache;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::prelude::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Cache, DedicatedWorkerGlobalScope, MessageChannel, MessageEvent};

use remind_embedder::quantized_product;
use remind_embedder::tract_embedder::{CONVERTED_FORMAT, TractEmbedder};
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

/// The plans built before `Ready`: a question of up to 16 tokens (most of them) is
/// answered without waiting for an optimisation. The 24- and 32-token plans are built after.
const TOKENS_PLANNED_BEFORE_READY: usize = 16;
/// The plans built while warming up after `Ready` (or, when requests came at once,
/// once the worker is idle), so later questions of up to 32 tokens do not wait either.
const TOKENS_PLANNED_AFTER_READY: usize = 32;
/// How long the worker must have had no request before the deferred work starts. It
/// takes the worker for a while (the conversion of a model loaded from its ONNX file
/// took 0.4–0.5 s on a 2-core machine): started after the first request, it held up a
/// question asked during the background embedding after an import, which sends a
/// request every few tens of milliseconds, by as long.
const IDLE_BEFORE_DEFERRED_MS: f64 = 1000.0;

enum State {
    Empty,
    Loading,
    Ready(Box<TractEmbedder>, Option<Deferred>, PlansAfterReady),
    Failed(String),
}

/// How long after `Ready` the plans of later questions are built before the next text
/// even while requests keep coming. A page that keeps the worker busy from `Ready` on
/// (the background embedding of lessons left waiting, a request every few
/// milliseconds) never leaves it idle, and would embed on the f32 plan, at half the
/// speed, for as long as that lasts; one request waits for the build instead (0.2–0.3 s).
const PLANS_DUE_AFTER_READY_MS: f64 = 2000.0;

/// The plans `Ready` left for later ([`build_plans_after_ready`]): built by the warm-up,
/// by the deferred work once the worker is idle, or before a text once they are due.
struct PlansAfterReady {
    due_at_ms: f64,
    built: Cell<bool>,
}

/// What is left to do after `Ready`, so the first embedding does not wait for it: the
/// 24- and 32-token plans and, after a load from the ONNX file, keeping the converted model.
struct Deferred {
    /// Where to keep the conversion; `None` when the model came from it already (or
    /// there is no Cache API).
    keep_conversion: Option<KeepConversion>,
}

struct KeepConversion {
    cache: Cache,
    /// `converted_url` of the model.
    url: String,
    /// `converted_marker` of the model.
    marker: String,
}

/// The cache URL of the model at `model_url` converted to tract's format (no server
/// answers it): named by the tract and preparation that wrote it, so another worker's
/// conversion is never read. The cache itself is named by the model's id.
fn converted_url(model_url: &str) -> String {
    format!("{model_url}.{CONVERTED_FORMAT}.tar")
}

/// What every converted URL of a model contains, to find older conversions.
fn converted_marker(model_url: &str) -> String {
    let name = model_url.rsplit('/').next().unwrap_or(model_url);
    format!("{name}.tract-")
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
    // When the worker last took a request or embedded one of its texts (or said it
    // was ready): the warm-up stops and the deferred work waits once it moves.
    let last_request_ms = Rc::new(Cell::new(0.0));
    let requests = Requests::new(state.clone(), last_request_ms.clone());
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
                        let last_request_ms = last_request_ms.clone();
                        wasm_bindgen_futures::spawn_local(async move {
                            let loaded = load(&model_url, &vocab_url, &model_id).await;
                            *state.borrow_mut() = match loaded {
                                Ok((embedder, deferred)) => {
                                    last_request_ms.set(now_ms());
                                    when_idle(state.clone(), last_request_ms.clone());
                                    warm_up_kernels(
                                        state.clone(),
                                        last_request_ms.clone(),
                                        WARM_UP_RUNS,
                                    );
                                    let plans = PlansAfterReady {
                                        due_at_ms: now_ms() + PLANS_DUE_AFTER_READY_MS,
                                        built: Cell::new(false),
                                    };
                                    State::Ready(Box::new(embedder), Some(deferred), plans)
                                }
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
                Ok(ToWorker::Embed { id, texts }) => {
                    if let Some(refused) = refusal(&state.borrow(), id) {
                        post(&refused);
                    } else {
                        requests.take(Request::new(id, texts));
                    }
                }
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

/// Steps of warming up run after `Ready` while no request has come, each in a task of
/// its own: the 24- and 32-token plans, then embeddings of a short text. Without them the first
/// lessons embedded after an import (about 20 tokens each) waited for that plan to be
/// built, and ran before the engine had compiled the kernels for speed: the first
/// four took 365 ms, however long the worker had waited since `Ready`.
const WARM_UP_RUNS: u32 = 3;
/// How long after `Ready` (and between runs) the warm-up waits for a request: a page
/// that asks at once is answered first, and its request warms the kernels instead.
const WARM_UP_AFTER_MS: i32 = 200;

/// Builds the 24- and 32-token plans, then embeds a short text, `runs` steps in all, one task
/// each, while `last_request_ms` has not moved since `Ready`, so the page's first
/// requests find the plans built and the kernels compiled for speed.
fn warm_up_kernels(state: Rc<RefCell<State>>, last_request_ms: Rc<Cell<f64>>, runs: u32) {
    let ready_at = last_request_ms.get();
    let callback = Closure::once_into_js(move || {
        if last_request_ms.get() != ready_at {
            return;
        }
        if let State::Ready(embedder, _, plans) = &*state.borrow() {
            if runs == WARM_UP_RUNS {
                build_plans_after_ready(embedder, plans);
            } else {
                let _ = embedder.embed_counting_tokens("how warm is the kernel today?");
            }
        }
        if runs > 1 {
            warm_up_kernels(state, last_request_ms, runs - 1);
        }
    });
    let _ = scope().set_timeout_with_callback_and_timeout_and_arguments_0(
        callback.unchecked_ref(),
        WARM_UP_AFTER_MS,
    );
}

/// Builds the plans a question after `Ready` may need: the 24- and 32-token ones, and (in both
/// wasm builds) every plan again with the weight products on int8 weights
/// (`TractEmbedder::quantize_products`), which the first plan was built without so that
/// `Ready` comes sooner. Says what the plans now run with `Plans` when it built any. The
/// warm-up, the deferred work and a text once the plans are due all call it; it builds
/// them once.
fn build_plans_after_ready(embedder: &TractEmbedder, plans: &PlansAfterReady) {
    if plans.built.replace(true) {
        return;
    }
    let started = now_ms();
    let before = embedder.matmul_kernels();
    // A plan that fails to build fails the question that needs it, with its error; a
    // failed switch leaves the f32 plans.
    if quantized_product::FASTER_IN_THIS_BUILD {
        let _ = embedder.quantize_products();
    }
    let _ = embedder.warm_up_up_to(TOKENS_PLANNED_AFTER_READY);
    let matmul_kernels = embedder.matmul_kernels();
    if matmul_kernels != before {
        post(&FromWorker::Plans {
            matmul_kernels,
            build_ms: now_ms() - started,
        });
    }
}

/// Runs `run_deferred` once the worker has had no request for
/// [`IDLE_BEFORE_DEFERRED_MS`]; until then it looks again when that much time would
/// have passed since the last one.
fn when_idle(state: Rc<RefCell<State>>, last_request_ms: Rc<Cell<f64>>) {
    let wait = last_request_ms.get() + IDLE_BEFORE_DEFERRED_MS - now_ms();
    let callback = Closure::once_into_js(move || {
        if now_ms() - last_request_ms.get() >= IDLE_BEFORE_DEFERRED_MS {
            run_deferred(&state);
        } else {
            when_idle(state, last_request_ms);
        }
    });
    let _ = scope().set_timeout_with_callback_and_timeout_and_arguments_0(
        callback.unchecked_ref(),
        wait.clamp(0.0, IDLE_BEFORE_DEFERRED_MS) as i32,
    );
}

/// Does what `Ready` left for later, once: builds the 24- and 32-token plans, then writes the
/// converted model and keeps it in the cache, saying so with `Converted`.
fn run_deferred(state: &Rc<RefCell<State>>) {
    let deferred = match &mut *state.borrow_mut() {
        State::Ready(_, deferred, _) => deferred.take(),
        _ => None,
    };
    let Some(deferred) = deferred else {
        return;
    };
    let state = state.borrow();
    let State::Ready(embedder, _, plans) = &*state else {
        return;
    };
    build_plans_after_ready(embedder, plans);
    let Some(KeepConversion { cache, url, marker }) = deferred.keep_conversion else {
        return;
    };
    let started = now_ms();
    let converted = embedder.converted();
    wasm_bindgen_futures::spawn_local(async move {
        let message = match converted {
            Ok(mut bytes) => {
                let stored = model_cache::store(&cache, &url, &mut bytes).await;
                if stored.is_ok() {
                    // Older conversions of this model are never read again.
                    let _ = model_cache::forget_others(&cache, &marker, &url).await;
                }
                FromWorker::Converted {
                    stored: stored.is_ok(),
                    bytes: bytes.len() as f64,
                    convert_ms: now_ms() - started,
                    error: stored.err(),
                }
            }
            Err(e) => FromWorker::Converted {
                stored: false,
                bytes: 0.0,
                convert_ms: now_ms() - started,
                error: Some(e.to_string()),
            },
        };
        post(&message);
    });
}

/// Why a request for embeddings cannot be answered now, as the reply that says so.
fn refusal(state: &State, id: u32) -> Option<FromWorker> {
    let error = match state {
        State::Ready(..) => return None,
        State::Failed(error) => error.clone(),
        State::Empty | State::Loading => "the model is still loading".into(),
    };
    Some(FromWorker::EmbedFailed { id, error })
}

/// A request for embeddings, answered a text at a time.
struct Request {
    id: u32,
    texts: Vec<String>,
    embedded: Vec<Vec<f32>>,
    token_counts: Vec<usize>,
    compute_ms: f64,
}

impl Request {
    fn new(id: u32, texts: Vec<String>) -> Self {
        Request {
            id,
            embedded: Vec::with_capacity(texts.len()),
            token_counts: Vec::with_capacity(texts.len()),
            texts,
            compute_ms: 0.0,
        }
    }

    fn texts_left(&self) -> usize {
        self.texts.len() - self.embedded.len()
    }
}

/// The requests waiting, embedded one text per task of the worker's event loop so a
/// request that comes in meanwhile is seen between two texts. The next text is always
/// from the request with the fewest left (the oldest among equals): a question typed
/// or asked during the background embedding of an import's lessons (four a request)
/// waits for one lesson, not four.
struct Requests {
    inner: Rc<RequestsInner>,
}

struct RequestsInner {
    state: Rc<RefCell<State>>,
    last_request_ms: Rc<Cell<f64>>,
    waiting: RefCell<Vec<Request>>,
    /// A message to this channel's other port runs the next text in a task of its own
    /// (a worker's nested `setTimeout(0)` would wait at least 4 ms each time).
    channel: Option<MessageChannel>,
    next_text_posted: Cell<bool>,
}

impl Requests {
    fn new(state: Rc<RefCell<State>>, last_request_ms: Rc<Cell<f64>>) -> Self {
        let requests = Requests {
            inner: Rc::new(RequestsInner {
                state,
                last_request_ms,
                waiting: RefCell::new(Vec::new()),
                channel: MessageChannel::new().ok(),
                next_text_posted: Cell::new(false),
            }),
        };
        if let Some(channel) = &requests.inner.channel {
            let weak = Rc::downgrade(&requests.inner);
            let on_next = Closure::<dyn Fn()>::new(move || {
                if let Some(inner) = weak.upgrade() {
                    Requests { inner }.embed_next_text();
                }
            });
            channel
                .port1()
                .set_onmessage(Some(on_next.as_ref().unchecked_ref()));
            // The handler lives as long as the worker.
            on_next.forget();
        }
        requests
    }

    fn take(&self, request: Request) {
        self.inner.last_request_ms.set(now_ms());
        self.inner.waiting.borrow_mut().push(request);
        self.post_next_text();
    }

    fn post_next_text(&self) {
        if self.inner.next_text_posted.get() || self.inner.waiting.borrow().is_empty() {
            return;
        }
        let posted = self
            .inner
            .channel
            .as_ref()
            .is_some_and(|channel| channel.port2().post_message(&JsValue::NULL).is_ok());
        if posted {
            self.inner.next_text_posted.set(true);
        } else {
            // No channel (never so in a browser's worker): every text now, in order.
            while !self.inner.waiting.borrow().is_empty() {
                self.embed_one_text();
            }
        }
    }

    fn embed_next_text(&self) {
        self.inner.next_text_posted.set(false);
        self.embed_one_text();
        self.post_next_text();
    }

    /// Embeds the next text of the request with the fewest left, and answers that
    /// request once it has them all, or at its first failure.
    fn embed_one_text(&self) {
        let mut waiting = self.inner.waiting.borrow_mut();
        let Some(next) = (0..waiting.len()).min_by_key(|&i| waiting[i].texts_left()) else {
            return;
        };
        let state = self.inner.state.borrow();
        if let Some(refused) = refusal(&state, waiting[next].id) {
            waiting.remove(next);
            post(&refused);
            return;
        }
        let State::Ready(embedder, _, plans) = &*state else {
            return;
        };
        if now_ms() >= plans.due_at_ms {
            build_plans_after_ready(embedder, plans);
        }
        let request = &mut waiting[next];
        let started = now_ms();
        let embedded = request
            .texts
            .get(request.embedded.len())
            .map(|text| embedder.embed_counting_tokens(text));
        request.compute_ms += now_ms() - started;
        self.inner.last_request_ms.set(now_ms());
        let answer = match embedded {
            Some(Ok((vector, tokens))) => {
                request.embedded.push(vector);
                request.token_counts.push(tokens);
                (request.texts_left() == 0).then(|| {
                    let done = waiting.remove(next);
                    FromWorker::Embedded {
                        id: done.id,
                        vectors: done.embedded,
                        token_counts: done.token_counts,
                        compute_ms: done.compute_ms,
                        memory_bytes: memory_bytes(),
                    }
                })
            }
            Some(Err(e)) => {
                let failed = waiting.remove(next);
                Some(FromWorker::EmbedFailed {
                    id: failed.id,
                    error: e.to_string(),
                })
            }
            // A request of no texts has all it asked for.
            None => {
                let done = waiting.remove(next);
                Some(FromWorker::Embedded {
                    id: done.id,
                    vectors: Vec::new(),
                    token_counts: Vec::new(),
                    compute_ms: 0.0,
                    memory_bytes: memory_bytes(),
                })
            }
        };
        if let Some(answer) = answer {
            post(&answer);
        }
    }
}

/// Builds the embedder from the converted model kept in the cache when there is one
/// that loads, else from the ONNX file (downloaded, or from the cache); posts `Ready`.
async fn load(
    model_url: &str,
    vocab_url: &str,
    model_id: &str,
) -> Result<(TractEmbedder, Deferred), String> {
    let started = now_ms();
    // Without the Cache API (e.g. a non-secure origin) the files are simply downloaded
    // on every visit, and no conversion is kept.
    let cache_name = cache_name(model_id);
    let cache = model_cache::open(&cache_name).await.ok();
    let converted_url = converted_url(model_url);
    let vocab = model_cache::fetch(cache.as_ref(), vocab_url, &|_, _| {})
        .await
        .map_err(|e| e.to_string())?;
    let vocab = String::from_utf8(vocab.bytes)
        .map_err(|_| format!("{vocab_url} is not UTF-8 text; is it BERT's vocab.txt?"))?;
    let (converted, read_early) = match &cache {
        Some(cache) => {
            match model_cache::read_early(&cache_name, model_url, &converted_url).await {
                Some(bytes) => (Some(bytes), true),
                // A cache that cannot be read is a cache without the conversion.
                None => {
                    let bytes = model_cache::cached(cache, &converted_url).await;
                    (bytes.ok().flatten(), false)
                }
            }
        }
        None => (None, false),
    };
    let mut init_ms = 0.0;
    let onnx_because = match converted {
        Some(bytes) => {
            let download_ms = now_ms() - started;
            post(&FromWorker::Initialising);
            let init_started = now_ms();
            match TractEmbedder::from_converted(model_id, &bytes, &vocab) {
                Ok(embedder) => {
                    drop(bytes);
                    let ready = Loaded {
                        from_cache: true,
                        from_converted: true,
                        onnx_because: None,
                        read_early,
                        download_ms,
                        init_started,
                    };
                    ready.post(model_id, &embedder)?;
                    let deferred = Deferred {
                        keep_conversion: None,
                    };
                    return Ok((embedder, deferred));
                }
                Err(e) => {
                    init_ms = now_ms() - init_started;
                    format!("the converted model in the cache did not load ({e})")
                }
            }
        }
        None if cache.is_some() => "no converted model in the cache yet".to_string(),
        None => "no Cache API here to keep a converted model in".to_string(),
    };
    let progress = |loaded: f64, total: Option<f64>| post(&FromWorker::Progress { loaded, total });
    let model = model_cache::fetch(cache.as_ref(), model_url, &progress)
        .await
        .map_err(|e| e.to_string())?;
    let download_ms = now_ms() - started - init_ms;
    post(&FromWorker::Initialising);
    // A failed converted load counts as initialising time.
    let init_started = now_ms() - init_ms;
    let embedder = TractEmbedder::new(model_id, &model.bytes, &vocab).map_err(|e| e.to_string())?;
    drop(model.bytes);
    let ready = Loaded {
        from_cache: model.from_cache,
        from_converted: false,
        onnx_because: Some(onnx_because),
        read_early: false,
        download_ms,
        init_started,
    };
    ready.post(model_id, &embedder)?;
    let deferred = Deferred {
        keep_conversion: cache.map(|cache| KeepConversion {
            cache,
            url: converted_url,
            marker: converted_marker(model_url),
        }),
    };
    Ok((embedder, deferred))
}

/// How a load went, for its `Ready` message.
struct Loaded {
    from_cache: bool,
    from_converted: bool,
    onnx_because: Option<String>,
    read_early: bool,
    download_ms: f64,
    init_started: f64,
}

impl Loaded {
    /// Builds the plans a short question needs, then says the embedder is ready.
    fn post(self, model_id: &str, embedder: &TractEmbedder) -> Result<(), String> {
        embedder
            .warm_up_up_to(TOKENS_PLANNED_BEFORE_READY)
            .map_err(|e| e.to_string())?;
        post(&FromWorker::Ready {
            model_id: model_id.to_string(),
            from_cache: self.from_cache,
            download_ms: self.download_ms,
            init_ms: now_ms() - self.init_started,
            memory_bytes: memory_bytes(),
            build: BUILD.to_string(),
            matmul_kernels: embedder.matmul_kernels(),
            from_converted: self.from_converted,
            onnx_because: self.onnx_because,
            read_early: self.read_early,
        });
        Ok(())
    }
}
