//! Row-by-row comparison of a live projection table with its rebuilt copy.

use std::collections::BTreeMap;

use kd_core::db::{Connection, Value};

use super::{Projection, RebuildError};

/// One way a live table differs from what the log rebuilds.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// The table.
    pub table: &'static str,
    /// The row's key, its columns' values joined by `/`.
    pub key: String,
    /// The column that differs; None when the whole row is only on one side.
    pub column: Option<&'static str>,
    /// The live value (`(no row)` when the row is only rebuilt).
    pub live: String,
    /// The rebuilt value (`(no row)` when the row is only live).
    pub rebuilt: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let column = self.column.unwrap_or("(row)");
        write!(
            f,
            "{} [{}] {column}: live {} | rebuilt {}",
            self.table, self.key, self.live, self.rebuilt
        )
    }
}

/// The differences between `live` and `rebuilt` in `projection`'s table, by key.
///
/// # Errors
/// [`RebuildError::Db`] when a table cannot be read.
pub fn compare(
    live: &Connection,
    rebuilt: &Connection,
    projection: &Projection,
) -> Result<Vec<Difference>, RebuildError> {
    let live_rows = rows(live, projection)?;
    let mut rebuilt_rows = rows(rebuilt, projection)?;
    let mut differences = Vec::new();
    let missing = || "(no row)".to_owned();
    for (key, live_row) in live_rows {
        let Some(rebuilt_row) = rebuilt_rows.remove(&key) else {
            differences.push(Difference {
                table: projection.table,
                key,
                column: None,
                live: "(row)".into(),
                rebuilt: missing(),
            });
            continue;
        };
        for ((column, left), right) in projection.columns.iter().zip(&live_row).zip(&rebuilt_row) {
            if left != right {
                differences.push(Difference {
                    table: projection.table,
                    key: key.clone(),
                    column: Some(column),
                    live: shown(left),
                    rebuilt: shown(right),
                });
            }
        }
    }
    for key in rebuilt_rows.into_keys() {
        differences.push(Difference {
            table: projection.table,
            key,
            column: None,
            live: missing(),
            rebuilt: "(row)".into(),
        });
    }
    Ok(differences)
}

/// The table's rows by key (read into memory: keys compare the same on both backends).
fn rows(
    conn: &Connection,
    projection: &Projection,
) -> Result<BTreeMap<String, Vec<Value>>, RebuildError> {
    let sql = format!(
        "SELECT {} FROM {}",
        projection.columns.join(", "),
        projection.table
    );
    let width = projection.columns.len();
    let key_at: Vec<usize> = projection
        .key
        .iter()
        .filter_map(|key| projection.columns.iter().position(|column| column == key))
        .collect();
    let mut rows = BTreeMap::new();
    conn.prepare_cached(&sql)?.for_each([], |row| {
        let mut values = Vec::with_capacity(width);
        for index in 0..width {
            values.push(row.get::<Value>(index)?);
        }
        let key = key_at
            .iter()
            .map(|at| plain(&values[*at]))
            .collect::<Vec<_>>()
            .join("/");
        rows.insert(key, values);
        Ok(())
    })?;
    Ok(rows)
}

fn plain(value: &Value) -> String {
    match value {
        Value::Null => "NULL".into(),
        Value::Integer(number) => number.to_string(),
        Value::Real(number) => number.to_string(),
        Value::Text(text) => text.clone(),
        Value::Blob(bytes) => format!("{} bytes", bytes.len()),
    }
}

/// A value for the report: text quoted and cut at 120 characters.
fn shown(value: &Value) -> String {
    match value {
        Value::Text(text) if text.chars().count() > 120 => {
            format!("{:?}…", text.chars().take(120).collect::<String>())
        }
        Value::Text(text) => format!("{text:?}"),
        other => plain(other),
    }
}
