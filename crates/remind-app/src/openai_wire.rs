//! The OpenAI-compatible wire format: request bodies and the parsing of replies.
//!
//! Kept apart from the HTTP transport so that every reply shape an endpoint may send
//! is tested natively, and a bad reply becomes an error the user can act on, never a
//! panic. What a failure says is `failure_text`'s; whether it is retried is `retry`'s.

use serde_json::{Value, json};

use crate::failure_text::{
    RetryContext, describe_non_json, detail_asking_to_wait, error_detail, without_choices,
};
use crate::ports::{Completion, CompletionRequest, Ending, LlmError};
use crate::settings::Endpoint;
use crate::status_class::{StatusClass, classify_status};
use remind_core::prompt::RenderedPrompt;

pub mod stream;

/// The API route and JSON body for a request whose reply comes whole.
pub fn request(endpoint: &Endpoint, request: &CompletionRequest) -> (&'static str, Value) {
    request_body(endpoint, request, false)
}

/// The API route and JSON body for a request whose reply streams as server-sent events
/// (`"stream": true`), read by [`stream::StreamedReply`]. An endpoint that ignores the
/// flag answers whole, which that reader also accepts.
pub fn request_streaming(
    endpoint: &Endpoint,
    request: &CompletionRequest,
) -> (&'static str, Value) {
    request_body(endpoint, request, true)
}

fn request_body(
    endpoint: &Endpoint,
    request: &CompletionRequest,
    streaming: bool,
) -> (&'static str, Value) {
    let common = |mut body: Value| {
        body["model"] = json!(endpoint.model);
        body["max_tokens"] = json!(request.max_tokens);
        body["temperature"] = json!(request.temperature);
        body["stop"] = json!(request.stop);
        body["stream"] = json!(streaming);
        body
    };
    match &request.prompt {
        RenderedPrompt::Completion(text) => ("completions", common(json!({ "prompt": text }))),
        RenderedPrompt::Chat(messages) => {
            ("chat/completions", common(json!({ "messages": messages })))
        }
    }
}

/// Reads an HTTP reply into a completion, or says what is wrong with it.
pub fn response(status: u16, body: &str) -> Result<Completion, LlmError> {
    response_with(status, body, RetryContext::default())
}

