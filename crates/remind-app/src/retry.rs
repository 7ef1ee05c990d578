//! When a failed request is tried again, and after how long: one policy for the page
//! and the harness.
//!
//! A busy or rate-limited server, a time-out or an unreachable host may heal by itself;
//! a wrong key, bad settings or a malformed reply never does. The page and the harness
//! differ only in patience (the user watches the page wait; a harness run is
//! unattended), so each is a configuration of [`RetryPolicy`], not its own loop rules.

use std::time::Duration;

use crate::ports::LlmError;
use crate::status_class::{StatusClass, classify_status};

/// How many attempts a request gets and how long to wait between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first one included (at least 1).
    pub max_attempts: u32,
    /// The wait when the server names none; `None` retries only when it does.
    pub backoff: Option<Backoff>,
    /// The longest `Retry-After` waited out: a server asking for longer means "not
    /// now", so the failure is reported with its wait instead of waited for.
    pub max_retry_after: Duration,
}

/// Exponential backoff: `base_delay`, then twice that, and so on up to `max_delay`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl RetryPolicy {
    /// The page: one retry, and only when a 429 or 503 asks for a wait of at most 30 s,
    /// since the user watches the page wait and a guessed wait would hammer a server
    /// that did not ask for one.
    pub const PAGE: RetryPolicy = RetryPolicy {
        max_attempts: 2,
        backoff: None,
        max_retry_after: Duration::from_secs(30),
    };

    /// The harness: `retries` more attempts after a transient failure, waiting
    /// `base_delay` and doubling up to a minute (or `base_delay`, if longer); a server's
    /// own `Retry-After` is honoured up to that same cap.
    pub fn harness(retries: u32, base_delay: Duration) -> RetryPolicy {
        let max_delay = Duration::from_secs(60).max(base_delay);
        RetryPolicy {
            max_attempts: retries.saturating_add(1),
            backoff: Some(Backoff {
                base_delay,
                max_delay,
            }),
            max_retry_after: max_delay,
        }
    }

    /// How long to wait before attempt `failed + 1`, after attempt `failed` (1-based)
    /// ended in `error` whose reply asked for `retry_after` seconds; `None` is "give up".
    pub fn wait_before_retry(
        &self,
        error: &LlmError,
        retry_after: Option<u64>,
        failed: u32,
    ) -> Option<Duration> {
        if failed >= self.max_attempts || !is_transient(error) {
            return None;
        }
        match asked_wait(error, retry_after) {
            Some(wait) => (wait <= self.max_retry_after).then_some(wait),
            None => self.backoff.map(|backoff| backoff.delay_after(failed)),
        }
    }
}

impl Backoff {
    /// The wait after failed attempt `failed` (1-based): base, 2·base, 4·base, … capped.
    pub fn delay_after(&self, failed: u32) -> Duration {
        let factor = 1u32
            .checked_shl(failed.saturating_sub(1))
            .unwrap_or(u32::MAX);
        self.base_delay
            .checked_mul(factor)
            .unwrap_or(self.max_delay)
            .min(self.max_delay)
    }
}

/// Whether an error may go away by itself: timeouts, unreachable servers, overload
/// (HTTP 429) and server errors (5xx). Bad keys, bad settings and malformed replies
/// are not retried.
pub fn is_transient(error: &LlmError) -> bool {
    match error {
        LlmError::TimedOut { .. } | LlmError::Unreachable { .. } => true,
        LlmError::Http { status, .. } => *status == 429 || *status >= 500,
        LlmError::Unauthorized { .. }
        | LlmError::NotJson { .. }
        | LlmError::Unexpected { .. }
        | LlmError::BadSettings(_) => false,
    }
}

