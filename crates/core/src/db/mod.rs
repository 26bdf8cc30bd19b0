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
pub mod migrate;
mod pg;
mod sqlite;
pub mod testing;
mod value;

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

/// Database failures. Messages are for logs; callers present them as `internal`.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// SQLite refused or failed.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL refused or failed.
    #[error("postgres: {}", postgres_message(.0))]
    Postgres(#[from] postgres::Error),
    /// `query_row` found no row (see [`OptionalExtension::optional`]).
    #[error("the query returned no rows")]
    NoRows,
    /// A column could not be read as the type asked for, or a parameter could not be bound.
    #[error("column {index}: {message}")]
    Conversion {
        /// The 0-based column (or parameter) index.
        index: usize,
        /// What did not fit.
        message: String,
    },
}

/// A PostgreSQL error with the server's code and message (the driver's own text is only
/// "db error").
fn postgres_message(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{} ({}): {}", db.severity(), db.code().code(), db.message()),
        None => error.to_string(),
    }
}

impl DbError {
    /// A constraint (unique, primary key, check, not null) refused the statement.
    pub fn is_constraint_violation(&self) -> bool {
        match self {
            Self::Sqlite(rusqlite::Error::SqliteFailure(error, _)) => {
                error.code == rusqlite::ErrorCode::ConstraintViolation
            }
            Self::Postgres(error) => error
                .code()
                .is_some_and(|code| code.code().starts_with("23")),
            _ => false,
        }
    }

    /// The message the database raised, when it raised one (a trigger's text, say).
    pub fn database_message(&self) -> Option<String> {
        match self {
            Self::Sqlite(rusqlite::Error::SqliteFailure(_, message)) => message.clone(),
            Self::Postgres(error) => error.as_db_error().map(|db| db.message().to_owned()),
            _ => None,
        }
    }
}

/// Shorthand for results of this module.
pub type Result<T, E = DbError> = std::result::Result<T, E>;

/// `query_row(...).optional()`: no row is `Ok(None)` instead of [`DbError::NoRows`].
pub trait OptionalExtension<T> {
    /// Turns [`DbError::NoRows`] into `Ok(None)`.
    ///
    /// # Errors
    /// Every other error, unchanged.
    fn optional(self) -> Result<Option<T>>;
}

impl<T> OptionalExtension<T> for Result<T> {
    fn optional(self) -> Result<Option<T>> {
        match self {
            Ok(value) => Ok(Some(value)),
            Err(DbError::NoRows) => Ok(None),
            Err(error) => Err(error),
        }
    }
}

/// A value bound to a placeholder.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Param<'a> {
    /// SQL NULL.
    Null,
    /// A 64-bit integer (booleans bind as 0 / 1).
    Int(i64),
    /// A double.
    Real(f64),
    /// UTF-8 text.
    Text(&'a str),
    /// Bytes.
    Blob(&'a [u8]),
    /// A value that cannot be bound (an unsigned integer above `i64::MAX`).
    Invalid(&'static str),
}

/// A Rust value that binds to a placeholder.
pub trait ToParam {
    /// The value as bound.
    fn to_param(&self) -> Param<'_>;
}

macro_rules! int_param {
    ($($t:ty),*) => {$(
        impl ToParam for $t {
            fn to_param(&self) -> Param<'_> {
                i64::try_from(*self).map_or(Param::Invalid("integer out of range"), Param::Int)
            }
        }
    )*};
}
int_param!(i8, i16, i32, i64, u8, u16, u32, u64, usize, isize);

impl ToParam for bool {
    fn to_param(&self) -> Param<'_> {
        Param::Int(i64::from(*self))
    }
}
impl ToParam for f64 {
    fn to_param(&self) -> Param<'_> {
        Param::Real(*self)
    }
}
impl ToParam for f32 {
    fn to_param(&self) -> Param<'_> {
        Param::Real(f64::from(*self))
    }
}
impl ToParam for str {
    fn to_param(&self) -> Param<'_> {
        Param::Text(self)
    }
}
impl ToParam for String {
    fn to_param(&self) -> Param<'_> {
        Param::Text(self)
    }
}
impl ToParam for [u8] {
    fn to_param(&self) -> Param<'_> {
        Param::Blob(self)
    }
}
impl ToParam for Vec<u8> {
    fn to_param(&self) -> Param<'_> {
        Param::Blob(self)
    }
}
impl<T: ToParam + ?Sized> ToParam for &T {
    fn to_param(&self) -> Param<'_> {
        (**self).to_param()
    }
}
impl<T: ToParam> ToParam for Option<T> {
    fn to_param(&self) -> Param<'_> {
        self.as_ref().map_or(Param::Null, ToParam::to_param)
    }
}
impl ToParam for Param<'_> {
    fn to_param(&self) -> Param<'_> {
        *self
    }
}

/// A statement's parameters: `params![a, b]`, an array `[a, b]` of one type, `[]`, or a
/// slice of `&dyn ToParam`.
pub trait Params {
    /// The values, in placeholder order.
    fn to_params(&self) -> Vec<Param<'_>>;
}

impl Params for [&dyn ToParam; 0] {
    fn to_params(&self) -> Vec<Param<'_>> {
        Vec::new()
    }
}
impl Params for &[&dyn ToParam] {
    fn to_params(&self) -> Vec<Param<'_>> {
        self.iter().map(|param| param.to_param()).collect()
    }
}
macro_rules! array_params {
    ($($n:literal)*) => {$(
        impl<T: ToParam> Params for [T; $n] {
            fn to_params(&self) -> Vec<Param<'_>> {
                self.iter().map(ToParam::to_param).collect()
            }
        }
        impl<T: ToParam> Params for &[T; $n] {
            fn to_params(&self) -> Vec<Param<'_>> {
                self.iter().map(ToParam::to_param).collect()
            }
        }
    )*};
}
array_params!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);

