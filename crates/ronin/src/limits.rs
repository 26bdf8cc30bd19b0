//! Ronin's write limits (section 9, `rate-limited`): at most [`PER_KEY`] events a minute from
//! one key and [`PER_ADDRESS`] from one address, counted in a sliding minute per event
//! accepted for the writer. One lock makes a batch's charges exact under concurrency: every
//! key of the batch is checked first and charged only if all have room. The counts live in
//! memory (a restart forgets the last minute), as the hub's own limits do.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Events a minute from one key.
pub const PER_KEY: usize = 60;
/// Events a minute from one address.
pub const PER_ADDRESS: usize = 600;
/// The window, in milliseconds.
pub const WINDOW_MS: i64 = 60_000;

/// Sliding-minute counters.
#[derive(Debug, Default)]
pub struct Limits {
    windows: Mutex<Windows>,
}

#[derive(Debug, Default)]
struct Windows {
    times: HashMap<String, VecDeque<i64>>,
    takes: u64,
}

/// A charge: `count` events against `key`, which allows `limit` a minute.
#[derive(Debug, Clone)]
pub struct Charge {
    /// `key:<pubkey>` or `ip:<address>`.
    pub key: String,
    /// Events this request adds.
    pub count: usize,
    /// What the key allows a minute.
    pub limit: usize,
}

impl Limits {
    /// Takes every charge at `now_ms`, or none: `Err((key, retry_after_s))` names the first
    /// key without room and when enough of its window will have passed (at least 1 s).
    pub fn take(&self, charges: &[Charge], now_ms: i64) -> Result<(), (String, u64)> {
        let Ok(mut windows) = self.windows.lock() else {
            return Ok(());
        };
        for charge in charges {
            let times = windows.times.entry(charge.key.clone()).or_default();
            while times.front().is_some_and(|at| *at <= now_ms - WINDOW_MS) {
                times.pop_front();
            }
            if times.len() + charge.count > charge.limit {
                // Room comes back when the entries beyond the limit have left the window.
                let must_leave = times.len() + charge.count - charge.limit;
                let at = times
                    .get(must_leave.saturating_sub(1))
                    .copied()
                    .unwrap_or(now_ms);
                let wait_ms = (at + WINDOW_MS - now_ms).max(1);
                let seconds = u64::try_from(wait_ms).unwrap_or(1).div_ceil(1000).max(1);
                return Err((charge.key.clone(), seconds));
            }
        }
        for charge in charges {
            let times = windows.times.entry(charge.key.clone()).or_default();
            times.extend(std::iter::repeat_n(now_ms, charge.count));
        }
        // Now and then, forget keys whose window is empty.
        windows.takes += 1;
        if windows.takes % 1024 == 0 {
            windows
                .times
                .retain(|_, times| times.back().is_some_and(|at| *at > now_ms - WINDOW_MS));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn charge(key: &str, count: usize, limit: usize) -> Charge {
        Charge {
            key: key.into(),
            count,
            limit,
        }
    }

    #[test]
    fn a_key_gets_its_limit_a_minute_and_a_batch_is_charged_whole_or_not_at_all() {
        let limits = Limits::default();
        assert!(limits.take(&[charge("key:a", 59, 60)], 0).is_ok());
        // Two events do not fit in the one left: nothing is charged.
        assert_eq!(
            limits.take(&[charge("ip:x", 2, 600), charge("key:a", 2, 60)], 1_000),
            Err(("key:a".into(), 59))
        );
        assert!(limits.take(&[charge("ip:x", 598, 600)], 1_000).is_ok());
        assert!(limits.take(&[charge("key:a", 1, 60)], 2_000).is_ok());
        assert!(limits.take(&[charge("key:a", 1, 60)], 2_000).is_err());
        // A minute after the first events, their room is back.
        assert!(limits.take(&[charge("key:a", 59, 60)], 60_001).is_ok());
    }
}
