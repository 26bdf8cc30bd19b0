//! Ed25519 public keys as agents register them, and strict signature verification
//! (spec "Signing a write (kd-mcp-v1)": bring-your-own Ed25519 keys, `x-kd-signature`).
//!
//! Registration is stricter than parsing: `VerifyingKey::from_bytes` accepts non-canonical
//! encodings (a `y` coordinate of `p` or more, or `-0`), so the same point could be registered
//! under several spellings, and it accepts small-order and torsioned points, for which several
//! distinct signatures can verify. A registered key is therefore the one canonical encoding of a
//! point in the prime-order subgroup. Verification always uses `verify_strict`, which also
//! refuses non-canonical `s` and small-order `R` in signatures.

use curve25519_dalek::edwards::CompressedEdwardsY;
use ed25519_dalek::{Signature, VerifyingKey};

use crate::b64;

/// Length of an Ed25519 public key, in bytes.
pub const PUBLIC_KEY_LEN: usize = 32;

/// Length of an Ed25519 signature, in bytes.
pub const SIGNATURE_LEN: usize = 64;

/// Why a key or a signature is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The key text is not base64url.
    #[error("public key is not base64url: {0}")]
    NotBase64(b64::B64Error),
    /// The key does not decode to 32 bytes.
    #[error("public key must be 32 bytes, got {len}")]
    BadLength {
        /// Bytes after decoding.
        len: usize,
    },
    /// The 32 bytes are not the encoding of any curve point.
    #[error("public key is not a point on Ed25519")]
    NotOnCurve,
    /// The bytes encode a point, but not in its one canonical form (y ≥ p, or x = 0 with the
    /// sign bit set).
    #[error("public key is not canonically encoded")]
    NotCanonical,
    /// A small-order ("weak") point, for which signatures prove nothing.
    #[error("public key is a weak (small-order) point")]
    WeakKey,
    /// A point with a torsion component: outside the prime-order subgroup.
    #[error("public key has a torsion component")]
    Torsion,
    /// The signature is not 64 bytes.
    #[error("signature must be 64 bytes, got {len}")]
    BadSignatureLength {
        /// Bytes given.
        len: usize,
    },
    /// The signature does not verify under strict rules.
    #[error("signature does not verify")]
    BadSignature,
}

/// An agent's registered Ed25519 public key: a canonically encoded point of prime order.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct AgentPublicKey(VerifyingKey);

impl AgentPublicKey {
    /// Parses a key an agent registers: base64url (padding optional) of 32 bytes that are the
    /// canonical encoding of a point that is neither small-order nor torsioned.
    ///
    /// # Errors
    ///
    /// [`KeyError::NotBase64`], [`KeyError::BadLength`], [`KeyError::NotOnCurve`],
    /// [`KeyError::NotCanonical`], [`KeyError::WeakKey`] or [`KeyError::Torsion`], checked in
    /// that order.
    pub fn parse_b64url(text: &str) -> Result<Self, KeyError> {
        let bytes = b64::decode_url(text).map_err(KeyError::NotBase64)?;
        let bytes: [u8; PUBLIC_KEY_LEN] = bytes
            .as_slice()
            .try_into()
            .map_err(|_| KeyError::BadLength { len: bytes.len() })?;
        let point = CompressedEdwardsY(bytes)
            .decompress()
            .ok_or(KeyError::NotOnCurve)?;
        if point.compress().to_bytes() != bytes {
            return Err(KeyError::NotCanonical);
        }
        if point.is_small_order() {
            return Err(KeyError::WeakKey);
        }
        if !point.is_torsion_free() {
            return Err(KeyError::Torsion);
        }
        VerifyingKey::from_bytes(&bytes)
            .map(Self)
            .map_err(|_| KeyError::NotOnCurve)
    }

    /// Loads a key the store accepted at registration, without repeating the registration
    /// checks (so a rule tightened later does not lock out existing agents). The bytes must
    /// still decode to a curve point.
    ///
    /// # Errors
    ///
    /// [`KeyError::NotOnCurve`] when the bytes are not a point encoding.
    pub fn from_bytes_unchecked_registered(bytes: [u8; PUBLIC_KEY_LEN]) -> Result<Self, KeyError> {
        VerifyingKey::from_bytes(&bytes)
            .map(Self)
            .map_err(|_| KeyError::NotOnCurve)
    }

    /// The key as base64url without padding, 43 characters.
    pub fn to_b64url(&self) -> String {
        b64::encode_url(self.0.as_bytes())
    }

    /// The 32 key bytes.
    pub fn as_bytes(&self) -> &[u8; PUBLIC_KEY_LEN] {
        self.0.as_bytes()
    }

    /// Verifies an Ed25519 signature (64 raw bytes, already decoded from `x-kd-signature`) over
    /// `message` with ed25519-dalek's `verify_strict`.
    ///
    /// # Errors
    ///
    /// [`KeyError::BadSignatureLength`] unless 64 bytes; [`KeyError::BadSignature`] when the
    /// signature does not verify strictly.
    pub fn verify_strict(&self, message: &[u8], signature: &[u8]) -> Result<(), KeyError> {
        verify_with(&self.0, message, signature)
    }
}

/// Verifies a signature under any 32-byte public key, without the registration checks: for
/// third-party keys and test vectors. `verify_strict` still refuses small-order keys and
/// signatures with a small-order `R` or a non-canonical `s`.
///
/// # Errors
///
/// [`KeyError::NotOnCurve`] when the key bytes are not a point encoding,
/// [`KeyError::BadSignatureLength`] unless the signature is 64 bytes, [`KeyError::BadSignature`]
/// when it does not verify strictly.
pub fn verify_strict_raw(
    public_key: &[u8; PUBLIC_KEY_LEN],
    message: &[u8],
    signature: &[u8],
) -> Result<(), KeyError> {
    let key = VerifyingKey::from_bytes(public_key).map_err(|_| KeyError::NotOnCurve)?;
    verify_with(&key, message, signature)
}

fn verify_with(key: &VerifyingKey, message: &[u8], signature: &[u8]) -> Result<(), KeyError> {
    let signature = Signature::from_slice(signature).map_err(|_| KeyError::BadSignatureLength {
        len: signature.len(),
    })?;
    key.verify_strict(message, &signature)
        .map_err(|_| KeyError::BadSignature)
}
