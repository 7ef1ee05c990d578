//! The words of a failed reply: a server's explanation reduced to one line, a page to
//! its title (never its markup), a status to its name, and what a retry did.
//!
//! Platform-free so that every shape an endpoint may answer with (OpenAI, llama.cpp,
//! Ollama, vLLM, a proxy's HTML error page) is tested natively.

use serde_json::Value;

use crate::status_class::{StatusClass, classify_status};

/// A server's explanation is shown up to this many characters, a page title up to
/// `TITLE_CHARS`: enough to act on, short enough for one line of the page.
pub(crate) const DETAIL_CHARS: usize = 200;
pub(crate) const TITLE_CHARS: usize = 100;

/// The first words of an HTTP error, by status, for `LlmError::Http`'s message.
pub fn http_error_heading(status: u16) -> &'static str {
    match classify_status(status) {
        StatusClass::RateLimited => "The endpoint is rate-limited —",
        StatusClass::Busy => "The endpoint is busy or unavailable —",
        _ => "The endpoint answered",
    }
}

/// What surrounds a reply: the wait it asked for, and the wait before it if it answers
/// a retry, so a failed retry can say both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RetryContext {
    /// The reply's own `Retry-After`, in seconds.
    pub retry_after: Option<u64>,
    /// Set when this reply answers the one retry, after waiting this long.
    pub retried_after: Option<u64>,
}

/// Why a 2xx reply has no choice to read. Some servers and proxies send their error
/// with a success status, in the shapes of an error status's body (`{"error":
/// {"message": …}}`, `{"error": "…"}`): the endpoint's own words are then what the
/// user can act on, folded and capped as any error body's message is.
pub(crate) fn without_choices(value: &Value) -> String {
    let message = json_message(value)
        .map(fold_whitespace)
        .filter(|message| !message.is_empty());
    match message {
        Some(message) => format!(
            "an error instead of an answer — {}",
            cap(&message, DETAIL_CHARS)
        ),
        None if !value["error"].is_null() => "an error with no message instead of an answer".into(),
        None => "no `choices` in the reply".into(),
    }
}

fn retry_note(retry: RetryContext) -> String {
    match (retry.retried_after, retry.retry_after) {
        (Some(waited), Some(next)) => {
            format!(" Retried once after {waited} s; retry after {next} s.")
        }
        (Some(waited), None) => format!(" Retried once after {waited} s; try again later."),
        (None, Some(next)) => format!(" Retry after {next} s."),
        (None, None) => " Try again later.".into(),
    }
}

/// A 429's or 503's detail: the server's explanation as a sentence, then whether the
/// one retry was made and when to try again.
pub(crate) fn detail_asking_to_wait(status: u16, body: &str, retry: RetryContext) -> String {
    format!(
        "{}{}",
        sentence(&error_detail(status, body)),
        retry_note(retry)
    )
}

/// Ends a fragment as a sentence, so a note can follow it.
fn sentence(text: &str) -> String {
    if text.ends_with(['.', '!', '?', '…']) {
        text.to_string()
    } else {
        format!("{text}.")
    }
}

/// What an error reply says, in one line: a JSON error's `message`, a page's title (or
/// first heading) but never its markup, or the start of plain text.
pub fn error_detail(status: u16, body: &str) -> String {
    if let Some(message) = serde_json::from_str::<Value>(body)
        .ok()
        .as_ref()
        .and_then(json_message)
    {
        let message = fold_whitespace(message);
        if !message.is_empty() {
            return cap(&message, DETAIL_CHARS);
        }
    }
    if is_markup(body) {
        return match page_heading(body) {
            Some(title) => without_status(status, &title),
            // A page without a heading is mostly scripts and styles: its words are
            // noise, the status's name is not.
            None => match reason_phrase(status) {
                Some(phrase) => phrase.to_string(),
                None => {
                    let text = fold_whitespace(&decode_entities(&strip_tags(body)));
                    if text.is_empty() {
                        "an error page".to_string()
                    } else {
                        cap(&text, DETAIL_CHARS)
                    }
                }
            },
        };
    }
    let text = fold_whitespace(body);
    if text.is_empty() {
        reason_phrase(status)
            .unwrap_or("no explanation given")
            .to_string()
    } else {
        cap(&text, DETAIL_CHARS)
    }
}

/// The error message in the JSON shapes servers use: OpenAI's `{"error":{"message"}}`,
/// llama.cpp's and Ollama's `{"error": "…"}`, and FastAPI's `{"detail": "…"}`.
fn json_message(value: &Value) -> Option<&str> {
    value["error"]["message"]
        .as_str()
        .or(value["error"].as_str())
        .or(value["message"].as_str())
        .or(value["detail"].as_str())
}

/// Why a 2xx body that is not JSON is not: named by its title if it is a page.
pub(crate) fn describe_non_json(body: &str) -> String {
    if is_markup(body) {
        match page_heading(body) {
            Some(title) => format!("it is an HTML page titled \"{title}\""),
            None => "it is an HTML page".into(),
        }
    } else {
        format!("it starts with \"{}\"", cap(&fold_whitespace(body), 80))
    }
}

