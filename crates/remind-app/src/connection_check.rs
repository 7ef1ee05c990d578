//! "Test connection": asks the endpoint for its models and explains what went wrong in
//! words that say what to do, for the usual failures of a first setup.
//!
//! Asking for the model list costs nothing and touches every part a question needs (the
//! server, the path, CORS, the key), so it tells apart what a failed question would
//! lump together. The diagnosis is pure; the catalog is a port.

use thiserror::Error;

use crate::endpoint_presets::cors_fix_for;
use crate::llm_error::{LlmError, scrub};
use crate::model_catalog::{MODELS_ROUTE, ModelCatalog};
use crate::redaction::redact_url;
use crate::settings::{Endpoint, Settings};

/// What a connection test found.
#[derive(Clone, Debug, PartialEq)]
pub enum ConnectionReport {
    /// The endpoint answered with its models.
    Works {
        /// The endpoint as tested, so a later save can tell whether it still is.
        tested: Endpoint,
        models: Vec<String>,
    },
    Fails(ConnectionProblem),
}

/// Why a connection test failed, with the fix.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ConnectionProblem {
    /// The browser reports a server that is down and one that refuses this page's
    /// origin (CORS) alike, so both are named, with the fix for each.
    #[error(
        "Nothing answered at {}. Either the server is not running (start it, and check the host and port in the base URL), or it does not allow requests from this page, {origin} (CORS); the browser cannot tell which. {cors_fix}",
        redact_url(.url)
    )]
    Unreachable {
        url: String,
        origin: String,
        cors_fix: String,
    },
    #[error(
        "The server answered, but there is no {} (HTTP {status}). {hint}",
        redact_url(.url)
    )]
    WrongPath {
        url: String,
        status: u16,
        hint: String,
    },
    #[error(
        "The endpoint wants an API key (HTTP {status}). Paste the key in the API key field and test again."
    )]
    KeyMissing { status: u16 },
    #[error(
        "The endpoint refused the API key (HTTP {status}). Check that it is complete, still valid and issued for this server."
    )]
    KeyRefused { status: u16 },
    #[error(
        "The endpoint answered, but not with an OpenAI model list ({detail}). Is the base URL an OpenAI-compatible API (usually ending in /v1)?"
    )]
    NotAnApi { detail: String },
    #[error(
        "No answer from {} within {seconds} s. The server may still be loading its model or be overloaded; test again, or raise the timeout.",
        redact_url(.url)
    )]
    TimedOut { url: String, seconds: u64 },
    #[error("Not tested: {0}")]
    BadSettings(String),
    #[error(transparent)]
    Failed(LlmError),
}

/// Tests `endpoint` from a page at `page_origin` (the origin named in a CORS fix).
pub async fn check_connection(
    catalog: &impl ModelCatalog,
    endpoint: &Endpoint,
    page_origin: &str,
) -> ConnectionReport {
    // Testing is how a model is chosen, so an empty model name must not stop it; every
    // other setting is checked as a save would.
    let mut checked = endpoint.clone();
    if checked.model.trim().is_empty() {
        checked.model = "(any)".into();
    }
    if let Err(reason) = checked.validate() {
        return ConnectionReport::Fails(ConnectionProblem::BadSettings(reason));
    }
    match catalog.list_models(endpoint).await {
        Ok(models) => ConnectionReport::Works {
            tested: endpoint.clone(),
            models,
        },
        Err(error) => {
            ConnectionReport::Fails(diagnose(scrub(error, endpoint), endpoint, page_origin))
        }
    }
}

/// The failure of a model-list request, as what the user should do about it.
fn diagnose(error: LlmError, endpoint: &Endpoint, page_origin: &str) -> ConnectionProblem {
    let has_key = endpoint
        .api_key
        .as_deref()
        .is_some_and(|key| !key.trim().is_empty());
    match error {
        LlmError::Unreachable { url } => ConnectionProblem::Unreachable {
            url,
            origin: page_origin.to_string(),
            cors_fix: cors_fix_for(&endpoint.base_url, page_origin),
        },
        LlmError::Http {
            status: status @ (404 | 405),
            ..
        } => ConnectionProblem::WrongPath {
            url: endpoint.url_of(MODELS_ROUTE),
            status,
            hint: path_hint(&endpoint.base_url),
        },
        LlmError::Unauthorized { status } if has_key => ConnectionProblem::KeyRefused { status },
        LlmError::Unauthorized { status } => ConnectionProblem::KeyMissing { status },
        LlmError::NotJson { detail } | LlmError::Unexpected { detail } => {
            ConnectionProblem::NotAnApi { detail }
        }
        LlmError::TimedOut { url, seconds } => ConnectionProblem::TimedOut { url, seconds },
        LlmError::BadSettings(reason) => ConnectionProblem::BadSettings(reason),
        other => ConnectionProblem::Failed(other),
    }
}

