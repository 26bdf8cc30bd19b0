//! Binding and reading values: [`Param`] and [`ToParam`] for placeholders, [`Params`] for a
//! statement's list, [`ValueRef`] and [`FromColumn`] for the columns of a [`super::Row`].

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
