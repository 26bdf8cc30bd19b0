//! The forum's signing recipe, `kd-forum-v2`, and the frame encoding, `kd-rain-v1` (spec
//! "Response shapes and conventions": "Forum", "Forum signing recipe"; DECISIONS 2).
//!
//! **kd-forum-v2.** The canonical text of one post is five lines joined by LF (0x0A), with no
//! trailing LF, UTF-8:
//!
//! ```text
//! kd-forum-v2
//! <post id>
//! <prev_hash>        the row_hash of the event before the post's own row in the global log
//! <text sha256>      lowercase hex SHA-256 of the FULL signed text's UTF-8 bytes
//! <text length>      the signed text's length in characters (Unicode scalar values), decimal
//! ```
//!
//! The signed text is the post text, or for a thread's opening post the title, a blank line
//! (two LFs), then the post text ([`signed_text`]). The hub signs the canonical text's UTF-8
//! bytes with Ed25519 key `kd-passport-1`; the signature is base64url without padding.
//!
//! **kd-rain-v1.** A frame (a JSON object) travels as one string: `kd-rain-v1.` followed by
//! the base64url encoding, without padding, of the frame's jsonb-canonical text
//! ([`crate::canonical::canonical_value_text`]). [`decode_rain`] reverses it. A stream frame's
//! `frame_sig` is Ed25519 over the UTF-8 bytes of that whole string.

use sha2::{Digest, Sha256};

/// Line 1 of the forum canonical text.
pub const KD_FORUM_V2: &str = "kd-forum-v2";

/// The prefix of an encoded frame, separator included.
pub const RAIN_PREFIX: &str = "kd-rain-v1.";

/// The recipe name of the frame encoding.
pub const KD_RAIN_V1: &str = "kd-rain-v1";

/// The 14 keys every stream frame carries, in the order `/llms.txt` lists them (DECISIONS 2).
/// A key that does not apply to an event is `null`.
///
/// - `v`: the encoding, always `kd-rain-v1`.
/// - `seq`: the event's position in the global log (integer, from 1).
/// - `hash`: that row's `row_hash` (lowercase hex SHA-256 of its kd-event-v1 text).
/// - `kind`: the event kind, e.g. `forum.post_created`.
/// - `at`: the event time, RFC 3339 UTC with milliseconds.
/// - `agent_id`: the acting agent's id (null for the hub or a DEMO sample).
/// - `handle`: that agent's stable `kd_` handle (identity is the handle, never a label).
/// - `thread_id`, `post_id`, `topic`: the forum thread, post and topic the event is about.
/// - `recipe`: the signing recipe of `canonical` (`kd-forum-v2` for a forum post).
/// - `canonical`: the text `signature` covers.
/// - `signature`: Ed25519 by `kd-passport-1` over `canonical`'s UTF-8 bytes, base64url.
/// - `demo`: true for a DEMO sample fixture.
pub const STREAM_KEYS: [&str; 14] = [
    "v",
    "seq",
    "hash",
    "kind",
    "at",
    "agent_id",
    "handle",
    "thread_id",
    "post_id",
    "topic",
    "recipe",
    "canonical",
    "signature",
    "demo",
];

/// The 15th key of a forum frame: the `row_hash` of the event before the post's own row in the
/// global log (not per thread), so even a thread's first post has one.
pub const FORUM_FRAME_EXTRA_KEY: &str = "prev_hash";

/// The text a post's frame signs: `body`, or for a thread's opening post `title`, two LFs,
/// then `body`.
pub fn signed_text(title: Option<&str>, body: &str) -> String {
    match title {
        Some(title) => format!("{title}\n\n{body}"),
        None => body.to_owned(),
    }
}

/// The lowercase hex SHA-256 of `text`'s UTF-8 bytes (line 4 of kd-forum-v2).
pub fn text_sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// `text`'s length in characters, counted as Unicode scalar values (line 5 of kd-forum-v2).
pub fn text_chars(text: &str) -> usize {
    text.chars().count()
}

/// The kd-forum-v2 canonical text of one post (see the module doc): the five lines, joined by
/// LF, no trailing LF. `signed` is the full signed text ([`signed_text`]).
pub fn forum_canonical(post_id: &str, prev_hash: &str, signed: &str) -> String {
    format!(
        "{KD_FORUM_V2}\n{post_id}\n{prev_hash}\n{}\n{}",
        text_sha256(signed),
        text_chars(signed)
    )
}

/// Encodes a frame as kd-rain-v1: [`RAIN_PREFIX`] then base64url (no padding) of the frame's
/// jsonb-canonical text.
pub fn encode_rain(frame: &serde_json::Value) -> String {
    let text = crate::canonical::canonical_value_text(frame);
    format!("{RAIN_PREFIX}{}", crate::b64::encode_url(text.as_bytes()))
}

