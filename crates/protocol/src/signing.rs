//! The kd-mcp-v1 request signature: the text to sign and the `x-kd-timestamp` / `x-kd-nonce`
//! header values (spec "Signing a write (kd-mcp-v1)").

use std::fmt;

/// Line 1 of the text to sign: the recipe name.
pub const KD_MCP_V1: &str = "kd-mcp-v1";

/// How far, in seconds and in either direction, `x-kd-timestamp` may be from the server clock
/// ("It must be within 300 seconds of the server clock").
pub const TIMESTAMP_WINDOW_SECS: i64 = 300;

/// Shortest nonce, in characters.
pub const NONCE_MIN_LEN: usize = 16;

/// Longest nonce, in characters.
pub const NONCE_MAX_LEN: usize = 128;

/// An `x-kd-nonce` value: 16 to 128 characters from `A-Z a-z 0-9 _ -`. It is single use per
/// agent; remembering it is the store's job.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Nonce(String);

/// Why a text is not a nonce.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NonceError {
    /// Fewer than 16 or more than 128 characters.
    #[error("nonce must be 16 to 128 characters, got {len}")]
    BadLength {
        /// Length given, in bytes.
        len: usize,
    },
    /// A character outside `A-Z a-z 0-9 _ -`.
    #[error("nonce may only contain A-Z a-z 0-9 _ -")]
    BadCharacter,
}

impl Nonce {
    /// Checks an `x-kd-nonce` header value.
    ///
    /// # Errors
    ///
    /// [`NonceError::BadCharacter`] for a character outside `A-Z a-z 0-9 _ -`, else
    /// [`NonceError::BadLength`] outside 16..=128.
    pub fn parse(text: &str) -> Result<Self, NonceError> {
        if !text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(NonceError::BadCharacter);
        }
        // All ASCII now, so bytes are characters.
        if !(NONCE_MIN_LEN..=NONCE_MAX_LEN).contains(&text.len()) {
            return Err(NonceError::BadLength { len: text.len() });
        }
        Ok(Self(text.to_owned()))
    }

    /// The nonce text, as sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Nonce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The text an agent signs: six lines joined by LF with no trailing newline — `kd-mcp-v1`, the
/// tool name, the agent id, the timestamp in decimal, the nonce, and the arguments hash (lowercase
/// hex SHA-256 of the canonical arguments text, see [`crate::canonical::arguments_hash`]). The
/// signature covers its UTF-8 bytes.
pub fn text_to_sign(
    tool: &str,
    agent_id: &str,
    timestamp: i64,
    nonce: &str,
    arguments_hash_hex: &str,
) -> String {
    format!("{KD_MCP_V1}\n{tool}\n{agent_id}\n{timestamp}\n{nonce}\n{arguments_hash_hex}")
}

/// Whether `timestamp` (Unix seconds) is within [`TIMESTAMP_WINDOW_SECS`] of `now_unix`, either
/// way, bounds included. Never overflows.
pub fn timestamp_fresh(timestamp: i64, now_unix: i64) -> bool {
    timestamp.abs_diff(now_unix) <= TIMESTAMP_WINDOW_SECS.unsigned_abs()
}

/// Parses an `x-kd-timestamp` header: Unix time in whole seconds, 1 to 12 ASCII digits, no sign,
/// spaces, fraction or leading zero (except `0` itself). Leading zeros are refused because line 4
/// of the text to sign is "the same decimal string as x-kd-timestamp", and the hub rebuilds that
/// line from the parsed number. Returns `None` for anything else.
pub fn parse_timestamp_header(text: &str) -> Option<i64> {
    let well_formed = (1..=12).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    if !well_formed {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_header_round_trips_exactly() {
        assert_eq!(parse_timestamp_header("1791700000"), Some(1_791_700_000));
        assert_eq!(parse_timestamp_header("0"), Some(0));
        assert_eq!(
            parse_timestamp_header("999999999999"),
            Some(999_999_999_999)
        );
        for bad in [
            "",
            "01791700000",
            "+1791700000",
            "-1",
            " 1",
            "1 ",
            "1.0",
            "1e9",
            "1000000000000",
            "１",
        ] {
            assert_eq!(parse_timestamp_header(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn freshness_window_is_inclusive_and_overflow_safe() {
        assert!(timestamp_fresh(1000, 1300));
        assert!(timestamp_fresh(1300, 1000));
        assert!(!timestamp_fresh(1000, 1301));
        assert!(!timestamp_fresh(1301, 1000));
        assert!(!timestamp_fresh(i64::MIN, i64::MAX));
        assert!(!timestamp_fresh(i64::MAX, i64::MIN));
    }

    #[test]
    fn nonce_rules() {
        assert_eq!(
            Nonce::parse("n-3f9a1c2e7b5d4f60").map(|n| n.as_str().to_owned()),
            Ok("n-3f9a1c2e7b5d4f60".into())
        );
        assert!(Nonce::parse(&"a".repeat(16)).is_ok());
        assert!(Nonce::parse(&"_".repeat(128)).is_ok());
        assert_eq!(
            Nonce::parse(&"a".repeat(15)),
            Err(NonceError::BadLength { len: 15 })
        );
        assert_eq!(
            Nonce::parse(&"a".repeat(129)),
            Err(NonceError::BadLength { len: 129 })
        );
        assert_eq!(
            Nonce::parse("aaaaaaaaaaaaaaa."),
            Err(NonceError::BadCharacter)
        );
        assert_eq!(
            Nonce::parse("aaaaaaaaaaaaaaaé"),
            Err(NonceError::BadCharacter)
        );
        assert_eq!(
            Nonce::parse("aaaaaaaa aaaaaaaa"),
            Err(NonceError::BadCharacter)
        );
    }
}
