//! The transparency log over the event log (issue 15; docs/transparency.md).
//!
//! An RFC 6962 Merkle tree whose leaf `i` (0-based) is the event of seq `i + 1`: the leaf
//! data is the 32 raw bytes of the row's `row_hash`, the leaf hash is
//! `SHA-256(0x00 || row_hash)` and an inner node is `SHA-256(0x01 || left || right)`.
//!
//! - [`proof`]: the tree's algorithms over its stored hashes: appending leaves, the root of
//!   any size, inclusion and consistency proofs (RFC 6962 §2.1.1, §2.1.2) and their
//!   verification (RFC 9162 §2.1.3.2, §2.1.4.2).
//! - [`store`]: the stored hashes (`tlog_hashes`, every complete subtree once, keyed by
//!   (level, index), as Go's `golang.org/x/mod/sumdb/tlog` "stored hashes"), extended by the
//!   writer at the end of every batch, in the batch's transaction; and the checkpoints.
//! - [`note`]: C2SP `tlog-checkpoint` text in a C2SP `signed-note`, signed with Ed25519 by
//!   the hub's server key.
//! - [`tiles`]: C2SP `tlog-tiles` paths and tile bodies.
//! - [`check`]: what `ledger verify` checks: the stored tree and every checkpoint against
//!   the rows.
//! - [`receipt`]: the signed promise a write answers with (kd-log-batch-v1, one signature per
//!   writer batch).

pub mod check;
pub mod note;
pub mod proof;
pub mod receipt;
pub mod serve;
pub mod store;
pub mod tiles;

#[cfg(test)]
mod store_tests;
#[cfg(test)]
mod tests;

use sha2::{Digest, Sha256};

/// A SHA-256 hash: a leaf, a node or a root.
pub type Hash = [u8; 32];

/// The RFC 6962 leaf hash of `data`: `SHA-256(0x00 || data)`.
pub fn leaf_hash(data: &[u8]) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update([0u8]);
    hasher.update(data);
    hasher.finalize().into()
}

/// The RFC 6962 inner node hash: `SHA-256(0x01 || left || right)`.
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update([1u8]);
    hasher.update(left);
    hasher.update(right);
    hasher.finalize().into()
}

/// The root of the empty tree: `SHA-256("")`.
pub fn empty_root() -> Hash {
    Sha256::digest([]).into()
}

/// The leaf hash of an event whose `row_hash` is `row_hash_hex` (lowercase hex).
///
/// # Errors
/// When `row_hash_hex` is not 64 hex digits (a damaged row).
pub fn event_leaf(row_hash_hex: &str) -> Result<Hash, String> {
    Ok(leaf_hash(&parse_hex(row_hash_hex)?))
}

/// 32 bytes from 64 hex digits.
///
/// # Errors
/// When `text` is not 64 hex digits.
pub fn parse_hex(text: &str) -> Result<Hash, String> {
    let bytes = hex::decode(text).map_err(|_| format!("{text:?} is not hex"))?;
    bytes
        .try_into()
        .map_err(|_| format!("{text:?} is not 32 bytes"))
}

/// 32 bytes from standard base64 (with padding), as proofs and checkpoints carry them.
///
/// # Errors
/// When `text` is not base64 of 32 bytes.
pub fn parse_b64(text: &str) -> Result<Hash, String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|_| format!("{text:?} is not base64"))?;
    bytes
        .try_into()
        .map_err(|_| format!("{text:?} is not 32 bytes"))
}

/// Standard base64 (with padding) of `bytes`.
pub fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
