//! The model list of an OpenAI-compatible endpoint (`GET {base}/models`) through the
//! browser's `fetch`, for the connection test.
//!
//! Sends and reads only: what the reply means is `model_catalog`'s, what a failure
//! means `connection_check`'s. As for completions, the browser hides why a request
//! failed, so a transport failure is `Unreachable` and the diagnosis names both causes.

use std::time::Duration;

use remind_app::deadline::{reached_deadline, request_timeout};
use remind_app::llm_error::{LlmError, scrub};
use remind_app::model_catalog::{MODELS_ROUTE, ModelCatalog, models_from_response};
use remind_app::settings::Endpoint;

#[derive(Clone, Default)]
pub struct HttpModelCatalog {
    client: reqwest::Client,
}

impl ModelCatalog for HttpModelCatalog {
    async fn list_models(&self, endpoint: &Endpoint) -> Result<Vec<String>, LlmError> {
        self.fetch_models(endpoint)
            .await
            .map_err(|error| scrub(error, endpoint))
    }
}

impl HttpModelCatalog {
    async fn fetch_models(&self, endpoint: &Endpoint) -> Result<Vec<String>, LlmError> {
        let url = endpoint.sendable_url(MODELS_ROUTE)?;
        let limit = request_timeout(endpoint);
        let started = js_sys::Date::now();
        // The browser reports an aborted body read as a decoding error; the clock tells
        // a time-out apart.
        let timed_out = |e: &reqwest::Error| {
            let elapsed_ms = (js_sys::Date::now() - started).max(0.0) as u64;
            e.is_timeout() || reached_deadline(Duration::from_millis(elapsed_ms), limit)
        };
        let timed_out_error = || LlmError::TimedOut {
            url: url.clone(),
            seconds: limit.as_secs(),
        };
        let mut builder = self.client.get(&url).timeout(limit);
        if let Some(key) = endpoint.api_key.as_deref().filter(|k| !k.trim().is_empty()) {
            builder = builder.bearer_auth(key.trim());
        }
        let response = builder.send().await.map_err(|e| {
            if timed_out(&e) {
                timed_out_error()
            } else {
                LlmError::Unreachable { url: url.clone() }
            }
        })?;
        let status = response.status().as_u16();
        let body = response.text().await.map_err(|e| {
            if timed_out(&e) {
                timed_out_error()
            } else {
                LlmError::Unexpected {
                    detail: format!("the reply could not be read: {e}"),
                }
            }
        })?;
        models_from_response(status, &body)
    }
}
