//! Write receipts (kd-log-batch-v1): the signed promise a hub gives for an acknowledged write,
//! redeemable for an inclusion proof under a checkpoint once one covers its seq (like Rekor's
//! signed entry timestamp), signed once per writer batch (docs/decisions.md 258).
//!
//! The store's writer commits its jobs in batches; the rows a batch kept are consecutive seqs
//! `first_seq ..= first_seq + size - 1`. They are the leaves, in order, of a small RFC 6962
//! tree of their own, the **batch tree** (leaf `i` is `SHA-256(0x00 || row_hash)` of the row
//! of seq `first_seq + i`, the same leaf as in the log's tree). The hub signs its root once;
//! every receipt of the batch carries that signature and its leaf's inclusion proof in the
//! batch tree. The signed text is seven fields joined by LF (0x0A), no trailing LF, UTF-8:
//!
//! ```text
//! kd-log-batch-v1
//! <origin>         the log's checkpoint origin, e.g. hub.example/kd-log
//! <first_seq>      decimal: the batch's first seq (its leaf index in the log: first_seq - 1)
//! <size>           decimal: rows in the batch (>= 1)
//! <root>           standard base64 (padded) of the batch tree's root, as checkpoints print it
//! <time_ms>        decimal Unix milliseconds, UTC: when the writer committed the batch
//! <key_id>         the signing key, kd-passport-1
//! ```
//!
//! The signature is Ed25519 by `key_id` over those bytes, base64url without padding, as every
//! other signature of the hub. A receipt holds the hub to: the rows of seqs `first_seq ..`
//! `first_seq + size - 1` are the leaves under `root`, and every later checkpoint of a size
//! that covers them includes those leaves at indices `first_seq - 1 ..`. A receipt is
//! verified with [`verify_receipt`] (or by hand: the leaf's path to `root` with RFC 9162
//! §2.1.3.2 at index `seq - first_seq` in a tree of `size`, then the signature).

use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};

use super::proof::{self, MemHashes};
use super::{Hash, b64, event_leaf, parse_b64, parse_hex};
use crate::keys::ServerKey;

/// The recipe line. Neither `kd-receipt-v1` (the spec's pre-flight receipt, signed by the
/// same key) nor any other text the key signs: a distinct first line keeps them apart
/// (docs/decisions.md 270).
pub const KD_LOG_BATCH_V1: &str = "kd-log-batch-v1";

/// Where the writer leaves the batch a job was committed in: one per batch, shared by its
/// jobs ([`crate::store::WriteTxn::batch_slot`]); empty while the batch runs, when the log
/// is off, or when the batch kept no row.
pub type BatchSlot = Arc<OnceLock<Arc<Batch>>>;

/// The rows one writer batch committed, in seq order: the leaves of its batch tree. The
/// tree and its signature are made once, by the first receipt asked of the batch
/// ([`Batch::receipt`]), off the writer's thread.
#[derive(Debug)]
pub struct Batch {
    first_seq: i64,
    row_hashes: Vec<String>,
    time_ms: i64,
    sealed: OnceLock<Result<Sealed, String>>,
}

/// The batch tree's root, every leaf's path to it, and the hub's signature over the batch's
/// signed text.
#[derive(Debug)]
struct Sealed {
    root: Hash,
    paths: Vec<Vec<Hash>>,
    text: String,
    signature: String,
    key_id: &'static str,
}

/// The fields of a verified batch's signed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedBatch {
    /// The log's checkpoint origin.
    pub origin: String,
    /// The batch's first seq.
    pub first_seq: i64,
    /// Rows in the batch.
    pub size: u64,
    /// The batch tree's root.
    pub root: Hash,
    /// When the batch was committed, Unix milliseconds.
    pub time_ms: i64,
    /// The signing key's id.
    pub key_id: String,
}

impl Batch {
    /// The batch of the rows of seqs `first_seq ..` whose row hashes (64 lowercase hex) are
    /// `row_hashes`, in order, committed at `time_ms`.
    pub fn new(first_seq: i64, row_hashes: Vec<String>, time_ms: i64) -> Self {
        Self {
            first_seq,
            row_hashes,
            time_ms,
            sealed: OnceLock::new(),
        }
    }

