//! The language-model client: OpenAI-compatible HTTP through the browser's `fetch`.
//!
//! The browser hides why a request failed (server down and CORS refusal look the
//! same), so the error names both causes and the setting to check. What an error says
//! is `failure_text`'s, when to retry `RetryPolicy::PAGE`'s; this file only sends, reads,
//! keeps the clock and waits.
//!
//! A streamed reply is read chunk by chunk (`reqwest`'s `bytes_stream`, the fetch body's
//! reader) and raced against the user's stop and a deadline; dropping the body's stream
//! aborts the fetch, so a stop or a time-out leaves nothing running.

use std::future::Future;
use std::pin::{Pin, pin};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::StreamExt;
use futures::future::{Either, select};
use remind_app::deadline::{reached_deadline, request_timeout};
use remind_app::failure_text::RetryContext;
use remind_app::llm_error::scrub;
use remind_app::openai_wire;
use remind_app::openai_wire::stream::StreamedReply;
use remind_app::ports::{Completion, CompletionRequest, LanguageModel, LlmError, ReplyStream};
use remind_app::retry::{RetryPolicy, parse_retry_after};
use remind_app::settings::Endpoint;
use remind_app::status_class::{StatusClass, classify_status};
use serde_json::Value;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

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

    /// Streams the reply. The timeout runs from sending the request and restarts at
    /// every event of the stream, so it bounds each silence, not the whole reply: one
    /// that keeps streaming is never cut, one that stalls for the timeout is. A body
    /// that is no stream (an endpoint ignoring `"stream": true`) has no events, so the
    /// timeout bounds it whole, as in `complete`. A stop ends any wait at once (for the
    /// headers, a chunk, or before the one retry) with what had arrived.
    async fn complete_streaming(
        &self,
        endpoint: &Endpoint,
        request: &CompletionRequest,
        reply: &ReplyStream<'_>,
    ) -> Result<Completion, LlmError> {
        self.stream_once_or_twice(endpoint, request, reply)
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
        let url = endpoint.sendable_url(route)?;
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
            Timer::after(wait).await;
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
        let deadline = WholeRequestDeadline::start(endpoint, url);
        let response = self
            .post(endpoint, url, body)
            .timeout(deadline.limit)
            .send()
            .await
            .map_err(|e| deadline.send_failed(&e))?;
        let status = response.status().as_u16();
        let retry_after = retry_after_of(&response);
        let body = response
            .text()
            .await
            .map_err(|e| deadline.read_failed(&e))?;
        Ok(Answer {
            status,
            retry_after,
            body,
        })
    }
}

impl HttpLanguageModel {
    /// The request, with the key if there is one; no timeout of reqwest's, whose timer
    /// would abort a streamed body at the deadline however well it flows.
    fn post(&self, endpoint: &Endpoint, url: &str, body: &Value) -> reqwest::RequestBuilder {
        with_key(self.client.post(url).json(body), endpoint)
    }

    /// One streamed attempt, and another only when `RetryPolicy::PAGE` grants one: a
    /// 429 or 503 that says when it may come, which arrives before any text did.
    async fn stream_once_or_twice(
        &self,
        endpoint: &Endpoint,
        request: &CompletionRequest,
        reply: &ReplyStream<'_>,
    ) -> Result<Completion, LlmError> {
        let (route, body) = openai_wire::request_streaming(endpoint, request);
        let url = endpoint.sendable_url(route)?;
        let limit = request_timeout(endpoint);
        let timed_out = || LlmError::TimedOut {
            url: url.clone(),
            seconds: limit.as_secs(),
        };
        let nothing_arrived = || Ok(Completion::stopped_by_user(String::new()));
        let policy = RetryPolicy::PAGE;
        let mut attempts = 0;
        let mut retried_after = None;
        loop {
            let sent_at = js_sys::Date::now();
            let sending = within(limit, self.post(endpoint, &url, &body).send());
            let Some(sent) = reply.unless_stopped(sending).await else {
                return nothing_arrived();
            };
            let response = sent
                .ok_or_else(timed_out)?
                .map_err(|_| LlmError::Unreachable {
                    url: url.to_string(),
                })?;
            attempts += 1;
            let status = response.status().as_u16();
            let deadline = Silence {
                limit,
                since: sent_at,
            };
            if classify_status(status) == StatusClass::Success {
                return read_streamed(response, reply, deadline, timed_out).await;
            }
            // An error's body is short and says why: read whole within the request's
            // deadline, as `complete` reads it.
            let retry_after = retry_after_of(&response);
            let reading = within(deadline.left(), response.text());
            let Some(read) = reply.unless_stopped(reading).await else {
                return nothing_arrived();
            };
            let error_body = read
                .ok_or_else(timed_out)?
                .map_err(|e| LlmError::Unexpected {
                    detail: format!("the reply could not be read: {e}"),
                })?;
            let answer = openai_wire::response_with(
                status,
                &error_body,
                RetryContext {
                    retry_after,
                    retried_after,
                },
            );
            let Err(error) = &answer else {
                return answer;
            };
            let Some(wait) = policy.wait_before_retry(error, retry_after, attempts) else {
                return answer;
            };
            if reply.unless_stopped(Timer::after(wait)).await.is_none() {
                return nothing_arrived();
            }
            retried_after = Some(wait.as_secs());
        }
    }
}

