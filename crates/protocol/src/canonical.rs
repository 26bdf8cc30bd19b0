//! The canonical arguments text of kd-mcp-v1: byte for byte what PostgreSQL 15 prints for
//! `'<arguments>'::jsonb::text` (spec "Signing a write (kd-mcp-v1)", "Canonical arguments text";
//! DECISIONS 11).
//!
//! PostgreSQL builds that text in `jsonb_out` (src/backend/utils/adt/jsonb.c): object keys
//! sorted by UTF-8 byte length, then bytewise (`lengthCompareJsonbPair`); `", "` between members
//! and elements and `": "` after keys; strings escaped by `escape_json`; numbers printed by
//! `numeric_out`, which keeps plain decimal literals as typed but expands exponents
//! (`1e2` → `100`) and drops the sign of zero. A top-level scalar prints as itself.
//!
//! [`canonical_text`] parses the raw request text with a small strict parser that follows
//! PostgreSQL's JSON lexer (src/common/jsonapi.c) rather than serde_json, for two reasons: the
//! printed numbers depend on the literal digits (`2.50` stays `2.50`), and repeated keys must be
//! seen to be refused, where a map-building parser would silently keep one value. It refuses,
//! beyond what PostgreSQL refuses, repeated keys, numbers that would print longer than
//! [`MAX_NUMBER_CHARS`] characters and nesting deeper than [`MAX_DEPTH`] (DECISIONS 11).

use std::borrow::Cow;

use sha2::{Digest, Sha256};

/// Deepest nesting of objects and arrays that [`canonical_text`] accepts: a top-level object is
/// depth 1, an array inside it depth 2, and so on. PostgreSQL itself only stops at its stack
/// limit; the cap keeps the recursive parser's stack small.
pub const MAX_DEPTH: usize = 64;

/// Longest printed number, in characters (sign and decimal point included), that
/// [`canonical_text`] accepts (DECISIONS 11). PostgreSQL prints the 8-byte input `1e131071` as a
/// 131,072-digit integer; the cap refuses such amplification before any digit is written.
pub const MAX_NUMBER_CHARS: usize = 100;

/// PostgreSQL's `set_var_from_str` refuses exponents whose magnitude reaches `INT_MAX / 2`
/// ("value overflows numeric format"), even for a zero mantissa such as `0e1073741823`, which
/// would otherwise print as a short `0`.
const PG_MAX_EXPONENT: u64 = (i32::MAX / 2) as u64;

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

impl CanonicalError {
    /// The top-level argument key under which the problem sits: for `{"a":{"b":1,"b":2}}` it is
    /// `Some("a")`, for a repeated top-level key `"x"` it is `Some("x")`. `None` when the problem
    /// is not inside a top-level member's value (the top level is not an object, or the problem
    /// is in the object's own syntax or in a top-level key's text).
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::Syntax { field, .. }
            | Self::ControlCharacter { field, .. }
            | Self::InvalidEscape { field, .. }
            | Self::NulCharacter { field, .. }
            | Self::LoneSurrogate { field, .. }
            | Self::RepeatedKey { field, .. }
            | Self::NumberTooLong { field, .. }
            | Self::NumberOutOfRange { field, .. }
            | Self::TooDeep { field, .. } => field.as_deref(),
        }
    }

    fn under_field(mut self, key: &str) -> Self {
        match &mut self {
            Self::Syntax { field, .. }
            | Self::ControlCharacter { field, .. }
            | Self::InvalidEscape { field, .. }
            | Self::NulCharacter { field, .. }
            | Self::LoneSurrogate { field, .. }
            | Self::RepeatedKey { field, .. }
            | Self::NumberTooLong { field, .. }
            | Self::NumberOutOfRange { field, .. }
            | Self::TooDeep { field, .. } => {
                field.get_or_insert_with(|| key.to_owned());
            }
        }
        self
    }
}

