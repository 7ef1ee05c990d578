//! The OpenAI-compatible wire format: request bodies and the parsing of replies.
//!
//! Kept apart from the HTTP transport so that every reply shape an endpoint may send
//! (OpenAI, llama.cpp, Ollama, vLLM, a proxy's HTML error page, or something that is not
//! an API at all) is tested natively, and a bad reply becomes an error the user can act
//! on, never a panic. The words of a failure are decided here too, platform-free: a
//! page is reduced to its title, `Retry-After` is read, and a URL or key is never shown.

use std::time::Duration;

use serde_json::{Value, json};

use crate::ports::{Completion, CompletionRequest, LlmError};
use crate::settings::Endpoint;
use remind_core::prompt::RenderedPrompt;

/// The longest `Retry-After` waited out before the one retry: the user watches the page
/// wait, so a longer one is reported ("retry after N s") instead of waited for.
pub const MAX_RETRY_WAIT_SECONDS: u64 = 30;

/// The browser's timers count milliseconds in an `i32`, so a longer timeout would
/// overflow the timer that enforces it; about 24 days is no limit in practice.
pub const MAX_TIMEOUT_SECONDS: u64 = 2_000_000;

/// How early a failure may come and still be the deadline's doing: the browser's timer
/// and clock disagree by a few milliseconds.
const DEADLINE_SLACK: Duration = Duration::from_millis(100);

/// A server's explanation is shown up to this many characters, a page title up to
/// `TITLE_CHARS`: enough to act on, short enough for one line of the page.
const DETAIL_CHARS: usize = 200;
const TITLE_CHARS: usize = 100;

/// What replaces a credential in any text the user sees.
const MASK: &str = "***";

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

/// The whole-request deadline: connecting, waiting for headers and reading the body.
pub fn request_timeout(endpoint: &Endpoint) -> Duration {
    Duration::from_secs(endpoint.timeout_seconds.clamp(1, MAX_TIMEOUT_SECONDS))
}

/// Whether a failure after `elapsed` is the deadline's: the browser reports an aborted
/// body read as a decoding error, so the clock is the only witness of a time-out.
pub fn reached_deadline(elapsed: Duration, limit: Duration) -> bool {
    elapsed + DEADLINE_SLACK >= limit
}

/// How the page treats a reply's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusClass {
    Success,
    Unauthorized,
    /// 429: too many requests for now.
    RateLimited,
    /// 503: overloaded, starting up or down for maintenance.
    Busy,
    Failed,
}

pub fn classify_status(status: u16) -> StatusClass {
    match status {
        200..=299 => StatusClass::Success,
        401 | 403 => StatusClass::Unauthorized,
        429 => StatusClass::RateLimited,
        503 => StatusClass::Busy,
        _ => StatusClass::Failed,
    }
}

/// The first words of an HTTP error, by status, for `LlmError::Http`'s message.
pub fn http_error_heading(status: u16) -> &'static str {
    match classify_status(status) {
        StatusClass::RateLimited => "The endpoint is rate-limited —",
        StatusClass::Busy => "The endpoint is busy or unavailable —",
        _ => "The endpoint answered",
    }
}

/// The seconds a `Retry-After` header asks for, from a delay ("120") or an HTTP date
/// ("Sun, 06 Nov 1994 08:49:37 GMT", or the two obsolete date forms); a date already
/// past asks for 0. Anything else is no request at all.
pub fn parse_retry_after(value: &str, now_unix_seconds: u64) -> Option<u64> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // All digits, so only overflow can fail: that is "longer than any cap".
        return Some(value.parse().unwrap_or(u64::MAX));
    }
    http_date(value).map(|at| at.saturating_sub(now_unix_seconds))
}