/// `response`, for a reply whose `Retry-After` was read and which may answer a retry.
pub fn response_with(status: u16, body: &str, retry: RetryContext) -> Result<Completion, LlmError> {
    match classify_status(status) {
        StatusClass::Success => {}
        StatusClass::Unauthorized => return Err(LlmError::Unauthorized { status }),
        StatusClass::RateLimited | StatusClass::Busy => {
            return Err(LlmError::Http {
                status,
                detail: detail_asking_to_wait(status, body, retry),
            });
        }
        StatusClass::Failed => {
            return Err(LlmError::Http {
                status,
                detail: error_detail(status, body),
            });
        }
    }
    let value: Value = serde_json::from_str(body).map_err(|e| LlmError::NotJson {
        detail: format!("{e}; {}", describe_non_json(body)),
    })?;
    let choice = value["choices"]
        .get(0)
        .ok_or_else(|| LlmError::Unexpected {
            detail: without_choices(&value),
        })?;
    let text = choice["text"]
        .as_str()
        .or_else(|| choice["message"]["content"].as_str())
        .ok_or_else(|| LlmError::Unexpected {
            detail: "the first choice has neither `text` nor `message.content`".into(),
        })?;
    Ok(Completion {
        text: text.to_string(),
        ending: Ending::from_finish_reason(choice["finish_reason"].as_str()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure_text::DETAIL_CHARS;
    use crate::llm_error::scrub;
    use crate::settings::Settings;
    use remind_core::prompt::{ChatMessage, ChatRole};

    fn req(prompt: RenderedPrompt) -> CompletionRequest {
        CompletionRequest {
            prompt,
            max_tokens: 64,
            temperature: 0.0,
            stop: vec!["END".into()],
        }
    }

    const NGINX_502: &str = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0 (Ubuntu)</center>\r\n</body>\r\n</html>\r\n";

    #[test]
    fn completion_mode_posts_the_prompt_with_stop_sequences() {
        let endpoint = Settings::default().endpoint;
        let (route, body) = request(&endpoint, &req(RenderedPrompt::Completion("p".into())));
        assert_eq!(route, "completions");
        assert_eq!(body["prompt"], "p");
        assert_eq!(body["stop"], json!(["END"]));
        assert_eq!(body["model"], endpoint.model.as_str());
    }

    #[test]
    fn a_streaming_request_differs_from_a_whole_one_only_in_asking_to_stream() {
        let endpoint = Settings::default().endpoint;
        for prompt in [
            RenderedPrompt::Completion("p".into()),
            RenderedPrompt::Chat(vec![ChatMessage {
                role: ChatRole::User,
                content: "q".into(),
            }]),
        ] {
            let (whole_route, mut whole) = request(&endpoint, &req(prompt.clone()));
            let (streamed_route, streamed) = request_streaming(&endpoint, &req(prompt));
            assert_eq!(whole["stream"], json!(false));
            assert_eq!(streamed["stream"], json!(true));
            whole["stream"] = json!(true);
            assert_eq!((whole_route, whole), (streamed_route, streamed));
        }
    }

    #[test]
    fn chat_mode_posts_messages() {
        let endpoint = Settings::default().endpoint;
        let messages = vec![ChatMessage {
            role: ChatRole::User,
            content: "q".into(),
        }];
        let (route, body) = request(&endpoint, &req(RenderedPrompt::Chat(messages)));
        assert_eq!(route, "chat/completions");
        assert_eq!(body["messages"][0]["role"], "user");
    }

    #[test]
    fn completion_and_chat_replies_are_read() {
        let c = response(
            200,
            r#"{"choices":[{"text":" the synonym for a is b","finish_reason":"stop"}]}"#,
        )
        .unwrap();
        assert_eq!(
            c,
            Completion {
                text: " the synonym for a is b".into(),
                ending: Ending::StopSequence
            }
        );
        let c = response(200, r#"{"choices":[{"message":{"role":"assistant","content":"x"},"finish_reason":"length"}]}"#).unwrap();
        assert_eq!(
            c,
            Completion {
                text: "x".into(),
                ending: Ending::Finished
            }
        );
    }

    #[test]
    fn a_page_instead_of_json_is_named_as_such() {
        let err = response(200, "<!doctype html><html>").unwrap_err();
        assert!(matches!(err, LlmError::NotJson { .. }));
        assert!(err.to_string().contains("not valid JSON"));
    }

    #[test]
    fn a_page_instead_of_json_is_named_by_its_title_without_its_markup() {
        let err = response(
            200,
            "<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head></html>",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("an HTML page titled \"Welcome to nginx!\""),
            "{err}"
        );
        assert!(!err.contains('<'), "{err}");
    }

    #[test]
    fn http_errors_carry_the_servers_message() {
        let err = response(500, r#"{"error":{"message":"model not loaded"}}"#).unwrap_err();
        assert_eq!(
            err,
            LlmError::Http {
                status: 500,
                detail: "model not loaded".into()
            }
        );
        assert_eq!(
            response(401, "").unwrap_err(),
            LlmError::Unauthorized { status: 401 }
        );
    }

    #[test]
    fn json_without_choices_is_unexpected() {
        assert!(matches!(
            response(200, "{}").unwrap_err(),
            LlmError::Unexpected { .. }
        ));
        assert!(matches!(
            response(200, r#"{"choices":[{}]}"#).unwrap_err(),
            LlmError::Unexpected { .. }
        ));
    }

    #[test]
    fn json_with_an_empty_or_null_error_and_no_choices_is_still_unexpected() {
        for body in [r#"{"error":null}"#, r#"{"choices":[]}"#] {
            assert_eq!(
                response(200, body).unwrap_err(),
                LlmError::Unexpected {
                    detail: "no `choices` in the reply".into()
                },
                "{body}"
            );
        }
    }

    #[test]
    fn a_200_reply_carrying_an_error_object_reports_the_endpoints_message() {
        let err = response(
            200,
            r#"{"error":{"message":"The model `gpt-x` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#,
        )
        .unwrap_err();
        assert_eq!(
            err,
            LlmError::Unexpected {
                detail: "an error instead of an answer — The model `gpt-x` does not exist".into()
            }
        );
        assert!(!err.to_string().contains("choices"), "{err}");
    }

    #[test]
    fn a_200_reply_carrying_an_error_string_reports_it() {
        let err = response(
            200,
            r#"{"error":"the request exceeds the available context size"}"#,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "The endpoint sent an unexpected reply: an error instead of an answer — the request exceeds the available context size"
        );
    }

    #[test]
    fn a_200_reply_carrying_an_error_without_a_message_says_it_is_an_error() {
        let err = response(200, r#"{"error":{"code":500}}"#).unwrap_err();
        assert_eq!(
            err,
            LlmError::Unexpected {
                detail: "an error with no message instead of an answer".into()
            }
        );
    }

    #[test]
    fn a_200_reply_carrying_a_long_error_shows_it_folded_and_capped() {
        let message = format!("out of\nmemory {}", "z".repeat(1_000));
        let body = json!({ "error": { "message": message } }).to_string();
        let LlmError::Unexpected { detail } = response(200, &body).unwrap_err() else {
            panic!("a 200 without choices is an unexpected reply");
        };
        let shown = detail
            .strip_prefix("an error instead of an answer — ")
            .unwrap_or_else(|| panic!("{detail}"));
        assert!(shown.starts_with("out of memory z"), "{shown}");
        assert_eq!(shown.chars().count(), DETAIL_CHARS);
        assert!(shown.ends_with('…'));
    }

    #[test]
    fn a_200_reply_carrying_an_error_never_shows_the_key_once_scrubbed() {
        let mut endpoint = Settings::default().endpoint;
        endpoint.api_key = Some("sk-live-42".into());
        let err = response(
            200,
            r#"{"error":{"message":"Incorrect API key provided: sk-live-42 (sent as Bearer sk-live-42)"}}"#,
        )
        .unwrap_err();
        let shown = scrub(err, &endpoint).to_string();
        assert!(!shown.contains("sk-live-42"), "{shown}");
        assert!(shown.contains("Incorrect API key provided: ***"), "{shown}");
    }

    #[test]
    fn a_429_says_rate_limited_and_when_to_retry() {
        let err = response_with(
            429,
            r#"{"error":{"message":"Rate limit reached"}}"#,
            RetryContext {
                retry_after: Some(120),
                retried_after: None,
            },
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "The endpoint is rate-limited — HTTP 429: Rate limit reached. Retry after 120 s."
        );
    }

    #[test]
    fn a_503_after_the_retry_says_busy_that_it_retried_and_when_to_retry() {
        let err = response_with(
            503,
            "",
            RetryContext {
                retry_after: Some(1),
                retried_after: Some(1),
            },
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "The endpoint is busy or unavailable — HTTP 503: Service Unavailable. Retried once after 1 s; retry after 1 s."
        );
    }

    #[test]
    fn a_429_without_retry_after_says_rate_limited_and_try_later() {
        let err = response(429, "").unwrap_err().to_string();
        assert!(err.contains("rate-limited"), "{err}");
        assert!(err.contains("Try again later."), "{err}");
    }

    #[test]
    fn an_html_error_page_is_reduced_to_its_status_and_title() {
        let err = response(502, NGINX_502).unwrap_err();
        assert_eq!(
            err.to_string(),
            "The endpoint answered HTTP 502: Bad Gateway"
        );
    }

    proptest::proptest! {
        #[test]
        fn any_reply_body_is_an_answer_or_an_error_never_a_panic(status in 100u16..600, body in "\\PC{0,120}") {
            let _ = response(status, &body);
        }
    }
}
