//! The secret scanner: whether a text about to be stored holds a password, key, token,
//! passphrase, PIN, recovery phrase or card number, and which.
//!
//! Kept apart from the write gate because it is a parser of text typed by anyone, with
//! its own tables and tests: it never panics, never indexes outside the text and stays
//! linear-ish in its length. It prefers to over-refuse a secret-shaped string than to
//! store a real secret, but ordinary sentences about passwords, passphrases, PINs,
//! version numbers, ISBNs, dates, phone numbers and plain URLs pass.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

/// Names the kind of secret `text` seems to hold, if any. The most specific shapes
/// are tried first, so the user is told the most precise kind.
pub fn find_secret(text: &str) -> Option<&'static str> {
    // ASCII lowering keeps every byte offset, so a match in `lower` slices `text`.
    let lower = text.to_ascii_lowercase();
    let labels = LabelsFound::in_text(&lower);
    // Most texts are sentences: the shapes that need a long unbroken token, or a card
    // number's digits, are ruled out by one pass over the bytes instead of their own.
    let longest_token = longest_token_run(text);
    let may_hold = |shortest: usize| longest_token >= shortest;
    private_key_block(&lower)
        .or_else(|| webhook_url(&lower))
        .or_else(|| url_with_password(text))
        .or_else(|| may_hold(SHORTEST_JWT).then(|| jwt(text)).flatten())
        .or_else(|| {
            may_hold(SHORTEST_PREFIXED)
                .then(|| prefixed_token(text))
                .flatten()
        })
        .or_else(|| aws_secret_key(text, &lower, &labels, may_hold(AWS_SECRET_KEY_LEN)))
        .or_else(|| labelled_secret(text, &lower, &labels))
        .or_else(|| {
            may_hold(SHORTEST_LONG_TOKEN)
                .then(|| long_token(text))
                .flatten()
        })
        .or_else(|| {
            let digits = text.bytes().filter(u8::is_ascii_digit).count();
            (digits >= SHORTEST_CARD_NUMBER && has_card_number(text)).then_some("a card number")
        })
}

/// The longest run of the characters a token is made of (letters, digits and
/// `_-.+/=`), in bytes. Every token shape below is such a run, cut from the text by
/// fewer separators than these or none, so none is longer.
fn longest_token_run(text: &str) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.' | b'+' | b'/' | b'=') {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

const JWT_SHORTEST_HEADER: usize = 10;
const JWT_SHORTEST_PAYLOAD: usize = 2;
/// The shortest JWT [`jwt`] finds: a header, a dot, a payload and a dot before an
/// empty signature.
const SHORTEST_JWT: usize = JWT_SHORTEST_HEADER + 1 + JWT_SHORTEST_PAYLOAD + 1;
/// The shortest token [`long_token`] finds.
const SHORTEST_LONG_TOKEN: usize = 32;
/// An AWS secret access key's length, when it stands alone.
const AWS_SECRET_KEY_LEN: usize = 40;
/// A card number's fewest digits.
const SHORTEST_CARD_NUMBER: usize = 13;

// --- Shapes that are secrets wherever they stand ----------------------------------

/// A PEM (or PuTTY) private key; a certificate's `BEGIN` block is public and passes.
fn private_key_block(lower: &str) -> Option<&'static str> {
    let pem = lower.match_indices("-----begin").any(|(at, marker)| {
        let header = lower[at + marker.len()..]
            .lines()
            .next()
            .unwrap_or_default();
        header
            .split("-----")
            .next()
            .is_some_and(|h| h.contains("private key"))
    });
    (pem || lower.contains("putty-user-key-file")).then_some("a private key")
}

/// Whoever holds a webhook URL can post as the integration: the URL is the secret.
fn webhook_url(lower: &str) -> Option<&'static str> {
    const WEBHOOKS: &[(&str, &str)] = &[
        ("hooks.slack.com/services/", "a Slack webhook URL"),
        ("hooks.slack.com/workflows/", "a Slack webhook URL"),
        ("hooks.slack.com/triggers/", "a Slack webhook URL"),
        ("discord.com/api/webhooks/", "a Discord webhook URL"),
        ("discordapp.com/api/webhooks/", "a Discord webhook URL"),
        (
            "webhook.office.com/webhookb2/",
            "a Microsoft Teams webhook URL",
        ),
    ];
    // Every marker holds "hook": one search skips them all in ordinary text.
    if !lower.contains("hook") {
        return None;
    }
    WEBHOOKS.iter().find_map(|&(marker, kind)| {
        lower
            .match_indices(marker)
            .any(|(at, _)| {
                lower[at + marker.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphanumeric())
            })
            .then_some(kind)
    })
}

/// `scheme://user:password@host` for any scheme (postgres, mongodb+srv, redis's
/// `redis://:password@host`, https, ftp…). A user name alone, a port, or an `@` in the
/// path or query is not a password.
fn url_with_password(text: &str) -> Option<&'static str> {
    text.match_indices("://")
        .any(|(at, sep)| {
            let scheme = text[..at]
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || "+.-".contains(*c))
                .count();
            if scheme == 0 {
                return false;
            }
            let rest = &text[at + sep.len()..];
            let end = rest
                .find(|c: char| c.is_whitespace() || "/?#\"'<>`".contains(c))
                .unwrap_or(rest.len());
            rest[..end]
                .rsplit_once('@')
                .and_then(|(userinfo, _host)| userinfo.split_once(':'))
                .is_some_and(|(_user, password)| !is_placeholder(password))
        })
        .then_some("a password inside a URL")
}

/// A JSON Web Token: base64url segments joined by dots, the header starting `eyJ`
/// (`{"`). An unsigned token's empty signature still counts.
fn jwt(text: &str) -> Option<&'static str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .any(|run| {
            let mut parts = run.trim_start_matches(['.', '-']).split('.');
            let header = parts.next().unwrap_or_default();
            let payload = parts.next().unwrap_or_default();
            header.starts_with("eyJ")
                && header.len() >= JWT_SHORTEST_HEADER
                && payload.len() >= JWT_SHORTEST_PAYLOAD
                && parts.next().is_some()
        })
        .then_some("a JWT")
}

/// Tokens whose issuers give them a recognisable prefix: (prefix, characters that
/// must follow it, kind); prefixes are case-sensitive.
const PREFIXED: &[(&str, usize, &str)] = &[
    ("github_pat_", 20, "a GitHub token"),
    ("ghp_", 20, "a GitHub token"),
    ("gho_", 20, "a GitHub token"),
    ("ghu_", 20, "a GitHub token"),
    ("ghs_", 20, "a GitHub token"),
    ("ghr_", 20, "a GitHub token"),
    ("glpat-", 20, "a GitLab token"),
    ("sk_live_", 16, "a Stripe secret key"),
    ("sk_test_", 16, "a Stripe secret key"),
    ("rk_live_", 16, "a Stripe secret key"),
    ("rk_test_", 16, "a Stripe secret key"),
    ("whsec_", 20, "a webhook signing secret"),
    // OpenAI's, and others' that copied the form (sk-proj-…, sk-ant-…).
    ("sk-", 16, "an API key"),
    ("xoxb-", 10, "a Slack token"),
    ("xoxp-", 10, "a Slack token"),
    ("xoxa-", 10, "a Slack token"),
    ("xoxs-", 10, "a Slack token"),
    ("xoxr-", 10, "a Slack token"),
    ("xoxe-", 10, "a Slack token"),
    ("xapp-", 10, "a Slack token"),
    ("AIza", 30, "a Google API key"),
    ("GOCSPX-", 20, "a Google OAuth client secret"),
    ("hf_", 30, "a Hugging Face token"),
    ("npm_", 30, "an npm token"),
    ("pypi-", 40, "a PyPI token"),
];

