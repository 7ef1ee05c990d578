//! The model list of an OpenAI-compatible endpoint (`GET {base}/models`) through the
//! browser's `fetch`, for the connection test.
//!
//! Sends and reads only: what the reply means is `model_catalog`'s, what a failure
//! means `connection_check`'s. As for completions, the browser hides why a request
//! failed, so a transport failure is `Unreachable` and the diagnosis names both causes.

use crate::adapters::http_llm::{WholeRequestDeadline, with_key};
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
        let deadline = WholeRequestDeadline::start(endpoint, &url);
        let response = with_key(self.client.get(&url), endpoint)
            .timeout(deadline.limit)
            .send()
            .await
            .map_err(|e| deadline.send_failed(&e))?;
        let status = response.status().as_u16();
        let body = response
            .text()
            .await
            .map_err(|e| deadline.read_failed(&e))?;
        models_from_response(status, &body)
    }
}
