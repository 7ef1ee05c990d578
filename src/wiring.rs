//! The composition root of the page: which adapter fills which port.
//!
//! The only place that names both use-cases and adapters, so the UI depends on the
//! session type alone.

use std::rc::Rc;

use crate::adapters::browser_clock::{BrowserClock, RandomIds};
use crate::adapters::http_llm::HttpLanguageModel;
use crate::adapters::idb_store::IdbStore;
use crate::adapters::local_settings::LocalSettings;
use crate::app::session::{Ports, Session};

pub type PageSession = Session<IdbStore, HttpLanguageModel, BrowserClock, RandomIds, LocalSettings>;

pub fn page_session() -> Rc<PageSession> {
    Rc::new(Session::new(Ports {
        store: IdbStore,
        llm: HttpLanguageModel::default(),
        clock: BrowserClock,
        ids: RandomIds,
        settings: LocalSettings,
    }))
}