/// What to change in a base URL whose models route does not exist.
fn path_hint(base_url: &str) -> String {
    let base = base_url.trim().trim_end_matches('/');
    if base.ends_with("/v1") {
        "The base URL should be the API's root, the part before /models; check it against the server's documentation.".into()
    } else {
        format!(
            "The base URL of an OpenAI-compatible server usually ends in /v1: try {}/v1.",
            redact_url(base)
        )
    }
}

impl ConnectionReport {
    pub fn works(&self) -> bool {
        matches!(self, ConnectionReport::Works { .. })
    }

    /// The endpoint's models; none when the test failed.
    pub fn models(&self) -> &[String] {
        match self {
            ConnectionReport::Works { models, .. } => models,
            ConnectionReport::Fails(_) => &[],
        }
    }

    /// Whether the test shows that `endpoint` works: the same server and key answered,
    /// and listed its model.
    pub fn vouches_for(&self, endpoint: &Endpoint) -> bool {
        match self {
            ConnectionReport::Works { tested, models } => {
                same_server_and_key(tested, endpoint) && models.contains(&endpoint.model)
            }
            ConnectionReport::Fails(_) => false,
        }
    }

    /// One paragraph for the page: the models found (and whether `model` is among them)
    /// or the problem and its fix.
    pub fn message(&self, model: &str) -> String {
        match self {
            ConnectionReport::Fails(problem) => problem.to_string(),
            ConnectionReport::Works { models, .. } if models.is_empty() => {
                "Connected, but the endpoint lists no models. Load a model in the server and test again.".into()
            }
            ConnectionReport::Works { models, .. } => {
                let count = match models.len() {
                    1 => "1 model".to_string(),
                    n => format!("{n} models"),
                };
                if models.iter().any(|m| m == model) {
                    format!("Connected: {count}, \"{model}\" among them. Save to use it.")
                } else if model.trim().is_empty() {
                    format!("Connected: {count}. Choose one, then save.")
                } else {
                    format!(
                        "Connected: {count}, but \"{model}\" is not among them. Choose one of the endpoint's models, then save."
                    )
                }
            }
        }
    }
}

/// Whether the settings about to be saved are known to work: the last test vouches for
/// their endpoint, or they were known to work and the endpoint did not change.
pub fn known_to_work(
    previous: &Settings,
    last_test: Option<&ConnectionReport>,
    endpoint: &Endpoint,
) -> bool {
    let vouched = last_test.is_some_and(|report| report.vouches_for(endpoint));
    let unchanged = previous.connection_checked
        && same_server_and_key(&previous.endpoint, endpoint)
        && previous.endpoint.model == endpoint.model;
    vouched || unchanged
}

