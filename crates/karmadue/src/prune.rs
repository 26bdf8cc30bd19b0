//! Pruning the working-state tables that would otherwise only grow (docs/decisions.md 172):
//! `nonces` (one row per signed request), `challenges` (one per `register_challenge`) and the
//! expired copies of client metadata documents in `oauth_clients` (one per document fetched;
//! docs/decisions.md 426).
//! Each write job that adds a row to one of them also deletes at most [`PER_JOB`] of its
//! expired rows, oldest first, in the same transaction: the table shrinks back to what is
//! still live without a background job or an unbounded delete inside the writer's batch.
//! The SQL (in `identity::store`) runs on both backends (a bounded `DELETE` through a subquery: SQLite builds
//! without `DELETE … LIMIT`).

use kd_core::db::{Connection, DbError};

/// Most expired rows one write job deletes from one table.
pub const PER_JOB: i64 = 8;

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
    crate::identity::store::prune_nonces(conn, now_ms - NONCE_KEEP_MS, PER_JOB)
}

/// Deletes at most [`PER_JOB`] registration challenges that expired by `now_ms` (used or
/// not: an unknown, used and expired challenge get the same answer); returns how many.
///
/// # Errors
/// The database's error.
pub fn expired_challenges(conn: &Connection, now_ms: i64) -> Result<usize, DbError> {
    crate::identity::store::prune_challenges(conn, now_ms, PER_JOB)
}

/// Deletes at most [`PER_JOB`] metadata-document clients whose copy expired before `now_ms`
/// and that no connection or code names (a stale copy is never used: it is fetched again
/// first); returns how many.
///
/// # Errors
/// The database's error.
pub fn expired_documents(conn: &Connection, now_ms: i64) -> Result<usize, DbError> {
    crate::connector::store::prune_documents(conn, now_ms, PER_JOB)
}
