//! Base64 as kd-mcp-v1 uses it (spec "Signing a write (kd-mcp-v1)": "x-kd-signature: ...
//! base64url (padding optional; standard base64 is also accepted)"; public keys are base64url).
//!
//! All work is done by the `base64` crate's engines; this module only fixes their settings.

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

/// Why a text is not base64 in the accepted form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum B64Error {
    /// Not base64 in the expected alphabet: an invalid character (whitespace included), a wrong
    /// length, misplaced padding, or nonzero bits after the last whole byte.
    #[error("not valid base64: {0}")]
    Invalid(String),
    /// Uses `-` or `_` (url-safe) together with `+` or `/` (standard).
    #[error("mixes the url-safe (- _) and standard (+ /) base64 alphabets")]
    MixedAlphabets,
}

/// Padding optional, but when present it must be complete; trailing bits must be zero, so each
/// byte string has exactly one accepted spelling per padding choice.
const DECODE_CONFIG: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_padding_mode(DecodePaddingMode::Indifferent)
    .with_decode_allow_trailing_bits(false);

const URL_SAFE_DECODE: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, DECODE_CONFIG);
const STANDARD_DECODE: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, DECODE_CONFIG);

/// Encodes bytes as base64url without padding (RFC 4648 §5): the form the hub prints for keys
/// and signatures. 32 bytes give 43 characters, 64 bytes give 86.
pub fn encode_url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Decodes base64url (RFC 4648 §5), with or without `=` padding, as public keys are written
/// (spec "Signing a write (kd-mcp-v1)", `public_key`).
///
/// # Errors
///
/// [`B64Error::Invalid`] for characters outside `A-Z a-z 0-9 - _` (so `+`, `/` and whitespace),
/// partial padding, an impossible length, or nonzero bits after the last whole byte.
pub fn decode_url(text: &str) -> Result<Vec<u8>, B64Error> {
    URL_SAFE_DECODE
        .decode(text)
        .map_err(|e| B64Error::Invalid(e.to_string()))
}

/// Decodes an `x-kd-signature` value: base64url or standard base64, each with or without
/// padding (spec "Signing a write (kd-mcp-v1)"). Returns the raw bytes (64 for a valid
/// signature; the length is the caller's check).
///
/// # Errors
///
/// [`B64Error::MixedAlphabets`] when the text has both a url-safe (`-`, `_`) and a standard
/// (`+`, `/`) character; otherwise [`B64Error::Invalid`] as for [`decode_url`].
pub fn decode_signature(text: &str) -> Result<Vec<u8>, B64Error> {
    let url_safe = text.bytes().any(|b| b == b'-' || b == b'_');
    let standard = text.bytes().any(|b| b == b'+' || b == b'/');
    let engine = match (url_safe, standard) {
        (true, true) => return Err(B64Error::MixedAlphabets),
        (false, true) => &STANDARD_DECODE,
        // Text with neither is the same in both alphabets.
        _ => &URL_SAFE_DECODE,
    };
    engine
        .decode(text)
        .map_err(|e| B64Error::Invalid(e.to_string()))
}