/// Prints `raw`, a JSON text, exactly as PostgreSQL 15 prints `raw::jsonb::text` (spec "Signing
/// a write (kd-mcp-v1)"; DECISIONS 11).
///
/// - Objects: keys sorted by UTF-8 byte length, then bytewise; `{"k": v, "k2": v2}`.
/// - Arrays: `[1, 2]`. No whitespace other than those single spaces.
/// - Strings: `\uXXXX` escapes decoded (surrogate pairs joined), then printed with `\"`, `\\`,
///   `\b`, `\f`, `\n`, `\r`, `\t` and `\u00xx` (lowercase) for the other bytes below 0x20;
///   everything else raw, including `/`, DEL, U+2028 and all non-ASCII.
/// - Numbers: as `numeric_out` prints them. Plain decimals keep their literal (`2.50`);
///   exponents are expanded with `max(0, fraction digits − exponent)` fractional digits
///   (`1e2` → `100`, `1.0e-7` → `0.00000010`, `100e-2` → `1.00`); leading zeros of the integer
///   part go; zero never has a sign (`-0.0` → `0.0`).
/// - `true`, `false`, `null` as is; a top-level scalar prints as itself.
///
/// # Errors
///
/// A [`CanonicalError`] for text PostgreSQL refuses (syntax, raw control characters, invalid
/// escapes, `\u0000`, lone surrogates, numbers out of numeric range) and for what kd-mcp-v1
/// refuses on top: repeated keys, numbers printing longer than [`MAX_NUMBER_CHARS`] characters
/// and nesting deeper than [`MAX_DEPTH`]. [`CanonicalError::field`] names the top-level key.
pub fn canonical_text(raw: &str) -> Result<String, CanonicalError> {
    let mut parser = Parser {
        text: raw,
        bytes: raw.as_bytes(),
        pos: 0,
    };
    parser.skip_whitespace();
    let root = parser.parse_value(0, true)?;
    parser.skip_whitespace();
    if parser.pos != raw.len() {
        return Err(parser.syntax("unexpected data after the value"));
    }
    let mut out = String::with_capacity(raw.len());
    write_node(&mut out, &root);
    Ok(out)
}

