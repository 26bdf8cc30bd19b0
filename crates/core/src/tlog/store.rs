//! The transparency log's tables: `tlog_hashes` (every complete subtree's hash, keyed by
//! (level, index)) and `tlog_checkpoints` (every signed checkpoint, one per size).
//!
//! [`extend`] runs at the end of every write batch, in the batch's transaction (see
//! `store::run_batch`): it reads the events after the tree's size and appends their leaves, so
//! the tree always covers what was committed with it, whoever appended the rows (this process,
//! another hub on the same database, an import). The writer keeps the tree's right edge in
//! memory across batches ([`WriterTree`], decision 272).
//!
//! A stored hash is 32 raw bytes (`BLOB`/`BYTEA`, schema 19 on, decision 271); the readers
//! also take the 64 lowercase hex characters of schema 18, so `ledger verify` and the proof
//! commands, which open a database read-only without migrating it, still read an older one.

use crate::db::{Connection, OptionalExtension, params};
use crate::eventlog::EventRow;

use super::note::{self, Checkpoint};
use super::proof::{self, Hashes};
use super::{Hash, event_leaf, parse_hex};
use crate::keys::ServerKey;
use crate::store::StoreError;

/// Rows read at a time when the tree catches up with a long log.
const PAGE: i64 = 10_000;

/// The stored hashes in the database, read and written on `conn`.
pub struct DbHashes<'c> {
    conn: &'c Connection,
}

impl<'c> DbHashes<'c> {
    /// The stored hashes of `conn`'s database.
    pub fn new(conn: &'c Connection) -> Self {
        Self { conn }
    }
}

impl Hashes for DbHashes<'_> {
    fn hash_at(&mut self, level: u32, index: u64) -> Result<Hash, StoreError> {
        let bytes: Option<Vec<u8>> = self
            .conn
            .prepare_cached("SELECT hash FROM tlog_hashes WHERE level = ?1 AND idx = ?2")?
            .query_row(params![i64::from(level), to_i64(index)?], |row| row.get(0))
            .optional()?;
        let bytes = bytes.ok_or_else(|| {
            StoreError::Invalid(format!("the tree has no hash at ({level}, {index})"))
        })?;
        stored_hash(&bytes).map_err(StoreError::Invalid)
    }

    fn put(&mut self, level: u32, index: u64, hash: &Hash) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("INSERT INTO tlog_hashes (level, idx, hash) VALUES (?1, ?2, ?3)")?
            .execute(params![i64::from(level), to_i64(index)?, &hash[..]])?;
        Ok(())
    }
}

/// A stored hash as read: 32 raw bytes, or (a database of schema 18, read without migrating
/// it) 64 hex characters.
///
/// # Errors
/// A message for any other length or a bad hex digit.
pub fn stored_hash(bytes: &[u8]) -> Result<Hash, String> {
    if let Ok(hash) = Hash::try_from(bytes) {
        return Ok(hash);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) if text.len() == 64 => parse_hex(text),
        _ => Err(format!(
            "a stored hash is {} bytes, not 32 (nor 64 hex characters)",
            bytes.len()
        )),
    }
}

fn to_i64(n: u64) -> Result<i64, StoreError> {
    i64::try_from(n).map_err(|_| StoreError::Invalid(format!("{n} is out of range")))
}

fn to_u64(n: i64) -> Result<u64, StoreError> {
    u64::try_from(n).map_err(|_| StoreError::Invalid(format!("{n} is out of range")))
}

/// Leaves in the stored tree.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn size(conn: &Connection) -> Result<u64, StoreError> {
    let size: i64 = conn
        .prepare_cached("SELECT COALESCE(MAX(idx) + 1, 0) FROM tlog_hashes WHERE level = 0")?
        .query_row([], |row| row.get(0))?;
    to_u64(size)
}

/// Appends the leaves of every event after the tree's size. Returns the new size.
///
/// # Errors
/// [`StoreError::Invalid`] when the rows after the tree are not contiguous from its size + 1
/// or a row hash is not hex; [`StoreError`] when the store fails.
pub fn extend(conn: &Connection) -> Result<u64, StoreError> {
    extend_from(conn, &mut proof::Frontier::default(), size(conn)?)
}

