//! Time and fresh ids from the browser (`Date.now`, `Math.random`).

use remind_app::ports::{Clock, IdSource};
use remind_core::record::{RecordId, Timestamp};

#[derive(Clone, Copy, Default)]
pub struct BrowserClock;

impl Clock for BrowserClock {
    fn now(&self) -> Timestamp {
        Timestamp(js_sys::Date::now() as i64)
    }
}

/// Ids unique across tabs and devices: time plus 64 random bits.
#[derive(Clone, Copy, Default)]
pub struct RandomIds;

impl IdSource for RandomIds {
    fn next_id(&self) -> RecordId {
        let random = || (js_sys::Math::random() * f64::from(u32::MAX)) as u32;
        RecordId(format!(
            "m-{:x}-{:08x}{:08x}",
            js_sys::Date::now() as u64,
            random(),
            random()
        ))
    }
}
