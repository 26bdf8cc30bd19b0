//! [`Value`]: a column's value owned, so that a row read on one backend can be bound on the
//! other (`karmadue ledger copy` moves a hub from SQLite to PostgreSQL with it).

use super::{FromColumn, Param, ToParam, ValueRef};

/// A column's value, owned: any column reads into it, and it binds as the same value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// A 64-bit integer.
    Integer(i64),
    /// A double.
    Real(f64),
    /// UTF-8 text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl Value {
    /// The value as [`ValueRef`] shows it (borrowed).
    pub fn as_ref(&self) -> ValueRef<'_> {
        match self {
            Self::Null => ValueRef::Null,
            Self::Integer(number) => ValueRef::Integer(*number),
            Self::Real(number) => ValueRef::Real(*number),
            Self::Text(text) => ValueRef::Text(text),
            Self::Blob(bytes) => ValueRef::Blob(bytes),
        }
    }

    /// The kind of value, in words ("an integer", "text", …), for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Null => "NULL",
            Self::Integer(_) => "an integer",
            Self::Real(_) => "a real",
            Self::Text(_) => "text",
            Self::Blob(_) => "a blob",
        }
    }
}

impl FromColumn for Value {
    fn from_column(value: ValueRef<'_>) -> Result<Self, String> {
        Ok(match value {
            ValueRef::Null => Self::Null,
            ValueRef::Integer(number) => Self::Integer(number),
            ValueRef::Real(number) => Self::Real(number),
            ValueRef::Text(text) => Self::Text(text.to_owned()),
            ValueRef::Blob(bytes) => Self::Blob(bytes.to_vec()),
        })
    }
}

impl ToParam for Value {
    fn to_param(&self) -> Param<'_> {
        match self {
            Self::Null => Param::Null,
            Self::Integer(number) => Param::Int(*number),
            Self::Real(number) => Param::Real(*number),
            Self::Text(text) => Param::Text(text),
            Self::Blob(bytes) => Param::Blob(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::db::Connection;

    #[test]
    fn every_kind_of_column_reads_into_a_value_and_binds_back_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open_sqlite(dir.path().join("v.sqlite")).unwrap();
        conn.execute_batch("CREATE TABLE t (a ANY) STRICT").unwrap();
        let values = [
            Value::Null,
            Value::Integer(-7),
            Value::Real(2.5),
            Value::Text("héllo".into()),
            Value::Blob(vec![0, 159, 255]),
        ];
        for value in &values {
            conn.execute("INSERT INTO t (a) VALUES (?1)", [value])
                .unwrap();
        }
        let mut statement = conn
            .prepare_cached("SELECT a FROM t ORDER BY rowid")
            .unwrap();
        let read = statement
            .query_map([], |row| row.get::<Value>(0))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        assert_eq!(read, values);
        assert_eq!(read[3].as_ref(), ValueRef::Text("héllo"));
        assert_eq!(read[1].kind(), "an integer");
    }
}