/// No token is shorter than its prefix and the characters that must follow it, nor
/// than an access key ID: the words of ordinary text are skipped at once.
const SHORTEST_PREFIXED: usize = {
    let mut shortest = AWS_KEY_ID_LEN;
    let mut i = 0;
    while i < PREFIXED.len() {
        let (prefix, min, _) = PREFIXED[i];
        if prefix.len() + min < shortest {
            shortest = prefix.len() + min;
        }
        i += 1;
    }
    shortest
};

/// Tokens whose issuers give them a recognisable prefix.
fn prefixed_token(text: &str) -> Option<&'static str> {
    const AWS_KEY_ID_PREFIXES: &[&str] = &[
        "AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "APKA", "AROA",
        "ASCA",
    ];
    let runs = text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    for run in runs.filter(|run| run.len() >= SHORTEST_PREFIXED) {
        for &(prefix, min, kind) in PREFIXED {
            if let Some(rest) = run.strip_prefix(prefix)
                && rest.len() >= min
                // A hyphenated phrase that happens to start "sk-" is words, not a key.
                && (rest.chars().any(|c| c.is_ascii_digit()) || longest_alnum_run(rest) >= 16)
            {
                return Some(kind);
            }
        }
        if run.len() == AWS_KEY_ID_LEN
            && AWS_KEY_ID_PREFIXES.iter().any(|p| run.starts_with(p))
            && run
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        {
            return Some("an AWS access key ID");
        }
    }
    None
}

/// An AWS access key ID: a known four-letter prefix and sixteen more.
const AWS_KEY_ID_LEN: usize = 20;

/// The labels an AWS secret access key follows.
const AWS_SECRET_LABELS: &[&str] = &[
    "aws_secret_access_key",
    "aws secret access key",
    "secret_access_key",
    "secret access key",
    "secretaccesskey",
    "aws_secret_key",
    "aws secret key",
];

/// An AWS secret access key: 40 base64 characters, after a label naming it or alone
/// when it is as random as one (mixed case, digits, case changing all the way).
fn aws_secret_key(
    text: &str,
    lower: &str,
    labels: &LabelsFound,
    may_stand_alone: bool,
) -> Option<&'static str> {
    const KIND: &str = "an AWS secret access key";
    let is_b64 = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=');
    for label in 0..AWS_SECRET_LABELS.len() {
        for (_, end) in labels.word_spans(lower, LABELS.len() + label) {
            let value =
                text[end..].trim_start_matches(|c: char| c.is_whitespace() || ":=\"'`".contains(c));
            let value = value
                .strip_prefix("is ")
                .map_or(value, str::trim_start)
                .trim_start_matches(['"', '\'', '`']);
            let token = value.split(|c: char| !is_b64(c)).next().unwrap_or_default();
            if token.len() >= 16 && token.chars().any(|c| c.is_ascii_digit() || c == '/') {
                return Some(KIND);
            }
        }
    }
    let alone = may_stand_alone
        && text
            .split(|c: char| !(is_b64(c) || c == '_' || c == '-'))
            .map(|run| run.trim_end_matches('='))
            .any(|run| {
                run.len() == AWS_SECRET_KEY_LEN
                    && run
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/'))
                    && run.chars().any(|c| c.is_ascii_uppercase())
                    && run.chars().any(|c| c.is_ascii_lowercase())
                    && run.chars().any(|c| c.is_ascii_digit())
                    && case_changes(run) >= 8
            });
    alone.then_some(KIND)
}

/// A long unbroken run of letters and digits, as tokens and digests are; a UUID, a
/// hyphenated phrase or a path has no such run.
fn long_token(text: &str) -> Option<&'static str> {
    // `matches!` rather than a string's `contains`: these run for every character of
    // every text an import checks.
    text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '"' | '\'' | '`' | ',' | ';' | '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>'
            )
    })
    .map(|word| word.trim_matches(|c: char| matches!(c, '.' | ':' | '!' | '?')))
    .any(|word| {
        word.len() >= SHORTEST_LONG_TOKEN
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '/' | '='))
            && word.chars().any(|c| c.is_ascii_digit())
            && word.chars().any(|c| c.is_ascii_alphabetic())
            && longest_alnum_run(word) >= 20
    })
    .then_some("an access token")
}

fn longest_alnum_run(text: &str) -> usize {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::len)
        .max()
        .unwrap_or(0)
}

/// How often the case flips between neighbouring letters: about half the time in a
/// random key, rarely in words, paths or CamelCase names.
fn case_changes(text: &str) -> usize {
    text.as_bytes()
        .windows(2)
        .filter(|pair| {
            pair[0].is_ascii_alphabetic()
                && pair[1].is_ascii_alphabetic()
                && pair[0].is_ascii_uppercase() != pair[1].is_ascii_uppercase()
        })
        .count()
}

/// A stand-in rather than a value: `****`, `<password>`, `{pass}`, `${DB_PASS}`.
fn is_placeholder(value: &str) -> bool {
    let v = value.trim();
    let wrapped = |open: char, close: char| v.starts_with(open) && v.ends_with(close);
    v.is_empty()
        || v.chars().all(|c| "*•.…_-xX".contains(c))
        || wrapped('<', '>')
        || wrapped('{', '}')
        || wrapped('[', ']')
        || v.starts_with("${")
        || v.starts_with("%(")
}

// --- Secrets a label announces ------------------------------------------------------

const PASSWORD: &str = "a password or key";
const RECOVERY_PHRASE: &str = "a recovery phrase";
const PIN: &str = "a PIN";

/// How a label's value is told from the prose around the word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// `password: x`, `password is x`, `password x` when x looks like one.
    Password,
    /// `pass` is also a boarding pass or a mountain pass: only `pass: x` with x secret-ish.
    Pass,
    /// As a password, and also four plain words ("correct horse battery staple")
    /// after `:`, `is` or the bare label, or a recovery phrase's run of words.
    Passphrase,
    /// A wallet's recovery (seed) phrase: a run of [`SEED_PHRASE_WORDS`] or more words
    /// of the kind its word lists hold. Fewer, or a sentence, is talk about one.
    RecoveryPhrase,
    /// Four to eight digits, perhaps grouped: `4821`, `#4821`, `48 21`, `4-8-2-1`.
    Pin,
    /// API and secret keys: as a password, but a bare value must be long.
    Key,
    /// `token: x` only; "token" alone is an ordinary word.
    Token,
    /// `access token x`, `refresh_token=x`: long, secret-ish values.
    NamedToken,
    /// `Bearer x` with x a token.
    Bearer,
    /// `Authorization: Basic x`, `Authorization: Bearer x`.
    Authorization,
}

