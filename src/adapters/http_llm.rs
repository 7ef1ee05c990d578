//! The language-model client: OpenAI-compatible HTTP through the browser's `fetch`.
//!
//! The browser hides why a request failed (server down and CORS refusal look the
//! same), so the error names both causes and the setting to check. What an error says
//! is `failure_text`'s, when to retry `RetryPolicy::PAGE`'s; this file only sends, reads,
//! keeps the clock and waits.

use std::time::Duration;

use remind_app::deadline::{reached_deadline, request_timeout};
use remind_app::failure_text::RetryContext;
use remind_app::llm_error::scrub;
use remind_app::openai_wire;
use remind_app::ports::{Completion, CompletionRequest, LanguageModel, LlmError};
use remind_app::redaction::{has_credentials, redact_url};
use remind_app::retry::{RetryPolicy, parse_retry_after};
use remind_app::settings::Endpoint;
use serde_json::Value;
use wasm_bindgen::JsValue;

#[derive(Clone, Default)]
pub struct HttpLanguageModel {
    client: reqwest::Client,
}

/// One attempt's answer: its status, the wait its `Retry-After` asks for, its body.
struct Answer {
    status: u16,
    retry_after: Option<u64>,
    body: String,
}

impl LanguageModel for HttpLanguageModel {
    async fn complete(
        &self,
        endpoint: &Endpoint,
        request: &CompletionRequest,
    ) -> Result<Completion, LlmError> {
        self.complete_once_or_twice(endpoint, request)
            .await
            .map_err(|error| scrub(error, endpoint))
    }
}

impl HttpLanguageModel {
    /// One attempt, and another only when `RetryPolicy::PAGE` grants one: a 429 or 503
    /// that says when it may come.
    async fn complete_once_or_twice(
        &self,
        endpoint: &Endpoint,
        request: &CompletionRequest,
    ) -> Result<Completion, LlmError> {
        let (route, body) = openai_wire::request(endpoint, request);
        let url = endpoint.url_of(route);
        if has_credentials(&url) {
            // fetch() throws on such a URL before sending anything, which would
            // otherwise read as "could not reach the model".
            return Err(LlmError::BadSettings(format!(
                "the base URL {} carries a user name or password, which the browser refuses to send. Remove them from the URL and put the key in the API key field.",
                redact_url(endpoint.base_url.trim())
            )));
        }
        let policy = RetryPolicy::PAGE;
        let mut attempts = 0;
        let mut retried_after = None;
        loop {
            // A transport failure is never retried by the page's policy (no server asked
            // for a wait), so it ends the request at once.
            let answer = self.attempt(endpoint, &url, &body).await?;
            attempts += 1;
            let reply = openai_wire::response_with(
                answer.status,
                &answer.body,
                RetryContext {
                    retry_after: answer.retry_after,
                    retried_after,
                },
            );
            let wait = match &reply {
                Err(error) => policy.wait_before_retry(error, answer.retry_after, attempts),
                Ok(_) => None,
            };
            let Some(wait) = wait else {
                return reply;
            };
            sleep(wait).await;
            retried_after = Some(wait.as_secs());
        }
    }

    /// Sends the request and reads the whole reply within one deadline.
    async fn attempt(
        &self,
        endpoint: &Endpoint,
        url: &str,
        body: &Value,
    ) -> Result<Answer, LlmError> {
        let limit = request_timeout(endpoint);
        let started = js_sys::Date::now();
        // reqwest's timeout aborts the fetch and the body read alike, but names only the
        // first a time-out: an aborted body read is "error decoding response body". The
        // clock tells them apart.
        let timed_out = |e: &reqwest::Error| {
            let elapsed_ms = (js_sys::Date::now() - started).max(0.0) as u64;
            e.is_timeout() || reached_deadline(Duration::from_millis(elapsed_ms), limit)
        };
        let timed_out_error = || LlmError::TimedOut {
            url: url.to_string(),
            seconds: limit.as_secs(),
        };
        let mut builder = self.client.post(url).json(body).timeout(limit);
        if let Some(key) = endpoint.api_key.as_deref().filter(|k| !k.trim().is_empty()) {
            builder = builder.bearer_auth(key.trim());
        }
        let response = builder.send().await.map_err(|e| {
            if timed_out(&e) {
                timed_out_error()
            } else {
                LlmError::Unreachable {
                    url: url.to_string(),
                }
            }
        })?;
        let status = response.status().as_u16();
        // Cross-origin, the page sees `Retry-After` only if the server lists it in
        // `Access-Control-Expose-Headers`; without it there is simply no retry.
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| parse_retry_after(value, unix_seconds_now()));
        let body = response.text().await.map_err(|e| {
            if timed_out(&e) {
                timed_out_error()
            } else {
                LlmError::Unexpected {
                    detail: format!("the reply could not be read: {e}"),
                }
            }
        })?;
        Ok(Answer {
            status,
            retry_after,
            body,
        })
    }
}

fn unix_seconds_now() -> u64 {
    (js_sys::Date::now() / 1000.0).max(0.0) as u64
}

/// Resolves after `duration`, on the browser's timer.
async fn sleep(duration: Duration) {
    let ms = i32::try_from(duration.as_millis()).unwrap_or(i32::MAX);
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        let scheduled = web_sys::window().map(|window| {
            window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms)
        });
        if !matches!(scheduled, Some(Ok(_))) {
            // No timer to wait on: retrying at once beats never answering.
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}
