//! Write receipts (kd-log-receipt-v1): the signed promise a hub gives for an acknowledged write,
//! redeemable for an inclusion proof once a checkpoint covers its seq (like Rekor's signed
//! entry timestamp).
//!
//! The signed text is six fields joined by LF (0x0A), no trailing LF, UTF-8:
//!
//! ```text
//! kd-log-receipt-v1
//! <origin>         the log's checkpoint origin, e.g. hub.example/kd-log
//! <seq>            decimal: the event's seq (leaf index seq - 1)
//! <row_hash>       lowercase hex: the event's row_hash (the leaf's data)
//! <created_ms>     decimal Unix milliseconds, UTC: the event's time
//! <key_id>         the signing key, kd-passport-1
//! ```
//!
//! The signature is Ed25519 by `key_id` over those bytes, base64url without padding, as every
//! other signature of the hub. Holding it, a client can require that every later checkpoint of
//! size >= seq includes the leaf `SHA-256(0x00 || row_hash)` at index seq - 1.

use serde_json::{Value, json};

use crate::keys::ServerKey;

/// The recipe line. Not `kd-receipt-v1`, the spec's pre-flight receipt signed by the same
/// key: a distinct first line keeps the two signed texts apart (docs/decisions.md 270).
pub const KD_LOG_RECEIPT_V1: &str = "kd-log-receipt-v1";

/// The fields of a verified write receipt's signed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    /// The log's checkpoint origin.
    pub origin: String,
    /// The event's seq.
    pub seq: i64,
    /// The event's row hash (64 lowercase hex).
    pub row_hash: String,
    /// The event's time, Unix milliseconds.
    pub created_ms: i64,
    /// The signing key's id.
    pub key_id: String,
}

/// The signed text of a receipt (see the module doc).
pub fn signed_text(
    origin: &str,
    seq: i64,
    row_hash: &str,
    created_ms: i64,
    key_id: &str,
) -> String {
    format!("{KD_LOG_RECEIPT_V1}\n{origin}\n{seq}\n{row_hash}\n{created_ms}\n{key_id}")
}

/// Parses `text` as a write receipt's signed text and checks `signature` over it with `key`:
/// the fields, or None when the text is not exactly six lines opening with
/// [`KD_LOG_RECEIPT_V1`] in the documented form (rebuilt byte for byte), when it names
/// another key than `key`, or when the signature does not verify. Any other text the key
/// signs (a pre-flight `kd-receipt-v1`, a passport, a head) is refused here.
pub fn verify(key: &ServerKey, text: &str, signature: &str) -> Option<Signed> {
    let lines: Vec<&str> = text.split('\n').collect();
    let [recipe, origin, seq, row_hash, created_ms, key_id] = lines.as_slice() else {
        return None;
    };
    let signed = Signed {
        origin: (*origin).to_owned(),
        seq: seq.parse().ok()?,
        row_hash: (*row_hash).to_owned(),
        created_ms: created_ms.parse().ok()?,
        key_id: (*key_id).to_owned(),
    };
    let rebuilt = signed_text(
        &signed.origin,
        signed.seq,
        &signed.row_hash,
        signed.created_ms,
        &signed.key_id,
    );
    (*recipe == KD_LOG_RECEIPT_V1
        && rebuilt == text
        && *key_id == key.key_id()
        && key.verify_text(text, signature))
    .then_some(signed)
}

/// The receipt of the event `seq` (with `row_hash`, at `created_ms`), signed by `key`:
/// `{recipe, origin, seq, row_hash, created_ms, signed_text, signature, key_id, proof_url}`.
/// `proof_url` is the inclusion proof route on `public_url`.
pub fn receipt(
    key: &ServerKey,
    origin: &str,
    public_url: &str,
    seq: i64,
    row_hash: &str,
    created_ms: i64,
) -> Value {
    let text = signed_text(origin, seq, row_hash, created_ms, key.key_id());
    json!({
        "recipe": KD_LOG_RECEIPT_V1,
        "origin": origin,
        "seq": seq,
        "row_hash": row_hash,
        "created_ms": created_ms,
        "signed_text": text,
        "signature": key.sign_text(&text),
        "key_id": key.key_id(),
        "proof_url": format!("{public_url}/log/proof/inclusion?seq={seq}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receipt_signs_its_documented_text() {
        let key = ServerKey::from_seed("kd-passport-1", [5; 32]);
        let hash = "ab".repeat(32);
        let receipt = receipt(
            &key,
            "hub.example/kd-log",
            "https://hub.example",
            7,
            &hash,
            1000,
        );
        let text = receipt["signed_text"].as_str().unwrap();
        assert_eq!(
            text,
            format!("kd-log-receipt-v1\nhub.example/kd-log\n7\n{hash}\n1000\nkd-passport-1")
        );
        let signature = receipt["signature"].as_str().unwrap();
        assert!(key.verify_text(text, signature));
        let signed = verify(&key, text, signature).unwrap();
        assert_eq!((signed.seq, signed.created_ms), (7, 1000));
        assert_eq!(signed.row_hash, hash);
        assert!(verify(&key, &text.replace("\n7\n", "\n8\n"), signature).is_none());
        let other = ServerKey::from_seed("kd-passport-1", [6; 32]);
        assert!(verify(&other, text, signature).is_none());
        assert_eq!(
            receipt["proof_url"],
            "https://hub.example/log/proof/inclusion?seq=7"
        );
    }
}
