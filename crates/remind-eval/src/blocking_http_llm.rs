//! The language-model client for native tools: OpenAI-compatible HTTP over blocking `ureq`.
//!
//! The evaluation harness runs arms on plain threads, so it needs a client that works
//! without an async runtime. Request bodies and reply parsing are `openai_wire`'s and
//! retries are `remind_app::retry`'s (driven by the runner), the same code the page uses, so a harness run measures what the page would send.

use std::time::Duration;

use remind_app::openai_wire;
use remind_app::ports::{Completion, CompletionRequest, LanguageModel, LlmError};
use remind_app::settings::Endpoint;

/// A blocking OpenAI-compatible client; `seed` is sent with every request when set, so
/// servers that honour it sample reproducibly.
#[derive(Clone, Debug, Default)]
pub struct BlockingHttpLlm {
    pub seed: Option<u64>,
}

impl BlockingHttpLlm {
    pub fn new(seed: Option<u64>) -> Self {
        BlockingHttpLlm { seed }
    }

    /// Sends one request and waits for the reply, at most `endpoint.timeout_seconds`.
    pub fn complete_blocking(
        &self,
        endpoint: &Endpoint,
        request: &CompletionRequest,
    ) -> Result<Completion, LlmError> {
        endpoint.validate().map_err(LlmError::BadSettings)?;
        let (route, mut body) = openai_wire::request(endpoint, request);
        if let Some(seed) = self.seed {
            body["seed"] = serde_json::json!(seed);
        }
        let url = endpoint.url_of(route);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(endpoint.timeout_seconds)))
            // Error statuses carry the server's explanation; openai_wire reads it.
            .http_status_as_error(false)
            .build()
            .into();
        let mut call = agent.post(&url).header("Content-Type", "application/json");
        if let Some(key) = endpoint.api_key.as_deref().filter(|k| !k.trim().is_empty()) {
            call = call.header("Authorization", &format!("Bearer {}", key.trim()));
        }
        let timed_out = || LlmError::TimedOut {
            url: url.clone(),
            seconds: endpoint.timeout_seconds,
        };
        let mut response = call.send(body.to_string()).map_err(|e| match e {
            ureq::Error::Timeout(_) => timed_out(),
            _ => LlmError::Unreachable { url: url.clone() },
        })?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().map_err(|e| match e {
            ureq::Error::Timeout(_) => timed_out(),
            other => LlmError::Unexpected {
                detail: format!("the reply could not be read: {other}"),
            },
        })?;
        openai_wire::response(status, &text)
    }
}

impl LanguageModel for BlockingHttpLlm {
    async fn complete(
        &self,
        endpoint: &Endpoint,
        request: &CompletionRequest,
    ) -> Result<Completion, LlmError> {
        self.complete_blocking(endpoint, request)
    }
}
