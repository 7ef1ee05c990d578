//! The page's root: builds the session, loads stored memory, lays out the parts.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ui::ask_form::AskForm;
use crate::ui::conversation_bar::ConversationBar;
use crate::ui::conversation_view::ConversationView;
use crate::ui::embedder_status::EmbedderStatusLine;
use crate::ui::keyboard_shortcuts::listen_for_shortcuts;
use crate::ui::learning_chart::LearningChart;
use crate::ui::memory_browser::MemoryBrowser;
use crate::ui::memory_notice::MemoryNotice;
use crate::ui::page_context::{PageContext, use_page};
use crate::ui::settings_panel::SettingsPanel;
use crate::ui::storage_status::StorageStatus;
use crate::ui::transfer_panel::TransferPanel;
use crate::wiring::{on_other_tab_change, page_conversations, page_session};
use remind_app::ports::EmbedderStatus;

#[component]
pub fn App() -> impl IntoView {
    let embedder_status = RwSignal::new(EmbedderStatus::Off);
    let write_progress = RwSignal::new(None);
    let session = page_session(
        move |status| embedder_status.set(status.clone()),
        move |progress| write_progress.set(Some(progress)),
    );
    embedder_status.set(session.embedder_status());
    let page = PageContext::new(
        session,
        page_conversations(),
        embedder_status,
        write_progress,
    );
    provide_context(page);
    page.show_kept_conversation();
    listen_for_shortcuts(page);
    // Lessons without an embedding from the ready model (an import, a model change)
    // are embedded in the background whenever the memory or the model changes.
    Effect::new(move |_| {
        page.memory.track();
        if matches!(page.embedder_status.get(), EmbedderStatus::Ready { .. }) {
            page.embed_waiting_lessons();
        }
    });
    spawn_local(async move { page.reload_memory().await });
    on_other_tab_change(move || spawn_local(async move { page.reload_memory().await }));
    view! {
        <header class="masthead">
            <h1>"Remind"</h1>
            <p class="tagline">"An assistant that remembers your corrections."</p>
            <MemoryBadge/>
        </header>
        <main>
            <ConversationBar/>
            <ConversationView/>
            <AskForm/>
            <EmbedderStatusLine/>
            <MemoryNotice/>
            <MemoryBrowser/>
            <LearningChart/>
            <TransferPanel/>
            <SettingsPanel/>
            <StorageStatus/>
        </main>
    }
}

#[component]
fn MemoryBadge() -> impl IntoView {
    let page = use_page();
    let count = move || page.memory_count.get().to_string();
    // How many of them have their embedding in (a reload reads embeddings after the
    // lessons): for the scale benchmark, which times both.
    let embedded = Memo::new(move |_| {
        page.memory
            .with(|memory| memory.current().filter(|r| r.embedding.is_some()).count())
    });
    let error = move || page.memory_error.get();
    let reading = move || (!page.memory_read.get()).then_some(" (reading the memory…)");
    let unreadable = move || match page.unreadable.with(|rows| rows.len()) {
        0 => String::new(),
        n => format!(" ({n} unreadable, see Memory)"),
    };
    view! {
        <p class="memory-badge">
            "Memories: " <span id="memory-count" data-embedded=embedded>{count}</span>
            <span id="memory-reading" role="status">{reading}</span>
            <span class="error" id="memory-unreadable">{unreadable}</span>
            <span class="error" id="memory-error">{error}</span>
        </p>
    }
}
