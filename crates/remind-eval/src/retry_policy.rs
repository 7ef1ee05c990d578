//! When a failed request is worth repeating, and how long to wait before it.
//!
//! A local server that is busy with another engineer's build, or a hosted API that
//! rate-limits, fails transiently; a wrong key or URL never heals, so it fails at once.

use std::time::Duration;

use remind_app::ports::LlmError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts per step, the first one included (at least 1).
    pub max_attempts: u32,
    /// The wait before the second attempt; it doubles for each attempt after that.
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_doubles_and_is_capped() {
        let policy = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(500),
        };
        let delays: Vec<u128> = (1..=5).map(|n| policy.delay_after(n).as_millis()).collect();
        assert_eq!(delays, vec![100, 200, 400, 500, 500]);
        assert_eq!(policy.delay_after(200), Duration::from_millis(500));
    }

    #[test]
    fn only_errors_that_can_heal_are_retried() {
        assert!(is_transient(&LlmError::TimedOut {
            url: "u".into(),
            seconds: 1
        }));
        assert!(is_transient(&LlmError::Http {
            status: 503,
            detail: String::new()
        }));
        assert!(is_transient(&LlmError::Http {
            status: 429,
            detail: String::new()
        }));
        assert!(!is_transient(&LlmError::Http {
            status: 404,
            detail: String::new()
        }));
        assert!(!is_transient(&LlmError::Unauthorized { status: 401 }));
    }
}
