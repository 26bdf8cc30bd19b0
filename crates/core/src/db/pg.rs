//! The PostgreSQL side of the seam: a client with a prepared-statement cache, parameters
//! bound by the type the server inferred for each placeholder, and columns of any type the
//! schema uses read into [`ValueRef`]s (`numeric` included, so `SUM` and `AVG` need no cast).

use std::collections::HashMap;
use std::error::Error as StdError;

use bytes::BytesMut;
use postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};

use super::{DbError, Param, ValueRef, dialect};

type BoxError = Box<dyn StdError + Sync + Send>;

/// Most statements one connection keeps prepared; past it the cache starts again.
const CACHE_LIMIT: usize = 1024;

/// One PostgreSQL connection and the statements prepared on it.
pub(super) struct Client {
    client: Closing,
    cache: HashMap<String, postgres::Statement>,
    in_transaction: bool,
}

impl Client {
    /// Connects to `url` (no TLS: the server is on this machine or a private network;
    /// docs/decisions.md 150).
    pub(super) fn connect(url: &str) -> Result<Self, DbError> {
        let connect = || -> Result<postgres::Client, DbError> {
            let mut client = postgres::Client::connect(url, postgres::NoTls)?;
            client.batch_execute("SET TIME ZONE 'UTC'")?;
            Ok(client)
        };
        let client = super::off_runtime(connect)?;
        Ok(Self {
            client: Closing(Some(client)),
            cache: HashMap::new(),
            in_transaction: false,
        })
    }