/// [`extend`] from a tree of `size` leaves, keeping its right edge in `frontier`.
fn extend_from(
    conn: &Connection,
    frontier: &mut proof::Frontier,
    mut size: u64,
) -> Result<u64, StoreError> {
    let mut hashes = DbHashes::new(conn);
    loop {
        let rows: Vec<(i64, String)> = conn
            .prepare_cached(
                "SELECT seq, row_hash FROM events WHERE seq > ?1 ORDER BY seq LIMIT CAST(?2 AS BIGINT)",
            )?
            .query_map(params![to_i64(size)?, PAGE], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?
            .collect::<Result<_, _>>()?;
        let mut leaves = Vec::with_capacity(rows.len());
        for (at, (seq, row_hash)) in rows.iter().enumerate() {
            if to_u64(*seq)? != size + at as u64 + 1 {
                return Err(StoreError::Invalid(format!(
                    "the transparency log expected seq {} next, found {seq}",
                    size + at as u64 + 1
                )));
            }
            leaves.push(event_leaf(row_hash).map_err(StoreError::Invalid)?);
        }
        size = proof::append_with(&mut hashes, frontier, size, &leaves)?;
        // A short page was the end of the log.
        if rows.len() < PAGE as usize {
            return Ok(size);
        }
    }
}

/// The tree as the store's writer keeps it between batches (decision 272): the right edge of
/// the stored tree, trusted only while the stored size is the size it was left at. Another
/// hub on the same database, a checkpoint job's own [`extend`], a rolled-back batch (the
/// writer calls [`WriterTree::forget`]) or rows deleted by hand change the stored size, and
/// the edge is then rebuilt from the stored hashes as they are needed.
#[derive(Debug, Default)]
pub struct WriterTree {
    frontier: Option<proof::Frontier>,
}

impl WriterTree {
    /// Drops the right edge (a failed batch, the log turned off).
    pub fn forget(&mut self) {
        self.frontier = None;
    }

    /// Leaves of the tree the kept edge belongs to, if one is kept.
    pub fn size(&self) -> Option<u64> {
        self.frontier.as_ref().map(proof::Frontier::size)
    }

    /// Extends the stored tree to the log's last seq `head_seq`, at the end of a batch whose
    /// kept jobs appended `appended` (in seq order). Their leaves come from memory when they
    /// are exactly the rows after the stored tree; otherwise the rows are read, as [`extend`]
    /// does. Returns the new size. On an error the edge is dropped.
    ///
    /// # Errors
    /// As [`extend`].
    pub fn extend(
        &mut self,
        conn: &Connection,
        appended: &[EventRow],
        head_seq: i64,
    ) -> Result<u64, StoreError> {
        let stored = size(conn)?;
        let mut frontier = self
            .frontier
            .take()
            .filter(|frontier| frontier.size() == stored)
            .unwrap_or_default();
        let follows = appended
            .iter()
            .zip(stored..)
            .all(|(row, at)| u64::try_from(row.seq).ok() == Some(at + 1));
        let ends = appended.last().map_or(to_i64(stored)?, |row| row.seq);
        let size = if follows && ends == head_seq {
            let leaves = appended
                .iter()
                .map(|row| event_leaf(&row.row_hash))
                .collect::<Result<Vec<_>, _>>()
                .map_err(StoreError::Invalid)?;
            proof::append_with(&mut DbHashes::new(conn), &mut frontier, stored, &leaves)?
        } else {
            extend_from(conn, &mut frontier, stored)?
        };
        self.frontier = Some(frontier);
        Ok(size)
    }
}

/// The stored hashes at tree `level`, indices `from .. from + count` (fewer when the tree
/// has fewer), in order.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn hashes_at_level(
    conn: &Connection,
    level: u32,
    from: u64,
    count: u64,
) -> Result<Vec<Hash>, StoreError> {
    let stored: Vec<Vec<u8>> = conn
        .prepare_cached(
            "SELECT hash FROM tlog_hashes WHERE level = ?1 AND idx >= ?2 ORDER BY idx LIMIT CAST(?3 AS BIGINT)",
        )?
        .query_map(params![i64::from(level), to_i64(from)?, to_i64(count)?], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    stored
        .iter()
        .map(|bytes| stored_hash(bytes).map_err(StoreError::Invalid))
        .collect()
}

/// The leaf data (the 32 raw bytes of `row_hash`) of the entries `from .. from + count`
/// (0-based: seq `from + 1` on), at most `within` entries in all.
///
/// # Errors
/// [`StoreError`] when the store fails or a row hash is not hex.
pub fn leaf_data(
    conn: &Connection,
    from: u64,
    count: u64,
    within: u64,
) -> Result<Vec<Vec<u8>>, StoreError> {
    let count = count.min(within.saturating_sub(from));
    let texts: Vec<String> = conn
        .prepare_cached(
            "SELECT row_hash FROM events WHERE seq > ?1 ORDER BY seq LIMIT CAST(?2 AS BIGINT)",
        )?
        .query_map(params![to_i64(from)?, to_i64(count)?], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    texts
        .iter()
        .map(|text| {
            parse_hex(text)
                .map(|hash| hash.to_vec())
                .map_err(StoreError::Invalid)
        })
        .collect()
}

/// A checkpoint as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCheckpoint {
    /// Tree size.
    pub size: u64,
    /// Root hash.
    pub root: Hash,
    /// The signed note, as served.
    pub note: String,
    /// When it was published, Unix milliseconds UTC.
    pub published_ms: i64,
}

const CHECKPOINT_COLUMNS: &str = "size, root_hash, note, published_ms";

fn checkpoint_from_row(row: &crate::db::Row<'_>) -> crate::db::Result<(i64, String, String, i64)> {
    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
}

fn stored(row: (i64, String, String, i64)) -> Result<StoredCheckpoint, StoreError> {
    Ok(StoredCheckpoint {
        size: to_u64(row.0)?,
        root: parse_hex(&row.1).map_err(StoreError::Invalid)?,
        note: row.2,
        published_ms: row.3,
    })
}

/// The newest checkpoint (the largest size), if any.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn latest_checkpoint(conn: &Connection) -> Result<Option<StoredCheckpoint>, StoreError> {
    conn.prepare_cached(&format!(
        "SELECT {CHECKPOINT_COLUMNS} FROM tlog_checkpoints ORDER BY size DESC LIMIT 1"
    ))?
    .query_row([], checkpoint_from_row)
    .optional()?
    .map(stored)
    .transpose()
}

