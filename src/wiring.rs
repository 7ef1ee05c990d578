//! The composition root of the page: which adapter fills which port.
//!
//! The only place that names both use-cases and adapters, so the UI depends on the
//! session type and these two entry points alone.

use std::rc::Rc;

use crate::adapters::browser_clock::{BrowserClock, RandomIds};
use crate::adapters::http_llm::HttpLanguageModel;
use crate::adapters::idb_store::IdbStore;
use crate::adapters::local_settings::LocalSettings;
use crate::adapters::tab_broadcast::TabBroadcast;
use crate::app::announced_store::AnnouncedStore;
use crate::app::session::{Ports, Session};

pub type PageStore = AnnouncedStore<IdbStore, TabBroadcast>;
pub type PageSession =
    Session<PageStore, HttpLanguageModel, BrowserClock, RandomIds, LocalSettings>;

pub fn page_session() -> Rc<PageSession> {
    Rc::new(Session::new(Ports {
        store: AnnouncedStore {
            store: IdbStore,
            feed: TabBroadcast,
        },
        llm: HttpLanguageModel::default(),
        clock: BrowserClock,
        ids: RandomIds,
        settings: LocalSettings,
    }))
}

/// Calls `on_change` when another tab of this browser changed the memory.
pub fn on_other_tab_change(on_change: impl Fn() + 'static) {
    TabBroadcast::listen(on_change);
}