    /// The prepared statement for `sql` (placeholders `?N` / `?` rewritten to `$N`).
    pub(super) fn prepare(&mut self, sql: &str) -> Result<postgres::Statement, DbError> {
        if let Some(statement) = self.cache.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self
            .client
            .get()
            .prepare(&dialect::postgres_placeholders(sql))?;
        if self.cache.len() >= CACHE_LIMIT {
            self.cache.clear();
        }
        self.cache.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    pub(super) fn execute(
        &mut self,
        statement: &postgres::Statement,
        values: &[Param<'_>],
    ) -> Result<u64, DbError> {
        Ok(self.client.get().execute(statement, &refs(values))?)
    }

    pub(super) fn query(
        &mut self,
        statement: &postgres::Statement,
        values: &[Param<'_>],
    ) -> Result<Vec<postgres::Row>, DbError> {
        Ok(self.client.get().query(statement, &refs(values))?)
    }

    pub(super) fn for_each(
        &mut self,
        statement: &postgres::Statement,
        values: &[Param<'_>],
        mut each: impl FnMut(&postgres::Row) -> Result<(), DbError>,
    ) -> Result<(), DbError> {
        use postgres::fallible_iterator::FallibleIterator;
        let mut rows = self.client.get().query_raw(statement, values.iter())?;
        while let Some(row) = rows.next()? {
            each(&row)?;
        }
        Ok(())
    }

    /// Runs `sql` with the simple query protocol, tracking whether a transaction is open.
    pub(super) fn batch_execute(&mut self, sql: &str) -> Result<(), DbError> {
        let verb = sql.trim_start().to_ascii_uppercase();
        let result = self.client.get().batch_execute(sql);
        if verb.starts_with("BEGIN") || verb.starts_with("START TRANSACTION") {
            self.in_transaction = result.is_ok();
        } else if verb.starts_with("COMMIT")
            || (verb.starts_with("ROLLBACK") && !verb.starts_with("ROLLBACK TO"))
        {
            self.in_transaction = false;
        }
        Ok(result?)
    }

    pub(super) fn is_idle(&self) -> bool {
        !self.in_transaction
    }

    pub(super) fn is_closed(&self) -> bool {
        self.client.is_closed()
    }
}

/// The driver's client, closed off the async threads: the sync driver blocks on a runtime of
/// its own when a connection closes, which tokio forbids on a thread that drives async tasks
/// (a store's last handle may well be dropped there).
struct Closing(Option<postgres::Client>);

impl Closing {
    fn get(&mut self) -> &mut postgres::Client {
        #[expect(clippy::expect_used, reason = "the client is taken only by drop")]
        self.0
            .as_mut()
            .expect("the client is present until dropped")
    }

    fn is_closed(&self) -> bool {
        self.0.as_ref().is_none_or(postgres::Client::is_closed)
    }
}

impl Drop for Closing {
    fn drop(&mut self) {
        if let Some(client) = self.0.take()
            && tokio::runtime::Handle::try_current().is_ok()
        {
            let _ = std::thread::Builder::new()
                .name("kd-pg-close".into())
                .spawn(move || drop(client));
        }
    }
}

fn refs<'a>(values: &'a [Param<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    values
        .iter()
        .map(|value| value as &(dyn ToSql + Sync))
        .collect()
}

impl ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match *self {
            Param::Null => Ok(IsNull::Yes),
            Param::Int(number) => int_to_sql(number, ty, out),
            Param::Real(number) => match *ty {
                Type::FLOAT4 => {
                    #[expect(clippy::cast_possible_truncation, reason = "the column is float4")]
                    let narrow = number as f32;
                    narrow.to_sql(ty, out)
                }
                _ => number.to_sql(ty, out),
            },
            Param::Text(text) => match *ty {
                Type::JSONB => {
                    out.extend_from_slice(&[1]);
                    out.extend_from_slice(text.as_bytes());
                    Ok(IsNull::No)
                }
                Type::JSON => {
                    out.extend_from_slice(text.as_bytes());
                    Ok(IsNull::No)
                }
                _ => text.to_sql(ty, out),
            },
            Param::Blob(bytes) => bytes.to_sql(ty, out),
            Param::Invalid(why) => Err(why.into()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn int_to_sql(number: i64, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
    match *ty {
        Type::INT2 => i16::try_from(number)?.to_sql(ty, out),
        Type::INT4 => i32::try_from(number)?.to_sql(ty, out),
        Type::BOOL => (number != 0).to_sql(ty, out),
        #[expect(
            clippy::cast_precision_loss,
            reason = "bound to a float column, as SQLite does"
        )]
        Type::FLOAT8 => (number as f64).to_sql(ty, out),
        Type::TEXT | Type::VARCHAR => number.to_string().to_sql(ty, out),
        _ => number.to_sql(ty, out),
    }
}

/// A column as PostgreSQL sent it, borrowed from the row.
pub(super) enum Value<'a> {
    Null,
    Integer(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
}

impl Value<'_> {
    pub(super) fn as_ref(&self) -> ValueRef<'_> {
        match *self {
            Value::Null => ValueRef::Null,
            Value::Integer(number) => ValueRef::Integer(number),
            Value::Real(number) => ValueRef::Real(number),
            Value::Text(text) => ValueRef::Text(text),
            Value::Blob(bytes) => ValueRef::Blob(bytes),
        }
    }
}

impl<'a> FromSql<'a> for Value<'a> {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(match *ty {
            Type::BOOL => Value::Integer(i64::from(bool::from_sql(ty, raw)?)),
            Type::INT2 => Value::Integer(i64::from(i16::from_sql(ty, raw)?)),
            Type::INT4 => Value::Integer(i64::from(i32::from_sql(ty, raw)?)),
            Type::INT8 => Value::Integer(i64::from_sql(ty, raw)?),
            Type::OID => Value::Integer(i64::from(u32::from_sql(ty, raw)?)),
            Type::FLOAT4 => Value::Real(f64::from(f32::from_sql(ty, raw)?)),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::NUMERIC => numeric(raw)?,
            Type::BYTEA => Value::Blob(raw),
            Type::JSONB => Value::Text(std::str::from_utf8(raw.get(1..).unwrap_or_default())?),
            _ => Value::Text(std::str::from_utf8(raw)?),
        })
    }

    fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
        Ok(Value::Null)
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// Decodes PostgreSQL's binary `numeric` (ndigits, weight, sign, dscale, then base-10000
/// digits): an integer when it has no fraction and fits `i64`, else a double.
fn numeric(raw: &[u8]) -> Result<Value<'static>, BoxError> {
    let word = |at: usize| -> Result<u16, BoxError> {
        let bytes = raw.get(at..at + 2).ok_or("short numeric")?;
        Ok(u16::from_be_bytes([bytes[0], bytes[1]]))
    };
    let digits = usize::from(word(0)?);
    #[expect(
        clippy::cast_possible_wrap,
        reason = "the weight is a signed 16-bit field"
    )]
    let weight = i32::from(word(2)? as i16);
    let sign = word(4)?;
    let scale = word(6)?;
    if sign == 0xC000 {
        return Ok(Value::Real(f64::NAN));
    }
    let mut integer: Option<i64> = Some(0);
    let mut real = 0.0_f64;
    for index in 0..digits {
        let digit = word(8 + 2 * index)?;
        let power = weight - i32::try_from(index)?;
        real += f64::from(digit) * 10_000_f64.powi(power);
        integer = match (integer, u32::try_from(power)) {
            (Some(sum), Ok(power)) => 10_000_i64
                .checked_pow(power)
                .and_then(|unit| unit.checked_mul(i64::from(digit)))
                .and_then(|part| sum.checked_add(part)),
            (_, Err(_)) if digit == 0 => integer,
            _ => None,
        };
    }
    let negative = sign == 0x4000;
    Ok(match integer {
        Some(number) if scale == 0 => Value::Integer(if negative { -number } else { number }),
        _ => Value::Real(if negative { -real } else { real }),
    })
}
