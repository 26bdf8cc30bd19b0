//! Pruning identity's working state (`crate::prune`): spent nonces and expired registration
//! challenges, at most [`PER_JOB`] rows a write job.

use kd_core::db::{Connection, DbError};

use crate::prune::PER_JOB;

/// How long a spent nonce is kept, in milliseconds. A request is accepted only within 300 s
/// of its timestamp, so a nonce seen at `t` can be replayed only until `t + 600 s` (its
/// timestamp may have been 300 s ahead); 15 minutes leaves room for clock slack between hub
/// processes.
pub const NONCE_KEEP_MS: i64 = 15 * 60_000;

/// Deletes at most [`PER_JOB`] nonces seen before `now_ms - NONCE_KEEP_MS`; returns how many.
///
/// # Errors
/// The database's error.
pub fn expired_nonces(conn: &Connection, now_ms: i64) -> Result<usize, DbError> {
    super::store::prune_nonces(conn, now_ms - NONCE_KEEP_MS, PER_JOB)
}

/// Deletes at most [`PER_JOB`] registration challenges that expired by `now_ms` (used or
/// not: an unknown, used and expired challenge get the same answer); returns how many.
///
/// # Errors
/// The database's error.
pub fn expired_challenges(conn: &Connection, now_ms: i64) -> Result<usize, DbError> {
    super::store::prune_challenges(conn, now_ms, PER_JOB)
}