/// How long to wait before the one retry, if the reply earns one: a 429 or 503 whose
/// `Retry-After` is short enough to wait out.
pub fn retry_wait(status: u16, retry_after: Option<u64>) -> Option<u64> {
    match classify_status(status) {
        StatusClass::RateLimited | StatusClass::Busy => {
            retry_after.filter(|s| *s <= MAX_RETRY_WAIT_SECONDS)
        }
        _ => None,
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
            let detail = format!(
                "{}{}",
                sentence(&error_detail(status, body)),
                retry_note(retry)
            );
            return Err(LlmError::Http { status, detail });
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
    let stopped = choice["finish_reason"].as_str() == Some("stop");
    Ok(Completion {
        text: text.to_string(),
        stopped,
    })
}

/// Why a 2xx reply has no choice to read. Some servers and proxies send their error
/// with a success status, in the shapes of an error status's body (`{"error":
/// {"message": …}}`, `{"error": "…"}`): the endpoint's own words are then what the
/// user can act on, folded and capped as any error body's message is.
fn without_choices(value: &Value) -> String {
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
fn describe_non_json(body: &str) -> String {
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

/// Whether a URL names a user or password: browsers refuse to fetch such a URL at all.
pub fn has_credentials(url: &str) -> bool {
    split_url(url).1.contains('@')
}

/// A URL fit to show: `user:pass@` becomes `***@`, and query values whose names speak
/// of keys, tokens, secrets or passwords become `***`.
pub fn redact_url(url: &str) -> String {
    let (scheme, authority, rest) = split_url(url);
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("{MASK}@{host}"),
        None => authority.to_string(),
    };
    let (before_fragment, fragment) = match rest.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (rest, None),
    };
    let mut shown = format!("{scheme}{authority}");
    match before_fragment.split_once('?') {
        Some((path, query)) => {
            shown.push_str(path);
            shown.push('?');
            let pairs: Vec<String> = query.split('&').map(redact_pair).collect();
            shown.push_str(&pairs.join("&"));
        }
        None => shown.push_str(before_fragment),
    }
    if let Some(fragment) = fragment {
        shown.push('#');
        shown.push_str(fragment);
    }
    shown
}

/// (`scheme://`, authority, the rest), the authority ending where a URL parser ends it;
/// without a scheme the text is read as starting with its authority.
fn split_url(url: &str) -> (&str, &str, &str) {
    let (scheme, after) = match url.find("://") {
        Some(at) => url.split_at(at + 3),
        None => ("", url),
    };
    let end = after.find(['/', '?', '#', '\\']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    (scheme, authority, rest)
}

fn redact_pair(pair: &str) -> String {
    match pair.split_once('=') {
        Some((name, value)) if is_secret_name(name) && !value.is_empty() => {
            format!("{name}={MASK}")
        }
        _ => pair.to_string(),
    }
}

fn is_secret_name(name: &str) -> bool {
    let name: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    [
        "key",
        "token",
        "secret",
        "pass",
        "pwd",
        "auth",
        "sig",
        "credential",
        "session",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// Text fit to show: the API key, wherever it appears (a server may echo the request's
/// `Authorization` header), and any `Bearer` token become `***`.
pub fn mask_secrets(text: &str, api_key: Option<&str>) -> String {
    let text = match api_key.map(str::trim).filter(|k| !k.is_empty()) {
        Some(key) => text.replace(key, MASK),
        None => text.to_string(),
    };
    mask_bearer_tokens(&text)
}

fn mask_bearer_tokens(text: &str) -> String {
    const BEARER: &str = "bearer ";
    // ASCII lowering keeps every byte offset (see `element_text`).
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    while let Some(found) = lower.get(copied..).and_then(|rest| rest.find(BEARER)) {
        let token_start = copied + found + BEARER.len();
        let token = text.get(token_start..).unwrap_or("");
        let token_len = token
            .find(|c: char| c.is_whitespace() || "\"'`,;)}]".contains(c))
            .unwrap_or(token.len());
        out.push_str(text.get(copied..token_start).unwrap_or(""));
        if token_len > 0 {
            out.push_str(MASK);
        }
        copied = token_start + token_len;
    }
    out.push_str(text.get(copied..).unwrap_or(""));
    out
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

/// Unix seconds of an HTTP date in any of the three forms RFC 9110 §5.6.7 accepts.
fn http_date(text: &str) -> Option<u64> {
    let tokens: Vec<&str> = text
        .split(|c: char| c.is_ascii_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .collect();
    let is_gmt = |zone: &str| zone.eq_ignore_ascii_case("GMT");
    let (day, month, year, time) = match tokens.as_slice() {
        // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
        [_, day, month, year, time, zone] if is_gmt(zone) => (*day, *month, *year, *time),
        // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
        [_, date, time, zone] if is_gmt(zone) => {
            let mut parts = date.split('-');
            let (day, month, year) = (parts.next()?, parts.next()?, parts.next()?);
            if parts.next().is_some() {
                return None;
            }
            (day, month, year, *time)
        }
        // asctime: Sun Nov  6 08:49:37 1994
        [_, month, day, time, year] => (*day, *month, *year, *time),
        _ => return None,
    };
    let day = small_number(day, 2).filter(|d| (1..=31).contains(d))?;
    let month = month_number(month)?;
    let year = match (year.len(), small_number(year, 4)?) {
        // RFC 850's two-digit years: 70–99 are the 1900s, the rest this century.
        (2, yy) if yy >= 70 => 1900 + yy,
        (2, yy) => 2000 + yy,
        (4, yyyy) => yyyy,
        _ => return None,
    };
    let mut clock = time.split(':').map(|part| small_number(part, 2));
    let (hour, minute, second) = (clock.next()??, clock.next()??, clock.next()??);
    if clock.next().is_some() || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let days = days_from_civil(i64::from(year), month, i64::from(day));
    let seconds =
        days * 86_400 + i64::from(hour) * 3_600 + i64::from(minute) * 60 + i64::from(second);
    Some(u64::try_from(seconds).unwrap_or(0))
}

/// A number of 1 to `max_digits` ASCII digits.
fn small_number(text: &str, max_digits: usize) -> Option<u32> {
    let digits = !text.is_empty() && text.len() <= max_digits;
    if digits && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse().ok()
    } else {
        None
    }
}

fn month_number(name: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let at = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(name))?;
    i64::try_from(at).ok().map(|m| m + 1)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
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

    const NGINX_502: &str = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0 (Ubuntu)</center>\r\n</body>\r\n</html>\r\n";

    /// 1994-11-06T08:49:37Z, the date RFC 9110 uses in its examples.
    const NOV_6_1994: u64 = 784_111_777;

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
    fn statuses_are_classified_by_what_the_page_does_about_them() {
        assert_eq!(classify_status(200), StatusClass::Success);
        assert_eq!(classify_status(204), StatusClass::Success);
        assert_eq!(classify_status(401), StatusClass::Unauthorized);
        assert_eq!(classify_status(403), StatusClass::Unauthorized);
        assert_eq!(classify_status(429), StatusClass::RateLimited);
        assert_eq!(classify_status(503), StatusClass::Busy);
        assert_eq!(classify_status(500), StatusClass::Failed);
        assert_eq!(classify_status(502), StatusClass::Failed);
        assert_eq!(classify_status(404), StatusClass::Failed);
    }

    #[test]
    fn retry_after_in_seconds_is_read_as_is() {
        assert_eq!(parse_retry_after("1", 0), Some(1));
        assert_eq!(parse_retry_after(" 120 ", NOV_6_1994), Some(120));
        assert_eq!(parse_retry_after("0", 0), Some(0));
    }

    #[test]
    fn retry_after_beyond_u64_is_longer_than_any_cap_not_an_error() {
        assert_eq!(
            parse_retry_after("99999999999999999999999", 0),
            Some(u64::MAX)
        );
    }

    #[test]
    fn retry_after_as_an_http_date_is_read_in_all_three_forms() {
        let now = NOV_6_1994 - 10;
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(10)
        );
        assert_eq!(
            parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", now),
            Some(10)
        );
        assert_eq!(parse_retry_after("Sun Nov  6 08:49:37 1994", now), Some(10));
    }

    #[test]
    fn retry_after_as_a_date_reads_leap_days_and_recent_years() {
        // 2024-02-29T00:00:00Z
        assert_eq!(
            parse_retry_after("Thu, 29 Feb 2024 00:00:30 GMT", 1_709_164_800),
            Some(30)
        );
    }

    #[test]
    fn retry_after_a_date_already_past_asks_for_no_wait() {
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", NOV_6_1994 + 3_600),
            Some(0)
        );
    }

    #[test]
    fn retry_after_that_is_neither_is_no_request() {
        for bad in [
            "",
            "soon",
            "-5",
            "+5",
            "1.5",
            "Sun, 06 Nov 1994 08:49:37 PST",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:49:37 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Sun, 06 Nov 01994 08:49:37 GMT",
        ] {
            assert_eq!(parse_retry_after(bad, 0), None, "{bad:?}");
        }
    }

    #[test]
    fn only_a_429_or_503_with_a_short_retry_after_is_retried() {
        assert_eq!(retry_wait(429, Some(1)), Some(1));
        assert_eq!(retry_wait(503, Some(MAX_RETRY_WAIT_SECONDS)), Some(30));
        assert_eq!(retry_wait(503, Some(MAX_RETRY_WAIT_SECONDS + 1)), None);
        assert_eq!(retry_wait(429, None), None);
        assert_eq!(retry_wait(500, Some(1)), None);
        assert_eq!(retry_wait(502, Some(1)), None);
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

    #[test]
    fn user_and_password_in_a_url_are_replaced() {
        assert_eq!(
            redact_url("http://user:s3cret@127.0.0.1:8081/v1/completions"),
            "http://***@127.0.0.1:8081/v1/completions"
        );
        assert_eq!(redact_url("user:s3cret@host/v1"), "***@host/v1");
        // An unescaped `@` in the password: the host is after the last one.
        assert_eq!(redact_url("https://u:p@ss@h/"), "https://***@h/");
    }

    #[test]
    fn secret_query_parameters_are_masked_and_others_kept() {
        assert_eq!(
            redact_url("https://h/v1?key=abc&model=m&api_key=def&access_token=ghi#top"),
            "https://h/v1?key=***&model=m&api_key=***&access_token=***#top"
        );
        assert_eq!(redact_url("https://h/v1?token="), "https://h/v1?token=");
    }

    #[test]
    fn a_url_without_credentials_is_shown_unchanged() {
        for url in [
            "http://127.0.0.1:8081/v1/completions",
            "https://api.example.test/v1/chat/completions",
            "http://h/v1/models/a@b",
            "",
        ] {
            assert_eq!(redact_url(url), url);
        }
    }

    #[test]
    fn credentials_are_found_only_in_the_authority() {
        assert!(has_credentials("http://u:p@h/v1"));
        assert!(has_credentials("http://u@h/v1"));
        assert!(!has_credentials("http://h/v1/a@b"));
        assert!(!has_credentials("http://h/v1?email=a@b"));
    }

    #[test]
    fn the_api_key_and_any_bearer_token_are_masked_in_text() {
        assert_eq!(
            mask_secrets(
                "you sent Authorization: Bearer sk-123, wrong",
                Some(" sk-123 ")
            ),
            "you sent Authorization: Bearer ***, wrong"
        );
        assert_eq!(
            mask_secrets("key sk-123 is unknown", Some("sk-123")),
            "key *** is unknown"
        );
        assert_eq!(
            mask_secrets(r#"{"auth":"bearer other-token"}"#, None),
            r#"{"auth":"bearer ***"}"#
        );
        assert_eq!(
            mask_secrets("nothing to hide", Some("  ")),
            "nothing to hide"
        );
    }

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

    #[test]
    fn the_timeout_covers_the_whole_request_and_fits_the_browsers_timer() {
        let mut endpoint = Settings::default().endpoint;
        endpoint.timeout_seconds = 3;
        assert_eq!(request_timeout(&endpoint), Duration::from_secs(3));
        endpoint.timeout_seconds = u64::MAX;
        let limit = request_timeout(&endpoint);
        assert!(limit.as_millis() <= i32::MAX as u128);
    }

    #[test]
    fn a_failure_at_the_deadline_is_a_time_out_and_one_before_it_is_not() {
        let limit = Duration::from_secs(3);
        assert!(reached_deadline(Duration::from_millis(3_004), limit));
        assert!(reached_deadline(Duration::from_millis(2_990), limit));
        assert!(!reached_deadline(Duration::from_millis(40), limit));
    }

    proptest::proptest! {
        #[test]
        fn any_reply_body_is_an_answer_or_an_error_never_a_panic(status in 100u16..600, body in "\\PC{0,120}") {
            let _ = response(status, &body);
        }

        #[test]
        fn any_retry_after_is_a_wait_or_none_never_a_panic(value in "\\PC{0,40}", now in proptest::prelude::any::<u64>()) {
            let _ = parse_retry_after(&value, now);
        }

        #[test]
        fn any_date_shaped_retry_after_never_panics(
            day in "[0-9]{0,3}", month in "[A-Za-z]{0,4}", year in "[0-9]{0,5}", time in "[0-9:]{0,9}"
        ) {
            let _ = parse_retry_after(&format!("Sun, {day} {month} {year} {time} GMT"), 0);
            let _ = parse_retry_after(&format!("Sunday, {day}-{month}-{year} {time} GMT"), 0);
            let _ = parse_retry_after(&format!("Sun {month} {day} {time} {year}"), 0);
        }

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

        #[test]
        fn a_password_in_a_url_is_never_shown(
            user in "[a-z0-9]{1,8}", password in "[A-Z][A-Za-z0-9%!$]{5,11}", host in "[a-z]{1,8}(:[0-9]{1,5})?", path in "(/[a-z0-9@]{0,6}){0,3}"
        ) {
            let url = format!("https://{user}:{password}@{host}{path}");
            let shown = redact_url(&url);
            proptest::prop_assert!(!shown.contains(&password), "{}", shown);
            proptest::prop_assert!(shown.starts_with("https://***@"), "{}", shown);
        }

        #[test]
        fn any_text_is_redacted_and_masked_without_a_panic(text in "\\PC{0,120}", key in "[A-Za-z0-9-]{0,12}") {
            let _ = redact_url(&text);
            let masked = mask_secrets(&text, Some(&key));
            if key.trim().chars().count() >= 4 {
                proptest::prop_assert!(!masked.contains(key.trim()), "{}", masked);
            }
        }
    }
}
