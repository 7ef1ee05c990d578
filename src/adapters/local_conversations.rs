//! The conversations kept in the browser's localStorage between visits: a turn log
//! the page reads back on reload, apart from the memory (IndexedDB), which it never
//! touches.

use gloo_storage::{LocalStorage, Storage};

use remind_app::conversation::{ConversationError, ConversationLog, Conversations};
use remind_app::ports::StoreError;

const KEY: &str = "remind.conversations.v1";

#[derive(Clone, Copy, Default)]
pub struct LocalConversations;

impl ConversationLog for LocalConversations {
    fn load(&self) -> Result<Option<Conversations>, ConversationError> {
        let text = LocalStorage::raw()
            .get_item(KEY)
            .map_err(|_| StoreError::Unavailable("localStorage".into()))?;
        text.map(|text| {
            serde_json::from_str(&text).map_err(|e| ConversationError::Unreadable(e.to_string()))
        })
        .transpose()
    }

    fn save(&self, conversations: &Conversations) -> Result<(), ConversationError> {
        let text =
            serde_json::to_string(conversations).map_err(|e| StoreError::Failed(e.to_string()))?;
        LocalStorage::raw().set_item(KEY, &text).map_err(|error| {
            // Chromium and Firefox both name the error; any other is reported as is.
            let name = js_sys::Reflect::get(&error, &"name".into())
                .ok()
                .and_then(|name| name.as_string())
                .unwrap_or_default();
            let error = if name.contains("Quota") {
                StoreError::QuotaExceeded
            } else {
                StoreError::Failed(name)
            };
            ConversationError::NotKept(error)
        })
    }
}