/// Longer labels first where one contains another, so the kind named is the closest.
const LABELS: &[(&str, Form, &str)] = &[
    (
        "authorization",
        Form::Authorization,
        "an authorization header",
    ),
    ("bearer", Form::Bearer, "a bearer token"),
    ("passphrase", Form::Passphrase, "a passphrase"),
    ("pass phrase", Form::Passphrase, "a passphrase"),
    ("passcode", Form::Password, "a passcode"),
    ("pass code", Form::Password, "a passcode"),
    ("password", Form::Password, PASSWORD),
    ("passwd", Form::Password, PASSWORD),
    ("pwd", Form::Password, PASSWORD),
    ("pw", Form::Password, PASSWORD),
    ("pass", Form::Pass, PASSWORD),
    ("recovery phrase", Form::RecoveryPhrase, RECOVERY_PHRASE),
    ("recovery_phrase", Form::RecoveryPhrase, RECOVERY_PHRASE),
    ("seed phrase", Form::RecoveryPhrase, RECOVERY_PHRASE),
    ("seed_phrase", Form::RecoveryPhrase, RECOVERY_PHRASE),
    ("mnemonic phrase", Form::RecoveryPhrase, RECOVERY_PHRASE),
    ("backup phrase", Form::RecoveryPhrase, RECOVERY_PHRASE),
    ("wallet phrase", Form::RecoveryPhrase, RECOVERY_PHRASE),
    ("recovery words", Form::RecoveryPhrase, RECOVERY_PHRASE),
    ("recovery seed", Form::RecoveryPhrase, RECOVERY_PHRASE),
    ("seed words", Form::RecoveryPhrase, RECOVERY_PHRASE),
    ("wallet words", Form::RecoveryPhrase, RECOVERY_PHRASE),
    ("wallet seed", Form::RecoveryPhrase, RECOVERY_PHRASE),
    ("backup words", Form::RecoveryPhrase, RECOVERY_PHRASE),
    ("mnemonic", Form::RecoveryPhrase, RECOVERY_PHRASE),
    ("pin code", Form::Pin, PIN),
    ("pin-code", Form::Pin, PIN),
    ("pin number", Form::Pin, PIN),
    ("pin", Form::Pin, PIN),
    // A SIM's PIN unblocking key: eight digits.
    ("puk code", Form::Pin, PIN),
    ("puk", Form::Pin, PIN),
    ("api key", Form::Key, "an API key"),
    ("api_key", Form::Key, "an API key"),
    ("api-key", Form::Key, "an API key"),
    ("apikey", Form::Key, "an API key"),
    ("secret key", Form::Key, PASSWORD),
    ("secret_key", Form::Key, PASSWORD),
    ("client secret", Form::Key, PASSWORD),
    ("client_secret", Form::Key, PASSWORD),
    ("api secret", Form::Key, PASSWORD),
    ("app secret", Form::Key, PASSWORD),
    ("access key", Form::Key, PASSWORD),
    ("access_key", Form::Key, PASSWORD),
    ("private key", Form::Key, "a private key"),
    ("access token", Form::NamedToken, "an access token"),
    ("access_token", Form::NamedToken, "an access token"),
    ("auth token", Form::NamedToken, "an access token"),
    ("auth_token", Form::NamedToken, "an access token"),
    ("refresh token", Form::NamedToken, "an access token"),
    ("refresh_token", Form::NamedToken, "an access token"),
    ("api token", Form::NamedToken, "an access token"),
    ("session token", Form::NamedToken, "an access token"),
    ("id_token", Form::NamedToken, "an access token"),
    ("token", Form::Token, "an access token"),
];

/// Words that follow "password is" / "password:" in sentences *about* a password:
/// "the password is too short", "password: what are the rules?".
const NOT_A_VALUE: &[&str] = &[
    "a",
    "about",
    "all",
    "also",
    "always",
    "an",
    "and",
    "any",
    "anything",
    "are",
    "as",
    "at",
    "bad",
    "be",
    "been",
    "being",
    "best",
    "better",
    "blank",
    "both",
    "but",
    "by",
    "can",
    "case",
    "case-sensitive",
    "changed",
    "complex",
    "confidential",
    "correct",
    "could",
    "current",
    "default",
    "did",
    "different",
    "do",
    "does",
    "each",
    "easier",
    "easy",
    "empty",
    "enough",
    "every",
    "expired",
    "fine",
    "for",
    "forgotten",
    "from",
    "good",
    "had",
    "hard",
    "harder",
    "has",
    "have",
    "he",
    "her",
    "here",
    "hidden",
    "his",
    "how",
    "i",
    "if",
    "important",
    "in",
    "incorrect",
    "insecure",
    "invalid",
    "is",
    "it",
    "it's",
    "its",
    "just",
    "least",
    "less",
    "like",
    "long",
    "lost",
    "masked",
    "may",
    "me",
    "might",
    "mine",
    "missing",
    "more",
    "most",
    "must",
    "my",
    "necessary",
    "need",
    "needed",
    "needs",
    "never",
    "new",
    "no",
    "none",
    "not",
    "nothing",
    "now",
    "of",
    "often",
    "ok",
    "okay",
    "old",
    "on",
    "one",
    "only",
    "optional",
    "or",
    "our",
    "please",
    "private",
    "probably",
    "rarely",
    "recommended",
    "redacted",
    "required",
    "reset",
    "right",
    "safe",
    "safer",
    "safest",
    "same",
    "saved",
    "secret",
    "secure",
    "sensitive",
    "set",
    "shall",
    "she",
    "short",
    "should",
    "shown",
    "simple",
    "so",
    "some",
    "something",
    "sometimes",
    "still",
    "stored",
    "strong",
    "stronger",
    "strongest",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "too",
    "unique",
    "unknown",
    "unsafe",
    "unset",
    "us",
    "usually",
    "valid",
    "very",
    "visible",
    "was",
    "we",
    "weak",
    "weaker",
    "were",
    "what",
    "when",
    "where",
    "which",
    "who",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "wrong",
    "yes",
    "you",
    "your",
    "yours",
];

/// Words that may stand between a label and its value: "the password *for the bank*: x".
const PREPOSITIONS: &[&str] = &["for", "to", "of", "on", "at", "in"];

/// Words before "password is" that make it a question, not a statement:
/// "which password is best?".
const ASKING: &[&str] = &[
    "what", "which", "whose", "how", "any", "a", "an", "no", "every", "each", "if", "whether",
    "one",
];

const QUOTES: &[char] = &['"', '\'', '`', '“', '”', '‘', '’', '«', '»'];

fn labelled_secret(text: &str, lower: &str, labels: &LabelsFound) -> Option<&'static str> {
    LABELS
        .iter()
        .enumerate()
        .find_map(|(label, &(_, form, kind))| {
            labels
                .word_spans(lower, label)
                .any(|(start, end)| announces_secret(text, start, end, form))
                .then_some(kind)
        })
}

/// Where each label the scanner reads stands in a lowered text: those of [`LABELS`],
/// then those of [`AWS_SECRET_LABELS`], by their place in that order. Found in one pass
/// over the text, where searching for each of sixty labels in turn was most of the time
/// an import of thousands of lessons spent checking them.
struct LabelsFound {
    /// Per label, the `(start, end)` of its occurrences, left to right, none
    /// overlapping another of the same label (as `str::match_indices` finds them).
    spans: Vec<Vec<(usize, usize)>>,
}

