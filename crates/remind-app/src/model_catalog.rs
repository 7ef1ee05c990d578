//! The models an endpoint offers (`GET {base}/models`): the port the connection test
//! asks, and how its reply is read.
//!
//! Its own port, out of `ports.rs`, because only the settings use it: asking an
//! endpoint what it serves is how the page learns the endpoint works at all. Like the
//! ports, its async trait makes no `Send` promise: the page is single-threaded wasm.

#![allow(async_fn_in_trait)]

use serde_json::Value;

use crate::failure_text::{describe_non_json, error_detail};
use crate::llm_error::LlmError;
use crate::settings::Endpoint;
use crate::status_class::{StatusClass, classify_status};

/// The route, below the base URL, that lists an OpenAI-compatible server's models.
pub const MODELS_ROUTE: &str = "models";

/// Lists the models an OpenAI-compatible endpoint serves.
pub trait ModelCatalog {
    /// The ids of the models, in the server's order; failures as a model request's.
    async fn list_models(&self, endpoint: &Endpoint) -> Result<Vec<String>, LlmError>;
}

/// Reads a `GET /models` reply: `{"data": [{"id": …}, …]}` as OpenAI, Ollama, LM Studio,
/// vLLM and llama-server send it. An error status reads as a completion's would.
pub fn models_from_response(status: u16, body: &str) -> Result<Vec<String>, LlmError> {
    match classify_status(status) {
        StatusClass::Success => {}
        StatusClass::Unauthorized => return Err(LlmError::Unauthorized { status }),
        _ => {
            return Err(LlmError::Http {
                status,
                detail: error_detail(status, body),
            });
        }
    }
    let value: Value = serde_json::from_str(body).map_err(|e| LlmError::NotJson {
        detail: format!("{e}; {}", describe_non_json(body)),
    })?;
    let entries = value["data"]
        .as_array()
        .ok_or_else(|| LlmError::Unexpected {
            detail: "the model list has no `data` array".into(),
        })?;
    Ok(entries
        .iter()
        .filter_map(|entry| entry["id"].as_str())
        .map(str::to_string)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_openai_style_list_gives_its_ids_in_order() {
        let body = r#"{"object":"list","data":[{"id":"b","object":"model"},{"id":"a"}]}"#;
        assert_eq!(models_from_response(200, body).unwrap(), ["b", "a"]);
    }

    #[test]
    fn an_empty_list_is_no_models_not_an_error() {
        assert_eq!(
            models_from_response(200, r#"{"data":[]}"#).unwrap(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_refused_key_is_unauthorized() {
        assert_eq!(
            models_from_response(401, r#"{"error":{"message":"no key"}}"#),
            Err(LlmError::Unauthorized { status: 401 })
        );
        assert_eq!(
            models_from_response(403, ""),
            Err(LlmError::Unauthorized { status: 403 })
        );
    }

    #[test]
    fn a_missing_route_is_an_http_404_with_the_servers_words() {
        let err = models_from_response(404, r#"{"error":{"message":"no route GET /models"}}"#)
            .unwrap_err();
        let LlmError::Http { status, detail } = err else {
            panic!("{err:?}")
        };
        assert_eq!(status, 404);
        assert!(detail.contains("no route"), "{detail}");
    }

    #[test]
    fn a_web_page_is_not_json_and_json_without_data_is_unexpected() {
        assert!(matches!(
            models_from_response(200, "<html><title>Welcome</title></html>"),
            Err(LlmError::NotJson { .. })
        ));
        assert!(matches!(
            models_from_response(200, r#"{"models":[]}"#),
            Err(LlmError::Unexpected { .. })
        ));
    }
}
