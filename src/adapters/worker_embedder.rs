//! The [`EmbeddingService`] port filled by the page's embedder worker
//! (`src/embedder_worker.rs`), so MiniLM never runs on the page's thread.
//!
//! Each request carries an id; its reply resolves the promise the caller awaits. Status
//! messages (download progress, ready, failed) update the status the session reads and
//! are passed to the page's listener.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::{Function, Promise};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ErrorEvent, Event, MessageEvent, Worker, WorkerOptions};

use remind_app::ports::{EmbedError, EmbedderStatus, EmbeddingService};
use remind_embedder_wire::{EarlyRead, FromWorker, ToWorker, from_js, to_js};

/// Where the worker scripts and the model files are served, relative to the page.
pub struct ModelFiles {
    /// The worker built with simd128 only, for engines without relaxed SIMD.
    pub worker_script: String,
    /// The same worker built with relaxed SIMD (`scripts/build-relaxed-worker`), whose
    /// matmul kernels use fused multiply-add; started when the engine validates it.
    pub relaxed_worker_script: String,
    pub model_url: String,
    pub vocab_url: String,
    pub model_id: String,
}

/// Requests sent and not yet answered: the reply's slot and the promise to resolve.
#[derive(Default)]
struct Waiting {
    resolvers: HashMap<u32, Function>,
    replies: HashMap<u32, Result<Vec<Vec<f32>>, String>>,
}

pub struct WorkerEmbedder {
    files: ModelFiles,
    /// `None` until [`EmbeddingService::begin`], and after a worker that did not start.
    worker: RefCell<Option<Worker>>,
    begun: Cell<bool>,
    status: StatusCell,
    waiting: Rc<RefCell<Waiting>>,
    next_id: Cell<u32>,
}

/// The embedder's status, shared by the listeners that change it and told to the page.
#[derive(Clone)]
struct StatusCell {
    current: Rc<RefCell<EmbedderStatus>>,
    on_change: Rc<dyn Fn(&EmbedderStatus)>,
}

impl StatusCell {
    fn get(&self) -> EmbedderStatus {
        self.current.borrow().clone()
    }

    fn set(&self, changed: EmbedderStatus) {
        (self.on_change)(&changed);
        *self.current.borrow_mut() = changed;
    }
}

impl WorkerEmbedder {
    /// An embedder whose worker starts at [`EmbeddingService::begin`]; `on_status`
    /// hears every change from then on. Until then its status is "downloading", with
    /// nothing loaded yet.
    pub fn new(files: ModelFiles, on_status: impl Fn(&EmbedderStatus) + 'static) -> Self {
        let status = StatusCell {
            current: Rc::new(RefCell::new(EmbedderStatus::Downloading {
                loaded: 0,
                total: None,
            })),
            on_change: Rc::new(on_status),
        };
        WorkerEmbedder {
            files,
            worker: RefCell::new(None),
            begun: Cell::new(false),
            status,
            waiting: Rc::default(),
            next_id: Cell::new(0),
        }
    }
}

/// A module whose one function returns `f32x4.relaxed_madd` of three splatted vectors
/// (`i32.const 1`, `i32x4.splat`, three times): only an engine with relaxed SIMD
/// validates it. A relaxed-SIMD worker on an engine without it would fail to compile.
const RELAXED_SIMD_PROBE: [u8; 40] = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
    0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // types: () -> v128
    0x03, 0x02, 0x01, 0x00, // functions: one, of type 0
    0x0a, 0x13, 0x01, 0x11, 0x00, // code: one body of 17 bytes, no locals
    0x41, 0x01, 0xfd, 0x11, 0x41, 0x01, 0xfd, 0x11, 0x41, 0x01, 0xfd, 0x11, // 3 × splat
    0xfd, 0x85, 0x02, // f32x4.relaxed_madd (0xfd 261)
    0x0b, // end
];

/// Whether this engine runs relaxed SIMD, asked the way the proposal's own feature
/// tests ask: `WebAssembly.validate` on a module that uses one of its instructions.
pub fn relaxed_simd_validates() -> bool {
    let probe = js_sys::Uint8Array::from(&RELAXED_SIMD_PROBE[..]);
    js_sys::WebAssembly::validate(&probe).unwrap_or(false)
}

/// Installs the worker's listeners for as long as the page lives: replies settle
/// requests, status messages change the status, and `load` goes out once the worker
/// says it started.
fn listen(worker: &Worker, load: ToWorker, status: &StatusCell, waiting: &Rc<RefCell<Waiting>>) {
    let on_message = {
        let (worker, status, waiting) = (worker.clone(), status.clone(), waiting.clone());
        Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
            let Ok(message) = from_js::<FromWorker>(&event.data()) else {
                return;
            };
            if message == FromWorker::Started && !send(&worker, &load) {
                status.set(EmbedderStatus::Failed(
                    "the embedder worker did not take the load request".into(),
                ));
            }
            if let Some(changed) = status_of(&message, &status.get()) {
                status.set(changed);
            }
            settle(&waiting, message);
        })
    };
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    // A worker script that fails to run reports here, not in a message, with an
    // `ErrorEvent`; one that fails to load (a missing or blocked file) with a bare
    // `Event`, which has no message to read.
    let on_error = {
        let (status, waiting) = (status.clone(), waiting.clone());
        Closure::<dyn Fn(Event)>::new(move |event: Event| {
            let detail = event
                .dyn_ref::<ErrorEvent>()
                .map(ErrorEvent::message)
                .unwrap_or_default();
            let error = if detail.is_empty() {
                "the embedder worker stopped".to_string()
            } else {
                format!("the embedder worker stopped: {detail}")
            };
            status.set(EmbedderStatus::Failed(error.clone()));
            release_all(&waiting, &error);
        })
    };
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
}