/// The one searcher for every label, built on first use.
static LABEL_FINDER: LazyLock<AhoCorasick> = LazyLock::new(|| {
    let labels = LABELS
        .iter()
        .map(|&(label, _, _)| label)
        .chain(AWS_SECRET_LABELS.iter().copied());
    AhoCorasick::new(labels).expect("a few dozen short literal labels always make a searcher")
});

impl LabelsFound {
    fn in_text(lower: &str) -> Self {
        let mut spans = vec![Vec::new(); LABELS.len() + AWS_SECRET_LABELS.len()];
        for found in LABEL_FINDER.find_overlapping_iter(lower) {
            let of_label: &mut Vec<(usize, usize)> = &mut spans[found.pattern().as_usize()];
            if of_label.last().is_none_or(|&(_, end)| found.start() >= end) {
                of_label.push((found.start(), found.end()));
            }
        }
        LabelsFound { spans }
    }

    /// Where label number `label` stands as a word of its own (`db_password=` counts,
    /// `passwords` and `password-protected` do not).
    fn word_spans<'a>(
        &'a self,
        lower: &'a str,
        label: usize,
    ) -> impl Iterator<Item = (usize, usize)> + 'a {
        let spans = self.spans.get(label).map_or(&[][..], Vec::as_slice);
        spans.iter().copied().filter(move |&(at, end)| {
            let before_ok = lower[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            let mut after = lower[end..].chars();
            let after_ok = match after.next() {
                None => true,
                Some(c) if c.is_alphanumeric() || c == '_' => false,
                Some('-') => !after.next().is_some_and(char::is_alphanumeric),
                Some(_) => true,
            };
            before_ok && after_ok
        })
    }
}

/// How the label is joined to what follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sep {
    /// `:`, `=`, `:=`.
    Colon,
    /// `is`, `was`, `are`, `were`, `is:`.
    Is,
    /// Just a space: `passphrase x`.
    Space,
}

/// The separator after a label (past a short "for the bank" between), and the text
/// after it; `None` when the label is not followed by a value at all.
fn separator(rest: &str) -> Option<(Sep, &str)> {
    let spaced = rest.starts_with(char::is_whitespace);
    let s = rest.trim_start();
    if let Some(found) = separator_at(s) {
        return Some(found);
    }
    let (first, mut after) = split_word(s);
    if PREPOSITIONS.contains(&first.to_lowercase().as_str()) {
        for _ in 0..5 {
            let t = after.trim_start();
            if let Some(found) = separator_at(t) {
                return Some(found);
            }
            let (word, next) = split_word(t);
            if word.is_empty()
                || !word
                    .chars()
                    .all(|c| c.is_alphanumeric() || "'’-".contains(c))
            {
                return None;
            }
            after = next;
        }
        return None;
    }
    spaced.then_some((Sep::Space, s))
}

fn separator_at(s: &str) -> Option<(Sep, &str)> {
    if let Some(r) = s.strip_prefix([':', '=']) {
        return Some((Sep::Colon, r.strip_prefix([':', '=']).unwrap_or(r)));
    }
    let (word, after) = split_word(s);
    // "are": "the seed words are …".
    matches!(word.to_lowercase().as_str(), "is" | "was" | "are" | "were").then(|| {
        let after = after.trim_start();
        (Sep::Is, after.strip_prefix(':').unwrap_or(after))
    })
}

fn split_word(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| c.is_whitespace() || c == ':' || c == '=')
        .unwrap_or(s.len());
    s.split_at(end)
}

/// The value after a separator: a quoted string, or the next word without the
/// sentence's punctuation.
#[derive(Clone, Copy, Debug)]
struct Value<'a> {
    text: &'a str,
    quoted: bool,
}

impl<'a> Value<'a> {
    fn of(after: &'a str) -> Self {
        let v = after.trim_start();
        if let Some(open) = v.chars().next().filter(|c| QUOTES.contains(c)) {
            let inner = &v[open.len_utf8()..];
            let end = inner.find(QUOTES).unwrap_or(inner.len());
            return Value {
                text: &inner[..end],
                quoted: true,
            };
        }
        // "<your password here>" is one placeholder, not the word "<your".
        for (open, close) in [('<', '>'), ('{', '}'), ('[', ']')] {
            if v.starts_with(open)
                && let Some(end) = v.find(close)
            {
                return Value {
                    text: &v[..end + close.len_utf8()],
                    quoted: false,
                };
            }
        }
        let word = v.split(char::is_whitespace).next().unwrap_or_default();
        Value {
            text: word.trim_end_matches(['.', ',', ';', '!', '?', ')', ']', '}', '>']),
            quoted: false,
        }
    }

    fn len(&self) -> usize {
        self.text.chars().count()
    }

    /// Could stand where a password stands: not empty, not a placeholder, not one of
    /// the words of a sentence about passwords, and not a short number ("8 characters").
    fn is_literal(&self) -> bool {
        let t = self.text.trim();
        t.chars().any(char::is_alphanumeric)
            && !is_placeholder(t)
            && (self.quoted || !NOT_A_VALUE.contains(&t.to_lowercase().as_str()))
            && !(t.chars().all(|c| c.is_ascii_digit()) && t.len() < 4)
    }

    /// Looks made up rather than a word: a digit, a symbol, or capitals inside it.
    fn is_secretish(&self) -> bool {
        let t = self.text;
        let inner_capital = t.chars().skip(1).any(char::is_uppercase);
        (self.quoted && self.is_literal())
            || t.chars().any(|c| c.is_ascii_digit())
            || t.chars().any(|c| !c.is_alphanumeric() && !"'’".contains(c))
            || (inner_capital && t.chars().any(char::is_lowercase))
    }

    /// "stored", "expiring", "randomly": a sentence goes on, a password rarely reads so.
    fn reads_as_english(&self) -> bool {
        let t = self.text;
        !self.quoted
            && t.len() >= 5
            && t.chars().all(|c| c.is_ascii_lowercase())
            && ["ed", "ing", "ly"].iter().any(|end| t.ends_with(end))
    }
}

/// Whether the label at `start..end` of `text` is followed by the value it names.
fn announces_secret(text: &str, start: usize, end: usize, form: Form) -> bool {
    let Some((sep, after)) = separator(&text[end..]) else {
        return false;
    };
    let value = Value::of(after);
    let stated = || value.is_literal() && !value.reads_as_english() && !asked_about(text, start);
    match (form, sep) {
        (Form::Pin, _) => pin_digits(after),
        (Form::RecoveryPhrase, _) => seed_words_follow(after),
        (Form::Authorization, Sep::Colon) => authorization_value(after),
        (Form::Authorization, _) => false,
        (Form::Bearer, Sep::Is) => false,
        (Form::Bearer, _) => {
            value.len() >= 8
                && value
                    .text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-._~+/=".contains(c))
                && value.is_secretish()
        }
        (Form::Token, Sep::Colon) => value.len() >= 8 && value.is_secretish(),
        (Form::Token, _) => false,
        (Form::NamedToken, Sep::Space) => value.len() >= 12 && value.is_secretish(),
        (Form::NamedToken, _) => value.len() >= 8 && value.is_secretish(),
        (Form::Pass, Sep::Colon) => value.len() >= 4 && value.is_secretish(),
        (Form::Pass, _) => false,
        (Form::Key, Sep::Space) => value.len() >= 12 && value.is_secretish(),
        (Form::Password, Sep::Space) => {
            (value.quoted && value.is_literal()) || (value.len() >= 4 && value.is_secretish())
        }
        // "passphrase correct horse battery staple"; "passphrase generators make random
        // words" names a kind of thing, not its value.
        (Form::Passphrase, Sep::Space) => {
            (value.quoted && value.is_literal())
                || (value.len() >= 4 && value.is_secretish())
                || (plain_word_phrase(after) && !names_a_kind_of_it(after))
                || seed_words_follow(after)
        }
        (Form::Password | Form::Key, Sep::Colon) => value.is_literal() && !instructions(after),
        (Form::Password | Form::Key, Sep::Is) => stated(),
        (Form::Passphrase, Sep::Colon) => {
            value.is_literal() || plain_word_phrase(after) || seed_words_follow(after)
        }
        // "my passphrase is kept in a password manager" says where, not what.
        (Form::Passphrase, Sep::Is) => {
            (stated() && !instructions(after))
                || plain_word_phrase(after)
                || seed_words_follow(after)
        }
    }
}

