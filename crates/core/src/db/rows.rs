//! Rows by name, on both backends: a store reads a row's columns by their names
//! ([`Row::get_by_name`], [`FromRow`]) and binds a struct's fields to an insert's columns by
//! name ([`ToRow`], [`Connection::insert_row`]). [`crate::db_row!`] implements both traits for
//! a struct from one list of its columns.

use super::{Connection, DbError, FromColumn, Param, ParamsFromIter, Result, Row, RowRef};

/// A struct read from one row by its columns' names (implemented by [`crate::db_row!`]).
pub trait FromRow: Sized {
    /// Reads `row`.
    ///
    /// # Errors
    /// [`DbError::Column`] naming a column the result lacks, or whose value does not fit its
    /// field.
    fn from_row(row: &Row<'_>) -> Result<Self>;
}

/// A struct whose fields bind to an insert's columns by name (implemented by
/// [`crate::db_row!`]; see [`Connection::insert_row`]).
pub trait ToRow {
    /// The value bound for `column`, or `None` when the struct has no field for it.
    fn value(&self, column: &str) -> Option<Param<'_>>;
}

impl Row<'_> {
    /// Column `name` (as the select list names it: the column, or its `AS` alias; ASCII case
    /// ignored) as `T`.
    ///
    /// # Errors
    /// [`DbError::Column`] naming the column when the result has none of that name, or when
    /// its value does not fit `T`.
    pub fn get_by_name<T: FromColumn>(&self, name: &str) -> Result<T> {
        self.by_name().read(name)
    }

    /// A reader of this row's columns by name that looks first where the previous column
    /// read ended: reading in select-list order costs one name comparison a column.
    pub fn by_name(&self) -> ByName<'_, '_> {
        ByName { row: self, next: 0 }
    }

    /// How many columns the row has.
    pub fn column_count(&self) -> usize {
        match &self.inner {
            RowRef::Sqlite(row) => row.as_ref().column_count(),
            RowRef::Postgres(row) => row.len(),
        }
    }

    /// The name of column `at` (0-based), if there is one.
    pub fn column_name(&self, at: usize) -> Option<&str> {
        match &self.inner {
            RowRef::Sqlite(row) => row.as_ref().column_name(at).ok(),
            RowRef::Postgres(row) => row.columns().get(at).map(|column| column.name()),
        }
    }
}

/// Reads a row's columns by name (see [`Row::by_name`]).
pub struct ByName<'a, 'r> {
    row: &'a Row<'r>,
    next: usize,
}

impl ByName<'_, '_> {
    /// Column `name` as `T`, as [`Row::get_by_name`] reads it.
    ///
    /// # Errors
    /// As [`Row::get_by_name`].
    pub fn read<T: FromColumn>(&mut self, name: &str) -> Result<T> {
        let named = |at: usize| {
            self.row
                .column_name(at)
                .is_some_and(|column| column.eq_ignore_ascii_case(name))
        };
        let at = if named(self.next) {
            self.next
        } else {
            (0..self.row.column_count())
                .find(|&at| named(at))
                .ok_or_else(|| DbError::Column {
                    name: name.to_owned(),
                    message: "the result has no column of this name".to_owned(),
                })?
        };
        self.next = at + 1;
        self.row.get::<T>(at).map_err(|error| match error {
            DbError::Conversion { message, .. } => DbError::Column {
                name: name.to_owned(),
                message,
            },
            other => other,
        })
    }
}

