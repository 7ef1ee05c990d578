//! The user's settings: which endpoint to talk to, and how.
//!
//! The default is the local llama.cpp server that `scripts/run` starts, so the page
//! works with no configuration.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::llm_error::LlmError;
use crate::ports::StoreError;
use crate::redaction::{has_credentials, redact_url};
use remind_core::prompt::{PromptMode, TokenBudget};

pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:8081/v1";
pub const DEFAULT_MODEL: &str = "qwen2.5-coder-1.5b-instruct";
/// The cosine a paraphrase must reach to apply a stored lesson unasked. 0.80 was chosen
/// on the MemPrompt retriever pairs (docs/embedder.md, "Choosing τ"); since lessons
/// carry a scope the user confirmed, the same request with other specifics fits the
/// scope instead. On everyday questions, with the proposed scopes, 0.875 applies a
/// lesson to 2 of 96 near misses (0.80: 9, 0.90: none) and to 60 of 84 follow-ups
/// unaided (0.90: 55), and the band below it becomes a suggestion
/// (docs/eval/everyday.md).
pub const DEFAULT_SEMANTIC_TAU: f32 = 0.875;

fn default_semantic_tau() -> f32 {
    DEFAULT_SEMANTIC_TAU
}

/// An OpenAI-compatible endpoint and how to address it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Endpoint {
    pub base_url: String,
    /// Sent as a bearer token; never exported with the memory.
    #[serde(default)]
    pub api_key: Option<String>,
    pub model: String,
    pub mode: PromptMode,
    pub timeout_seconds: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub endpoint: Endpoint,
    pub budget: TokenBudget,
    /// τ of semantic retrieval; settings saved before it existed read the default.
    #[serde(default = "default_semantic_tau")]
    pub semantic_tau: f32,
    /// Whether the endpoint was saved after a connection test showed it works
    /// (`connection_check::known_to_work`), so the page can keep its settings folded.
    /// Settings saved before the test existed read `false`.
    #[serde(default)]
    pub connection_checked: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            endpoint: Endpoint {
                base_url: DEFAULT_BASE_URL.into(),
                api_key: None,
                model: DEFAULT_MODEL.into(),
                mode: PromptMode::Completion,
                timeout_seconds: 60,
            },
            budget: TokenBudget::default(),
            semantic_tau: DEFAULT_SEMANTIC_TAU,
            connection_checked: false,
        }
    }
}

/// Why settings were not saved; either way the settings in use stay as they were.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SaveSettingsError {
    /// A setting the page cannot use, named with what it must be.
    #[error("{0}; correct it and save again")]
    Invalid(String),
    /// The browser did not keep them; the store's message says what to do.
    #[error(transparent)]
    NotStored(#[from] StoreError),
}

impl Settings {
    /// Checks every setting before it is saved.
    pub fn validate(&self) -> Result<(), String> {
        self.endpoint.validate()?;
        if !(0.0..=1.0).contains(&self.semantic_tau) {
            return Err(format!(
                "the semantic match threshold must be between 0 and 1 (got {})",
                self.semantic_tau
            ));
        }
        Ok(())
    }
}

impl Endpoint {
    /// Checks the base URL and model before any request is made.
    pub fn validate(&self) -> Result<(), String> {
        let url = self.base_url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!(
                "the base URL must start with http:// or https:// (got \"{}\")",
                crate::redaction::redact_url(url)
            ));
        }
        if self.model.trim().is_empty() {
            return Err("the model name is empty".into());
        }
        if self.timeout_seconds == 0 {
            return Err("the timeout must be at least one second".into());
        }
        Ok(())
    }

    /// The full URL of an API route, e.g. `completions`.
    pub fn url_of(&self, route: &str) -> String {
        format!("{}/{route}", self.base_url.trim().trim_end_matches('/'))
    }

    /// The URL of `route`, unless the browser would refuse to fetch it: `fetch()` throws
    /// on a URL holding a user name or password before sending anything, which would
    /// otherwise read as "could not reach the model".
    pub fn sendable_url(&self, route: &str) -> Result<String, LlmError> {
        let url = self.url_of(route);
        if has_credentials(&url) {
            return Err(LlmError::BadSettings(format!(
                "the base URL {} carries a user name or password, which the browser refuses to send. Remove them from the URL and put the key in the API key field.",
                redact_url(self.base_url.trim())
            )));
        }
        Ok(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_points_at_the_local_server_in_completion_mode() {
        let settings = Settings::default();
        assert_eq!(
            settings.endpoint.url_of("completions"),
            "http://127.0.0.1:8081/v1/completions"
        );
        assert_eq!(settings.endpoint.mode, PromptMode::Completion);
        assert!(settings.endpoint.validate().is_ok());
    }

    #[test]
    fn a_trailing_slash_does_not_double() {
        let mut endpoint = Settings::default().endpoint;
        endpoint.base_url = "https://api.example.test/v1/".into();
        assert_eq!(
            endpoint.url_of("chat/completions"),
            "https://api.example.test/v1/chat/completions"
        );
    }

    #[test]
    fn settings_saved_before_the_semantic_threshold_existed_read_the_default() {
        let mut stored = serde_json::to_value(Settings::default()).unwrap();
        stored.as_object_mut().unwrap().remove("semantic_tau");
        let settings: Settings = serde_json::from_value(stored).unwrap();
        assert_eq!(settings.semantic_tau, DEFAULT_SEMANTIC_TAU);
    }

    #[test]
    fn settings_saved_before_the_connection_test_existed_read_as_untested() {
        let mut stored = serde_json::to_value(Settings::default()).unwrap();
        stored.as_object_mut().unwrap().remove("connection_checked");
        let settings: Settings = serde_json::from_value(stored).unwrap();
        assert!(!settings.connection_checked);
    }

    #[test]
    fn a_threshold_outside_zero_to_one_is_refused() {
        let settings = Settings {
            semantic_tau: 1.5,
            ..Settings::default()
        };
        assert!(settings.validate().unwrap_err().contains("between 0 and 1"));
    }

    #[test]
    fn a_url_without_scheme_is_refused_with_the_reason() {
        let mut endpoint = Settings::default().endpoint;
        endpoint.base_url = "localhost:8081".into();
        assert!(endpoint.validate().unwrap_err().contains("http://"));
    }

    #[test]
    fn a_refused_url_is_quoted_without_its_password() {
        let mut endpoint = Settings::default().endpoint;
        endpoint.base_url = "me:s3cret@localhost:8081/v1".into();
        let err = endpoint.validate().unwrap_err();
        assert!(!err.contains("s3cret"), "{err}");
        assert!(err.contains("***@localhost:8081/v1"), "{err}");
    }
}
