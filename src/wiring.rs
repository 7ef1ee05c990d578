//! The composition root of the page: which adapter fills which port.
//!
//! The only place that names both use-cases and adapters, so the UI depends on the
//! session type and these two entry points alone.

use std::rc::Rc;

use crate::adapters::browser_clock::{BrowserClock, RandomIds};
use crate::adapters::http_llm::HttpLanguageModel;
use crate::adapters::http_model_catalog::HttpModelCatalog;
use crate::adapters::idb_store::IdbStore;
use crate::adapters::local_conversations::LocalConversations;
use crate::adapters::local_settings::LocalSettings;
use crate::adapters::tab_broadcast::TabBroadcast;
use crate::adapters::worker_embedder::{ModelFiles, WorkerEmbedder};
use remind_app::announced_store::AnnouncedStore;
use remind_app::conversation::ConversationKeeper;
use remind_app::ports::{EmbedderStatus, WriteProgress};
use remind_app::remembered_embeddings::RememberedEmbeddings;
use remind_app::session::{Ports, Session};

pub type PageStore = AnnouncedStore<IdbStore, TabBroadcast>;
/// The worker's embeddings, the question being typed remembered for when it is asked.
pub type PageEmbedder = RememberedEmbeddings<WorkerEmbedder>;
pub type PageSession =
    Session<PageStore, HttpLanguageModel, BrowserClock, RandomIds, LocalSettings, PageEmbedder>;
pub type PageModelCatalog = HttpModelCatalog;

pub type PageConversations = ConversationKeeper<LocalConversations, BrowserClock>;

/// The SHA-256 pins of the embedder's files; the model's names its embeddings.
const EMBEDDER_PINS: &str = include_str!("../scripts/embedder.sha256");

/// Names the model by its content, so embeddings stored under a different model file
/// are recomputed and its cached download is replaced.
fn embedder_model_id() -> String {
    let sha = EMBEDDER_PINS
        .lines()
        .find_map(|line| line.strip_suffix("model.onnx")?.split_whitespace().next())
        .unwrap_or("unpinned");
    format!("all-minilm-l6-v2-int8-{}", &sha[..sha.len().min(12)])
}

/// Starts opening the page's database before the page is drawn
/// ([`IdbStore::open_ahead`]); the session's first read takes that open over.
pub fn open_memory_ahead() {
    IdbStore::open_ahead();
}

/// The page's session. The embedder worker starts loading the model once the session
/// has shown the memory (`Session::load`); `on_embedder_status` hears its progress, and
/// `on_write_progress` how far a large write to the memory (an import) has come.
pub fn page_session(
    on_embedder_status: impl Fn(&EmbedderStatus) + 'static,
    on_write_progress: impl Fn(WriteProgress) + 'static,
) -> Rc<PageSession> {
    // Trunk puts the worker and the model files (index.html) next to the page.
    let files = ModelFiles {
        worker_script: "./remind-embedder_loader.js".into(),
        relaxed_worker_script: "./remind-embedder-relaxed_loader.js".into(),
        model_url: "./minilm/model.onnx".into(),
        vocab_url: "./minilm/vocab.txt".into(),
        model_id: embedder_model_id(),
    };
    Rc::new(Session::new(Ports {
        store: AnnouncedStore {
            store: IdbStore::reporting_progress(on_write_progress),
            feed: TabBroadcast,
        },
        llm: HttpLanguageModel::default(),
        clock: BrowserClock,
        ids: RandomIds,
        settings: LocalSettings,
        embedder: RememberedEmbeddings::new(WorkerEmbedder::new(files, on_embedder_status)),
    }))
}

/// The conversations the page keeps between visits.
pub fn page_conversations() -> Rc<PageConversations> {
    Rc::new(ConversationKeeper::new(LocalConversations, BrowserClock))
}

/// Where the settings' connection test asks for an endpoint's models
/// (`remind_app::connection_check::check_connection`).
pub fn page_model_catalog() -> PageModelCatalog {
    HttpModelCatalog::default()
}

/// Calls `on_change` when another tab of this browser changed the memory.
pub fn on_other_tab_change(on_change: impl Fn() + 'static) {
    TabBroadcast::listen(on_change);
}
