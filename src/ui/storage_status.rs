//! Whether the browser promised to keep the memory, asked once when the page opens.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ui::page_context::use_page;

#[derive(Clone, Debug, PartialEq)]
enum Persistence {
    Asking,
    Granted,
    Declined,
    Failed(String),
}

impl Persistence {
    fn tag(&self) -> &'static str {
        match self {
            Persistence::Asking => "asking",
            Persistence::Granted => "granted",
            Persistence::Declined => "declined",
            Persistence::Failed(_) => "failed",
        }
    }

    fn message(&self) -> String {
        match self {
            Persistence::Asking => "Asking the browser to keep the memory…".into(),
            Persistence::Granted => "Memory is kept persistently in this browser.".into(),
            Persistence::Declined => "The browser did not promise to keep the memory; under storage pressure it may clear it. Export a backup now and then.".into(),
            Persistence::Failed(e) => format!("Could not ask the browser to keep the memory: {e}"),
        }
    }
}

#[component]
pub fn StorageStatus() -> impl IntoView {
    let page = use_page();
    let persistence = RwSignal::new(Persistence::Asking);
    spawn_local(async move {
        persistence.set(match page.session().request_persistence().await {
            Ok(true) => Persistence::Granted,
            Ok(false) => Persistence::Declined,
            Err(e) => Persistence::Failed(e.to_string()),
        });
    });
    let tag = move || persistence.get().tag();
    let message = move || persistence.get().message();
    view! { <p id="storage-status" class="status" data-state=tag>{message}</p> }
}
