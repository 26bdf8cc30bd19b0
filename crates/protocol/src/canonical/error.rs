//! Why a text has no canonical form: [`CanonicalError`].

use super::{MAX_DEPTH, MAX_NUMBER_CHARS, quoted};

/// Why a text has no canonical form (spec "Signing a write (kd-mcp-v1)"; DECISIONS 11).
///
/// Every variant carries `field`, the top-level argument key whose value holds the problem
/// (see [`CanonicalError::field`]), so the hub can answer with a `validation` error naming it.
/// Byte offsets count from the start of the raw text, starting at 0.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CanonicalError {
    /// The text is not JSON as PostgreSQL's lexer reads it: a wrong or missing token, an invalid
    /// number (`01`, `.5`, `1.`, `NaN`), whitespace other than space, tab, LF and CR, trailing
    /// data, or an unterminated string.
    #[error("invalid JSON at byte {offset}: {reason}")]
    Syntax {
        /// Where the offending token starts.
        offset: usize,
        /// What was expected or found, in plain words.
        reason: &'static str,
        /// Top-level key whose value holds the problem.
        field: Option<String>,
    },
    /// A raw byte below 0x20 inside a string; JSON requires it to be escaped.
    #[error("invalid JSON at byte {offset}: character 0x{byte:02x} must be escaped")]
    ControlCharacter {
        /// Where the byte is.
        offset: usize,
        /// The byte, 0x00 to 0x1f.
        byte: u8,
        /// Top-level key whose value holds the problem.
        field: Option<String>,
    },
    /// A backslash not followed by one of `" \ / b f n r t` or by `u` and four hex digits.
    #[error("invalid JSON at byte {offset}: invalid escape {escape}")]
    InvalidEscape {
        /// Where the backslash is.
        offset: usize,
        /// The escape as written, for example `\x` or `\u12g4`.
        escape: String,
        /// Top-level key whose value holds the problem.
        field: Option<String>,
    },
    /// The escape `\u0000`: PostgreSQL text cannot hold U+0000 (SQLSTATE 22P05).
    #[error("\\u0000 is not allowed (byte {offset})")]
    NulCharacter {
        /// Where the escape starts.
        offset: usize,
        /// Top-level key whose value holds the problem.
        field: Option<String>,
    },
    /// A `\uD800`–`\uDFFF` escape that is not a high surrogate directly followed by an escaped
    /// low surrogate.
    #[error("lone surrogate at byte {offset}")]
    LoneSurrogate {
        /// Where the unpaired escape starts.
        offset: usize,
        /// Top-level key whose value holds the problem.
        field: Option<String>,
    },
    /// The same key twice in one object, compared after unescaping (`"\u0061"` and `"a"` are
    /// the same key). PostgreSQL would keep the last value; we refuse, so that no handler can act
    /// on a value the signature did not cover (DECISIONS 11).
    #[error("repeated key {}", quoted(key))]
    RepeatedKey {
        /// The repeated key, unescaped.
        key: String,
        /// Top-level key whose value holds the object, or the key itself at top level.
        field: Option<String>,
    },
    /// An object key serde_json reserves for itself (it starts with `$serde_json::private::`):
    /// with `arbitrary_precision` and `raw_value`, `{"$serde_json::private::Number": "1"}`
    /// reads as the number 1, so a handler would act on a value other than the one the
    /// signature covered. Refused like a repeated key (docs/decisions.md 496).
    #[error("reserved key {}", quoted(key))]
    ReservedKey {
        /// The key, unescaped.
        key: String,
        /// Top-level key whose value holds the object, or the key itself at top level.
        field: Option<String>,
    },
    /// A number whose PostgreSQL form would be longer than [`MAX_NUMBER_CHARS`] characters
    /// (DECISIONS 11). This also covers everything PostgreSQL refuses as out of range for
    /// nonzero numbers (`1e131072`, `1e-16384`).
    #[error("number prints longer than {MAX_NUMBER_CHARS} characters (byte {offset})")]
    NumberTooLong {
        /// Where the number starts.
        offset: usize,
        /// Top-level key whose value holds the problem.
        field: Option<String>,
    },
    /// A number with an exponent of magnitude 1073741823 (`INT_MAX / 2`) or more, which
    /// PostgreSQL refuses as "value overflows numeric format" even when the mantissa is zero.
    #[error("number is out of range (byte {offset})")]
    NumberOutOfRange {
        /// Where the number starts.
        offset: usize,
        /// Top-level key whose value holds the problem.
        field: Option<String>,
    },
    /// Objects and arrays nested deeper than [`MAX_DEPTH`].
    #[error("nesting deeper than {MAX_DEPTH} levels (byte {offset})")]
    TooDeep {
        /// Where the first container beyond the limit opens.
        offset: usize,
        /// Top-level key whose value holds the problem.
        field: Option<String>,
    },
}

/// Matches every variant of [`CanonicalError`] at once, binding its `field`.
macro_rules! with_field {
    ($error:expr, $field:ident => $body:expr) => {
        match $error {
            CanonicalError::Syntax { $field, .. }
            | CanonicalError::ControlCharacter { $field, .. }
            | CanonicalError::InvalidEscape { $field, .. }
            | CanonicalError::NulCharacter { $field, .. }
            | CanonicalError::LoneSurrogate { $field, .. }
            | CanonicalError::RepeatedKey { $field, .. }
            | CanonicalError::ReservedKey { $field, .. }
            | CanonicalError::NumberTooLong { $field, .. }
            | CanonicalError::NumberOutOfRange { $field, .. }
            | CanonicalError::TooDeep { $field, .. } => $body,
        }
    };
}

impl CanonicalError {
    /// The top-level argument key under which the problem sits: for `{"a":{"b":1,"b":2}}` it is
    /// `Some("a")`, for a repeated top-level key `"x"` it is `Some("x")`. `None` when the problem
    /// is not inside a top-level member's value (the top level is not an object, or the problem
    /// is in the object's own syntax or in a top-level key's text).
    pub fn field(&self) -> Option<&str> {
        with_field!(self, field => field.as_deref())
    }

    pub(super) fn under_field(mut self, key: &str) -> Self {
        with_field!(&mut self, field => {
            field.get_or_insert_with(|| key.to_owned());
        });
        self
    }
}
