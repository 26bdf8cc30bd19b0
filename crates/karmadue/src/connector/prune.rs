//! Pruning the connector's working state (`crate::prune`): expired copies of client metadata
//! documents, at most [`PER_JOB`] rows a write job (docs/decisions.md 426).

use kd_core::db::{Connection, DbError};

use crate::prune::PER_JOB;

/// Deletes at most [`PER_JOB`] metadata-document clients whose copy expired before `now_ms`
/// and that no connection or code names (a stale copy is never used: it is fetched again
/// first); returns how many.
///
/// # Errors
/// The database's error.
pub fn expired_documents(conn: &Connection, now_ms: i64) -> Result<usize, DbError> {
    super::store::prune_documents(conn, now_ms, PER_JOB)
}
