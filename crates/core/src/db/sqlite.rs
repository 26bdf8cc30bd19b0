//! The SQLite side of the seam: opening files with the store's settings, binding
//! [`Param`]s, reading `ValueRef`s.

use std::path::Path;

use rusqlite::types::{ToSqlOutput, ValueRef as SqliteValue};

use super::{Param, ValueRef};

/// Opens `path` (creating it) with the store's settings.
pub(super) fn open(path: &Path) -> rusqlite::Result<rusqlite::Connection> {
    let conn = rusqlite::Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // FULL: every committed batch is on disk before any of its callers hears "done".
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // Savepoint sub-journals stay in memory: each job's savepoint otherwise spills to a temp
    // file once it passes 64 KiB, costing the writer pwrites (measured by kd-bench).
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    Ok(conn)
}

/// Opens `path` read-only, without changing its journal mode.
pub(super) fn open_read_only(path: &Path) -> rusqlite::Result<rusqlite::Connection> {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    Ok(conn)
}

/// A bound parameter, as rusqlite takes it.
pub(super) struct Bound<'a>(Param<'a>);

impl rusqlite::ToSql for Bound<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self.0 {
            Param::Null => SqliteValue::Null,
            Param::Int(number) => SqliteValue::Integer(number),
            Param::Real(number) => SqliteValue::Real(number),
            Param::Text(text) => SqliteValue::Text(text.as_bytes()),
            Param::Blob(bytes) => SqliteValue::Blob(bytes),
            Param::Invalid(why) => {
                return Err(rusqlite::Error::ToSqlConversionFailure(why.into()));
            }
        }))
    }
}

/// `values` as rusqlite parameters.
pub(super) fn bind<'a>(
    values: &'a [Param<'a>],
) -> rusqlite::ParamsFromIter<impl Iterator<Item = Bound<'a>>> {
    rusqlite::params_from_iter(values.iter().map(|value| Bound(*value)))
}

/// A column value read from SQLite; text that is not UTF-8 reads as a blob (and fails a
/// `String` column with a clear message).
pub(super) fn value(value: SqliteValue<'_>) -> ValueRef<'_> {
    match value {
        SqliteValue::Null => ValueRef::Null,
        SqliteValue::Integer(number) => ValueRef::Integer(number),
        SqliteValue::Real(number) => ValueRef::Real(number),
        SqliteValue::Text(bytes) => {
            std::str::from_utf8(bytes).map_or(ValueRef::Blob(bytes), ValueRef::Text)
        }
        SqliteValue::Blob(bytes) => ValueRef::Blob(bytes),
    }
}
