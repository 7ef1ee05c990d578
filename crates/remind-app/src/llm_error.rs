//! Why a model request failed, and the same failure made fit to show.
//!
//! Its own module, out of `ports`, because its messages need redaction and the words of
//! a failure: so the port traits import the error, the error imports those two, and
//! nothing imports back.

use thiserror::Error;

use crate::redaction::{mask_secrets, redact_url};
use crate::settings::Endpoint;

/// Why a model request failed, in words the user can act on.
///
/// A message shows its URL redacted (`user:pass@` as `***@`, key-like query values as
/// `***`) whoever built the error, so neither the page nor a harness log echoes a
/// credential; [`scrub`] also masks the API key in every field.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum LlmError {
    #[error(
        "Could not reach the model at {}. Is the server running, and does it allow requests from this page (CORS)? Check the base URL in settings.",
        crate::redaction::redact_url(.url)
    )]
    Unreachable { url: String },
    /// However the deadline hit: connecting, waiting for headers, or reading the body.
    #[error(
        "The model at {} timed out after {seconds} s. It may be overloaded or the model too large; try again or raise the timeout.",
        crate::redaction::redact_url(.url)
    )]
    TimedOut { url: String, seconds: u64 },
    #[error("The endpoint refused the API key (HTTP {status}). Check the key in settings.")]
    Unauthorized { status: u16 },
    /// Any other error status. `detail` is the server's explanation reduced to one line
    /// (a page to its title); for 429 and 503 it also says whether the one retry was
    /// made and when to try again.
    #[error(
        "{} HTTP {status}: {detail}",
        crate::failure_text::http_error_heading(*.status)
    )]
    Http { status: u16, detail: String },
    #[error(
        "The endpoint sent a reply that is not valid JSON ({detail}). Is the base URL an OpenAI-compatible API (usually ending in /v1)?"
    )]
    NotJson { detail: String },
    #[error("The endpoint sent an unexpected reply: {detail}")]
    Unexpected { detail: String },
    #[error("The settings are not usable: {0}")]
    BadSettings(String),
}

/// The error as the user may see it: every URL redacted and the endpoint's key masked
/// in every field, so no path to the page (or a log) can echo a credential.
pub fn scrub(error: LlmError, endpoint: &Endpoint) -> LlmError {
    let key = endpoint.api_key.as_deref();
    let text = |t: String| mask_secrets(&t, key);
    let url = |u: String| redact_url(&mask_secrets(&u, key));
    match error {
        LlmError::Unreachable { url: u } => LlmError::Unreachable { url: url(u) },
        LlmError::TimedOut { url: u, seconds } => LlmError::TimedOut {
            url: url(u),
            seconds,
        },
        LlmError::Unauthorized { status } => LlmError::Unauthorized { status },
        LlmError::Http { status, detail } => LlmError::Http {
            status,
            detail: text(detail),
        },
        LlmError::NotJson { detail } => LlmError::NotJson {
            detail: text(detail),
        },
        LlmError::Unexpected { detail } => LlmError::Unexpected {
            detail: text(detail),
        },
        LlmError::BadSettings(detail) => LlmError::BadSettings(text(detail)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Settings;

    #[test]
    fn a_scrubbed_error_never_shows_the_key_or_the_urls_credentials() {
        let mut endpoint = Settings::default().endpoint;
        endpoint.api_key = Some("sk-live-42".into());
        let errors = [
            LlmError::Unreachable {
                url: "http://me:pw@h/v1?key=sk-live-42".into(),
            },
            LlmError::TimedOut {
                url: "http://me:pw@h/v1".into(),
                seconds: 3,
            },
            LlmError::Http {
                status: 400,
                detail: "Authorization: Bearer sk-live-42".into(),
            },
            LlmError::NotJson {
                detail: "sk-live-42".into(),
            },
            LlmError::Unexpected {
                detail: "sk-live-42".into(),
            },
            LlmError::BadSettings("sk-live-42".into()),
        ];
        for error in errors {
            let shown = scrub(error, &endpoint).to_string();
            assert!(!shown.contains("sk-live-42"), "{shown}");
            assert!(!shown.contains("me:pw"), "{shown}");
        }
    }

    #[test]
    fn an_errors_message_hides_url_credentials_even_unscrubbed() {
        let err = LlmError::Unreachable {
            url: "http://me:pw@h/v1".into(),
        };
        assert!(err.to_string().contains("http://***@h/v1"), "{err}");
        let err = LlmError::TimedOut {
            url: "http://me:pw@h/v1".into(),
            seconds: 3,
        };
        assert!(err.to_string().contains("http://***@h/v1"), "{err}");
    }
}