/// The wait a server asked for: `Retry-After` means "come back then" only on a 429 or
/// a 503; on any other status it is no promise that a retry will fare better.
fn asked_wait(error: &LlmError, retry_after: Option<u64>) -> Option<Duration> {
    match error {
        LlmError::Http { status, .. } => match classify_status(*status) {
            StatusClass::RateLimited | StatusClass::Busy => retry_after.map(Duration::from_secs),
            _ => None,
        },
        _ => None,
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

    fn http(status: u16) -> LlmError {
        LlmError::Http {
            status,
            detail: String::new(),
        }
    }

    fn timed_out() -> LlmError {
        LlmError::TimedOut {
            url: "u".into(),
            seconds: 1,
        }
    }

    /// 1994-11-06T08:49:37Z, the date RFC 9110 uses in its examples.
    const NOV_6_1994: u64 = 784_111_777;

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
    fn the_page_retries_once_and_only_when_a_429_or_503_asks_for_a_short_wait() {
        let page = RetryPolicy::PAGE;
        let wait = |error: &LlmError, retry_after, failed| {
            page.wait_before_retry(error, retry_after, failed)
                .map(|wait| wait.as_secs())
        };
        // A busy or rate-limited server that says when: waited out, up to 30 s.
        assert_eq!(wait(&http(429), Some(1), 1), Some(1));
        assert_eq!(wait(&http(503), Some(30), 1), Some(30));
        // Longer than the user should watch: reported, not waited for.
        assert_eq!(wait(&http(503), Some(31), 1), None);
        assert_eq!(wait(&http(429), Some(u64::MAX), 1), None);
        // No wait named, or a status whose Retry-After promises nothing: no guessing.
        assert_eq!(wait(&http(429), None, 1), None);
        assert_eq!(wait(&http(500), Some(1), 1), None);
        assert_eq!(wait(&http(502), Some(1), 1), None);
        assert_eq!(wait(&timed_out(), None, 1), None);
        // Never a third attempt.
        assert_eq!(wait(&http(429), Some(1), 2), None);
    }

    #[test]
    fn the_harness_retries_transient_failures_with_a_doubling_wait_until_out_of_attempts() {
        let harness = RetryPolicy::harness(3, Duration::from_millis(100));
        assert_eq!(harness.max_attempts, 4);
        let wait = |error: &LlmError, retry_after, failed| {
            harness
                .wait_before_retry(error, retry_after, failed)
                .map(|wait| wait.as_millis())
        };
        // Transient failures: 100 ms, 200 ms, 400 ms, then the fourth failure is final.
        assert_eq!(wait(&timed_out(), None, 1), Some(100));
        assert_eq!(wait(&http(503), None, 2), Some(200));
        assert_eq!(wait(&http(500), None, 3), Some(400));
        assert_eq!(wait(&http(429), None, 4), None);
        // A server's own Retry-After replaces the guess, up to the cap of a minute.
        assert_eq!(wait(&http(429), Some(7), 1), Some(7_000));
        assert_eq!(wait(&http(429), Some(61), 1), None);
        // What cannot heal is never retried.
        assert_eq!(wait(&LlmError::Unauthorized { status: 401 }, None, 1), None);
        assert_eq!(wait(&http(404), None, 1), None);
        assert_eq!(
            wait(
                &LlmError::NotJson {
                    detail: String::new()
                },
                None,
                1
            ),
            None
        );
    }

    #[test]
    fn a_long_base_delay_raises_the_harness_cap_with_it() {
        let harness = RetryPolicy::harness(1, Duration::from_secs(90));
        assert_eq!(
            harness.wait_before_retry(&timed_out(), None, 1),
            Some(Duration::from_secs(90))
        );
    }

    #[test]
    fn the_delay_doubles_and_is_capped() {
        let backoff = Backoff {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(500),
        };
        let delays: Vec<u128> = (1..=5)
            .map(|n| backoff.delay_after(n).as_millis())
            .collect();
        assert_eq!(delays, vec![100, 200, 400, 500, 500]);
        assert_eq!(backoff.delay_after(200), Duration::from_millis(500));
    }

    #[test]
    fn only_errors_that_can_heal_are_retried() {
        assert!(is_transient(&timed_out()));
        assert!(is_transient(&http(503)));
        assert!(is_transient(&http(429)));
        assert!(!is_transient(&http(404)));
        assert!(!is_transient(&LlmError::Unauthorized { status: 401 }));
    }

    proptest::proptest! {
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
    }
}
