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

mod error;
mod number;

pub use error::CanonicalError;

use number::{NumberError, is_token_byte, lex_number, print_number};

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

/// The prefix of the object keys serde_json reserves for itself (`$serde_json::private::Number`,
/// `$serde_json::private::RawValue`): refused as [`CanonicalError::ReservedKey`] at any depth.
pub const RESERVED_KEY_PREFIX: &str = "$serde_json::private::";

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
/// refuses on top: repeated keys, keys serde_json reserves ([`RESERVED_KEY_PREFIX`]), numbers
/// printing longer than [`MAX_NUMBER_CHARS`] characters and nesting deeper than [`MAX_DEPTH`]. [`CanonicalError::field`] names the top-level key.
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
        if let Some((key, _)) = members
            .iter()
            .find(|(key, _)| key.starts_with(RESERVED_KEY_PREFIX))
        {
            let key = key.to_string();
            let field = root.then(|| key.clone());
            return Err(CanonicalError::ReservedKey { key, field });
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
mod tests;