    /// The receipt of the batch's row of `seq`, signed by `key` for the log `origin` (one
    /// signature for the whole batch, made by the first call; `key` and `origin` are the
    /// hub's and the same on every call):
    /// `{recipe, origin, seq, row_hash, batch: {first_seq, size, root, time_ms, key_id,
    /// signed_text, signature}, index, path, proof_url}`, `path` the leaf's inclusion proof
    /// in the batch tree (standard base64, nearest the leaf first) and `proof_url` the
    /// inclusion proof route on `public_url`. None when `seq` is not in the batch or a row
    /// hash is not hex (a damaged row; logged).
    pub fn receipt(
        &self,
        key: &ServerKey,
        origin: &str,
        public_url: &str,
        seq: i64,
    ) -> Option<Value> {
        let index = u64::try_from(seq.checked_sub(self.first_seq)?).ok()?;
        let row_hash = self.row_hashes.get(usize::try_from(index).ok()?)?;
        let sealed = match self.sealed.get_or_init(|| self.seal(key, origin)) {
            Ok(sealed) => sealed,
            Err(error) => {
                tracing::error!(%error, "a write batch could not be sealed for its receipts");
                return None;
            }
        };
        let path = sealed.paths.get(usize::try_from(index).ok()?)?;
        Some(json!({
            "recipe": KD_LOG_BATCH_V1,
            "origin": origin,
            "seq": seq,
            "row_hash": row_hash,
            "batch": {
                "first_seq": self.first_seq,
                "size": self.row_hashes.len(),
                "root": b64(&sealed.root),
                "time_ms": self.time_ms,
                "key_id": sealed.key_id,
                "signed_text": sealed.text,
                "signature": sealed.signature,
            },
            "index": index,
            "path": path.iter().map(|hash| b64(hash)).collect::<Vec<_>>(),
            "proof_url": format!("{public_url}/log/proof/inclusion?seq={seq}"),
        }))
    }

    /// Builds the batch tree and signs its root.
    fn seal(&self, key: &ServerKey, origin: &str) -> Result<Sealed, String> {
        let leaves = self
            .row_hashes
            .iter()
            .map(|row_hash| event_leaf(row_hash))
            .collect::<Result<Vec<_>, _>>()?;
        let mut tree = MemHashes::default();
        proof::append(&mut tree, 0, &leaves).map_err(|error| error.to_string())?;
        let size = leaves.len() as u64;
        let root = proof::root(&mut tree, size).map_err(|error| error.to_string())?;
        let paths = (0..size)
            .map(|index| proof::inclusion(&mut tree, index, size))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| error.to_string())?;
        let text = signed_text(
            origin,
            self.first_seq,
            size,
            &root,
            self.time_ms,
            key.key_id(),
        );
        Ok(Sealed {
            signature: key.sign_text(&text),
            text,
            root,
            paths,
            key_id: key.key_id(),
        })
    }
}

/// The signed text of a batch (see the module doc).
pub fn signed_text(
    origin: &str,
    first_seq: i64,
    size: u64,
    root: &Hash,
    time_ms: i64,
    key_id: &str,
) -> String {
    format!(
        "{KD_LOG_BATCH_V1}\n{origin}\n{first_seq}\n{size}\n{}\n{time_ms}\n{key_id}",
        b64(root)
    )
}

/// The hub key a receipt is checked with: its id (`kd-passport-1`) and its 32-byte Ed25519
/// public key (the JWKS's `x`).
#[derive(Debug, Clone, Copy)]
pub struct Verifier<'k> {
    /// The key's id, as the signed text names it.
    pub key_id: &'k str,
    /// The Ed25519 public key.
    pub public_key: &'k [u8; 32],
}

/// Parses `text` as a batch's signed text and checks `signature` (base64url) over it with
/// `key`: the fields, or None when the text is not exactly seven lines opening with
/// [`KD_LOG_BATCH_V1`] in the documented form (rebuilt byte for byte), when it names another
/// key than `key`, or when the signature does not verify (strictly). Any other text the key
/// signs (a pre-flight `kd-receipt-v1`, a passport, a head) is refused here.
pub fn verify_text(key: Verifier<'_>, text: &str, signature: &str) -> Option<SignedBatch> {
    let lines: Vec<&str> = text.split('\n').collect();
    let [recipe, origin, first_seq, size, root, time_ms, key_id] = lines.as_slice() else {
        return None;
    };
    let signed = SignedBatch {
        origin: (*origin).to_owned(),
        first_seq: first_seq.parse().ok()?,
        size: size.parse().ok()?,
        root: parse_b64(root).ok()?,
        time_ms: time_ms.parse().ok()?,
        key_id: (*key_id).to_owned(),
    };
    let rebuilt = signed_text(
        &signed.origin,
        signed.first_seq,
        signed.size,
        &signed.root,
        signed.time_ms,
        &signed.key_id,
    );
    (*recipe == KD_LOG_BATCH_V1
        && signed.size >= 1
        && rebuilt == text
        && *key_id == key.key_id
        && kd_protocol::b64::decode_signature(signature).is_ok_and(|signature| {
            kd_protocol::keys::verify_strict_raw(key.public_key, text.as_bytes(), &signature)
                .is_ok()
        }))
    .then_some(signed)
}