/// Fails every request still waiting: no reply will come, and a question must be
/// matched by wording rather than wait for ever.
fn release_all(waiting: &RefCell<Waiting>, error: &str) {
    let ids: Vec<u32> = waiting.borrow().resolvers.keys().copied().collect();
    for id in ids {
        settle(
            waiting,
            FromWorker::EmbedFailed {
                id,
                error: error.to_string(),
            },
        );
    }
}

fn send(worker: &Worker, message: &ToWorker) -> bool {
    to_js(message).is_some_and(|value| worker.post_message(&value).is_ok())
}

/// The status a message moves to, if it is a status message.
fn status_of(message: &FromWorker, current: &EmbedderStatus) -> Option<EmbedderStatus> {
    Some(match message {
        FromWorker::Progress { loaded, total } => EmbedderStatus::Downloading {
            loaded: *loaded as u64,
            total: total.map(|t| t as u64),
        },
        FromWorker::Initialising => EmbedderStatus::Initialising,
        FromWorker::Ready {
            model_id,
            from_cache,
            download_ms,
            init_ms,
            ..
        } => EmbedderStatus::Ready {
            model_id: model_id.clone(),
            from_cache: *from_cache,
            load_ms: (download_ms + init_ms) as u64,
        },
        // A failed load ends the embedder; a failed request does not change it.
        FromWorker::Failed { error } if !matches!(current, EmbedderStatus::Ready { .. }) => {
            EmbedderStatus::Failed(error.clone())
        }
        _ => return None,
    })
}

/// Resolves (or rejects) the request a reply answers.
fn settle(waiting: &RefCell<Waiting>, message: FromWorker) {
    let (id, reply) = match message {
        FromWorker::Embedded { id, vectors, .. } => (id, Ok(vectors)),
        FromWorker::EmbedFailed { id, error } => (id, Err(error)),
        _ => return,
    };
    let resolve = {
        let mut waiting = waiting.borrow_mut();
        let Some(resolve) = waiting.resolvers.remove(&id) else {
            return;
        };
        waiting.replies.insert(id, reply);
        resolve
    };
    let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
}

impl EmbeddingService for WorkerEmbedder {
    fn status(&self) -> EmbedderStatus {
        self.status.get()
    }

    /// Starts the worker, which asks for the model once it runs. If the worker cannot
    /// even start, the status says so and retrieval goes by wording.
    fn begin(&self) {
        if self.begun.replace(true) {
            return;
        }
        let files = &self.files;
        let script = if relaxed_simd_validates() {
            &files.relaxed_worker_script
        } else {
            &files.worker_script
        };
        // Named with the model, so its loader starts reading the converted copy while
        // the worker's wasm compiles.
        let options = WorkerOptions::new();
        options.set_name(&EarlyRead::of(&files.model_url, &files.model_id).to_worker_name());
        match Worker::new_with_options(script, &options) {
            Ok(worker) => {
                let load = ToWorker::Load {
                    model_url: files.model_url.clone(),
                    vocab_url: files.vocab_url.clone(),
                    model_id: files.model_id.clone(),
                };
                listen(&worker, load, &self.status, &self.waiting);
                *self.worker.borrow_mut() = Some(worker);
            }
            Err(e) => self.status.set(EmbedderStatus::Failed(format!(
                "the embedder worker did not start ({e:?})"
            ))),
        }
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let Some(worker) = self.worker.borrow().clone() else {
            return Err(EmbedError::NotLoaded(
                "the embedder worker is not running".into(),
            ));
        };
        let id = self.next_id.get();
        self.next_id.set(id.wrapping_add(1));
        let waiting = self.waiting.clone();
        let answered = Promise::new(&mut |resolve, _reject| {
            waiting.borrow_mut().resolvers.insert(id, resolve);
        });
        if !send(
            &worker,
            &ToWorker::Embed {
                id,
                texts: texts.to_vec(),
            },
        ) {
            self.waiting.borrow_mut().resolvers.remove(&id);
            return Err(EmbedError::Failed(
                "the request did not reach the worker".into(),
            ));
        }
        let _ = JsFuture::from(answered).await;
        let reply = self.waiting.borrow_mut().replies.remove(&id);
        let vectors = reply
            .ok_or_else(|| EmbedError::Failed("the worker did not answer".into()))?
            .map_err(EmbedError::Failed)?;
        if vectors.len() != texts.len() {
            return Err(EmbedError::Failed(format!(
                "asked for {} embeddings, got {}",
                texts.len(),
                vectors.len()
            )));
        }
        Ok(vectors)
    }
}
