//! How a reply's status is treated: success, a refused key, a request to wait, or a
//! failure.
//!
//! A module of its own because the words of a failure and the retry decision both read
//! it, and neither may import the other's dependencies back.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
