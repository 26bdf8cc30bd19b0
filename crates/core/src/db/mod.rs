//! The storage seam (DESIGN rule 7): one small connection facade over SQLite and PostgreSQL.
//!
//! Every SQL statement of the hub runs through [`Connection`]: `prepare_cached` →
//! [`Statement::query_row`] / [`Statement::query_map`] / [`Statement::execute`], with
//! parameters bound from [`ToParam`] values (`params![a, b]`, `[a]`, `[]`) and columns read
//! into [`FromColumn`] types ([`Row::get`]). The same statement text runs on both backends:
//! it is written in the portable subset of the two dialects with `?N` (or `?`) placeholders,
//! which the PostgreSQL side rewrites to `$N` once and caches as a prepared statement.
//! The few real differences (locking the chain head, the migration bookkeeping, triggers, a
//! JSON array lookup) live in [`dialect`].
//!
//! The driver crates (`rusqlite`, `postgres`) are named only inside this module; a lint test
//! (`crates/karmadue/tests/api/seam.rs`) fails the build when any other file names them.
//! Why these two drivers (not sqlx or diesel): docs/decisions.md 150.

use std::fmt;

pub mod dialect;
mod error;
pub mod migrate;
mod param;
mod pg;
mod rows;
mod sqlite;
pub mod testing;
mod value;

pub use error::{DbError, OptionalExtension, Result};
pub use param::{FromColumn, Param, Params, ParamsFromIter, ToParam, ValueRef, params_from_iter};
pub use rows::{ByName, FromRow, ToRow};
pub use value::Value;

pub use crate::params;

/// Which database a [`Connection`] speaks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// An embedded SQLite file (WAL mode): the default, one machine.
    Sqlite,
    /// A PostgreSQL server: several hub processes on one database.
    Postgres,
}

/// Where the store lives: a SQLite file or a PostgreSQL URL (`postgres://…` or
/// `postgresql://…`, as libpq takes it).
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// The SQLite database file.
    Sqlite(std::path::PathBuf),
    /// A PostgreSQL connection URL.
    Postgres(String),
}

impl Location {
    /// Reads a `--database-url`: `postgres://` / `postgresql://` URLs are PostgreSQL, a
    /// `sqlite:` prefix or a plain path is a SQLite file.
    pub fn parse(text: &str) -> Self {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Self::Postgres(text.to_owned())
        } else {
            let path = text
                .strip_prefix("sqlite://")
                .or_else(|| text.strip_prefix("sqlite:"))
                .unwrap_or(text);
            Self::Sqlite(path.into())
        }
    }

    /// The backend this location names.
    pub fn backend(&self) -> Backend {
        match self {
            Self::Sqlite(_) => Backend::Sqlite,
            Self::Postgres(_) => Backend::Postgres,
        }
    }
}

impl fmt::Debug for Location {
    /// Never prints a PostgreSQL password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sqlite(path) => write!(f, "sqlite:{}", path.display()),
            Self::Postgres(url) => write!(f, "{}", redact_url(url)),
        }
    }
}