/// The checkpoint of `size`, if one was published.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn checkpoint_of(conn: &Connection, size: u64) -> Result<Option<StoredCheckpoint>, StoreError> {
    conn.prepare_cached(&format!(
        "SELECT {CHECKPOINT_COLUMNS} FROM tlog_checkpoints WHERE size = ?1"
    ))?
    .query_row([to_i64(size)?], checkpoint_from_row)
    .optional()?
    .map(stored)
    .transpose()
}

/// Every checkpoint, smallest size first.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn checkpoints(conn: &Connection) -> Result<Vec<StoredCheckpoint>, StoreError> {
    let rows: Vec<_> = conn
        .prepare_cached(&format!(
            "SELECT {CHECKPOINT_COLUMNS} FROM tlog_checkpoints ORDER BY size"
        ))?
        .query_map([], checkpoint_from_row)?
        .collect::<Result<_, _>>()?;
    rows.into_iter().map(stored).collect()
}

/// Extends the tree, then signs and stores a checkpoint of its size when that size has none
/// yet and is not 0 (several hubs on one database store each size once: the first wins).
/// Returns the checkpoint stored now, if any. Runs in the writer's transaction.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn publish(
    conn: &Connection,
    key: &ServerKey,
    origin: &str,
    now_ms: i64,
) -> Result<Option<StoredCheckpoint>, StoreError> {
    let size = extend(conn)?;
    if size == 0 || checkpoint_of(conn, size)?.is_some() {
        return Ok(None);
    }
    let root = proof::root(&mut DbHashes::new(conn), size)?;
    let checkpoint = Checkpoint {
        origin: origin.to_owned(),
        size,
        root,
    };
    let signed = note::sign(&checkpoint, key);
    let inserted = conn
        .prepare_cached(&format!(
            "INSERT INTO tlog_checkpoints ({CHECKPOINT_COLUMNS}) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (size) DO NOTHING"
        ))?
        .execute(params![to_i64(size)?, hex::encode(root), signed, now_ms])?;
    Ok((inserted == 1).then_some(StoredCheckpoint {
        size,
        root,
        note: signed,
        published_ms: now_ms,
    }))
}