/// Checks a whole receipt as a client would: the batch's signed text and signature
/// ([`verify_text`]), then that the leaf of `row_hash` sits at `seq - first_seq` under the
/// signed root by `path`. The signed batch, or None when anything fails to hold.
pub fn verify_receipt(key: Verifier<'_>, receipt: &Value) -> Option<SignedBatch> {
    let batch = &receipt["batch"];
    let signed = verify_text(
        key,
        batch["signed_text"].as_str()?,
        batch["signature"].as_str()?,
    )?;
    let seq = receipt["seq"].as_i64()?;
    let index = u64::try_from(seq.checked_sub(signed.first_seq)?).ok()?;
    let leaf = super::leaf_hash(&parse_hex(receipt["row_hash"].as_str()?).ok()?);
    let path = receipt["path"]
        .as_array()?
        .iter()
        .map(|hash| parse_b64(hash.as_str()?).ok())
        .collect::<Option<Vec<_>>>()?;
    proof::verify_inclusion(index, signed.size, &leaf, &path, &signed.root).then_some(signed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verifier(key: &ServerKey) -> ([u8; 32], &'static str) {
        (key.public_key_bytes(), key.key_id())
    }

    fn check(key: &ServerKey, receipt: &Value) -> Option<SignedBatch> {
        let (public_key, key_id) = verifier(key);
        verify_receipt(
            Verifier {
                key_id,
                public_key: &public_key,
            },
            receipt,
        )
    }

    fn row_hashes(count: u8) -> Vec<String> {
        (0..count).map(|i| hex::encode([i; 32])).collect()
    }

    #[test]
    fn a_batch_signs_its_documented_text_once_and_every_receipt_proves_its_leaf() {
        let key = ServerKey::from_seed("kd-passport-1", [5; 32]);
        let batch = Batch::new(41, row_hashes(5), 1000);
        let origin = "hub.example/kd-log";
        let receipts: Vec<Value> = (41..46)
            .map(|seq| {
                batch
                    .receipt(&key, origin, "https://hub.example", seq)
                    .unwrap()
            })
            .collect();
        // The root is RFC 6962's over the five leaves, as the log's own tree computes it.
        let leaves: Vec<Hash> = row_hashes(5)
            .iter()
            .map(|row| event_leaf(row).unwrap())
            .collect();
        let mut reference = MemHashes::default();
        proof::append(&mut reference, 0, &leaves).unwrap();
        let root = proof::root(&mut reference, 5).unwrap();
        let text = receipts[0]["batch"]["signed_text"].as_str().unwrap();
        assert_eq!(
            text,
            format!(
                "kd-log-batch-v1\nhub.example/kd-log\n41\n5\n{}\n1000\nkd-passport-1",
                b64(&root)
            )
        );
        for (receipt, seq) in receipts.iter().zip(41..) {
            // One signature for the batch: every receipt carries the same signed text.
            assert_eq!(receipt["batch"], receipts[0]["batch"]);
            assert_eq!(receipt["seq"], seq);
            assert_eq!(receipt["index"], seq - 41);
            let signed = check(&key, receipt).unwrap();
            assert_eq!((signed.first_seq, signed.size, signed.root), (41, 5, root));
        }
        assert_eq!(
            receipts[2]["proof_url"],
            "https://hub.example/log/proof/inclusion?seq=43"
        );
        assert!(batch.receipt(&key, origin, "https://h", 40).is_none());
        assert!(batch.receipt(&key, origin, "https://h", 46).is_none());
    }

    #[test]
    fn a_receipt_with_another_leaf_index_path_or_key_does_not_verify() {
        let key = ServerKey::from_seed("kd-passport-1", [5; 32]);
        let batch = Batch::new(7, row_hashes(3), 1000);
        let receipt = batch.receipt(&key, "h/kd-log", "https://h", 8).unwrap();
        assert!(check(&key, &receipt).is_some());
        let mut other_row = receipt.clone();
        other_row["row_hash"] = json!("00".repeat(32));
        assert!(check(&key, &other_row).is_none());
        let mut other_seq = receipt.clone();
        other_seq["seq"] = json!(9);
        assert!(check(&key, &other_seq).is_none());
        let mut short_path = receipt.clone();
        short_path["path"].as_array_mut().unwrap().pop();
        assert!(check(&key, &short_path).is_none());
        let mut forged = receipt.clone();
        let text = receipt["batch"]["signed_text"].as_str().unwrap();
        forged["batch"]["signed_text"] = json!(text.replace("\n3\n", "\n4\n"));
        assert!(check(&key, &forged).is_none());
        let other = ServerKey::from_seed("kd-passport-1", [6; 32]);
        assert!(check(&other, &receipt).is_none());
    }

    #[test]
    fn a_batch_of_one_row_has_an_empty_path_and_its_leaf_as_root() {
        let key = ServerKey::from_seed("kd-passport-1", [5; 32]);
        let rows = row_hashes(1);
        let receipt = Batch::new(1, rows.clone(), 5)
            .receipt(&key, "h/kd-log", "https://h", 1)
            .unwrap();
        assert_eq!(receipt["path"], json!([]));
        assert_eq!(
            receipt["batch"]["root"],
            b64(&event_leaf(&rows[0]).unwrap())
        );
        assert!(check(&key, &receipt).is_some());
    }
}