/// `url` with any password replaced by `***`, for logs.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// `url` with its database name replaced by `database` (the path of a PostgreSQL URL).
pub fn postgres_url_with_database(url: &str, database: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let authority_end = base.find("://").map_or(0, |at| at + 3);
    let path_start = base[authority_end..]
        .find('/')
        .map_or(base.len(), |at| authority_end + at);
    let mut out = format!("{}/{database}", &base[..path_start]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

/// Creates database `name` (lowercase letters, digits and `_` only) on the PostgreSQL server
/// of `admin_url`, as a copy of `template` when given, and returns its URL. For tests,
/// benchmarks and `ledger copy`.
///
/// # Errors
/// [`DbError::Conversion`] for a name outside that alphabet; the server's error.
pub fn create_postgres_database(
    admin_url: &str,
    name: &str,
    template: Option<&str>,
) -> Result<String> {
    let plain = |text: &str| {
        !text.is_empty()
            && text
                .bytes()
                .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_')
    };
    if !plain(name) || !template.is_none_or(plain) {
        return Err(DbError::Conversion {
            index: 0,
            message: format!("not a plain database name: {name}"),
        });
    }
    let sql = match template {
        Some(template) => format!("CREATE DATABASE {name} TEMPLATE {template}"),
        None => format!("CREATE DATABASE {name}"),
    };
    off_runtime(|| {
        let admin = Connection::open(&Location::Postgres(admin_url.to_owned()))?;
        admin.execute_batch(&sql)
    })?;
    Ok(postgres_url_with_database(admin_url, name))
}

/// Drops database `name` on the server of `admin_url` (closing its other connections first).
///
/// # Errors
/// As [`create_postgres_database`].
pub fn drop_postgres_database(admin_url: &str, name: &str) -> Result<()> {
    if !name
        .bytes()
        .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_')
    {
        return Err(DbError::Conversion {
            index: 0,
            message: format!("not a plain database name: {name}"),
        });
    }
    off_runtime(|| {
        let admin = Connection::open(&Location::Postgres(admin_url.to_owned()))?;
        admin.execute_batch(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
    })
}

/// Runs `work` off the async threads when called from inside a tokio runtime: the
/// PostgreSQL driver blocks on a runtime of its own, which tokio forbids on a thread that
/// drives async tasks. For the rare calls that may come from there (opening a store inside
/// `block_on`, making a scratch database); queries run on the store's own threads.
pub fn off_runtime<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|scope| match scope.spawn(work).join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        })
    } else {
        work()
    }
}

/// One row of a result, read column by column with [`Row::get`].
pub struct Row<'r> {
    inner: RowRef<'r>,
}

enum RowRef<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    Postgres(&'r postgres::Row),
}

/// A column, by 0-based index or by name.
#[derive(Clone, Copy, Debug)]
pub enum Column<'a> {
    /// The 0-based position in the select list.
    Index(usize),
    /// The column's name (or alias).
    Name(&'a str),
}

/// What [`Row::get`] takes to name a column: a `usize` index or a `&str` name.
pub trait ColumnIndex {
    /// The column named.
    fn column(&self) -> Column<'_>;
}

impl ColumnIndex for usize {
    fn column(&self) -> Column<'_> {
        Column::Index(*self)
    }
}

impl ColumnIndex for &str {
    fn column(&self) -> Column<'_> {
        Column::Name(self)
    }
}

impl Row<'_> {
    /// Column `index` (0-based, or a name, as [`Row::get_by_name`] reads it) as `T`.
    ///
    /// # Errors
    /// [`DbError::Conversion`] when the value does not fit `T`; a driver error when there is
    /// no column `index`; by name, [`DbError::Column`].
    pub fn get<T: FromColumn>(&self, index: impl ColumnIndex) -> Result<T> {
        let at = match index.column() {
            Column::Index(at) => at,
            Column::Name(name) => return self.get_by_name(name),
        };
        let converted = match &self.inner {
            RowRef::Sqlite(row) => T::from_column(sqlite::value(row.get_ref(at)?)),
            RowRef::Postgres(row) => {
                let value: pg::Value<'_> = row.try_get(at)?;
                T::from_column(value.as_ref())
            }
        };
        converted.map_err(|message| DbError::Conversion { index: at, message })
    }
}

/// An open connection to either backend. Not shared between threads: the store hands each
/// closure a `&Connection` of its own (a pooled reader, or the writer's).
pub struct Connection {
    inner: Inner,
}

enum Inner {
    Sqlite(rusqlite::Connection),
    Postgres(Box<std::cell::RefCell<pg::Client>>),
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Connection({:?})", self.backend())
    }
}

impl Connection {
    /// Opens a connection to `location` with the store's settings (SQLite: WAL, synchronous
    /// FULL, foreign keys, a 10 s busy timeout; PostgreSQL: UTC, no TLS).
    ///
    /// # Errors
    /// The driver's error when the file or server cannot be reached.
    pub fn open(location: &Location) -> Result<Self> {
        let inner = match location {
            Location::Sqlite(path) => Inner::Sqlite(sqlite::open(path)?),
            Location::Postgres(url) => {
                Inner::Postgres(Box::new(std::cell::RefCell::new(pg::Client::connect(url)?)))
            }
        };
        Ok(Self { inner })
    }

