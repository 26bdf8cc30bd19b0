//! Per-minute request limits (permissions document: "Reads / writes a minute"; "each read tool
//! also has its own per-caller limit").
//!
//! A sliding log per bucket: the times of the calls admitted in the last minute. A call is
//! admitted only when every bucket it is charged to has room, and then it takes a slot in all
//! of them, under one lock, so a limit holds exactly under concurrent requests (a token bucket
//! would let a full burst through at each edge of the minute; see docs/decisions.md).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use kd_core::tiers::WINDOW_MS;

/// Buckets kept before the first sweep drops the idle ones. After a sweep the next one waits
/// until the map has doubled, so sweeping costs O(1) per call amortised however many buckets
/// are live.
const SWEEP_AT: usize = 4096;

/// The limiter a hub process shares between requests. State is in memory: a restart forgets
/// the last minute, which costs at most one minute's allowance.
#[derive(Debug, Default)]
pub struct RateLimiter {
    buckets: Mutex<Buckets>,
}

#[derive(Debug, Default)]
struct Buckets {
    logs: HashMap<String, VecDeque<i64>>,
    /// Sweep when `logs` reaches this many entries (0: [`SWEEP_AT`]).
    sweep_at: usize,
}

/// One bucket a call is charged to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charge {
    /// The bucket, e.g. `agent:<id>:reads` or `ip:<addr>:tool:discover_resources`.
    pub key: String,
    /// Calls allowed per rolling minute.
    pub limit: u32,
}

/// A refused call: which charge was full and when a slot frees up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limited {
    /// Index into the charges passed to [`RateLimiter::take`].
    pub charge: usize,
    /// Milliseconds until the oldest call in that bucket leaves the window (at least 1).
    pub retry_after_ms: i64,
}

impl RateLimiter {
    /// Admits a call at `now_ms` if every charge has room, taking one slot in each; otherwise
    /// takes nothing and says which was full.
    ///
    /// # Errors
    /// [`Limited`] for the first full bucket.
    pub fn take(&self, charges: &[Charge], now_ms: i64) -> Result<(), Limited> {
        let mut guard = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let state = &mut *guard;
        let buckets = &mut state.logs;
        let since = now_ms - WINDOW_MS;
        for (index, charge) in charges.iter().enumerate() {
            let Some(log) = buckets.get_mut(&charge.key) else {
                if charge.limit == 0 {
                    return Err(Limited {
                        charge: index,
                        retry_after_ms: WINDOW_MS,
                    });
                }
                continue;
            };
            while log.front().is_some_and(|at| *at <= since) {
                log.pop_front();
            }
            if log.len() >= charge.limit as usize {
                let oldest = log.front().copied().unwrap_or(now_ms);
                return Err(Limited {
                    charge: index,
                    retry_after_ms: (oldest + WINDOW_MS - now_ms).max(1),
                });
            }
        }
        for charge in charges {
            buckets
                .entry(charge.key.clone())
                .or_default()
                .push_back(now_ms);
        }
        if buckets.len() >= state.sweep_at.max(SWEEP_AT) {
            buckets.retain(|_, log| log.back().is_some_and(|at| *at > since));
            state.sweep_at = (buckets.len() * 2).max(SWEEP_AT);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn charge(key: &str, limit: u32) -> Charge {
        Charge {
            key: key.into(),
            limit,
        }
    }

    #[test]
    fn a_bucket_admits_its_limit_per_rolling_minute() {
        let limiter = RateLimiter::default();
        let reads = [charge("ip:1:reads", 3)];
        for at in [0, 10_000, 20_000] {
            assert_eq!(limiter.take(&reads, at), Ok(()));
        }
        assert_eq!(
            limiter.take(&reads, 30_000),
            Err(Limited {
                charge: 0,
                retry_after_ms: 30_000
            })
        );
        // The first call leaves the window at 60 s exactly.
        assert!(limiter.take(&reads, 59_999).is_err());
        assert_eq!(limiter.take(&reads, 60_000), Ok(()));
    }

    #[test]
    fn a_refused_call_takes_no_slot_anywhere() {
        let limiter = RateLimiter::default();
        let both = [charge("a:reads", 5), charge("a:tool:x", 1)];
        assert_eq!(limiter.take(&both, 0), Ok(()));
        assert_eq!(limiter.take(&both, 1).unwrap_err().charge, 1);
        // The tier bucket kept its room: four more other-tool reads fit.
        for at in 2..6 {
            assert_eq!(
                limiter.take(&[charge("a:reads", 5), charge("a:tool:y", 9)], at),
                Ok(())
            );
        }
        assert!(limiter.take(&[charge("a:reads", 5)], 7).is_err());
    }

    #[test]
    fn concurrent_callers_never_get_more_than_the_limit() {
        let limiter = std::sync::Arc::new(RateLimiter::default());
        let admitted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let limiter = std::sync::Arc::clone(&limiter);
                let admitted = std::sync::Arc::clone(&admitted);
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        if limiter.take(&[charge("k", 30)], 5).is_ok() {
                            admitted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(admitted.load(std::sync::atomic::Ordering::SeqCst), 30);
    }
}
