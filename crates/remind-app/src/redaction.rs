//! Credentials never shown: URLs with their user, password and key-like query values
//! masked, and API keys and bearer tokens masked in any text.
//!
//! Text in, text out, importing nothing from the crate, so the settings, the error type
//! and the adapters can all use it without an import cycle.

/// What replaces a credential in any text the user sees.
const MASK: &str = "***";

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
    // ASCII lowering keeps every byte offset, so positions found in `lower` are
    // positions in `text`.
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

#[cfg(test)]
mod tests {
    use super::*;

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

    proptest::proptest! {
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
