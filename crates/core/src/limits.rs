//! Per-minute limits, one limiter for every service of the hub (KarmaDue's access tiers,
//! Ronin's write limits): a sliding log per bucket, the times of the calls admitted in the
//! last minute. A call is admitted only when every bucket it is charged to has room, and then
//! it takes its slots in all of them at once, so a limit holds exactly under concurrent
//! requests (a token bucket would let a full burst through at each edge of the minute).
//!
//! Where the log lives depends on the store: in this process's memory for a SQLite hub (one
//! process; a restart forgets the last minute), and in the database for a PostgreSQL hub
//! (`rate_slots`, unlogged), where several hub processes share one address and must share
//! its limits exactly. There each call's buckets are locked with transaction-scoped advisory
//! locks (in key order, so two calls never wait on each other in a circle), counted, and
//! charged in one statement, its own transaction (docs/decisions.md 152; its cost in
//! docs/performance.md, `cargo bench -p kd-core --bench limits`).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use crate::db::{Backend, Connection, OptionalExtension, params};
use crate::store::{Store, StoreError};

/// The window, in milliseconds.
pub const WINDOW_MS: i64 = 60_000;

/// Buckets kept before the first sweep drops the idle ones (in memory). After a sweep the next
/// one waits until the map has doubled, so sweeping costs O(1) per call amortised.
const SWEEP_AT: usize = 4096;

/// Calls between two sweeps of idle rows in the database.
const SHARED_SWEEP_EVERY: u64 = 1024;

/// One bucket a call is charged to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charge {
    /// The bucket, e.g. `agent:<id>:reads`, `ip:<addr>:tool:discover_resources`, `key:<pubkey>`.
    pub key: String,
    /// Slots the bucket allows per rolling minute.
    pub limit: u32,
    /// Slots this call takes (1 for a request; a Ronin batch takes one per event).
    pub cost: u32,
}

impl Charge {
    /// A charge of one slot against `key`, which allows `limit` a minute.
    pub fn one(key: impl Into<String>, limit: u32) -> Self {
        Self {
            key: key.into(),
            limit,
            cost: 1,
        }
    }
}

/// A refused call: which charge was full and when enough of its slots free up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limited {
    /// Index into the charges passed to [`Limiter::take`].
    pub charge: usize,
    /// Milliseconds until the bucket has room for the charge (at least 1).
    pub retry_after_ms: i64,
}

impl Limited {
    /// [`Limited::retry_after_ms`] in whole seconds, rounded up, at least 1 (`Retry-After`).
    pub fn retry_after_s(&self) -> u64 {
        u64::try_from(self.retry_after_ms)
            .unwrap_or(1)
            .div_ceil(1000)
            .max(1)
    }
}

/// The limiter a hub process shares between requests.
#[derive(Debug)]
pub struct Limiter {
    place: Place,
}

#[derive(Debug)]
enum Place {
    Memory(Mutex<Buckets>),
    Shared { store: Store, takes: Mutex<u64> },
}

#[derive(Debug, Default)]
struct Buckets {
    logs: HashMap<String, VecDeque<i64>>,
    sweep_at: usize,
}

impl Default for Limiter {
    fn default() -> Self {
        Self::in_memory()
    }
}

impl Limiter {
    /// Counts in this process's memory.
    pub fn in_memory() -> Self {
        Self {
            place: Place::Memory(Mutex::default()),
        }
    }

    /// Counts where `store`'s backend needs it: in memory for SQLite (one process), in the
    /// database for PostgreSQL (shared by every hub process on it).
    pub fn for_store(store: &Store) -> Self {
        match store.backend() {
            Backend::Sqlite => Self::in_memory(),
            Backend::Postgres => Self {
                place: Place::Shared {
                    store: store.clone(),
                    takes: Mutex::new(0),
                },
            },
        }
    }

    /// Whether the counts are shared with other processes (in the database).
    pub fn is_shared(&self) -> bool {
        matches!(self.place, Place::Shared { .. })
    }

