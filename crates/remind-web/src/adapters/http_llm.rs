//! The language-model client: OpenAI-compatible HTTP through the browser's `fetch`.
//!
//! The browser hides why a request failed (server down and CORS refusal look the
//! same), so the error names both causes and the setting to check.

use std::time::Duration;

use remind_app::openai_wire;
use remind_app::ports::{Completion, CompletionRequest, LanguageModel, LlmError};
use remind_app::settings::Endpoint;

#[derive(Clone, Default)]
pub struct HttpLanguageModel {
    client: reqwest::Client,
}

impl LanguageModel for HttpLanguageModel {
    async fn complete(
        &self,
        endpoint: &Endpoint,
        request: &CompletionRequest,
    ) -> Result<Completion, LlmError> {
        let (route, body) = openai_wire::request(endpoint, request);
        let url = endpoint.url_of(route);
        let mut builder = self
            .client
            .post(&url)
            .json(&body)
            .timeout(Duration::from_secs(endpoint.timeout_seconds));
        if let Some(key) = endpoint.api_key.as_deref().filter(|k| !k.trim().is_empty()) {
            builder = builder.bearer_auth(key.trim());
        }
        let response = builder.send().await.map_err(|e| {
            if e.is_timeout() {
                LlmError::TimedOut {
                    url: url.clone(),
                    seconds: endpoint.timeout_seconds,
                }
            } else {
                LlmError::Unreachable { url: url.clone() }
            }
        })?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(|e| {
            if e.is_timeout() {
                LlmError::TimedOut {
                    url: url.clone(),
                    seconds: endpoint.timeout_seconds,
                }
            } else {
                LlmError::Unexpected {
                    detail: format!("the reply could not be read: {e}"),
                }
            }
        })?;
        openai_wire::response(status, &text)
    }
}