/// Parameters from an iterator of values (a statement whose placeholder count varies).
pub struct ParamsFromIter<'a>(pub Vec<Param<'a>>);

impl Params for ParamsFromIter<'_> {
    fn to_params(&self) -> Vec<Param<'_>> {
        self.0.clone()
    }
}

/// Binds the values of `iter` in order.
pub fn params_from_iter<'a, I, T>(iter: I) -> ParamsFromIter<'a>
where
    I: IntoIterator<Item = &'a T>,
    T: ToParam + 'a + ?Sized,
{
    ParamsFromIter(iter.into_iter().map(ToParam::to_param).collect())
}

/// `params![a, b, c]`: a statement's parameters of mixed types, in placeholder order.
#[macro_export]
macro_rules! params {
    () => { &[] as &[&dyn $crate::db::ToParam] };
    ($($param:expr),+ $(,)?) => {
        &[$(&$param as &dyn $crate::db::ToParam),+] as &[&dyn $crate::db::ToParam]
    };
}

/// A column's value as read, borrowed from the row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueRef<'a> {
    /// SQL NULL.
    Null,
    /// An integer (PostgreSQL booleans read as 0 / 1).
    Integer(i64),
    /// A double (PostgreSQL `numeric` with a fraction reads as one too).
    Real(f64),
    /// UTF-8 text.
    Text(&'a str),
    /// Bytes.
    Blob(&'a [u8]),
}

/// A Rust type a column reads into.
pub trait FromColumn: Sized {
    /// Converts the column's value.
    ///
    /// # Errors
    /// A message when the value does not fit the type.
    fn from_column(value: ValueRef<'_>) -> std::result::Result<Self, String>;
}

fn mismatch(want: &str, value: ValueRef<'_>) -> String {
    let got = match value {
        ValueRef::Null => "NULL",
        ValueRef::Integer(_) => "an integer",
        ValueRef::Real(_) => "a real",
        ValueRef::Text(_) => "text",
        ValueRef::Blob(_) => "a blob",
    };
    format!("expected {want}, found {got}")
}

macro_rules! int_column {
    ($($t:ty),*) => {$(
        impl FromColumn for $t {
            fn from_column(value: ValueRef<'_>) -> std::result::Result<Self, String> {
                match value {
                    ValueRef::Integer(number) => <$t>::try_from(number)
                        .map_err(|_| format!("{number} is out of range for {}", stringify!($t))),
                    other => Err(mismatch("an integer", other)),
                }
            }
        }
    )*};
}
int_column!(i8, i16, i32, i64, u8, u16, u32, u64, usize, isize);

impl FromColumn for bool {
    fn from_column(value: ValueRef<'_>) -> std::result::Result<Self, String> {
        match value {
            ValueRef::Integer(number) => Ok(number != 0),
            other => Err(mismatch("a boolean", other)),
        }
    }
}
impl FromColumn for f64 {
    fn from_column(value: ValueRef<'_>) -> std::result::Result<Self, String> {
        match value {
            ValueRef::Real(number) => Ok(number),
            #[expect(
                clippy::cast_precision_loss,
                reason = "as SQLite reads an INTEGER as REAL"
            )]
            ValueRef::Integer(number) => Ok(number as f64),
            other => Err(mismatch("a real", other)),
        }
    }
}
impl FromColumn for String {
    fn from_column(value: ValueRef<'_>) -> std::result::Result<Self, String> {
        match value {
            ValueRef::Text(text) => Ok(text.to_owned()),
            other => Err(mismatch("text", other)),
        }
    }
}
impl FromColumn for Vec<u8> {
    fn from_column(value: ValueRef<'_>) -> std::result::Result<Self, String> {
        match value {
            ValueRef::Blob(bytes) => Ok(bytes.to_vec()),
            ValueRef::Text(text) => Ok(text.as_bytes().to_vec()),
            other => Err(mismatch("a blob", other)),
        }
    }
}
impl<T: FromColumn> FromColumn for Option<T> {
    fn from_column(value: ValueRef<'_>) -> std::result::Result<Self, String> {
        match value {
            ValueRef::Null => Ok(None),
            other => T::from_column(other).map(Some),
        }
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
    /// Column `index` (0-based, or a name) as `T`.
    ///
    /// # Errors
    /// [`DbError::Conversion`] when the value does not fit `T`; a driver error when the
    /// column does not exist.
    pub fn get<T: FromColumn>(&self, index: impl ColumnIndex) -> Result<T> {
        let column = index.column();
        let converted = match (&self.inner, column) {
            (RowRef::Sqlite(row), Column::Index(at)) => {
                T::from_column(sqlite::value(row.get_ref(at)?))
            }
            (RowRef::Sqlite(row), Column::Name(name)) => {
                T::from_column(sqlite::value(row.get_ref(name)?))
            }
            (RowRef::Postgres(row), Column::Index(at)) => {
                let value: pg::Value<'_> = row.try_get(at)?;
                T::from_column(value.as_ref())
            }
            (RowRef::Postgres(row), Column::Name(name)) => {
                let value: pg::Value<'_> = row.try_get(name)?;
                T::from_column(value.as_ref())
            }
        };
        converted.map_err(|message| DbError::Conversion {
            index: match column {
                Column::Index(at) => at,
                Column::Name(_) => usize::MAX,
            },
            message: match column {
                Column::Index(_) => message,
                Column::Name(name) => format!("{name}: {message}"),
            },
        })
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
