//! The few places where SQLite and PostgreSQL differ, in one file. Everything else the hub
//! runs is written once, in the subset both understand (`ON CONFLICT … DO NOTHING / DO UPDATE`,
//! `RETURNING`, `CAST(? AS BIGINT)`, `COALESCE`, …).

use super::{Backend, Connection, Result};

/// Rewrites `?N` and bare `?` placeholders to PostgreSQL's `$N`, leaving string literals,
/// quoted identifiers and comments alone. A bare `?` takes the number after the highest seen so
/// far, as SQLite numbers them.
pub fn postgres_placeholders(sql: &str) -> String {
    let bytes = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut highest = 0_u32;
    let mut index = 0;
    let mut copied = 0;
    while index < bytes.len() {
        match bytes[index] {
            quote @ (b'\'' | b'"') => {
                index += 1;
                while index < bytes.len() && bytes[index] != quote {
                    index += 1;
                }
                index += 1;
            }
            b'-' if bytes.get(index + 1) == Some(&b'-') => {
                while index < bytes.len() && bytes[index] != b'\n' {
                    index += 1;
                }
            }
            b'?' => {
                out.push_str(&sql[copied..index]);
                let start = index + 1;
                let mut end = start;
                while end < bytes.len() && bytes[end].is_ascii_digit() {
                    end += 1;
                }
                let number = sql[start..end].parse::<u32>().unwrap_or(highest + 1);
                highest = highest.max(number);
                out.push('$');
                out.push_str(&number.to_string());
                index = end;
                copied = end;
            }
            _ => index += 1,
        }
    }
    out.push_str(&sql[copied.min(sql.len())..]);
    out
}

/// A migration's text as `backend` runs it. The source is written for SQLite; blocks between
/// `-- @sqlite` and `-- @end` run only there, blocks between `-- @postgres` and `-- @end` only
/// on PostgreSQL, where the rest is translated: `INTEGER` → `BIGINT`, `REAL` → `DOUBLE
/// PRECISION`, `BLOB` → `BYTEA`, and the table options `STRICT` / `WITHOUT ROWID` dropped
/// (PostgreSQL's columns are typed strictly already, and every table is heap-organised).
pub fn migration_text(source: &str, backend: Backend) -> String {
    let mut kept = String::with_capacity(source.len());
    let mut block: Option<Backend> = None;
    for line in source.lines() {
        match line.trim() {
            "-- @sqlite" => block = Some(Backend::Sqlite),
            "-- @postgres" => block = Some(Backend::Postgres),
            "-- @end" => block = None,
            _ if block.is_none() || block == Some(backend) => {
                kept.push_str(line);
                kept.push('\n');
            }
            _ => {}
        }
    }
    match backend {
        Backend::Sqlite => kept,
        Backend::Postgres => postgres_schema(&kept),
    }
}

fn postgres_schema(sql: &str) -> String {
    let mut text = sql.to_owned();
    for (pattern, replacement) in [
        (r"\)\s*STRICT\s*,\s*WITHOUT\s+ROWID\s*;", ");"),
        (r"\)\s*WITHOUT\s+ROWID\s*,\s*STRICT\s*;", ");"),
        (r"\)\s*STRICT\s*;", ");"),
        (r"\)\s*WITHOUT\s+ROWID\s*;", ");"),
        (r"\bINTEGER\b", "BIGINT"),
        (r"\bREAL\b", "DOUBLE PRECISION"),
        (r"\bBLOB\b", "BYTEA"),
    ] {
        if let Ok(regex) = regex::Regex::new(pattern) {
            text = regex.replace_all(&text, replacement).into_owned();
        }
    }
    text
}

/// Begins the writer's transaction and takes the chain head: SQLite's `BEGIN IMMEDIATE` takes
/// the file's write lock; PostgreSQL's transaction takes an advisory lock that every hub
/// process on the database waits for, so one batch at a time appends and the chain stays one
/// linear chain (the lock ends with the transaction).
///
/// # Errors
/// The database's error.
pub fn begin_write(conn: &Connection) -> Result<()> {
    match conn.backend() {
        Backend::Sqlite => conn.execute_batch("BEGIN IMMEDIATE"),
        Backend::Postgres => {
            conn.execute_batch("BEGIN")?;
            conn.query_row(
                "SELECT pg_advisory_xact_lock(CAST(?1 AS BIGINT))",
                [HEAD_LOCK],
                |_| Ok(()),
            )
        }
    }
}