/// "password: go to settings", "password: step by step": a lower-case word that a
/// preposition follows starts an instruction, not a value.
fn instructions(after: &str) -> bool {
    let mut words = after.split_whitespace();
    let first = words.next().unwrap_or_default();
    let joins = [
        "to", "by", "in", "on", "at", "from", "with", "of", "the", "a", "an",
    ];
    first.chars().all(|c| c.is_ascii_lowercase())
        && words
            .next()
            .is_some_and(|w| joins.contains(&w.to_lowercase().as_str()))
}

/// "which password is best", "a password is a secret": the sentence asks or defines.
fn asked_about(text: &str, label_start: usize) -> bool {
    text[..label_start]
        .split_whitespace()
        .next_back()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .is_some_and(|w| ASKING.contains(&w.as_str()))
}

/// `Basic dXNlcjpwYXNz`, `Bearer …`, or a long credential straight after the colon.
fn authorization_value(after: &str) -> bool {
    let mut words = after.split_whitespace();
    let first = words.next().unwrap_or_default();
    let schemes = ["basic", "bearer", "token", "digest", "negotiate"];
    if schemes.contains(&first.to_lowercase().as_str()) {
        return words.next().is_some_and(|w| w.chars().count() >= 8);
    }
    let value = Value::of(after);
    value.len() >= 16 && value.is_secretish()
}

/// Four plain words in a row ("correct horse battery staple"): a passphrase, when the
/// words after the first are not the words of a sentence.
fn plain_word_phrase(after: &str) -> bool {
    let words: Vec<&str> = after
        .split_whitespace()
        .take(4)
        .map(|w| w.trim_end_matches(['.', ',', ';', '!', '?']))
        .collect();
    words.len() == 4
        && words
            .iter()
            .all(|w| !w.is_empty() && w.chars().all(char::is_alphabetic))
        && words[1..]
            .iter()
            .all(|w| !NOT_A_VALUE.contains(&w.to_lowercase().as_str()))
}

/// Nouns that make a compound with a secret's label ("passphrase generators", "seed
/// phrase backup"): the sentence is about that kind of thing, not the secret's value.
const KINDS_OF_IT: &[&str] = &[
    "advice",
    "attack",
    "backup",
    "box",
    "change",
    "checker",
    "complexity",
    "creation",
    "cracker",
    "cracking",
    "dialog",
    "entropy",
    "entry",
    "example",
    "feature",
    "field",
    "format",
    "generation",
    "generator",
    "hint",
    "idea",
    "input",
    "length",
    "management",
    "manager",
    "meter",
    "option",
    "policy",
    "policies",
    "prompt",
    "protection",
    "recovery",
    "requirement",
    "reset",
    "rule",
    "screen",
    "security",
    "setting",
    "storage",
    "strength",
    "support",
    "tip",
];

/// Whether the word after a bare label names a kind of thing: "passphrase managers".
fn names_a_kind_of_it(after: &str) -> bool {
    let first = after
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .trim_end_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    let singular = first.strip_suffix('s').unwrap_or(&first);
    KINDS_OF_IT.contains(&first.as_str()) || KINDS_OF_IT.contains(&singular)
}

/// The fewest words of a recovery phrase: BIP-39's phrases have 12 to 24, Electrum's
/// 12 or 13, Monero's 25.
const SEED_PHRASE_WORDS: usize = 12;

/// Common words of three letters or more that no recovery-phrase word list holds (the
/// lists are built from nouns, verbs and adjectives): one of them in the run means a
/// sentence. Every word here is absent from BIP-39's English list, whose words include
/// "about", "all", "can", "have", "that", "this", "what", "when", "will" and "you", so
/// those cannot tell a sentence from a phrase.
const PROSE_WORDS: &[&str] = &[
    "and", "are", "been", "being", "but", "could", "did", "does", "for", "from", "had", "has",
    "her", "him", "his", "how", "its", "may", "might", "nor", "not", "our", "shall", "she",
    "should", "than", "the", "their", "them", "these", "those", "was", "were", "which", "who",
    "whom", "whose", "why", "with", "would", "your",
];

/// Could be a word of a recovery phrase: three to eight letters (BIP-39's range), and
/// not a word only sentences use.
fn is_seed_word(word: &str) -> bool {
    (3..=8).contains(&word.len())
        && word.chars().all(|c| c.is_ascii_alphabetic())
        && !PROSE_WORDS.contains(&word.to_ascii_lowercase().as_str())
}

/// Whether `after` starts with a run of [`SEED_PHRASE_WORDS`] seed words, as typed:
/// spaces, commas or new lines between them, numbered ("1. witch 2. collapse") or
/// quoted. A word of two letters, a longer one or a sentence's word ends the run.
fn seed_words_follow(after: &str) -> bool {
    let mut words = 0;
    let tokens = after
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|token| !token.is_empty())
        // Bounds the numbers and dashes skipped; a phrase needs far fewer tokens.
        .take(4 * SEED_PHRASE_WORDS);
    for token in tokens {
        // "1.", "(2)", "3)witch", a dash or a quote around a word.
        let word = token.trim_matches(|c: char| !c.is_ascii_alphabetic());
        if word.is_empty() {
            continue;
        }
        if !is_seed_word(word) {
            return false;
        }
        words += 1;
        if words >= SEED_PHRASE_WORDS {
            return true;
        }
    }
    false
}

/// Whether `after` starts with a PIN: four to eight digits, alone or grouped by single
/// spaces or dashes ("48 21", "4-8-2-1"), after an optional `#` or quote. A longer
/// number, a decimal ("4.5 mm"), a measurement ("3 millimetres") or a word is not one.
fn pin_digits(after: &str) -> bool {
    const MAX_PIN_DIGITS: usize = 8;
    let value = after
        .trim_start()
        .trim_start_matches(QUOTES)
        .trim_start_matches('#');
    let mut digits = 0;
    let mut chars = value.chars().peekable();
    loop {
        let next_is_digit = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
            chars.peek().is_some_and(char::is_ascii_digit)
        };
        match chars.next() {
            Some(c) if c.is_ascii_digit() => {
                digits += 1;
                if digits > MAX_PIN_DIGITS {
                    return false;
                }
            }
            Some(' ' | '-') if digits > 0 && next_is_digit(&mut chars) => {}
            end => {
                let ends_the_number = match end {
                    None => true,
                    Some('.' | ',') => !next_is_digit(&mut chars),
                    Some(c) => !c.is_alphanumeric(),
                };
                return ends_the_number && digits >= 4;
            }
        }
    }
}