fn same_server_and_key(a: &Endpoint, b: &Endpoint) -> bool {
    let base = |e: &Endpoint| e.base_url.trim().trim_end_matches('/').to_string();
    let key = |e: &Endpoint| {
        e.api_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map(str::to_string)
    };
    base(a) == base(b) && key(a) == key(b)
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use futures::executor::block_on;

    const ORIGIN: &str = "http://localhost:8080";

    /// Answers every request with one scripted result, and keeps the endpoints asked.
    struct ScriptedCatalog {
        answer: Result<Vec<String>, LlmError>,
        asked: RefCell<Vec<Endpoint>>,
    }

    impl ScriptedCatalog {
        fn answering(answer: Result<Vec<&str>, LlmError>) -> Self {
            ScriptedCatalog {
                answer: answer.map(|ids| ids.into_iter().map(str::to_string).collect()),
                asked: RefCell::default(),
            }
        }
    }

    impl ModelCatalog for ScriptedCatalog {
        async fn list_models(&self, endpoint: &Endpoint) -> Result<Vec<String>, LlmError> {
            self.asked.borrow_mut().push(endpoint.clone());
            self.answer.clone()
        }
    }

    fn endpoint(base_url: &str) -> Endpoint {
        Endpoint {
            base_url: base_url.into(),
            ..Settings::default().endpoint
        }
    }

    fn test(answer: Result<Vec<&str>, LlmError>, endpoint: &Endpoint) -> ConnectionReport {
        block_on(check_connection(
            &ScriptedCatalog::answering(answer),
            endpoint,
            ORIGIN,
        ))
    }

    fn problem(report: ConnectionReport) -> ConnectionProblem {
        match report {
            ConnectionReport::Fails(problem) => problem,
            works => panic!("expected a failure, got {works:?}"),
        }
    }

    #[test]
    fn a_listed_model_is_confirmed_and_the_settings_are_ready_to_save() {
        let mut ollama = endpoint("http://localhost:11434/v1");
        ollama.model = "llama3.2".into();
        let report = test(Ok(vec!["qwen2.5", "llama3.2"]), &ollama);
        assert!(report.works());
        assert_eq!(report.models(), ["qwen2.5", "llama3.2"]);
        assert!(report.vouches_for(&ollama));
        assert_eq!(
            report.message("llama3.2"),
            "Connected: 2 models, \"llama3.2\" among them. Save to use it."
        );
    }

    #[test]
    fn a_model_the_endpoint_does_not_list_is_a_warning_to_choose_another() {
        let mut ollama = endpoint("http://localhost:11434/v1");
        ollama.model = "gpt-4o".into();
        let report = test(Ok(vec!["llama3.2"]), &ollama);
        assert!(report.works());
        assert!(!report.vouches_for(&ollama));
        let message = report.message("gpt-4o");
        assert!(
            message.contains("\"gpt-4o\" is not among them"),
            "{message}"
        );
        assert!(message.contains("Choose one"), "{message}");
    }

    #[test]
    fn an_endpoint_with_no_models_says_to_load_one() {
        let report = test(Ok(vec![]), &endpoint("http://localhost:1234/v1"));
        assert!(report.message("x").contains("lists no models"));
    }

    #[test]
    fn an_empty_model_name_does_not_stop_the_test_that_lists_the_models() {
        let mut lm_studio = endpoint("http://localhost:1234/v1");
        lm_studio.model = String::new();
        let report = test(Ok(vec!["phi-3"]), &lm_studio);
        assert!(report.works());
        assert_eq!(
            report.message(""),
            "Connected: 1 model. Choose one, then save."
        );
    }

    #[test]
    fn an_unreachable_server_names_both_causes_and_the_ollama_fix_with_the_pages_origin() {
        let ollama = endpoint("http://localhost:11434/v1");
        let message = problem(test(
            Err(LlmError::Unreachable {
                url: ollama.url_of("models"),
            }),
            &ollama,
        ))
        .to_string();
        assert!(message.contains("not running"), "{message}");
        assert!(message.contains("CORS"), "{message}");
        assert!(
            message.contains("OLLAMA_ORIGINS=http://localhost:8080 ollama serve"),
            "{message}"
        );
    }

    #[test]
    fn an_unreachable_lm_studio_is_told_to_enable_cors() {
        let lm_studio = endpoint("http://localhost:1234/v1");
        let message = problem(test(
            Err(LlmError::Unreachable {
                url: lm_studio.url_of("models"),
            }),
            &lm_studio,
        ))
        .to_string();
        assert!(message.contains("Enable CORS"), "{message}");
    }

    #[test]
    fn a_404_without_v1_suggests_adding_it() {
        let no_v1 = endpoint("http://localhost:11434");
        let message = problem(test(
            Err(LlmError::Http {
                status: 404,
                detail: "404 page not found".into(),
            }),
            &no_v1,
        ))
        .to_string();
        assert!(message.contains("HTTP 404"), "{message}");
        assert!(
            message.contains("http://localhost:11434/models"),
            "{message}"
        );
        assert!(
            message.contains("try http://localhost:11434/v1"),
            "{message}"
        );
    }

    #[test]
    fn a_404_below_v1_says_to_check_the_root_not_to_add_v1_again() {
        let message = problem(test(
            Err(LlmError::Http {
                status: 404,
                detail: String::new(),
            }),
            &endpoint("http://gpu-box/api/v1"),
        ))
        .to_string();
        assert!(!message.contains("/v1/v1"), "{message}");
        assert!(message.contains("before /models"), "{message}");
    }

    #[test]
    fn a_401_without_a_key_asks_for_one_and_with_a_key_says_it_was_refused() {
        let openai = endpoint("https://api.openai.com/v1");
        assert_eq!(
            problem(test(Err(LlmError::Unauthorized { status: 401 }), &openai)),
            ConnectionProblem::KeyMissing { status: 401 }
        );
        let keyed = Endpoint {
            api_key: Some("sk-wrong".into()),
            ..openai
        };
        let refused = problem(test(Err(LlmError::Unauthorized { status: 403 }), &keyed));
        assert_eq!(refused, ConnectionProblem::KeyRefused { status: 403 });
        assert!(refused.to_string().contains("refused the API key"));
    }

    #[test]
    fn a_reply_that_is_not_a_model_list_asks_whether_the_url_is_an_api() {
        let message = problem(test(
            Err(LlmError::NotJson {
                detail: "it is an HTML page titled \"Welcome\"".into(),
            }),
            &endpoint("http://localhost:8080"),
        ))
        .to_string();
        assert!(
            message.contains("not with an OpenAI model list"),
            "{message}"
        );
        assert!(message.contains("/v1"), "{message}");
    }

    #[test]
    fn a_time_out_says_to_wait_or_raise_the_timeout() {
        let message = problem(test(
            Err(LlmError::TimedOut {
                url: "http://localhost:8000/v1/models".into(),
                seconds: 5,
            }),
            &endpoint("http://localhost:8000/v1"),
        ))
        .to_string();
        assert!(message.contains("within 5 s"), "{message}");
        assert!(message.contains("raise the timeout"), "{message}");
    }

    #[test]
    fn another_server_error_keeps_the_servers_words() {
        let message = problem(test(
            Err(LlmError::Http {
                status: 500,
                detail: "model failed to load".into(),
            }),
            &endpoint("http://localhost:8000/v1"),
        ))
        .to_string();
        assert!(message.contains("HTTP 500"), "{message}");
        assert!(message.contains("model failed to load"), "{message}");
    }

    #[test]
    fn a_base_url_without_scheme_is_not_sent() {
        let catalog = ScriptedCatalog::answering(Ok(vec!["m"]));
        let report = block_on(check_connection(
            &catalog,
            &endpoint("localhost:11434/v1"),
            ORIGIN,
        ));
        assert!(matches!(
            report,
            ConnectionReport::Fails(ConnectionProblem::BadSettings(_))
        ));
        assert!(catalog.asked.borrow().is_empty());
    }

    #[test]
    fn no_message_shows_the_key() {
        let keyed = Endpoint {
            api_key: Some("sk-live-42".into()),
            ..endpoint("https://api.openai.com/v1")
        };
        let message = problem(test(
            Err(LlmError::Http {
                status: 400,
                detail: "bad header Authorization: Bearer sk-live-42".into(),
            }),
            &keyed,
        ))
        .to_string();
        assert!(!message.contains("sk-live-42"), "{message}");
    }

    #[test]
    fn saved_settings_are_known_to_work_only_as_tested() {
        let mut previous = Settings::default();
        let mut ollama = endpoint("http://localhost:11434/v1");
        ollama.model = "llama3.2".into();
        let report = test(Ok(vec!["llama3.2", "qwen2.5"]), &ollama);
        assert!(known_to_work(&previous, Some(&report), &ollama));

        let other_model = Endpoint {
            model: "qwen2.5".into(),
            ..ollama.clone()
        };
        assert!(known_to_work(&previous, Some(&report), &other_model));
        let other_server = endpoint("http://localhost:1234/v1");
        assert!(!known_to_work(&previous, Some(&report), &other_server));
        assert!(!known_to_work(&previous, None, &ollama));

        previous.endpoint = ollama.clone();
        previous.connection_checked = true;
        let longer_timeout = Endpoint {
            timeout_seconds: 120,
            ..ollama.clone()
        };
        assert!(known_to_work(&previous, None, &longer_timeout));
        let new_key = Endpoint {
            api_key: Some("k".into()),
            ..ollama
        };
        assert!(!known_to_work(&previous, None, &new_key));
    }
}
