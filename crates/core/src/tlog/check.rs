//! What `karmadue ledger verify` checks of the transparency log: the stored tree against the
//! rows, and every stored checkpoint against the tree the rows make.
//!
//! The tree is recomputed from the rows' hashes alone (in memory, about 64 bytes a row), so a
//! rewrite of the rows with every later hash recomputed, a swap of two rows, or a deletion of
//! the tail shows: as stored hashes that differ from the recomputed ones, and, for the rows a
//! checkpoint covers, as a checkpoint whose root is not the rows' root or whose size is past
//! the last row. The checkpoints' signatures are checked with the hub's key when it is given.

use crate::db::Connection;

use super::note;
use super::proof::{self, Hashes, MemHashes};
use super::store::{checkpoints, size};
use super::{Hash, event_leaf};
use crate::keys::ServerKey;
use crate::store::StoreError;

/// What a successful check saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeReport {
    /// Leaves in the stored tree.
    pub size: u64,
    /// Rows the tree does not cover yet (appended outside a hub's writer since its last
    /// batch; the next batch adds them).
    pub behind: u64,
    /// Checkpoints checked.
    pub checkpoints: usize,
}

/// Rows read at a time.
const PAGE: i64 = 10_000;

/// Recomputes the tree from every row, in memory. Returns it and its size.
fn recompute(conn: &Connection) -> Result<Result<(MemHashes, u64), String>, StoreError> {
    let mut tree = MemHashes::default();
    let mut count: u64 = 0;
    let mut statement = conn.prepare_cached(
        "SELECT seq, row_hash FROM events WHERE seq > ?1 ORDER BY seq LIMIT CAST(?2 AS BIGINT)",
    )?;
    loop {
        let after = i64::try_from(count).unwrap_or(i64::MAX);
        let rows: Vec<(i64, String)> = statement
            .query_map(crate::db::params![after, PAGE], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?
            .collect::<Result<_, _>>()?;
        if rows.is_empty() {
            return Ok(Ok((tree, count)));
        }
        let mut leaves = Vec::with_capacity(rows.len());
        for (seq, row_hash) in rows {
            if u64::try_from(seq).ok() != Some(count + leaves.len() as u64 + 1) {
                return Ok(Err(format!("row {seq}: the rows are not contiguous")));
            }
            match event_leaf(&row_hash) {
                Ok(leaf) => leaves.push(leaf),
                Err(reason) => return Ok(Err(format!("row {seq}: {reason}"))),
            }
        }
        count = proof::append(&mut tree, count, &leaves)?;
    }
}

/// Checks the stored tree and every checkpoint against the rows; `key` checks the
/// checkpoints' signatures. Returns the first problem found, in plain words.
///
/// # Errors
/// [`StoreError`] when the store cannot be read.
pub fn check(
    conn: &Connection,
    key: Option<&ServerKey>,
) -> Result<Result<TreeReport, String>, StoreError> {
    if !crate::db::dialect::table_exists(conn, "tlog_hashes")? {
        return Ok(Ok(TreeReport {
            size: 0,
            behind: 0,
            checkpoints: 0,
        }));
    }
    let (mut tree, rows) = match recompute(conn)? {
        Ok(recomputed) => recomputed,
        Err(problem) => return Ok(Err(problem)),
    };
    let stored_size = size(conn)?;
    if stored_size > rows {
        return Ok(Err(format!(
            "the transparency log holds {stored_size} leaves but the log has {rows} rows: rows were deleted"
        )));
    }
    if let Err(problem) = compare_stored(conn, &mut tree)? {
        return Ok(Err(problem));
    }
    let all = checkpoints(conn)?;
    for checkpoint in &all {
        let size = checkpoint.size;
        let problem = |reason: &str| Ok(Err(format!("checkpoint of size {size}: {reason}")));
        if size > rows {
            return problem(&format!(
                "the log has only {rows} rows: rows after {rows} were deleted"
            ));
        }
        let origin = checkpoint.note.split('\n').next().unwrap_or_default();
        let signed = match key {
            Some(key) => note::verify(&checkpoint.note, origin, &key.public_key_bytes()),
            None => note::Checkpoint::parse(
                checkpoint
                    .note
                    .split_once("\n\n")
                    .map(|(body, _)| format!("{body}\n"))
                    .unwrap_or_default()
                    .as_str(),
            ),
        };
        let signed = match signed {
            Ok(signed) => signed,
            Err(reason) => return problem(&reason),
        };
        if signed.size != size || signed.root != checkpoint.root {
            return problem("the signed note does not name the stored size and root");
        }
        if proof::root(&mut tree, size)? != checkpoint.root {
            return problem("its root is not the root of the rows: a row it covers was changed");
        }
    }
    Ok(Ok(TreeReport {
        size: stored_size,
        behind: rows - stored_size,
        checkpoints: all.len(),
    }))
}

/// Compares every stored hash with the recomputed tree.
fn compare_stored(
    conn: &Connection,
    tree: &mut MemHashes,
) -> Result<Result<(), String>, StoreError> {
    let mut statement =
        conn.prepare_cached("SELECT level, idx, hash FROM tlog_hashes ORDER BY level, idx")?;
    let mut problem = None;
    statement.for_each([], |row| {
        if problem.is_some() {
            return Ok(());
        }
        let (level, index, bytes): (i64, i64, Vec<u8>) = (row.get(0)?, row.get(1)?, row.get(2)?);
        let (Ok(level), Ok(index)) = (u32::try_from(level), u64::try_from(index)) else {
            problem = Some(format!("a stored hash at ({level}, {index}) is out of range"));
            return Ok(());
        };
        let stored: Option<Hash> = super::store::stored_hash(&bytes).ok();
        let expected = tree.hash_at(level, index).ok();
        if expected.is_none() || stored != expected {
            problem = Some(format!(
                "the stored tree hash at ({level}, {index}) is not the rows' (leaves from {} were changed or removed)",
                index << level
            ));
        }
        Ok(())
    })?;
    Ok(problem.map_or(Ok(()), Err))
}