// --- Card numbers -------------------------------------------------------------------

/// A Luhn-valid card number of 13 to 19 digits, unbroken or grouped (4 digits, then
/// groups of 3 to 6) with one kind of separator: spaces, dashes or dots. It must start
/// with 2 to 6, as the card networks' numbers do; this also lets every ISBN-13 (978,
/// 979), millisecond timestamps and most order numbers through.
fn has_card_number(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        // "+49…" is a phone number; "a4111…" part of a word.
        let glued_before = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '+');
        let mut groups: Vec<Vec<u32>> = Vec::new();
        let mut seps: Vec<char> = Vec::new();
        let mut j = i;
        loop {
            let mut group = Vec::new();
            while let Some(d) = chars.get(j).and_then(|c| c.to_digit(10)) {
                group.push(d);
                j += 1;
            }
            groups.push(group);
            match (chars.get(j), chars.get(j + 1)) {
                (Some(&sep @ (' ' | '-' | '.')), Some(next)) if next.is_ascii_digit() => {
                    seps.push(sep);
                    j += 1;
                }
                _ => break,
            }
        }
        let glued_after = chars.get(j).is_some_and(|c| c.is_alphanumeric());
        if card_in_run(&groups, &seps, glued_before, glued_after) {
            return true;
        }
        i = j.max(i + 1);
    }
    false
}

/// Whether some window of a run of digit groups is a card number. A window starts
/// and ends at the run's ends or at a space, so "call 1 4111 1111 1111 1111" is found
/// but a version's or a date's dotted groups are never cut apart.
fn card_in_run(groups: &[Vec<u32>], seps: &[char], glued_before: bool, glued_after: bool) -> bool {
    let last = groups.len().saturating_sub(1);
    for a in 0..groups.len() {
        let opens = if a == 0 {
            !glued_before
        } else {
            seps.get(a - 1) == Some(&' ')
        };
        if !opens {
            continue;
        }
        let mut digits = 0;
        for b in a..groups.len() {
            digits += groups[b].len();
            if digits > 19 {
                break;
            }
            let closes = if b == last {
                !glued_after
            } else {
                seps.get(b) == Some(&' ')
            };
            let window = &groups[a..=b];
            let one_separator = seps[a..b].windows(2).all(|pair| pair[0] == pair[1]);
            let grouped = window.len() == 1
                || (window[0].len() == 4 && window[1..].iter().all(|g| (3..=6).contains(&g.len())));
            let network = window[0].first().is_some_and(|d| (2..=6).contains(d));
            if closes && digits >= 13 && one_separator && grouped && network {
                let number: Vec<u32> = window.iter().flatten().copied().collect();
                if luhn(&number) {
                    return true;
                }
            }
        }
    }
    false
}