/// Prints an already-parsed value the way [`canonical_text`] prints its text, for documents the
/// hub or the client builds itself (spec "Signing a write (kd-mcp-v1)").
///
/// A `serde_json::Value` cannot hold repeated keys, and its numbers are printed by taking
/// serde_json's own text for them (`2.5`, `1e20`, `-0.0`) through PostgreSQL's number rule
/// (`1e20` → `100000000000000000000`, `-0.0` → `0.0`). Nothing is refused: a string holding
/// U+0000 prints as `\u0000` (PostgreSQL would refuse it as input), and numbers are not capped at
/// [`MAX_NUMBER_CHARS`] (every `f64` prints in at most a few hundred characters; the hub's
/// [`canonical_text`] refuses such arguments anyway). Only a number whose expansion would exceed
/// 1,000 characters, possible solely with serde_json's `arbitrary_precision` feature, keeps
/// serde_json's text.
pub fn canonical_value_text(value: &serde_json::Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// The lowercase hex SHA-256 of the canonical text's UTF-8 bytes: 64 characters, line 6 of the
/// kd-mcp-v1 text to sign (spec "Signing a write (kd-mcp-v1)").
pub fn arguments_hash(canonical: &str) -> String {
    hex::encode(Sha256::digest(canonical.as_bytes()))
}

/// A parsed value, already in canonical order, borrowing unescaped strings from the input.
enum Node<'a> {
    Literal(&'static str),
    Number(String),
    String(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn syntax(&self, reason: &'static str) -> CanonicalError {
        CanonicalError::Syntax {
            offset: self.pos,
            reason,
            field: None,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        // PostgreSQL's lexer knows exactly these four; form feed, NBSP or a BOM are errors.
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// Parses the value at `pos`; `depth` counts the containers around it and `root` says it is
    /// the whole document, whose object members are the "fields" errors name.
    fn parse_value(&mut self, depth: usize, root: bool) -> Result<Node<'a>, CanonicalError> {
        match self.peek() {
            None => Err(self.syntax("unexpected end of input")),
            Some(b'{') => self.parse_object(depth + 1, root),
            Some(b'[') => self.parse_array(depth + 1),
            Some(b'"') => self.parse_string().map(Node::String),
            Some(b'-' | b'0'..=b'9') => self.parse_number().map(Node::Number),
            Some(_) => {
                let start = self.pos;
                for literal in ["true", "false", "null"] {
                    if self.bytes[start..].starts_with(literal.as_bytes()) {
                        self.pos += literal.len();
                        // Like PostgreSQL, read `truex` as one bad token, not `true` then junk.
                        if self.peek().is_some_and(is_token_byte) {
                            self.pos = start;
                            return Err(self.syntax("invalid token"));
                        }
                        return Ok(Node::Literal(literal));
                    }
                }
                Err(self.syntax("expected a JSON value"))
            }
        }
    }

    fn enter(&self, depth: usize) -> Result<(), CanonicalError> {
        if depth > MAX_DEPTH {
            return Err(CanonicalError::TooDeep {
                offset: self.pos,
                field: None,
            });
        }
        Ok(())
    }

    fn parse_array(&mut self, depth: usize) -> Result<Node<'a>, CanonicalError> {
        self.enter(depth)?;
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Node::Array(items));
        }
        loop {
            self.skip_whitespace();
            items.push(self.parse_value(depth, false)?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Node::Array(items));
                }
                None => return Err(self.syntax("unexpected end of input")),
                Some(_) => return Err(self.syntax("expected ',' or ']'")),
            }
        }
    }

    fn parse_object(&mut self, depth: usize, root: bool) -> Result<Node<'a>, CanonicalError> {
        self.enter(depth)?;
        self.pos += 1;
        let mut members: Vec<(Cow<'a, str>, Node<'a>)> = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Node::Object(members));
        }
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'"') {
                return Err(self.syntax("expected a string key"));
            }
            let key = self.parse_string()?;
            self.skip_whitespace();
            if self.peek() != Some(b':') {
                return Err(self.syntax("expected ':'"));
            }
            self.pos += 1;
            self.skip_whitespace();
            let value = match self.parse_value(depth, false) {
                Ok(value) => value,
                Err(error) if root => return Err(error.under_field(&key)),
                Err(error) => return Err(error),
            };
            members.push((key, value));
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                None => return Err(self.syntax("unexpected end of input")),
                Some(_) => return Err(self.syntax("expected ',' or '}'")),
            }
        }
        // Stable, so of two equal keys the first stays first; either way we refuse them.
        members.sort_by(|(a, _), (b, _)| (a.len(), a.as_bytes()).cmp(&(b.len(), b.as_bytes())));
        if let Some(pair) = members.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            let key = pair[0].0.to_string();
            let field = root.then(|| key.clone());
            return Err(CanonicalError::RepeatedKey { key, field });
        }
        Ok(Node::Object(members))
    }

    /// Parses the string whose opening quote is at `pos` and returns it unescaped.
    fn parse_string(&mut self) -> Result<Cow<'a, str>, CanonicalError> {
        self.pos += 1;
        let start = self.pos;
        let mut owned: Option<String> = None;
        let mut run_start = start;
        loop {
            let Some(byte) = self.peek() else {
                return Err(self.syntax("unterminated string"));
            };
            match byte {
                b'"' => {
                    let end = self.pos;
                    self.pos += 1;
                    return Ok(match owned {
                        None => Cow::Borrowed(&self.text[start..end]),
                        Some(mut buffer) => {
                            buffer.push_str(&self.text[run_start..end]);
                            Cow::Owned(buffer)
                        }
                    });
                }
                b'\\' => {
                    let buffer = owned.get_or_insert_with(String::new);
                    buffer.push_str(&self.text[run_start..self.pos]);
                    let decoded = self.parse_escape()?;
                    buffer.push(decoded);
                    run_start = self.pos;
                }
                0x00..=0x1f => {
                    return Err(CanonicalError::ControlCharacter {
                        offset: self.pos,
                        byte,
                        field: None,
                    });
                }
                // Everything else, multi-byte UTF-8 included, is copied as a run. The special
                // bytes are ASCII, so `run_start` and `pos` always sit on character boundaries.
                _ => self.pos += 1,
            }
        }
    }

    /// Decodes the escape whose backslash is at `pos` and moves past it.
    fn parse_escape(&mut self) -> Result<char, CanonicalError> {
        let offset = self.pos;
        let Some(kind) = self.bytes.get(offset + 1).copied() else {
            self.pos += 1;
            return Err(self.syntax("unterminated string"));
        };
        let simple = match kind {
            b'"' => Some('"'),
            b'\\' => Some('\\'),
            b'/' => Some('/'),
            b'b' => Some('\u{8}'),
            b'f' => Some('\u{c}'),
            b'n' => Some('\n'),
            b'r' => Some('\r'),
            b't' => Some('\t'),
            _ => None,
        };
        if let Some(decoded) = simple {
            self.pos += 2;
            return Ok(decoded);
        }
        if kind != b'u' {
            let escape = self.text[offset..].chars().take(2).collect();
            return Err(CanonicalError::InvalidEscape {
                offset,
                escape,
                field: None,
            });
        }
        let unit = self.hex4(offset)?;
        self.pos = offset + 6;
        let lone = CanonicalError::LoneSurrogate {
            offset,
            field: None,
        };
        let code_point = match unit {
            0xd800..=0xdbff => {
                // A high surrogate must be followed at once by an escaped low surrogate;
                // anything else is an error in PostgreSQL too.
                if self.bytes.get(self.pos..self.pos + 2) != Some(b"\\u") {
                    return Err(lone);
                }
                let low = self.hex4(self.pos).map_err(|_| lone.clone())?;
                if !(0xdc00..=0xdfff).contains(&low) {
                    return Err(lone);
                }
                self.pos += 6;
                0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)
            }
            0xdc00..=0xdfff => return Err(lone),
            0 => {
                return Err(CanonicalError::NulCharacter {
                    offset,
                    field: None,
                });
            }
            other => other,
        };
        char::from_u32(code_point).ok_or(CanonicalError::LoneSurrogate {
            offset,
            field: None,
        })
    }

    /// Reads the four hex digits of the `\u` escape whose backslash is at `offset`.
    fn hex4(&self, offset: usize) -> Result<u32, CanonicalError> {
        let digits = self.bytes.get(offset + 2..offset + 6);
        let value = digits
            .filter(|d| d.iter().all(u8::is_ascii_hexdigit))
            .and_then(|d| {
                std::str::from_utf8(d)
                    .ok()
                    .and_then(|d| u32::from_str_radix(d, 16).ok())
            });
        value.ok_or_else(|| {
            // Show at most the six characters of the would-be escape.
            let escape = self.text[offset..].chars().take(6).collect();
            CanonicalError::InvalidEscape {
                offset,
                escape,
                field: None,
            }
        })
    }

    /// Lexes `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` at `pos` and prints it.
    fn parse_number(&mut self) -> Result<String, CanonicalError> {
        let offset = self.pos;
        let literal = lex_number(&self.bytes[offset..]).filter(|literal| {
            // `01`, `1.5.2`, `1-2` or `0x10` are one bad number, not a number then junk, so
            // the error points at (and names the field of) the number itself.
            let next = self.bytes.get(offset + literal.len).copied();
            !next.is_some_and(|b| is_token_byte(b) || matches!(b, b'.' | b'+' | b'-'))
        });
        let Some(literal) = literal else {
            return Err(self.syntax("invalid number"));
        };
        self.pos += literal.len;
        match print_number(&literal, MAX_NUMBER_CHARS) {
            Ok(printed) => Ok(printed),
            Err(NumberError::TooLong) => Err(CanonicalError::NumberTooLong {
                offset,
                field: None,
            }),
            Err(NumberError::OutOfRange) => Err(CanonicalError::NumberOutOfRange {
                offset,
                field: None,
            }),
        }
    }
}

