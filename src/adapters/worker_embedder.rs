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
use web_sys::{MessageEvent, Worker};

use crate::adapters::embedder_wire::{FromWorker, ToWorker};
use crate::app::ports::{EmbedError, EmbedderStatus, EmbeddingService};

/// Where the worker script and the model files are served, relative to the page.
pub struct ModelFiles {
    pub worker_script: String,
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
    worker: Option<Worker>,
    status: Rc<RefCell<EmbedderStatus>>,
    waiting: Rc<RefCell<Waiting>>,
    next_id: Cell<u32>,
}

impl WorkerEmbedder {
    /// Starts the worker and asks it to load the model; `on_status` hears every change.
    /// If the worker cannot even start, the status says so and retrieval goes by wording.
    pub fn start(files: &ModelFiles, on_status: impl Fn(&EmbedderStatus) + 'static) -> Self {
        let status = Rc::new(RefCell::new(EmbedderStatus::Downloading {
            loaded: 0,
            total: None,
        }));
        let waiting: Rc<RefCell<Waiting>> = Rc::default();
        let worker = match Worker::new(&files.worker_script) {
            Ok(worker) => worker,
            Err(e) => {
                let failed =
                    EmbedderStatus::Failed(format!("the embedder worker did not start ({e:?})"));
                on_status(&failed);
                *status.borrow_mut() = failed;
                return WorkerEmbedder {
                    worker: None,
                    status,
                    waiting,
                    next_id: Cell::new(0),
                };
            }
        };
        let on_status = Rc::new(on_status);
        let change_status = {
            let status = status.clone();
            move |changed: EmbedderStatus| {
                on_status(&changed);
                *status.borrow_mut() = changed;
            }
        };
        let on_message = {
            let status = status.clone();
            let waiting = waiting.clone();
            let worker = worker.clone();
            let load = ToWorker::Load {
                model_url: files.model_url.clone(),
                vocab_url: files.vocab_url.clone(),
                model_id: files.model_id.clone(),
            };
            let change_status = change_status.clone();
            Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
                let Some(message) = read(&event) else { return };
                if message == FromWorker::Started && !send(&worker, &load) {
                    change_status(EmbedderStatus::Failed(
                        "the embedder worker did not take the load request".into(),
                    ));
                }
                let changed = status_of(&message, &status.borrow());
                if let Some(changed) = changed {
                    change_status(changed);
                }
                settle(&waiting, message);
            })
        };
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
        // A worker script that fails to load or run reports here, not in a message.
        let on_error = {
            let waiting = waiting.clone();
            Closure::<dyn Fn(web_sys::ErrorEvent)>::new(move |event: web_sys::ErrorEvent| {
                let detail = event.message();
                let error = if detail.is_empty() {
                    "the embedder worker stopped".to_string()
                } else {
                    format!("the embedder worker stopped: {detail}")
                };
                change_status(EmbedderStatus::Failed(error.clone()));
                // No reply will come: release every question waiting for one, so it is
                // matched by wording instead of waiting for ever.
                let ids: Vec<u32> = waiting.borrow().resolvers.keys().copied().collect();
                for id in ids {
                    settle(
                        &waiting,
                        FromWorker::EmbedFailed {
                            id,
                            error: error.clone(),
                        },
                    );
                }
            })
        };
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_error.forget();
        WorkerEmbedder {
            worker: Some(worker),
            status,
            waiting,
            next_id: Cell::new(0),
        }
    }
}

fn read(event: &MessageEvent) -> Option<FromWorker> {
    let text = js_sys::JSON::stringify(&event.data()).ok()?.as_string()?;
    serde_json::from_str(&text).ok()
}

fn send(worker: &Worker, message: &ToWorker) -> bool {
    let json = serde_json::to_string(message).unwrap_or_default();
    js_sys::JSON::parse(&json)
        .and_then(|value| worker.post_message(&value))
        .is_ok()
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
        self.status.borrow().clone()
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let Some(worker) = &self.worker else {
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
            worker,
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
