//! The whole-request deadline, and how a failure is recognised as its doing.
//!
//! Both clients enforce one deadline per request; the browser's timers bound how long it
//! may be, and its clock is the only witness that an aborted read was a time-out.

use std::time::Duration;

use crate::settings::Endpoint;

/// The browser's timers count milliseconds in an `i32`, so a longer timeout would
/// overflow the timer that enforces it; about 24 days is no limit in practice.
pub const MAX_TIMEOUT_SECONDS: u64 = 2_000_000;

/// How early a failure may come and still be the deadline's doing: the browser's timer
/// and clock disagree by a few milliseconds.
const DEADLINE_SLACK: Duration = Duration::from_millis(100);

/// The whole-request deadline: connecting, waiting for headers and reading the body.
pub fn request_timeout(endpoint: &Endpoint) -> Duration {
    Duration::from_secs(endpoint.timeout_seconds.clamp(1, MAX_TIMEOUT_SECONDS))
}

/// Whether a failure after `elapsed` is the deadline's: the browser reports an aborted
/// body read as a decoding error, so the clock is the only witness of a time-out.
pub fn reached_deadline(elapsed: Duration, limit: Duration) -> bool {
    elapsed + DEADLINE_SLACK >= limit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Settings;

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
}
