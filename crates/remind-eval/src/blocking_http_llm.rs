//! The language-model client for native tools: OpenAI-compatible HTTP over blocking `ureq`.
//!
//! The evaluation harness runs arms on plain threads, so it needs a client that works
//! without an async runtime. Request bodies and reply parsing are `openai_wire`'s and
//! when to retry is `RetryPolicy`'s, the same code the page uses, so a harness run
//! measures what the page would send.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use remind_app::openai_wire;
use remind_app::ports::{Completion, CompletionRequest, LanguageModel, LlmError};
use remind_app::retry::{RetryPolicy, parse_retry_after};
use remind_app::settings::Endpoint;

/// A blocking OpenAI-compatible client; `seed` is sent with every request when set, so
/// servers that honour it sample reproducibly.
#[derive(Clone, Debug, Default)]
pub struct BlockingHttpLlm {
    pub seed: Option<u64>,
}

/// A completion and what it took: the step log records both.
#[derive(Clone, Debug)]
pub struct Sent {
    pub completion: Completion,
    pub attempts: u32,
    /// The errors of the failed attempts, oldest first.
    pub errors: Vec<String>,
}

/// A failed attempt, and the wait its reply's `Retry-After` asked for.
struct Failed {
    error: LlmError,
    retry_after: Option<u64>,
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
        self.attempt(endpoint, request)
            .map_err(|failed| failed.error)
    }

    /// Sends the request as often as `policy` grants, sleeping between attempts; on
    /// giving up, the attempts made and the last error.
    pub fn complete_with_retries(
        &self,
        endpoint: &Endpoint,
        request: &CompletionRequest,
        policy: &RetryPolicy,
    ) -> Result<Sent, (u32, LlmError)> {
        let mut errors = Vec::new();
        let mut attempt = 1;
        loop {
            match self.attempt(endpoint, request) {
                Ok(completion) => {
                    return Ok(Sent {
                        completion,
                        attempts: attempt,
                        errors,
                    });
                }
                Err(Failed { error, retry_after }) => {
                    let Some(wait) = policy.wait_before_retry(&error, retry_after, attempt) else {
                        return Err((attempt, error));
                    };
                    errors.push(error.to_string());
                    std::thread::sleep(wait);
                    attempt += 1;
                }
            }
        }
    }

    fn attempt(
        &self,
        endpoint: &Endpoint,
        request: &CompletionRequest,
    ) -> Result<Completion, Failed> {
        let failed = |error| Failed {
            error,
            retry_after: None,
        };
        endpoint
            .validate()
            .map_err(|detail| failed(LlmError::BadSettings(detail)))?;
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
        let mut response = call.send(body.to_string()).map_err(|e| {
            failed(match e {
                ureq::Error::Timeout(_) => timed_out(),
                _ => LlmError::Unreachable { url: url.clone() },
            })
        })?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(ureq::http::header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| parse_retry_after(value, unix_seconds_now()));
        let text = response.body_mut().read_to_string().map_err(|e| {
            failed(match e {
                ureq::Error::Timeout(_) => timed_out(),
                other => LlmError::Unexpected {
                    detail: format!("the reply could not be read: {other}"),
                },
            })
        })?;
        openai_wire::response(status, &text).map_err(|error| Failed { error, retry_after })
    }
}

fn unix_seconds_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
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

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::time::Instant;

    use super::*;
    use remind_app::settings::Settings;
    use remind_core::prompt::RenderedPrompt;

    /// A server that answers its n-th connection with `replies[n]`, raw, then closes.
    fn serve(replies: Vec<&'static str>) -> Endpoint {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut endpoint = Settings::default().endpoint;
        endpoint.base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for (reply, stream) in replies.into_iter().zip(listener.incoming().flatten()) {
                // The whole request is read first, or closing would reset the connection.
                let mut reader = BufReader::new(&stream);
                let lines: Vec<String> = (&mut reader)
                    .lines()
                    .map_while(Result::ok)
                    .take_while(|line| !line.is_empty())
                    .collect();
                let length = lines
                    .iter()
                    .find_map(|line| {
                        line.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|n| n.trim().parse().unwrap_or(0))
                    })
                    .unwrap_or(0);
                let _ = reader.read_exact(&mut vec![0; length]);
                let _ = (&stream).write_all(reply.as_bytes());
            }
        });
        endpoint
    }

    fn request() -> CompletionRequest {
        CompletionRequest {
            prompt: RenderedPrompt::Completion("p".into()),
            max_tokens: 8,
            temperature: 0.0,
            stop: vec![],
        }
    }

    const ANSWER: &str = "HTTP/1.1 200 OK\r\nContent-Length: 49\r\nConnection: close\r\n\r\n{\"choices\":[{\"text\":\"b\",\"finish_reason\":\"stop\"}]}";

    #[test]
    fn a_429_that_names_its_wait_is_retried_after_that_wait_not_the_backoff() {
        let endpoint = serve(vec![
            "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            ANSWER,
        ]);
        let policy = RetryPolicy::harness(1, Duration::from_secs(5));
        let started = Instant::now();
        let sent = BlockingHttpLlm::new(None)
            .complete_with_retries(&endpoint, &request(), &policy)
            .unwrap();
        assert_eq!(sent.completion.text, "b");
        assert_eq!(sent.attempts, 2);
        assert!(sent.errors[0].contains("429"), "{:?}", sent.errors);
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "waited the backoff"
        );
    }

    #[test]
    fn a_429_asking_for_longer_than_the_cap_ends_the_request_at_once() {
        let endpoint = serve(vec![
            "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3600\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        ]);
        let policy = RetryPolicy::harness(3, Duration::from_millis(1));
        let (attempts, error) = BlockingHttpLlm::new(None)
            .complete_with_retries(&endpoint, &request(), &policy)
            .unwrap_err();
        assert_eq!(attempts, 1);
        assert_eq!(
            error,
            LlmError::Http {
                status: 429,
                detail: "Too Many Requests. Try again later.".into()
            }
        );
    }
}
