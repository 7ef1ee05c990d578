//! The OpenAI-compatible wire format: request bodies and the parsing of replies.
//!
//! Kept apart from the HTTP transport so that every reply shape an endpoint may send
//! (OpenAI, llama.cpp, Ollama, vLLM, or something that is not an API at all) is tested
//! natively, and a bad reply becomes an error the user can act on, never a panic.

use serde_json::{Value, json};

use crate::ports::{Completion, CompletionRequest, LlmError};
use crate::settings::Endpoint;
use remind_core::prompt::RenderedPrompt;

/// The API route and JSON body for a request.
pub fn request(endpoint: &Endpoint, request: &CompletionRequest) -> (&'static str, Value) {
    let common = |mut body: Value| {
        body["model"] = json!(endpoint.model);
        body["max_tokens"] = json!(request.max_tokens);
        body["temperature"] = json!(request.temperature);
        body["stop"] = json!(request.stop);
        body["stream"] = json!(false);
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
    if status == 401 || status == 403 {
        return Err(LlmError::Unauthorized { status });
    }
    let parsed: Result<Value, _> = serde_json::from_str(body);
    if !(200..300).contains(&status) {
        let detail = parsed
            .ok()
            .and_then(|v| {
                v["error"]["message"]
                    .as_str()
                    .or(v["error"].as_str())
                    .map(str::to_string)
            })
            .unwrap_or_else(|| excerpt(body));
        return Err(LlmError::Http { status, detail });
    }
    let value = parsed.map_err(|e| LlmError::NotJson {
        detail: format!("{e}; it starts with \"{}\"", excerpt(body)),
    })?;
    let choice = value["choices"]
        .get(0)
        .ok_or_else(|| LlmError::Unexpected {
            detail: "no `choices` in the reply".into(),
        })?;
    let text = choice["text"]
        .as_str()
        .or_else(|| choice["message"]["content"].as_str())
        .ok_or_else(|| LlmError::Unexpected {
            detail: "the first choice has neither `text` nor `message.content`".into(),
        })?;
    let stopped = choice["finish_reason"].as_str() == Some("stop");
    Ok(Completion {
        text: text.to_string(),
        stopped,
    })
}

fn excerpt(body: &str) -> String {
    let short: String = body.chars().take(80).collect();
    short.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;
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
                stopped: true
            }
        );
        let c = response(200, r#"{"choices":[{"message":{"role":"assistant","content":"x"},"finish_reason":"length"}]}"#).unwrap();
        assert_eq!(
            c,
            Completion {
                text: "x".into(),
                stopped: false
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

    proptest::proptest! {
        #[test]
        fn any_reply_body_is_an_answer_or_an_error_never_a_panic(status in 100u16..600, body in "\\PC{0,120}") {
            let _ = response(status, &body);
        }
    }
}
