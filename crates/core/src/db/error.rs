//! The seam's errors: [`DbError`] (either driver's failure, kept as the source), the
//! [`Result`] alias and [`OptionalExtension`] (no row as `None`).

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
    /// A column named in a by-name read or bind (`Row::get_by_name`, `FromRow`,
    /// `Connection::insert_row`) is missing, or its value does not fit.
    #[error("column {name}: {message}")]
    Column {
        /// The column's name.
        name: String,
        /// What is wrong.
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