/// Bytes PostgreSQL's lexer counts as part of a number or keyword token
/// (`JSON_ALPHANUMERIC_CHAR`): letters, digits, `_`, `$` and every non-ASCII byte.
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$' || byte >= 0x80
}

/// The parts of a JSON number literal, as slices of the input.
struct NumberLiteral<'a> {
    negative: bool,
    integer: &'a [u8],
    fraction: &'a [u8],
    exponent_negative: bool,
    exponent: &'a [u8],
    /// Bytes the literal occupies.
    len: usize,
}

/// Lexes the JSON number grammar at the start of `bytes`; `None` when it does not start with a
/// complete number. What follows the number is the caller's business (`01` lexes as `0`, and the
/// `1` after it is then a syntax error, as in PostgreSQL).
fn lex_number(bytes: &[u8]) -> Option<NumberLiteral<'_>> {
    let digits_from = |from: usize| {
        bytes[from.min(bytes.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let mut pos = 0;
    let negative = bytes.first() == Some(&b'-');
    if negative {
        pos += 1;
    }
    let integer_start = pos;
    match bytes.get(pos) {
        Some(b'0') => pos += 1,
        Some(b'1'..=b'9') => pos += digits_from(pos),
        _ => return None,
    }
    let integer = &bytes[integer_start..pos];
    let mut fraction: &[u8] = &[];
    if bytes.get(pos) == Some(&b'.') {
        let count = digits_from(pos + 1);
        if count == 0 {
            return None;
        }
        fraction = &bytes[pos + 1..pos + 1 + count];
        pos += 1 + count;
    }
    let mut exponent: &[u8] = &[];
    let mut exponent_negative = false;
    if let Some(b'e' | b'E') = bytes.get(pos) {
        pos += 1;
        match bytes.get(pos) {
            Some(b'+') => pos += 1,
            Some(b'-') => {
                exponent_negative = true;
                pos += 1;
            }
            _ => {}
        }
        let count = digits_from(pos);
        if count == 0 {
            return None;
        }
        exponent = &bytes[pos..pos + count];
        pos += count;
    }
    Some(NumberLiteral {
        negative,
        integer,
        fraction,
        exponent_negative,
        exponent,
        len: pos,
    })
}

enum NumberError {
    TooLong,
    OutOfRange,
}

/// Prints a number literal as PostgreSQL's `numeric_in` then `numeric_out` do, refusing results
/// longer than `max_chars` before building them.
///
/// With all digits `D` (integer and fraction, `f` of them fractional) and exponent `e`, the value
/// is `D × 10^(e − f)`, printed exactly with `dscale = max(0, f − e)` fractional digits, the
/// integer part without leading zeros, and a minus sign only when the value is not zero
/// (numeric.c `set_var_from_str`, `get_str_from_var`). No rounding can occur.
fn print_number(literal: &NumberLiteral<'_>, max_chars: usize) -> Result<String, NumberError> {
    let exponent_digits = {
        let first_nonzero = literal.exponent.iter().position(|&b| b != b'0');
        first_nonzero.map_or(&[][..], |i| &literal.exponent[i..])
    };
    // Ten digits hold every exponent below PG_MAX_EXPONENT; more are out of range anyway.
    if exponent_digits.len() > 10 {
        return Err(NumberError::OutOfRange);
    }
    let magnitude = exponent_digits
        .iter()
        .fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0'));
    if magnitude >= PG_MAX_EXPONENT {
        return Err(NumberError::OutOfRange);
    }
    // Both fit easily: the magnitude is below 2^30, the digit count below the input length.
    let exponent = if literal.exponent_negative {
        -(magnitude as i64)
    } else {
        magnitude as i64
    };
    let fraction_len = literal.fraction.len() as i64;
    // Digits after the decimal point in the exact value; negative means trailing zeros to add.
    let shift = fraction_len - exponent;
    let dscale = shift.max(0);

    let digits = || {
        literal
            .integer
            .iter()
            .chain(literal.fraction.iter())
            .copied()
    };
    let leading_zeros = digits().take_while(|&d| d == b'0').count();
    let significant = digits().count() - leading_zeros;
    let max_chars = max_chars as i64;

    if significant == 0 {
        let len = if dscale > 0 { 2 + dscale } else { 1 };
        if len > max_chars {
            return Err(NumberError::TooLong);
        }
        let mut out = String::from("0");
        if dscale > 0 {
            out.push('.');
            out.extend(std::iter::repeat_n('0', dscale as usize));
        }
        return Ok(out);
    }

    let significant_len = significant as i64;
    let sign_len = i64::from(literal.negative);
    let len = sign_len
        + if shift <= 0 {
            significant_len - shift
        } else if significant_len > shift {
            significant_len + 1
        } else {
            2 + shift
        };
    if len > max_chars {
        return Err(NumberError::TooLong);
    }

    // From here on every quantity is at most `max_chars`, so the casts cannot truncate.
    let mut out = String::with_capacity(len as usize);
    if literal.negative {
        out.push('-');
    }
    let sig = digits().skip(leading_zeros).map(char::from);
    if shift <= 0 {
        out.extend(sig);
        out.extend(std::iter::repeat_n('0', (-shift) as usize));
    } else if significant_len > shift {
        let integer_len = (significant_len - shift) as usize;
        let mut sig = sig;
        out.extend(sig.by_ref().take(integer_len));
        out.push('.');
        out.extend(sig);
    } else {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (shift - significant_len) as usize));
        out.extend(sig);
    }
    Ok(out)
}