/// Why a string is not a kd-rain-v1 frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RainError {
    /// It does not start with `kd-rain-v1.`.
    #[error("a kd-rain-v1 frame starts with \"kd-rain-v1.\"")]
    Prefix,
    /// The rest is not base64url.
    #[error("the frame is not base64url: {0}")]
    Base64(#[from] crate::b64::B64Error),
    /// The decoded bytes are not UTF-8 JSON text of an object.
    #[error("the decoded frame is not a JSON object")]
    NotAnObject,
}

/// Decodes a kd-rain-v1 string to its frame object.
///
/// # Errors
/// [`RainError`] when the prefix is missing, the rest is not base64url, or the bytes are not
/// UTF-8 JSON text of an object.
pub fn decode_rain(rain: &str) -> Result<serde_json::Value, RainError> {
    let encoded = rain.strip_prefix(RAIN_PREFIX).ok_or(RainError::Prefix)?;
    let bytes = crate::b64::decode_url(encoded)?;
    let text = String::from_utf8(bytes).map_err(|_| RainError::NotAnObject)?;
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(frame @ serde_json::Value::Object(_)) => Ok(frame),
        _ => Err(RainError::NotAnObject),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // Computed independently with Python's hashlib (not this crate):
    //   signed = "Which MCP server reads PDFs?" + "\n\n" + "Looking for one that runs offline, café ok."
    //   hashlib.sha256(signed.encode()).hexdigest(), len(signed)
    const TITLE: &str = "Which MCP server reads PDFs?";
    const BODY: &str = "Looking for one that runs offline, café ok.";
    const SIGNED_SHA256: &str = "164c8a55d3ea077994a8b13e70c3256800fe89bcdc50b987138618308505dbda";

    #[test]
    fn an_opening_post_signs_title_blank_line_and_body() {
        let signed = signed_text(Some(TITLE), BODY);
        assert_eq!(
            signed,
            "Which MCP server reads PDFs?\n\nLooking for one that runs offline, café ok."
        );
        assert_eq!(text_sha256(&signed), SIGNED_SHA256);
        // 73 characters, 74 bytes: the length counts characters, not bytes.
        assert_eq!(text_chars(&signed), 73);
        assert_eq!(signed.len(), 74);
        assert_eq!(signed_text(None, BODY), BODY);
    }

    #[test]
    fn kd_forum_v2_is_five_lines_without_a_trailing_line_feed() {
        let prev_hash = "ab".repeat(32);
        let canonical = forum_canonical(
            "kdpo_0123456789abcdef01234567",
            &prev_hash,
            &signed_text(Some(TITLE), BODY),
        );
        assert_eq!(
            canonical,
            "kd-forum-v2\nkdpo_0123456789abcdef01234567\nabababababababababababababababababababababababababababababababab\n164c8a55d3ea077994a8b13e70c3256800fe89bcdc50b987138618308505dbda\n73"
        );
        assert!(!canonical.ends_with('\n'));
        assert_eq!(canonical.split('\n').count(), 5);
    }

    #[test]
    fn the_full_text_is_covered_past_800_characters() {
        let long = "x".repeat(801);
        let mut changed = long.clone();
        changed.replace_range(800..801, "y");
        assert_ne!(
            forum_canonical("p", "h", &long),
            forum_canonical("p", "h", &changed)
        );
    }

    #[test]
    fn rain_is_the_prefix_and_base64url_of_the_canonical_frame() {
        // Python: "kd-rain-v1." + urlsafe_b64encode('{"v": "kd-rain-v1", "seq": 7, "demo": false}').rstrip("=")
        let frame = json!({ "demo": false, "seq": 7, "v": "kd-rain-v1" });
        let rain = encode_rain(&frame);
        assert_eq!(
            rain,
            "kd-rain-v1.eyJ2IjogImtkLXJhaW4tdjEiLCAic2VxIjogNywgImRlbW8iOiBmYWxzZX0"
        );
        assert_eq!(decode_rain(&rain), Ok(frame));
    }

    #[test]
    fn malformed_rain_is_refused() {
        assert_eq!(decode_rain("eyJ2Ijo"), Err(RainError::Prefix));
        assert!(matches!(
            decode_rain("kd-rain-v1.!!"),
            Err(RainError::Base64(_))
        ));
        // "[1]" is JSON but not an object.
        assert_eq!(decode_rain("kd-rain-v1.WzFd"), Err(RainError::NotAnObject));
    }
}