    /// Opens (creating) the SQLite file at `path` with the store's settings.
    ///
    /// # Errors
    /// The driver's error.
    pub fn open_sqlite(path: impl AsRef<std::path::Path>) -> Result<Self> {
        Ok(Self {
            inner: Inner::Sqlite(sqlite::open(path.as_ref())?),
        })
    }

    /// Opens a SQLite file read-only (for inspecting a database another process owns).
    ///
    /// # Errors
    /// The driver's error.
    pub fn open_sqlite_read_only(path: &std::path::Path) -> Result<Self> {
        Ok(Self {
            inner: Inner::Sqlite(sqlite::open_read_only(path)?),
        })
    }

    /// The backend of this connection.
    pub fn backend(&self) -> Backend {
        match self.inner {
            Inner::Sqlite(_) => Backend::Sqlite,
            Inner::Postgres(_) => Backend::Postgres,
        }
    }

    /// A prepared statement for `sql`, kept in this connection's cache.
    ///
    /// # Errors
    /// The database's error when `sql` does not prepare.
    pub fn prepare_cached(&self, sql: &str) -> Result<Statement<'_>> {
        let inner = match &self.inner {
            Inner::Sqlite(conn) => StmtInner::Sqlite(conn.prepare_cached(sql)?),
            Inner::Postgres(client) => {
                let statement = client.borrow_mut().prepare(sql)?;
                StmtInner::Postgres { client, statement }
            }
        };
        Ok(Statement { inner })
    }

    /// Runs one statement and returns how many rows it changed.
    ///
    /// # Errors
    /// The database's error.
    pub fn execute<P: Params>(&self, sql: &str, params: P) -> Result<usize> {
        self.prepare_cached(sql)?.execute(params)
    }

    /// Runs one query and maps its first row.
    ///
    /// # Errors
    /// [`DbError::NoRows`] when there is none; the database's or `map`'s error.
    pub fn query_row<T, P, F>(&self, sql: &str, params: P, map: F) -> Result<T>
    where
        P: Params,
        F: FnOnce(&Row<'_>) -> Result<T>,
    {
        self.prepare_cached(sql)?.query_row(params, map)
    }

    /// Runs statements separated by `;`, without parameters (schema changes, `BEGIN`).
    ///
    /// # Errors
    /// The database's error.
    pub fn execute_batch(&self, sql: &str) -> Result<()> {
        match &self.inner {
            Inner::Sqlite(conn) => Ok(conn.execute_batch(sql)?),
            Inner::Postgres(client) => client.borrow_mut().batch_execute(sql),
        }
    }

    /// Whether the connection is outside any transaction.
    pub fn is_autocommit(&self) -> bool {
        match &self.inner {
            Inner::Sqlite(conn) => conn.is_autocommit(),
            Inner::Postgres(client) => client.borrow().is_idle(),
        }
    }

    /// Whether the connection can still be used (a PostgreSQL connection closes when its
    /// server goes away).
    pub fn is_usable(&self) -> bool {
        match &self.inner {
            Inner::Sqlite(_) => true,
            Inner::Postgres(client) => !client.borrow().is_closed(),
        }
    }
}

/// A prepared statement (see [`Connection::prepare_cached`]).
pub struct Statement<'c> {
    inner: StmtInner<'c>,
}

enum StmtInner<'c> {
    Sqlite(rusqlite::CachedStatement<'c>),
    Postgres {
        client: &'c std::cell::RefCell<pg::Client>,
        statement: postgres::Statement,
    },
}

/// The mapped rows of [`Statement::query_map`], in order; collect them into a
/// `Result<Vec<_>>`.
pub type MappedRows<'s, T> = Box<dyn Iterator<Item = Result<T>> + 's>;

