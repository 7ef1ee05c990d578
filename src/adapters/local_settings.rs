//! Settings kept in the browser's localStorage between visits.

use gloo_storage::{LocalStorage, Storage};

use remind_app::ports::{SettingsStore, StoreError};
use remind_app::settings::Settings;

const KEY: &str = "remind.settings.v1";

#[derive(Clone, Copy, Default)]
pub struct LocalSettings;

impl SettingsStore for LocalSettings {
    fn load(&self) -> Option<Settings> {
        LocalStorage::get(KEY).ok()
    }

    fn save(&self, settings: &Settings) -> Result<(), StoreError> {
        LocalStorage::set(KEY, settings).map_err(|e| StoreError::Failed(e.to_string()))
    }
}
