//! Write receipts (kd-receipt-v1): the signed promise a hub gives for an acknowledged write,
//! redeemable for an inclusion proof once a checkpoint covers its seq (like Rekor's signed
//! entry timestamp).
//!
//! The signed text is six fields joined by LF (0x0A), no trailing LF, UTF-8:
//!
//! ```text
//! kd-receipt-v1
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

/// The recipe line.
pub const KD_RECEIPT_V1: &str = "kd-receipt-v1";

/// The signed text of a receipt (see the module doc).
pub fn signed_text(
    origin: &str,
    seq: i64,
    row_hash: &str,
    created_ms: i64,
    key_id: &str,
) -> String {
    format!("{KD_RECEIPT_V1}\n{origin}\n{seq}\n{row_hash}\n{created_ms}\n{key_id}")
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
        "recipe": KD_RECEIPT_V1,
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
            format!("kd-receipt-v1\nhub.example/kd-log\n7\n{hash}\n1000\nkd-passport-1")
        );
        assert!(key.verify_text(text, receipt["signature"].as_str().unwrap()));
        assert_eq!(
            receipt["proof_url"],
            "https://hub.example/log/proof/inclusion?seq=7"
        );
    }
}
