//! Schema migrations for both backends from one source (`crates/core/migrations/*.sql`,
//! translated by [`dialect::migration_text`]).
//!
//! Bookkeeping differs: SQLite keeps the applied version in `PRAGMA user_version` (as every
//! database made before PostgreSQL support does); PostgreSQL keeps one row per applied version
//! in `schema_migrations`, and migrates under an advisory lock so that hubs starting at once
//! apply each migration once. Both refuse a database whose version is newer than this binary
//! knows.

use super::{Backend, Connection, DbError, dialect};
use crate::store::StoreError;

/// The migrations, in order; a database at version N has applied the first N.
pub const MIGRATIONS: &[&str] = &[
    include_str!("../../migrations/0001_init.sql"),
    include_str!("../../migrations/0002_catalog.sql"),
    include_str!("../../migrations/0003_outcomes.sql"),
    include_str!("../../migrations/0004_people.sql"),
    include_str!("../../migrations/0005_standing.sql"),
    include_str!("../../migrations/0006_admission.sql"),
    include_str!("../../migrations/0007_help.sql"),
    include_str!("../../migrations/0008_read_indexes.sql"),
    include_str!("../../migrations/0009_names_in_memory.sql"),
    include_str!("../../migrations/0010_log_heads.sql"),
    include_str!("../../migrations/0011_forum.sql"),
    include_str!("../../migrations/0012_ronin.sql"),
    include_str!("../../migrations/0013_rate_slots.sql"),
    include_str!("../../migrations/0014_server_keys.sql"),
    include_str!("../../migrations/0015_upkeep.sql"),
    include_str!("../../migrations/0016_ronin_tasks.sql"),
    include_str!("../../migrations/0017_linkdbots.sql"),
    include_str!("../../migrations/0018_tlog.sql"),
    include_str!("../../migrations/0019_signup_links.sql"),
    include_str!("../../migrations/0020_tlog_hash_bytes.sql"),
    include_str!("../../migrations/0021_drop_signin_attempts.sql"),
    include_str!("../../migrations/0022_ronin_more.sql"),
    include_str!("../../migrations/0023_linkdbots_more.sql"),
    include_str!("../../migrations/0024_oauth.sql"),
    include_str!("../../migrations/0025_connector_agents.sql"),
    include_str!("../../migrations/0026_linkdbots_owner.sql"),
    include_str!("../../migrations/0027_linkdbots_categories.sql"),
    include_str!("../../migrations/0028_linkdbots_board_index.sql"),
    include_str!("../../migrations/0029_ronin_bench.sql"),
    include_str!("../../migrations/0030_ronin_outbound.sql"),
    include_str!("../../migrations/0031_oauth_cimd.sql"),
    include_str!("../../migrations/0032_market.sql"),
    include_str!("../../migrations/0033_jobs.sql"),
    include_str!("../../migrations/0034_signals.sql"),
];

/// The schema version this binary writes: the number of [`MIGRATIONS`].
pub fn latest() -> i64 {
    i64::try_from(MIGRATIONS.len()).unwrap_or(i64::MAX)
}

/// The version `conn`'s database is at (0 for an empty one).
///
/// # Errors
/// The database's error.
pub fn version(conn: &Connection) -> Result<i64, DbError> {
    match conn.backend() {
        Backend::Sqlite => conn.query_row("PRAGMA user_version", [], |row| row.get(0)),
        Backend::Postgres => {
            conn.execute_batch(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_ms BIGINT NOT NULL)",
            )?;
            conn.query_row(
                "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM schema_migrations",
                [],
                |row| row.get(0),
            )
        }
    }
}

/// Applies every migration `conn`'s database lacks.
///
/// # Errors
/// [`StoreError::Invalid`] when the database is newer than this binary; the database's
/// error when a migration fails (that migration is rolled back whole).
pub fn migrate(conn: &Connection, now_ms: i64) -> Result<(), StoreError> {
    if conn.backend() == Backend::Postgres {
        conn.query_row(
            "SELECT pg_advisory_lock(CAST(?1 AS BIGINT))",
            [dialect::MIGRATION_LOCK],
            |_| Ok(()),
        )?;
        let result = apply(conn, now_ms);
        let unlocked = conn.query_row(
            "SELECT pg_advisory_unlock(CAST(?1 AS BIGINT))",
            [dialect::MIGRATION_LOCK],
            |_| Ok(()),
        );
        result?;
        return Ok(unlocked?);
    }
    apply(conn, now_ms)
}

/// A PostgreSQL database must be UTF8 (kd-mcp-v1 hashes text as UTF-8, as jsonb prints it);
/// a collation other than C sorts text otherwise than SQLite does (listings ordered by id or
/// name), which the hub logs once.
fn check_postgres_database(conn: &Connection) -> Result<(), StoreError> {
    let (encoding, collation): (String, String) = conn.query_row(
        "SELECT pg_encoding_to_char(encoding), datcollate FROM pg_database WHERE datname = current_database()",
        [],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    if encoding != "UTF8" {
        return Err(StoreError::Invalid(format!(
            "the database's encoding is {encoding}; KarmaDue needs UTF8 (createdb --encoding=UTF8 --locale=C --template=template0)"
        )));
    }
    if !matches!(collation.as_str(), "C" | "POSIX" | "C.UTF-8" | "C.utf8") {
        tracing::warn!(
            %collation,
            "the database's collation is not C: text sorts differently than on SQLite (createdb --locale=C)"
        );
    }
    Ok(())
}

fn apply(conn: &Connection, now_ms: i64) -> Result<(), StoreError> {
    if conn.backend() == Backend::Postgres {
        check_postgres_database(conn)?;
    }
    let applied = version(conn)?;
    let known = latest();
    if applied > known {
        return Err(StoreError::Invalid(format!(
            "the database is at schema version {applied}, written by a newer karmadue; this one knows versions up to {known}"
        )));
    }
    for (index, source) in MIGRATIONS.iter().enumerate() {
        let number = i64::try_from(index + 1).unwrap_or(i64::MAX);
        if number <= applied {
            continue;
        }
        let sql = dialect::migration_text(source, conn.backend());
        match conn.backend() {
            Backend::Sqlite => {
                conn.execute_batch("BEGIN IMMEDIATE")?;
                // Another process may have migrated while this one waited for the lock.
                if version(conn)? >= number {
                    conn.execute_batch("COMMIT")?;
                    continue;
                }
                let done = conn
                    .execute_batch(&sql)
                    .and_then(|()| conn.execute_batch(&format!("PRAGMA user_version = {number}")))
                    .and_then(|()| conn.execute_batch("COMMIT"));
                if let Err(error) = done {
                    let _ = conn.execute_batch("ROLLBACK");
                    return Err(error.into());
                }
            }
            Backend::Postgres => {
                conn.execute_batch("BEGIN")?;
                let done = conn
                    .execute_batch(&sql)
                    .and_then(|()| {
                        conn.execute(
                            "INSERT INTO schema_migrations (version, applied_ms) VALUES (?1, ?2)",
                            [number, now_ms],
                        )
                    })
                    .and_then(|_| conn.execute_batch("COMMIT"));
                if let Err(error) = done {
                    let _ = conn.execute_batch("ROLLBACK");
                    return Err(error.into());
                }
            }
        }
    }
    Ok(())
}