fn luhn(digits: &[u32]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                if d * 2 > 9 { d * 2 - 9 } else { d * 2 }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused_as(text: &str, kind: &str) {
        assert_eq!(find_secret(text), Some(kind), "{text:?} holds {kind}");
    }

    fn passes(text: &str) {
        assert_eq!(find_secret(text), None, "{text:?} is not a secret");
    }

    #[test]
    fn ordinary_numbers_and_words_are_not_secrets() {
        for text in [
            "I want 3 synonyms, not 1",
            "the order number 1234 5678 is fine",
            "when I say password I mean the word itself",
            "a very long word like antidisestablishmentarianism",
            "Pneumonoultramicroscopicsilicovolcanoconiosis is a long English word",
            "a state-of-the-art-2024-machine-learning-models-overview slug",
        ] {
            passes(text);
        }
    }

    #[test]
    fn the_shortest_secret_of_each_shape_gets_past_the_one_pass_filter() {
        // Each exactly as long as its shape's shortest, in a sentence around it.
        let jwt = "eyJhbGciOi.ab.";
        assert_eq!(jwt.len(), SHORTEST_JWT);
        refused_as(&format!("send {jwt} to the api"), "a JWT");
        let slack = "xoxb-12345abcde";
        assert_eq!(slack.len(), SHORTEST_PREFIXED);
        refused_as(&format!("the bot uses {slack} now"), "a Slack token");
        // A 13-digit Luhn-valid number starting with 4.
        let card = "4222222222222";
        assert_eq!(card.len(), SHORTEST_CARD_NUMBER);
        refused_as(&format!("pay with {card} today"), "a card number");
    }

    // --- Secret forms, one test each --------------------------------------------------

    const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";

    #[test]
    fn a_jwt_is_refused() {
        refused_as(&format!("my session is {JWT}."), "a JWT");
        refused_as(&format!("Authorization: Bearer {JWT}"), "a JWT");
        refused_as(
            &format!("https://app.example.com/cb?id_token={JWT}&x=1"),
            "a JWT",
        );
    }

    #[test]
    fn an_unsigned_jwt_is_refused() {
        refused_as("eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", "a JWT");
    }

    #[test]
    fn an_aws_access_key_id_is_refused() {
        refused_as("the key id is AKIAIOSFODNN7EXAMPLE", "an AWS access key ID");
        refused_as(
            "aws_access_key_id=ASIAY34FZKBOKMUTVV7A",
            "an AWS access key ID",
        );
    }

    #[test]
    fn an_aws_secret_access_key_after_its_label_is_refused() {
        let key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        for text in [
            format!("aws_secret_access_key = {key}"),
            format!("AWS_SECRET_ACCESS_KEY={key}"),
            format!("my secret access key is {key}"),
            format!("secret access key {key}"),
        ] {
            refused_as(&text, "an AWS secret access key");
        }
    }

    #[test]
    fn an_aws_secret_access_key_standing_alone_is_refused() {
        refused_as(
            "use wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY for the bucket",
            "an AWS secret access key",
        );
        refused_as(
            "it is 9dLx2Qp+Rz7TbW4kYf/Hn3GvJm8Ue6Sa1Oc5Ni0B",
            "an AWS secret access key",
        );
    }

    #[test]
    fn a_password_inside_a_url_is_refused_for_any_scheme() {
        for url in [
            "postgres://admin:S3cretPassw0rd@db.example.com:5432/app",
            "postgres://admin:S3cretPassw0rd@…",
            "mysql://root:toor@localhost/shop",
            "mongodb+srv://app:pa55word@cluster0.mongodb.net/test",
            "redis://:hunter2@cache:6379/0",
            "https://alice:wonderland@example.com/private",
            "ftp://anonymous:guest@ftp.example.com",
            "amqp://guest:guest@rabbit",
        ] {
            refused_as(
                &format!("connect with {url} please"),
                "a password inside a URL",
            );
        }
    }

    #[test]
    fn a_slack_webhook_url_is_refused() {
        refused_as(
            "post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
            "a Slack webhook URL",
        );
    }

    #[test]
    fn a_discord_webhook_url_is_refused() {
        refused_as(
            "https://discord.com/api/webhooks/123456789012345678/abcDEF-ghi",
            "a Discord webhook URL",
        );
    }

    #[test]
    fn a_github_token_is_refused() {
        refused_as("ghp_16C7e42F292c6912E7710c838347Ae178B4a", "a GitHub token");
        refused_as(
            "token github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789",
            "a GitHub token",
        );
    }

    #[test]
    fn an_openai_api_key_is_refused() {
        refused_as("sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv", "an API key");
        refused_as("OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx12", "an API key");
    }

    #[test]
    fn a_slack_token_is_refused() {
        for token in [
            "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy",
            "xoxp-2233445566-7788990011-abcdef123456",
            "xoxa-2-abcdefghijkl",
            "xoxs-1234567890-abcdef",
        ] {
            refused_as(&format!("the bot uses {token}"), "a Slack token");
        }
    }

    #[test]
    fn a_google_api_key_is_refused() {
        refused_as(
            "https://maps.googleapis.com/api?key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI",
            "a Google API key",
        );
    }

    #[test]
    fn a_stripe_secret_key_is_refused() {
        refused_as("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "a Stripe secret key");
    }

    #[test]
    fn a_pem_private_key_block_is_refused() {
        for header in [
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "-----BEGIN EC PRIVATE KEY-----",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----",
        ] {
            refused_as(header, "a private key");
        }
    }

    #[test]
    fn a_certificate_block_is_not_a_secret() {
        passes("-----BEGIN CERTIFICATE-----\nMIIB");
    }

    #[test]
    fn a_bearer_token_is_refused() {
        refused_as("send Bearer 8f2a9c1d7e3b4a6f", "a bearer token");
        refused_as(
            "Authorization: Basic dXNlcjpwYXNzd29yZA==",
            "an authorization header",
        );
    }

    #[test]
    fn the_bearer_of_news_is_not_a_secret() {
        passes("the bearer of bad news is here");
        passes("bearer instruments and bearer bonds");
    }

    #[test]
    fn a_long_random_token_is_refused() {
        refused_as(
            "the value 9fceb02d0ae598e95dc970b74767f19372d61af8aa",
            "an access token",
        );
    }

    #[test]
    fn pw_colon_is_refused() {
        refused_as("pw: Tr0ub4dor&3", "a password or key");
        refused_as("wifi pw: swordfish", "a password or key");
    }

    #[test]
    fn pwd_equals_is_refused() {
        refused_as("pwd=hunter2", "a password or key");
        refused_as("DB_PWD = letmein", "a password or key");
    }

    #[test]
    fn password_colon_is_refused() {
        refused_as("password: hunter2", "a password or key");
        refused_as("Password:swordfish", "a password or key");
        refused_as("DB_PASSWORD=\"correct horse\"", "a password or key");
        refused_as("user: admin pass: hunter2", "a password or key");
    }

    #[test]
    fn password_is_is_refused() {
        refused_as("my password is swordfish", "a password or key");
        refused_as("the password is: P@ssw0rd!", "a password or key");
        refused_as("the wifi password was \"blue sky\"", "a password or key");
    }

    #[test]
    fn a_bare_password_after_its_label_is_refused_when_it_looks_made_up() {
        refused_as("password hunter2", "a password or key");
        refused_as("login admin pw Tr0ub4dor", "a password or key");
    }

    #[test]
    fn a_passphrase_is_refused() {
        refused_as("passphrase correct-horse-battery-staple", "a passphrase");
        refused_as(
            "my passphrase is correct horse battery staple",
            "a passphrase",
        );
        refused_as("passphrase: lighthouse", "a passphrase");
        refused_as("the passphrase for my key is Bl4ck-Sw4n", "a passphrase");
    }

    #[test]
    fn a_labelled_passphrase_of_plain_words_is_refused() {
        for text in [
            "passphrase correct horse battery staple",
            "the wifi passphrase correct horse battery staple",
            "pass phrase correct horse battery staple",
            "Passphrase: Correct Horse Battery Staple",
            "my passphrase was correct horse battery staple.",
        ] {
            refused_as(text, "a passphrase");
        }
    }

    /// A BIP-39 phrase (the standard's own test vector words, not anyone's wallet).
    const SEED_12: &str =
        "witch collapse practice feed shame open despair creek road again ice least";

    #[test]
    fn a_labelled_recovery_phrase_is_refused() {
        let seed_24 = format!("{SEED_12} {SEED_12}");
        let numbered: String = SEED_12
            .split(' ')
            .enumerate()
            .map(|(i, word)| format!("{}. {word}\n", i + 1))
            .collect();
        for text in [
            format!("my recovery phrase is {SEED_12}"),
            format!("seed phrase: {SEED_12}"),
            format!("Secret Recovery Phrase: {SEED_12}"),
            format!("mnemonic {SEED_12}"),
            format!("MNEMONIC=\"{SEED_12}\""),
            format!("backup phrase for the ledger: {SEED_12}"),
            format!("the wallet words are {}", SEED_12.replace(' ', ", ")),
            format!("my 24-word seed phrase is {seed_24}"),
            format!("seed words:\n{numbered}"),
            format!("recovery phrase (12 words): {}", SEED_12.to_uppercase()),
            format!("SEED_PHRASE={SEED_12}"),
        ] {
            refused_as(&text, "a recovery phrase");
        }
    }

    #[test]
    fn a_recovery_phrase_made_of_words_that_also_serve_sentences_is_refused() {
        // BIP-39 holds these words too, so they never mark a sentence.
        let phrase = "about all also any can have just like more must never nothing";
        refused_as(&format!("seed phrase: {phrase}"), "a recovery phrase");
        let phrase = "that then there they this what when where will you only once";
        refused_as(&format!("recovery phrase {phrase}"), "a recovery phrase");
    }

    #[test]
    fn a_pin_grouped_quoted_or_after_a_hash_is_refused() {
        for text in [
            "PIN #4821",
            "my PIN is 48 21",
            "pin: 4-8-2-1",
            "PIN '4821'",
            "the SIM's PUK is 12345678",
            "PUK code: 87654321",
            "pin-code 4821",
        ] {
            refused_as(text, "a PIN");
        }
    }

    #[test]
    fn a_sentence_about_passphrases_is_not_a_secret() {
        for text in [
            "when I ask about passphrases, I want advice on choosing one",
            "what makes a good passphrase?",
            "passphrase generators make random words",
            "passphrase strength meters disagree wildly",
            "a passphrase is four random words",
            "my passphrase is kept in a password manager",
        ] {
            passes(text);
        }
    }

    #[test]
    fn a_sentence_about_recovery_phrases_is_not_a_secret() {
        for text in [
            "explain what a recovery phrase is",
            "what is a seed phrase and how do I store it?",
            "how do I back up my seed phrase safely?",
            "my recovery phrase is written in a notebook in my safe",
            "recovery phrase: write it down and keep it offline",
            "the recovery phrase is twelve random English words",
            "seed phrase backup plan uses steel plates",
            "the 24 words of a recovery phrase come from a list of 2048",
            "my wallet words are stored offline in a fireproof safe",
            "a mnemonic like this one helps when lists grow long, and the trick works for many people",
            "mnemonic: Richard Of York Gave Battle In Vain",
            "seed: 42",
            "seed the database with twelve users then test every migration again before each release",
        ] {
            passes(text);
        }
    }

    #[test]
    fn a_sentence_about_a_pin_is_not_a_secret() {
        for text in [
            "my PIN is the usual kind of thing banks ask for",
            "the pin is 4.5 mm wide",
            "the pin is 1234.5 microns",
            "pin 1 2 3 on the header",
            "the PIN is 123456789012",
            "a 4-digit PIN is weak",
            "PIN: the one I always use",
        ] {
            passes(text);
        }
    }

    #[test]
    fn a_passcode_is_refused() {
        refused_as("the door passcode is 482913", "a passcode");
        refused_as("passcode 7391", "a passcode");
    }

    #[test]
    fn a_pin_with_digits_is_refused() {
        refused_as("my PIN is 4821", "a PIN");
        refused_as("PIN: 0000", "a PIN");
        refused_as("card pin 739104", "a PIN");
        refused_as("the pin code 1234 opens it", "a PIN");
        refused_as("the PIN for the card is 9462", "a PIN");
    }

    #[test]
    fn pin_as_a_word_is_not_a_secret() {
        passes("pin the tab to the left");
        passes("the pin is 3 millimetres");
        passes("what is a PIN?");
        passes("spinning 1234 times");
    }

    #[test]
    fn the_password_for_the_bank_is_refused() {
        refused_as("the password for the bank: Qw3rty!9", "a password or key");
        refused_as("the password for the bank: swordfish", "a password or key");
        refused_as("password to my email is hunter2", "a password or key");
    }

    #[test]
    fn my_bank_password_is_hunter2_is_refused() {
        refused_as("my bank password is hunter2", "a password or key");
    }

    #[test]
    fn an_api_key_after_its_label_is_refused() {
        refused_as("api key: 1a2b3c4d5e6f", "an API key");
        refused_as("client_secret=Xy9zQ8wV7u", "a password or key");
        refused_as("access_token=ya29a0AfH6SMB", "an access token");
    }

    #[test]
    fn a_card_number_with_spaces_is_refused() {
        refused_as("card 4111 1111 1111 1111 please", "a card number");
        refused_as("amex 3782 822463 10005", "a card number");
    }

    #[test]
    fn a_card_number_with_dashes_is_refused() {
        refused_as("5500-0000-0000-0004", "a card number");
    }

    #[test]
    fn a_card_number_with_dots_is_refused() {
        refused_as("my card is 4111.1111.1111.1111.", "a card number");
    }

    #[test]
    fn an_unbroken_card_number_is_refused() {
        refused_as("4111111111111111", "a card number");
        refused_as("call 1 4111 1111 1111 1111 now", "a card number");
    }

    #[test]
    fn a_number_that_fails_the_luhn_check_is_not_a_card() {
        passes("4111 1111 1111 1112");
        passes("ref 4111111111111112");
    }

    // --- What must pass -----------------------------------------------------------------

    #[test]
    fn a_sentence_about_passwords_is_not_a_secret() {
        for text in [
            "I forgot my password, how do I reset it?",
            "What makes a strong password?",
            "password managers like Bitwarden",
            "the password field should be masked",
            "the password is too short",
            "the password is required to log in",
            "the password is stored hashed",
            "the password is case-sensitive",
            "the password is 8 characters long",
            "which password is best for a bank?",
            "a password is a secret word",
            "my password isn't working",
            "is my password secure?",
            "passwords: how long should they be?",
            "password-protected PDFs",
            "reset the password: what are the steps?",
            "Change your password: go to settings",
            "How do I change my password: step by step?",
            "the password for my bank, how do I change it?",
            "a boarding pass: gate 12",
            "the secret to good bread is time",
            "a token is a unit of text",
            "token: a unit of text",
            "passphrase managers are useful",
            "the passphrase is correct but it fails",
            "the password: <your password here>",
            "password: ********",
        ] {
            passes(text);
        }
    }

    #[test]
    fn version_numbers_are_not_secrets() {
        for text in [
            "upgrade to 1.2.3",
            "Windows 10.0.19045.2965",
            "v2.14.0-rc.1 broke it",
            "build 10.0.22621.2428.1234.5678",
            "python 3.11.4 and node 20.10.0",
        ] {
            passes(text);
        }
    }

    #[test]
    fn isbns_are_not_secrets() {
        for text in [
            "978-3-16-148410-0",
            "ISBN 0-306-40615-2",
            "9780306406157",
            "ISBN 979-10-90636-07-1",
            "isbn 978 0 306 40615 7",
        ] {
            passes(text);
        }
    }

    #[test]
    fn dates_phone_numbers_and_amounts_are_not_secrets() {
        for text in [
            "on 2024-01-15 at 10:30",
            "15.01.2024",
            "call +1 415 555 2671",
            "(415) 555-2671",
            "+44 20 7946 0958",
            "+4915112345678",
            "1,000,000 users",
            "1 000 000 000 000 000 grains",
            "at 1700000000000 ms",
            "pi is 3.14159265358979",
        ] {
            passes(text);
        }
    }

    #[test]
    fn ordinary_urls_are_not_secrets() {
        for text in [
            "https://example.com/a/b?x=1",
            "see https://user@example.com/profile",
            "https://example.com:8080/x?email=a@b.com",
            "mailto:alice@example.com",
            "https://github.com/rust-lang/rust/blob/master/README.md",
            "http://localhost:3000/",
        ] {
            passes(text);
        }
    }

    #[test]
    fn uuids_ip_addresses_and_long_words_are_not_secrets() {
        for text in [
            "request 550e8400-e29b-41d4-a716-446655440000 failed",
            "ping 192.168.0.1 and 10.0.0.255",
            "IPv6 2001:db8:85a3::8a2e:370:7334",
            "incomprehensibilities and counterrevolutionaries",
            "docs/Rust2024/EditionGuide/Chapter1/Intro",
            "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
        ] {
            passes(text);
        }
    }

    // --- Outside input ------------------------------------------------------------------

    /// Fragments of every shape the detectors look for, so the random texts reach deep
    /// into each parser rather than only its first check.
    const FRAGMENTS: &[&str] = &[
        "password",
        "pw",
        ":",
        "=",
        " is ",
        " for the ",
        "pin ",
        "://",
        "@",
        "eyJ",
        ".",
        "-",
        "AKIA",
        "sk-",
        "ghp_",
        "xoxb-",
        "AIza",
        "-----BEGIN",
        " PRIVATE KEY",
        "4111",
        " ",
        "1",
        "9",
        "/",
        "+",
        "\"",
        "'",
        "é",
        "İ",
        "🔑",
        "\u{0}",
        "\n",
        "Bearer ",
        "authorization:",
        "hooks.slack.com/services/",
        "passphrase",
        "seed phrase ",
        "mnemonic",
        " are ",
        "#",
        "witch ",
        "PUK ",
        "_",
        "978",
        ",",
        "…",
    ];

    #[test]
    fn find_secret_never_panics_on_spliced_fragments() {
        // A deterministic generator: the same texts on every run, no dependency.
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let len = (next() % 24) as usize;
            let text: String = (0..len)
                .map(|_| FRAGMENTS[(next() % FRAGMENTS.len() as u64) as usize])
                .collect();
            let _ = find_secret(&text);
        }
    }

    proptest::proptest! {
        #[test]
        fn find_secret_never_panics_on_any_text(text in "\\PC{0,300}") {
            let _ = find_secret(&text);
        }

        #[test]
        fn find_secret_never_panics_on_secret_like_text(
            text in "[a-zA-Z0-9:/@=._+ \\-'\"éİ]{0,200}"
        ) {
            let _ = find_secret(&text);
        }
    }
}