fn write_node(out: &mut String, node: &Node<'_>) {
    match node {
        Node::Literal(text) => out.push_str(text),
        Node::Number(text) => out.push_str(text),
        Node::String(text) => write_escaped(out, text),
        Node::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_node(out, item);
            }
            out.push(']');
        }
        Node::Object(members) => {
            out.push('{');
            for (i, (key, value)) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_escaped(out, key);
                out.push_str(": ");
                write_node(out, value);
            }
            out.push('}');
        }
    }
}

fn write_value(out: &mut String, value: &serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => {
            let text = number.to_string();
            let printed = lex_number(text.as_bytes())
                .filter(|literal| literal.len == text.len())
                .and_then(|literal| print_number(&literal, 1_000).ok());
            out.push_str(printed.as_deref().unwrap_or(&text));
        }
        Value::String(text) => write_escaped(out, text),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<_> = map.iter().collect();
            members.sort_by(|(a, _), (b, _)| (a.len(), a.as_bytes()).cmp(&(b.len(), b.as_bytes())));
            out.push('{');
            for (i, (key, value)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_escaped(out, key);
                out.push_str(": ");
                write_value(out, value);
            }
            out.push('}');
        }
    }
}

/// Writes `text` as a quoted JSON string the way PostgreSQL's `escape_json` does: short escapes
/// for `\b \f \n \r \t \" \\`, lowercase `\u00xx` for the other bytes below 0x20, every other
/// byte raw.
fn write_escaped(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let mut run_start = 0;
    for (i, byte) in text.bytes().enumerate() {
        let short = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x00..=0x1f => "",
            _ => continue,
        };
        // Escaped bytes are ASCII, so `i` is a character boundary.
        out.push_str(&text[run_start..i]);
        if short.is_empty() {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xf)]));
        } else {
            out.push_str(short);
        }
        run_start = i + 1;
    }
    out.push_str(&text[run_start..]);
    out.push('"');
}

