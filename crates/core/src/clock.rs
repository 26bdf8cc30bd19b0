//! Time as a parameter (DESIGN rule 6). Code that asks "what time is it" holds a [`Clock`];
//! production uses [`SystemClock`], tests use [`ManualClock`] and move it instead of sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// A source of the current time, in milliseconds since the Unix epoch (UTC).
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    fn now_ms(&self) -> i64;

    /// Whole seconds since the epoch, rounded down (the unit of `x-kd-timestamp`).
    fn now_unix(&self) -> i64 {
        self.now_ms().div_euclid(1000)
    }
}

/// The machine's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        let now = time::OffsetDateTime::now_utc();
        i64::try_from(now.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
    }
}

/// A clock that only moves when told to. Cloning shares the same time.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock standing at `start_ms` milliseconds since the epoch.
    pub fn new(start_ms: i64) -> Self {
        Self(Arc::new(AtomicI64::new(start_ms)))
    }

    /// Moves the clock forward (or back, with a negative value) by `delta_ms`.
    pub fn advance_ms(&self, delta_ms: i64) {
        self.0.fetch_add(delta_ms, Ordering::SeqCst);
    }

    /// Sets the clock to `now_ms`.
    pub fn set_ms(&self, now_ms: i64) {
        self.0.store(now_ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Formats epoch milliseconds as an RFC 3339 UTC timestamp with millisecond precision, for
/// example `2026-11-30T07:33:34.120Z`. Out-of-range values print as the epoch.
pub fn rfc3339_ms(epoch_ms: i64) -> String {
    let nanos = i128::from(epoch_ms) * 1_000_000;
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let format = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    at.format(&format).unwrap_or_default()
}

/// The UTC day of `epoch_ms` (Unix milliseconds) as `YYYY-MM-DD`.
/// Out of the representable range (years past 9999) it is the epoch's day, as [`rfc3339_ms`]
/// falls back to the epoch.
pub fn utc_day(epoch_ms: i64) -> String {
    let nanos = i128::from(epoch_ms) * 1_000_000;
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let format = time::macros::format_description!("[year]-[month]-[day]");
    at.format(&format).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let clock = ManualClock::new(1_791_700_000_000);
        assert_eq!(clock.now_unix(), 1_791_700_000);
        clock.advance_ms(301_000);
        assert_eq!(clock.now_unix(), 1_791_700_301);
    }

    #[test]
    fn rfc3339_prints_utc_with_milliseconds() {
        assert_eq!(rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_ms(1_791_700_000_123), "2026-10-11T06:26:40.123Z");
    }

    #[test]
    fn the_utc_day_turns_at_midnight() {
        assert_eq!(utc_day(1_791_700_000_123), "2026-10-11");
        // 2026-10-11T23:59:59.999Z and the next millisecond.
        assert_eq!(utc_day(1_791_763_199_999), "2026-10-11");
        assert_eq!(utc_day(1_791_763_200_000), "2026-10-12");
        assert_eq!(utc_day(-1), "1969-12-31");
    }
}