impl Connection {
    /// Runs `sql`, an `INSERT INTO t (c1, c2, …) VALUES (v1, v2, …)` with an optional tail,
    /// binding each placeholder `?N` among the values to `row`'s value for the column it
    /// stands in ([`ToRow::value`]): the SQL is written out as ever, and the binding follows
    /// its column list instead of a parameter list in placeholder order. A value that is not a
    /// placeholder (`'open'`, `0`) stays as written; a placeholder standing in several
    /// columns binds the first one's value; the tail (an `ON CONFLICT` clause) may use the
    /// placeholders of the values only. Returns how many rows it changed.
    ///
    /// # Errors
    /// [`DbError::Column`] naming a column whose placeholder `row` has no value for;
    /// [`DbError::Conversion`] when `sql` is not of that shape (a bug in the store); the
    /// database's error.
    pub fn insert_row<R: ToRow + ?Sized>(&self, sql: &str, row: &R) -> Result<usize> {
        let params = placeholder_columns(sql)
            .map_err(|message| DbError::Conversion {
                index: 0,
                message: format!("insert_row: {message}"),
            })?
            .into_iter()
            .map(|column| {
                row.value(column).ok_or_else(|| DbError::Column {
                    name: column.to_owned(),
                    message: "the row has no value for this column".to_owned(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        self.prepare_cached(sql)?.execute(ParamsFromIter(params))
    }
}

/// For each placeholder of an insert, from `?1` on, the column whose value it binds.
fn placeholder_columns(sql: &str) -> std::result::Result<Vec<&str>, String> {
    let (columns, after_columns) = parenthesized(sql, 0).ok_or("no column list")?;
    let values_at = after_columns
        + sql[after_columns..]
            .to_ascii_uppercase()
            .find("VALUES")
            .ok_or("no VALUES")?;
    let (values, _) = parenthesized(sql, values_at).ok_or("no value list")?;
    let (columns, values) = (split_top_level(columns), split_top_level(values));
    if columns.len() != values.len() {
        return Err(format!(
            "{} columns but {} values",
            columns.len(),
            values.len()
        ));
    }
    let mut slots: Vec<Option<&str>> = Vec::new();
    for (column, value) in columns.iter().zip(&values) {
        if let Some(number) = placeholder(value.trim()) {
            if slots.len() < number {
                slots.resize(number, None);
            }
            slots[number - 1].get_or_insert(column.trim());
        }
    }
    for number in placeholders_in(sql) {
        let slot = number.checked_sub(1).and_then(|at| slots.get(at));
        if slot.is_none_or(Option::is_none) {
            return Err(format!("?{number} stands in no column of the value list"));
        }
    }
    slots
        .into_iter()
        .enumerate()
        .map(|(at, slot)| slot.ok_or_else(|| format!("?{} is not used", at + 1)))
        .collect()
}

/// The text inside the first parenthesised group at or after byte `from`, and the byte after
/// its closing parenthesis.
fn parenthesized(sql: &str, from: usize) -> Option<(&str, usize)> {
    let open = from + sql[from..].find('(')?;
    let mut depth = 0_usize;
    for (at, byte) in outside_quotes(&sql[open..]) {
        match byte {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&sql[open + 1..open + at], open + at + 1));
                }
            }
            _ => {}
        }
    }
    None
}

/// `text` split at its commas outside parentheses and quotes.
fn split_top_level(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0_usize, 0);
    for (at, byte) in outside_quotes(text) {
        match byte {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                parts.push(&text[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// `N` when `value` is the placeholder `?N`.
fn placeholder(value: &str) -> Option<usize> {
    let digits = value.strip_prefix('?')?;
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&number| number > 0)
}

/// The number of every `?N` in `sql` outside quotes (a bare `?` counts as 0, which no column
/// binds).
fn placeholders_in(sql: &str) -> Vec<usize> {
    let bytes = sql.as_bytes();
    outside_quotes(sql)
        .filter(|&(_, byte)| byte == b'?')
        .map(|(at, _)| {
            let end = bytes[at + 1..]
                .iter()
                .position(|byte| !byte.is_ascii_digit())
                .map_or(bytes.len(), |length| at + 1 + length);
            sql[at + 1..end].parse().unwrap_or(0)
        })
        .collect()
}

/// The bytes of `text` with their offsets, leaving out those inside `'…'` and `"…"`.
fn outside_quotes(text: &str) -> impl Iterator<Item = (usize, u8)> + '_ {
    let mut quote = None;
    text.bytes()
        .enumerate()
        .filter(move |&(_, byte)| match quote {
            Some(open) => {
                if byte == open {
                    quote = None;
                }
                false
            }
            None if byte == b'\'' || byte == b'"' => {
                quote = Some(byte);
                false
            }
            None => true,
        })
}

/// Implements [`FromRow`](crate::db::FromRow) and/or [`ToRow`](crate::db::ToRow) for a struct
/// from one list of its columns: `column` where the field has the column's name, `column =>
/// field` where it has another. `FromRow` reads each field from the column of its name (in
/// any order of the select list); `ToRow` gives each field's value for its column.
///
/// ```
/// struct Receipt { receipt_id: String, commit: Option<String> }
/// kd_core::db_row! {
///     impl FromRow, ToRow for Receipt { receipt_id, commit_ref => commit }
/// }
/// ```
///
/// `impl FromRow for …` or `impl ToRow for …` implements one (a struct of borrowed fields,
/// `NewReport<'_>`, binds but cannot be read).
#[macro_export]
macro_rules! db_row {
    (impl FromRow, ToRow for $ty:ty { $($body:tt)* }) => {
        $crate::db_row!(@munch [FromRow ToRow] $ty; []; $($body)*,);
    };
    (impl FromRow for $ty:ty { $($body:tt)* }) => {
        $crate::db_row!(@munch [FromRow] $ty; []; $($body)*,);
    };
    (impl ToRow for $ty:ty { $($body:tt)* }) => {
        $crate::db_row!(@munch [ToRow] $ty; []; $($body)*,);
    };
    (@munch $traits:tt $ty:ty; [$($done:tt)*]; $column:ident => $field:ident, $($rest:tt)*) => {
        $crate::db_row!(@munch $traits $ty; [$($done)* ($column $field)]; $($rest)*);
    };
    (@munch $traits:tt $ty:ty; [$($done:tt)*]; $column:ident, $($rest:tt)*) => {
        $crate::db_row!(@munch $traits $ty; [$($done)* ($column $column)]; $($rest)*);
    };
    (@munch $traits:tt $ty:ty; $done:tt; , $($rest:tt)*) => {
        $crate::db_row!(@munch $traits $ty; $done; $($rest)*);
    };
    (@munch [$($trait:ident)*] $ty:ty; $pairs:tt;) => {
        $($crate::db_row!(@$trait $ty; $pairs);)*
    };
    (@FromRow $ty:ty; [$(($column:ident $field:ident))*]) => {
        impl $crate::db::FromRow for $ty {
            fn from_row(row: &$crate::db::Row<'_>) -> $crate::db::Result<Self> {
                let mut columns = row.by_name();
                Ok(Self {
                    $($field: columns.read(stringify!($column))?,)*
                })
            }
        }
    };
    (@ToRow $ty:ty; [$(($column:ident $field:ident))*]) => {
        impl $crate::db::ToRow for $ty {
            fn value(&self, column: &str) -> Option<$crate::db::Param<'_>> {
                match column {
                    $(stringify!($column) => Some($crate::db::ToParam::to_param(&self.$field)),)*
                    _ => None,
                }
            }
        }
    };
}

#[cfg(test)]
#[path = "rows_tests.rs"]
mod tests;
