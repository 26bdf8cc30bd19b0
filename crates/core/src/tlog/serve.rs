//! What the hub serves of the transparency log: inclusion and consistency proofs under the
//! stored tree, and `tlog-tiles` bodies. Refusals are plain sentences (`Ok(Err(..))`), for
//! a 400 or 404.

use serde_json::{Value, json};

use crate::db::{Connection, OptionalExtension};

use super::proof::{self, Hashes};
use super::store::{DbHashes, checkpoint_of, hashes_at_level, latest_checkpoint, leaf_data, size};
use super::tiles::{HEIGHT, Tile, WIDTH, entry_bundle};
use super::{b64, event_leaf};
use crate::store::StoreError;

/// A refusal: the HTTP status (400 or 404) and why.
pub type Refusal = (u16, String);

/// The size a proof is made under: `size` when given (at most the tree's), else the latest
/// checkpoint's.
fn proof_size(conn: &Connection, size: Option<u64>) -> Result<Result<u64, Refusal>, StoreError> {
    let tree = super::store::size(conn)?;
    match size {
        Some(size) if size > tree => Ok(Err((
            400,
            format!("the tree has {tree} leaves; size {size} is past it"),
        ))),
        Some(size) => Ok(Ok(size)),
        None => Ok(latest_checkpoint(conn)?
            .map(|checkpoint| checkpoint.size)
            .ok_or((
                404,
                "no checkpoint yet: the hub signs one within seconds of its first event".to_owned(),
            ))),
    }
}

/// The inclusion proof of event `seq` in the tree of `size` leaves (default: the latest
/// checkpoint's): `{seq, leaf_index, tree_size, row_hash, leaf_hash, root_hash, proof,
/// checkpoint}`, hashes in standard base64, `checkpoint` the signed note of that size or null.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn inclusion(
    conn: &Connection,
    seq: u64,
    size: Option<u64>,
) -> Result<Result<Value, Refusal>, StoreError> {
    let size = match proof_size(conn, size)? {
        Ok(size) => size,
        Err(refusal) => return Ok(Err(refusal)),
    };
    if seq == 0 || seq > size {
        return Ok(Err((
            400,
            format!("seq must be from 1 to the tree size {size}; it is {seq}"),
        )));
    }
    let row_hash: Option<String> = conn
        .prepare_cached("SELECT row_hash FROM events WHERE seq = ?1")?
        .query_row([i64::try_from(seq).unwrap_or(i64::MAX)], |row| row.get(0))
        .optional()?;
    let Some(row_hash) = row_hash else {
        return Ok(Err((404, format!("no event {seq}"))));
    };
    let mut hashes = DbHashes::new(conn);
    let leaf = hashes.hash_at(0, seq - 1)?;
    if event_leaf(&row_hash).ok() != Some(leaf) {
        return Err(StoreError::Invalid(format!(
            "the tree's leaf {seq} is not the event's row hash"
        )));
    }
    let path = proof::inclusion(&mut hashes, seq - 1, size)?;
    let root = proof::root(&mut hashes, size)?;
    let mut proved = inclusion_json(seq, size, &row_hash, &leaf, &root, &path);
    proved["checkpoint"] = json!(checkpoint_of(conn, size)?.map(|checkpoint| checkpoint.note));
    Ok(Ok(proved))
}

/// An inclusion proof as the route prints it, without its `checkpoint`.
fn inclusion_json(
    seq: u64,
    size: u64,
    row_hash: &str,
    leaf: &super::Hash,
    root: &super::Hash,
    path: &[super::Hash],
) -> Value {
    json!({
        "seq": seq,
        "leaf_index": seq - 1,
        "tree_size": size,
        "row_hash": row_hash,
        "leaf_hash": b64(leaf),
        "root_hash": b64(root),
        "proof": path.iter().map(|hash| b64(hash)).collect::<Vec<_>>(),
    })
}

/// The consistency proof from the tree of `old` leaves to that of `new` (default: the latest
/// checkpoint's): `{old_size, new_size, old_root, new_root, proof, old_checkpoint,
/// new_checkpoint}`.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn consistency(
    conn: &Connection,
    old: u64,
    new: Option<u64>,
) -> Result<Result<Value, Refusal>, StoreError> {
    let new = match proof_size(conn, new)? {
        Ok(new) => new,
        Err(refusal) => return Ok(Err(refusal)),
    };
    if old == 0 || old > new {
        return Ok(Err((
            400,
            format!("old must be from 1 to new ({new}); it is {old}"),
        )));
    }
    let mut hashes = DbHashes::new(conn);
    let path = proof::consistency(&mut hashes, old, new)?;
    let old_root = proof::root(&mut hashes, old)?;
    let new_root = proof::root(&mut hashes, new)?;
    let note = |size| -> Result<Option<String>, StoreError> {
        Ok(checkpoint_of(conn, size)?.map(|checkpoint| checkpoint.note))
    };
    Ok(Ok(json!({
        "old_size": old,
        "new_size": new,
        "old_root": b64(&old_root),
        "new_root": b64(&new_root),
        "proof": path.iter().map(|hash| b64(hash)).collect::<Vec<_>>(),
        "old_checkpoint": note(old)?,
        "new_checkpoint": note(new)?,
    })))
}

/// The body of `tile`, or `None` when the tree does not have it (yet, or at that width).
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn tile(conn: &Connection, tile: Tile) -> Result<Option<Vec<u8>>, StoreError> {
    let tree = size(conn)?;
    let level = tile.level.map_or(0, |level| level * HEIGHT);
    if level >= 64 {
        return Ok(None);
    }
    let available = tree >> level;
    let from = tile.index.saturating_mul(WIDTH);
    if from.saturating_add(tile.width) > available {
        return Ok(None);
    }
    match tile.level {
        None => Ok(Some(entry_bundle(&leaf_data(
            conn, from, tile.width, tree,
        )?))),
        Some(_) => {
            let hashes = hashes_at_level(conn, level, from, tile.width)?;
            Ok(Some(hashes.concat()))
        }
    }
}

/// The inclusion proofs of the events `rows` (seq, row hash) under the latest checkpoint, for
/// `get_history` (docs/decisions.md 241): the checkpoint's signed note (or `None` before the
/// first) and, for each row in order, its proof as [`inclusion`] prints it less the
/// `checkpoint` field (the note returned once), or `None` when the checkpoint does not cover
/// the seq yet. The root is the checkpoint's and the leaf the row's, so each proof costs only
/// its path's reads.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn proofs_under_latest(
    conn: &Connection,
    rows: &[(u64, String)],
) -> Result<(Option<String>, Vec<Option<Value>>), StoreError> {
    let Some(checkpoint) = latest_checkpoint(conn)? else {
        return Ok((None, vec![None; rows.len()]));
    };
    let size = checkpoint.size;
    let mut hashes = DbHashes::new(conn);
    let mut proofs = Vec::with_capacity(rows.len());
    for (seq, row_hash) in rows {
        let covered = (1..=size).contains(seq);
        let proof = match event_leaf(row_hash) {
            Ok(leaf) if covered => {
                let path = proof::inclusion(&mut hashes, seq - 1, size)?;
                Some(inclusion_json(
                    *seq,
                    size,
                    row_hash,
                    &leaf,
                    &checkpoint.root,
                    &path,
                ))
            }
            _ => None,
        };
        proofs.push(proof);
    }
    Ok((Some(checkpoint.note), proofs))
}