/// Begins a read transaction: one snapshot for every query of a `Store::read` closure.
///
/// # Errors
/// The database's error.
pub fn begin_read(conn: &Connection) -> Result<()> {
    match conn.backend() {
        Backend::Sqlite => conn.execute_batch("BEGIN DEFERRED"),
        Backend::Postgres => conn.execute_batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"),
    }
}

/// Ends a read transaction (nothing to keep: SQLite commits, PostgreSQL rolls back, which
/// also clears a transaction an error aborted).
///
/// # Errors
/// The database's error.
pub fn end_read(conn: &Connection) -> Result<()> {
    match conn.backend() {
        Backend::Sqlite => conn.execute_batch("COMMIT"),
        Backend::Postgres => conn.execute_batch("ROLLBACK"),
    }
}

/// The advisory lock key of the chain head (an arbitrary constant: "kd-head" in ASCII).
pub const HEAD_LOCK: i64 = 0x006b_642d_6865_6164;

/// The advisory lock key migrations run under, so hubs starting at once migrate once.
pub const MIGRATION_LOCK: i64 = 0x006b_642d_6d69_6772;

/// Whether table `name` exists (a database made before it was added has none).
///
/// # Errors
/// The database's error.
pub fn table_exists(conn: &Connection, name: &str) -> Result<bool> {
    let sql = match conn.backend() {
        Backend::Sqlite => {
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)"
        }
        Backend::Postgres => {
            "SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?1)"
        }
    };
    conn.query_row(sql, [name], |row| row.get(0))
}

/// A condition that a JSON array of strings stored as text in `column` holds the value of
/// placeholder `param` (`?1`, …).
pub fn json_array_contains(backend: Backend, column: &str, param: &str) -> String {
    match backend {
        Backend::Sqlite => {
            format!("EXISTS (SELECT 1 FROM json_each({column}) p WHERE p.value = {param})")
        }
        Backend::Postgres => format!(
            "EXISTS (SELECT 1 FROM jsonb_array_elements_text(CAST({column} AS jsonb)) p WHERE p = {param})"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_rewritten_outside_literals() {
        assert_eq!(
            postgres_placeholders("SELECT a FROM t WHERE b = ?1 AND c = '?2' AND d = ?2 -- ?3\n"),
            "SELECT a FROM t WHERE b = $1 AND c = '?2' AND d = $2 -- ?3\n"
        );
        assert_eq!(
            postgres_placeholders("VALUES (?, ?, ?)"),
            "VALUES ($1, $2, $3)"
        );
        assert_eq!(postgres_placeholders("x = ?2 OR y = ?"), "x = $2 OR y = $3");
        assert_eq!(postgres_placeholders("\"a?\" = ?1"), "\"a?\" = $1");
    }

    #[test]
    fn migrations_translate_types_options_and_blocks() {
        let source = "CREATE TABLE t (a INTEGER PRIMARY KEY, b REAL, c BLOB) STRICT, WITHOUT ROWID;\n-- @sqlite\nCREATE TRIGGER x;\n-- @end\n-- @postgres\nCREATE FUNCTION y;\n-- @end\nCREATE TABLE u (v TEXT) STRICT;\n";
        let pg = migration_text(source, Backend::Postgres);
        assert_eq!(
            pg,
            "CREATE TABLE t (a BIGINT PRIMARY KEY, b DOUBLE PRECISION, c BYTEA);\nCREATE FUNCTION y;\nCREATE TABLE u (v TEXT);\n"
        );
        let sqlite = migration_text(source, Backend::Sqlite);
        assert_eq!(
            sqlite,
            "CREATE TABLE t (a INTEGER PRIMARY KEY, b REAL, c BLOB) STRICT, WITHOUT ROWID;\nCREATE TRIGGER x;\nCREATE TABLE u (v TEXT) STRICT;\n"
        );
    }
}