impl Statement<'_> {
    /// Runs the statement and returns how many rows it changed.
    ///
    /// # Errors
    /// The database's error.
    pub fn execute<P: Params>(&mut self, params: P) -> Result<usize> {
        let values = params.to_params();
        match &mut self.inner {
            StmtInner::Sqlite(statement) => Ok(statement.execute(sqlite::bind(&values))?),
            StmtInner::Postgres { client, statement } => {
                let changed = client.borrow_mut().execute(statement, &values)?;
                Ok(usize::try_from(changed).unwrap_or(usize::MAX))
            }
        }
    }

    /// Runs the query and maps its first row.
    ///
    /// # Errors
    /// [`DbError::NoRows`] when there is none; the database's or `map`'s error.
    pub fn query_row<T, P, F>(&mut self, params: P, map: F) -> Result<T>
    where
        P: Params,
        F: FnOnce(&Row<'_>) -> Result<T>,
    {
        let values = params.to_params();
        match &mut self.inner {
            StmtInner::Sqlite(statement) => {
                let mut rows = statement.query(sqlite::bind(&values))?;
                match rows.next()? {
                    Some(row) => map(&Row {
                        inner: RowRef::Sqlite(row),
                    }),
                    None => Err(DbError::NoRows),
                }
            }
            StmtInner::Postgres { client, statement } => {
                let rows = client.borrow_mut().query(statement, &values)?;
                match rows.first() {
                    Some(row) => map(&Row {
                        inner: RowRef::Postgres(row),
                    }),
                    None => Err(DbError::NoRows),
                }
            }
        }
    }

    /// Runs the query and maps every row, in order.
    ///
    /// # Errors
    /// The database's error when the query fails; each row's mapping error in its item.
    pub fn query_map<'s, T, P, F>(&'s mut self, params: P, mut map: F) -> Result<MappedRows<'s, T>>
    where
        P: Params,
        F: FnMut(&Row<'_>) -> Result<T> + 's,
        T: 's,
    {
        let values = params.to_params();
        match &mut self.inner {
            StmtInner::Sqlite(statement) => {
                let mut rows = statement.query(sqlite::bind(&values))?;
                Ok(Box::new(std::iter::from_fn(move || match rows.next() {
                    Ok(Some(row)) => Some(map(&Row {
                        inner: RowRef::Sqlite(row),
                    })),
                    Ok(None) => None,
                    Err(error) => Some(Err(error.into())),
                })))
            }
            StmtInner::Postgres { client, statement } => {
                let rows = client.borrow_mut().query(statement, &values)?;
                Ok(Box::new(rows.into_iter().map(move |row| {
                    map(&Row {
                        inner: RowRef::Postgres(&row),
                    })
                })))
            }
        }
    }

    /// Runs the query and calls `each` on every row in order, streaming: a result of
    /// millions of rows is never held in memory at once. `each` must not use the same
    /// connection (on PostgreSQL the rows come from it while `each` runs).
    ///
    /// # Errors
    /// The database's error, or the first error `each` returns (which stops the walk).
    pub fn for_each<P, F>(&mut self, params: P, mut each: F) -> Result<()>
    where
        P: Params,
        F: FnMut(&Row<'_>) -> Result<()>,
    {
        let values = params.to_params();
        match &mut self.inner {
            StmtInner::Sqlite(statement) => {
                let mut rows = statement.query(sqlite::bind(&values))?;
                while let Some(row) = rows.next()? {
                    each(&Row {
                        inner: RowRef::Sqlite(row),
                    })?;
                }
                Ok(())
            }
            StmtInner::Postgres { client, statement } => {
                client.borrow_mut().for_each(statement, &values, |row| {
                    each(&Row {
                        inner: RowRef::Postgres(row),
                    })
                })
            }
        }
    }

    /// Whether the query returns at least one row.
    ///
    /// # Errors
    /// The database's error.
    pub fn exists<P: Params>(&mut self, params: P) -> Result<bool> {
        let values = params.to_params();
        match &mut self.inner {
            StmtInner::Sqlite(statement) => Ok(statement.exists(sqlite::bind(&values))?),
            StmtInner::Postgres { client, statement } => {
                Ok(!client.borrow_mut().query(statement, &values)?.is_empty())
            }
        }
    }
}

#[cfg(test)]
mod tests;