/// `text` as a JSON string literal, for error messages.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    write_escaped(&mut out, text);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(raw: &str) -> String {
        canonical_text(raw).unwrap_or_else(|e| panic!("{raw:?} refused: {e}"))
    }

    #[test]
    fn numbers_follow_numeric_out() {
        for (input, output) in [
            ("2.50", "2.50"),
            ("0.10", "0.10"),
            ("12.3400", "12.3400"),
            ("1e2", "100"),
            ("1E+2", "100"),
            ("1e02", "100"),
            ("1e-2", "0.01"),
            ("-0", "0"),
            ("-0.0", "0.0"),
            ("-0e-3", "0.000"),
            ("1.0e-7", "0.00000010"),
            ("1.50e1", "15.0"),
            ("100e-2", "1.00"),
            ("0.00001e5", "1"),
            ("0.05e1", "0.5"),
            ("-1.5e0", "-1.5"),
            ("-12e-1", "-1.2"),
            ("0e1073741822", "0"),
            ("1e0000000000000000000002", "100"),
        ] {
            assert_eq!(canon(input), output, "{input}");
        }
    }

    #[test]
    fn number_limits() {
        let ok = format!("1e{}", MAX_NUMBER_CHARS - 1);
        assert_eq!(canon(&ok).len(), MAX_NUMBER_CHARS);
        let too_long = format!("1e{MAX_NUMBER_CHARS}");
        assert!(matches!(
            canonical_text(&too_long),
            Err(CanonicalError::NumberTooLong { .. })
        ));
        let negative = format!("-1e{}", MAX_NUMBER_CHARS - 1);
        assert!(matches!(
            canonical_text(&negative),
            Err(CanonicalError::NumberTooLong { .. })
        ));
        assert!(matches!(
            canonical_text("1e131071"),
            Err(CanonicalError::NumberTooLong { .. })
        ));
        assert!(matches!(
            canonical_text("1e-16384"),
            Err(CanonicalError::NumberTooLong { .. })
        ));
        assert!(matches!(
            canonical_text("0e1073741823"),
            Err(CanonicalError::NumberOutOfRange { .. })
        ));
        assert!(matches!(
            canonical_text("0e-99999999999999999999999"),
            Err(CanonicalError::NumberOutOfRange { .. })
        ));
    }

    #[test]
    fn escapes_match_escape_json() {
        assert_eq!(
            canon(r#""\u0001\u001F\u000B\u0008\/\u007f""#),
            "\"\\u0001\\u001f\\u000b\\b/\u{7f}\""
        );
        assert_eq!(canon(r#""\ud83d\ude00\u00e9""#), "\"😀é\"");
    }
}
