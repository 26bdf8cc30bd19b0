//! The event log's read models: `events` and `log_heads` are written by `kd_core::eventlog`
//! and `kd_core::heads`; areas read the log only through these functions
//! (docs/architecture.md "Storage modules").

use kd_core::db::{Connection, DbError, FromRow, OptionalExtension, params};
use kd_core::eventlog::{EventRow, ROW_COLUMNS};

/// The time of the log's latest row, if it has one.
///
/// # Errors
/// When the store fails.
pub fn head_time(conn: &Connection) -> Result<Option<i64>, DbError> {
    conn.prepare_cached("SELECT created_ms FROM events ORDER BY seq DESC LIMIT 1")?
        .query_row([], |row| row.get(0))
        .optional()
}

/// The log's latest row: (seq, row hash).
///
/// # Errors
/// When the store fails.
pub fn head(conn: &Connection) -> Result<Option<(i64, String)>, DbError> {
    conn.prepare_cached("SELECT seq, row_hash FROM events ORDER BY seq DESC LIMIT 1")?
        .query_row([], |row| {
            Ok((row.get_by_name("seq")?, row.get_by_name("row_hash")?))
        })
        .optional()
}

/// The row hash of row `seq`, if there is one.
///
/// # Errors
/// When the store fails.
pub fn row_hash_at(conn: &Connection, seq: i64) -> Result<Option<String>, DbError> {
    conn.query_row("SELECT row_hash FROM events WHERE seq = ?1", [seq], |row| {
        row.get::<String>(0)
    })
    .optional()
}

/// The resource ids (`kd:res:…`) named as the subject of rows in `(after, upto]`.
///
/// # Errors
/// When the store fails.
pub fn resources_named_between(
    conn: &Connection,
    after: i64,
    upto: i64,
) -> Result<Vec<String>, DbError> {
    conn.prepare_cached(
        "SELECT DISTINCT subject FROM events WHERE seq > ?1 AND seq <= ?2 AND substr(subject, 1, 7) = 'kd:res:'",
    )?
    .query_map(params![after, upto], |row| row.get(0))?
    .collect()
}

/// Row 1 of the log: (kind, actor, payload text).
///
/// # Errors
/// When the store fails.
pub fn first_row(conn: &Connection) -> Result<Option<(String, String, String)>, DbError> {
    conn.prepare_cached("SELECT kind, actor, payload FROM events WHERE seq = 1")?
        .query_row([], |row| {
            let mut columns = row.by_name();
            Ok((
                columns.read("kind")?,
                columns.read("actor")?,
                columns.read("payload")?,
            ))
        })
        .optional()
}

/// The latest `limit` rows of `kinds` made by `cutoff_ms`, about or by `agent_id` when given,
/// newest first, without the forum's DEMO samples and without anything a person wrote. A
/// named read model: it reads the forum's `forum_posts` to leave those out.
///
/// # Errors
/// When the store fails.
pub fn public_rows(
    conn: &Connection,
    kinds: &[&str],
    cutoff_ms: i64,
    agent_id: Option<&str>,
    limit: i64,
) -> Result<Vec<EventRow>, DbError> {
    let kinds = kinds
        .iter()
        .map(|kind| format!("'{kind}'"))
        .collect::<Vec<_>>()
        .join(", ");
    conn.prepare_cached(&format!(
        "SELECT {ROW_COLUMNS} FROM events
         WHERE kind IN ({kinds}) AND created_ms <= ?1
           AND (CAST(?2 AS TEXT) IS NULL OR actor = ?2 OR subject = ?2)
           AND seq NOT IN (SELECT seq FROM forum_posts WHERE demo = 1)
           AND actor NOT LIKE 'person:%'
           AND seq NOT IN (SELECT seq FROM forum_posts WHERE person_id IS NOT NULL)
         ORDER BY seq DESC LIMIT CAST(?3 AS BIGINT)"
    ))?
    .query_map(params![cutoff_ms, agent_id, limit], EventRow::from_row)?
    .collect()
}