/// Whether a body is a page (or other markup) rather than text meant to be read.
fn is_markup(body: &str) -> bool {
    if body
        .trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('<')
    {
        return true;
    }
    let lower = body.to_ascii_lowercase();
    ["<!doctype", "<html", "<head", "<body"]
        .iter()
        .any(|tag| lower.contains(tag))
}

/// A page's `<title>`, or its first `<h1>` if the title is missing or empty.
pub fn page_heading(html: &str) -> Option<String> {
    ["title", "h1"].into_iter().find_map(|tag| {
        let text = fold_whitespace(&decode_entities(&strip_tags(element_text(html, tag)?)));
        (!text.is_empty()).then(|| cap(&text, TITLE_CHARS))
    })
}

/// The raw inside of the first `<tag …>…</tag>`, found case-insensitively.
fn element_text<'a>(html: &'a str, tag: &str) -> Option<&'a str> {
    // ASCII lowering keeps every byte offset, so positions found in `lower` are
    // positions in `html`.
    let lower = html.to_ascii_lowercase();
    let open = format!("<{tag}");
    let mut from = 0;
    let start = loop {
        let at = from + lower.get(from..)?.find(&open)?;
        let after = at + open.len();
        match lower.get(after..)?.chars().next()? {
            '>' => break after + 1,
            c if c.is_ascii_whitespace() || c == '/' => {
                break after + lower.get(after..)?.find('>')? + 1;
            }
            // `<titlebar>` is another element.
            _ => from = after,
        }
    };
    let end = start + lower.get(start..)?.find(&format!("</{tag}"))?;
    html.get(start..end)
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

fn decode_entities(text: &str) -> String {
    text.replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// "502 Bad Gateway" under HTTP 502 says the status twice; keep the words.
fn without_status(status: u16, title: &str) -> String {
    let rest = title
        .strip_prefix(&status.to_string())
        .map(|r| r.trim_start_matches([' ', '-', ':', '–', '—']))
        .unwrap_or(title);
    if rest.is_empty() {
        reason_phrase(status).unwrap_or(title).to_string()
    } else {
        rest.to_string()
    }
}

fn reason_phrase(status: u16) -> Option<&'static str> {
    Some(match status {
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => return None,
    })
}

fn fold_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cap(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        return text.to_string();
    }
    let mut short: String = text.chars().take(chars.saturating_sub(1)).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_html_page_without_a_title_is_named_by_its_first_heading() {
        assert_eq!(
            error_detail(
                500,
                "<html><body><H1 class=x>Upstream\n   exploded</H1></body></html>"
            ),
            "Upstream exploded"
        );
    }

    #[test]
    fn an_html_page_without_any_heading_is_named_by_its_status() {
        assert_eq!(
            error_detail(504, "<html><body><script>var x = 1;</script></body></html>"),
            "Gateway Timeout"
        );
    }

    #[test]
    fn a_page_title_is_decoded_folded_and_capped() {
        let title = format!("<title>A &amp; B\n\n{}</title>", "x".repeat(500));
        let shown = error_detail(500, &title);
        assert!(shown.starts_with("A & B x"), "{shown}");
        assert_eq!(shown.chars().count(), TITLE_CHARS);
        assert!(shown.ends_with('…'));
    }

    #[test]
    fn a_tag_that_only_starts_like_title_is_not_the_title() {
        assert_eq!(
            page_heading("<titlebar>no</titlebar><title>yes</title>").as_deref(),
            Some("yes")
        );
    }

    #[test]
    fn a_json_error_message_is_shown_in_each_servers_shape() {
        assert_eq!(error_detail(400, r#"{"error":{"message":"bad"}}"#), "bad");
        assert_eq!(error_detail(400, r#"{"error":"bad"}"#), "bad");
        assert_eq!(error_detail(422, r#"{"detail":"bad"}"#), "bad");
    }

    #[test]
    fn a_plain_text_error_is_shown_folded_and_capped() {
        assert_eq!(error_detail(500, "out of\nmemory"), "out of memory");
        let long = "y".repeat(1_000);
        let shown = error_detail(500, &long);
        assert_eq!(shown.chars().count(), DETAIL_CHARS);
        assert!(shown.ends_with('…'));
    }

    #[test]
    fn an_empty_error_body_is_named_by_its_status() {
        assert_eq!(error_detail(502, ""), "Bad Gateway");
        assert_eq!(error_detail(599, "  "), "no explanation given");
    }

    proptest::proptest! {
        #[test]
        fn an_error_body_never_shows_markup_when_it_is_a_page(title in "[^<>&]{0,60}", tail in "\\PC{0,80}") {
            let page = format!("<html><head><title>{title}</title></head><body>{tail}</body></html>");
            let shown = error_detail(502, &page);
            proptest::prop_assert!(!shown.contains("<html"), "{}", shown);
            proptest::prop_assert!(!shown.contains("<title"), "{}", shown);
        }

        #[test]
        fn any_error_body_is_reduced_to_a_capped_line(status in 100u16..600, body in "\\PC{0,400}") {
            let shown = error_detail(status, &body);
            proptest::prop_assert!(shown.chars().count() <= DETAIL_CHARS);
            proptest::prop_assert!(!shown.contains('\n'));
        }
    }
}