    /// Admits a call at `now_ms` if every charge has room, taking its slots in each;
    /// otherwise takes nothing and says which was full.
    ///
    /// # Errors
    /// `Ok(Err(Limited))` for the first full bucket; `Err(StoreError)` when the shared counts
    /// cannot be read or written.
    pub async fn take(
        &self,
        charges: &[Charge],
        now_ms: i64,
    ) -> Result<Result<(), Limited>, StoreError> {
        match &self.place {
            Place::Memory(buckets) => Ok(take_in_memory(buckets, charges, now_ms)),
            Place::Shared { store, takes } => {
                let sweep = takes.lock().is_ok_and(|mut count| {
                    *count += 1;
                    *count % SHARED_SWEEP_EVERY == 0
                });
                let charges = charges.to_vec();
                // One statement (kd_rate_take), its own transaction.
                store
                    .autocommit(move |conn| take_shared(conn, &charges, now_ms, sweep))
                    .await
            }
        }
    }
}

/// Milliseconds until a bucket whose live slots are `times` (oldest first) has room for
/// `cost` more under `limit`, or `None` when it has room now.
fn wait_ms(times: &[i64], cost: u32, limit: u32, now_ms: i64) -> Option<i64> {
    let (live, cost, limit) = (times.len(), cost as usize, limit as usize);
    if live + cost <= limit {
        return None;
    }
    // Room comes back when the slots beyond the limit have left the window.
    let must_leave = live + cost - limit;
    let at = times.get(must_leave - 1).copied().unwrap_or(now_ms);
    Some((at + WINDOW_MS - now_ms).max(1))
}

fn take_in_memory(
    buckets: &Mutex<Buckets>,
    charges: &[Charge],
    now_ms: i64,
) -> Result<(), Limited> {
    let mut guard = buckets
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let state = &mut *guard;
    let since = now_ms - WINDOW_MS;
    for (index, charge) in charges.iter().enumerate() {
        let log = state.logs.get_mut(&charge.key);
        let times: &[i64] = match log {
            Some(log) => {
                while log.front().is_some_and(|at| *at <= since) {
                    log.pop_front();
                }
                log.make_contiguous()
            }
            None => &[],
        };
        if let Some(retry_after_ms) = wait_ms(times, charge.cost, charge.limit, now_ms) {
            return Err(Limited {
                charge: index,
                retry_after_ms,
            });
        }
    }
    for charge in charges {
        let log = state.logs.entry(charge.key.clone()).or_default();
        log.extend(std::iter::repeat_n(now_ms, charge.cost as usize));
    }
    if state.logs.len() >= state.sweep_at.max(SWEEP_AT) {
        state
            .logs
            .retain(|_, log| log.back().is_some_and(|at| *at > since));
        state.sweep_at = (state.logs.len() * 2).max(SWEEP_AT);
    }
    Ok(())
}

/// One call's charges in the database: `kd_rate_take` (migration 0013) locks the buckets in
/// key order, counts and charges them in one round trip.
fn take_shared(
    conn: &Connection,
    charges: &[Charge],
    now_ms: i64,
    sweep: bool,
) -> Result<Result<(), Limited>, StoreError> {
    let join = |part: &dyn Fn(&Charge) -> String, separator: &str| {
        charges.iter().map(part).collect::<Vec<_>>().join(separator)
    };
    let keys = join(&|charge| charge.key.replace('\n', " "), "\n");
    let limits = join(&|charge| charge.limit.to_string(), ",");
    let costs = join(&|charge| charge.cost.to_string(), ",");
    let refused: Option<(usize, i64)> = conn
        .query_row(
            "SELECT refused, retry_after_ms FROM kd_rate_take(?1, ?2, ?3, CAST(?4 AS BIGINT), CAST(?5 AS BIGINT))",
            params![keys, limits, costs, now_ms, WINDOW_MS],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?;
    if let Some((charge, retry_after_ms)) = refused {
        return Ok(Err(Limited {
            charge,
            retry_after_ms,
        }));
    }
    if sweep {
        conn.execute(
            "DELETE FROM rate_slots WHERE at_ms <= ?1",
            [now_ms - WINDOW_MS],
        )?;
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests;