/// Reads a 2xx reply's body as it arrives, showing its text each time it grows. A body
/// that turns out not to be a stream is shown once, whole, when it ends.
async fn read_streamed(
    response: reqwest::Response,
    reply: &ReplyStream<'_>,
    mut deadline: Silence,
    timed_out: impl Fn() -> LlmError,
) -> Result<Completion, LlmError> {
    let mut streamed = StreamedReply::new();
    // Returning drops this stream, and with it the fetch: a stop or a stalled server
    // leaves no request running.
    let mut chunks = pin!(response.bytes_stream());
    loop {
        let next_chunk = within(deadline.left(), chunks.next());
        let Some(next) = reply.unless_stopped(next_chunk).await else {
            return Ok(streamed.stopped_by_user());
        };
        match next.ok_or_else(&timed_out)? {
            Some(Ok(bytes)) => {
                let events_before = streamed.events_read();
                let grew = streamed.read(&bytes)?;
                if streamed.events_read() > events_before {
                    deadline.since = js_sys::Date::now();
                }
                if grew {
                    reply.show(streamed.text());
                }
                if streamed.is_done() {
                    return streamed.end();
                }
            }
            Some(Err(e)) => {
                return Err(LlmError::Unexpected {
                    detail: format!("the reply could not be read: {e}"),
                });
            }
            None => {
                let shown = streamed.text().len();
                let completion = streamed.end()?;
                if completion.text.len() != shown {
                    reply.show(&completion.text);
                }
                return Ok(completion);
            }
        }
    }
}

/// The longest a streamed reply may stay silent, and when it last spoke (the request
/// sent, or its last event), in the browser's milliseconds.
struct Silence {
    limit: Duration,
    since: f64,
}

impl Silence {
    /// How long the reply may still stay silent; zero once the limit passed.
    fn left(&self) -> Duration {
        let silent_ms = (js_sys::Date::now() - self.since).max(0.0) as u64;
        self.limit.saturating_sub(Duration::from_millis(silent_ms))
    }
}

/// `builder` with the endpoint's key as a bearer token, when one is set.
pub fn with_key(builder: reqwest::RequestBuilder, endpoint: &Endpoint) -> reqwest::RequestBuilder {
    match endpoint.api_key.as_deref().filter(|k| !k.trim().is_empty()) {
        Some(key) => builder.bearer_auth(key.trim()),
        None => builder,
    }
}

/// One request's whole deadline, and what a failed send or read of it is.
///
/// reqwest's timeout aborts the fetch and the body read alike, but names only the
/// first a time-out: an aborted body read is "error decoding response body". The
/// clock tells them apart.
pub struct WholeRequestDeadline {
    url: String,
    pub limit: Duration,
    started_ms: f64,
}

impl WholeRequestDeadline {
    /// Starts the endpoint's deadline for a request to `url` now.
    pub fn start(endpoint: &Endpoint, url: &str) -> Self {
        WholeRequestDeadline {
            url: url.to_string(),
            limit: request_timeout(endpoint),
            started_ms: js_sys::Date::now(),
        }
    }

    fn timed_out(&self, error: &reqwest::Error) -> bool {
        let elapsed_ms = (js_sys::Date::now() - self.started_ms).max(0.0) as u64;
        error.is_timeout() || reached_deadline(Duration::from_millis(elapsed_ms), self.limit)
    }

    fn timed_out_error(&self) -> LlmError {
        LlmError::TimedOut {
            url: self.url.clone(),
            seconds: self.limit.as_secs(),
        }
    }

    /// Sending failed: the deadline passed, or nothing answered.
    pub fn send_failed(&self, error: &reqwest::Error) -> LlmError {
        if self.timed_out(error) {
            self.timed_out_error()
        } else {
            LlmError::Unreachable {
                url: self.url.clone(),
            }
        }
    }

    /// Reading the body failed: the deadline passed, or the body broke off.
    pub fn read_failed(&self, error: &reqwest::Error) -> LlmError {
        if self.timed_out(error) {
            self.timed_out_error()
        } else {
            LlmError::Unexpected {
                detail: format!("the reply could not be read: {error}"),
            }
        }
    }
}

/// The wait a reply's `Retry-After` asks for. Cross-origin, the page sees the header
/// only if the server lists it in `Access-Control-Expose-Headers`; without it there is
/// simply no retry.
fn retry_after_of(response: &reqwest::Response) -> Option<u64> {
    response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| parse_retry_after(value, unix_seconds_now()))
}

/// `work`'s output, or `None` if `limit` passes first (and `work` is dropped).
async fn within<T>(limit: Duration, work: impl Future<Output = T>) -> Option<T> {
    match select(pin!(work), Timer::after(limit)).await {
        Either::Left((output, _)) => Some(output),
        Either::Right(_) => None,
    }
}

fn unix_seconds_now() -> u64 {
    (js_sys::Date::now() / 1000.0).max(0.0) as u64
}

/// A wait on the browser's timer that clears the timer when dropped, so a deadline
/// raced against every chunk of a reply leaves no timer behind per chunk.
struct Timer {
    handle: Option<i32>,
    fired: JsFuture,
}

impl Timer {
    fn after(duration: Duration) -> Timer {
        let ms = i32::try_from(duration.as_millis()).unwrap_or(i32::MAX);
        let mut handle = None;
        let promise = js_sys::Promise::new(&mut |resolve, _reject| {
            handle = web_sys::window().and_then(|window| {
                window
                    .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms)
                    .ok()
            });
            if handle.is_none() {
                // No timer to wait on: going on at once beats never answering.
                let _ = resolve.call0(&JsValue::UNDEFINED);
            }
        });
        Timer {
            handle,
            fired: JsFuture::from(promise),
        }
    }
}

impl Future for Timer {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.fired).poll(cx).map(|_| ())
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        if let (Some(handle), Some(window)) = (self.handle.take(), web_sys::window()) {
            window.clear_timeout_with_handle(handle);
        }
    }
}
