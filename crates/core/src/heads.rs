//! Signed daily heads of the event log (spec "Signed log head"; DECISIONS 8).
//!
//! One anchor per UTC day: the first time the hub publishes on a day (at start, at each UTC
//! midnight, and within a scheduler tick of the first event of an empty log), it signs the
//! latest event's `seq` and `row_hash` with `kd-passport-1` as kd-log-head-v1 text
//! ([`kd_protocol::log_head`]) and keeps the anchor in `log_heads`. A head is never changed or
//! removed, and a day that has one never gets another, so the day's anchor is the same for
//! every reader and every file written from it.
//!
//! A head is an attestation about the log, not an event in it: appending an event for it would
//! move the very head it names. It is written in the writer's transaction, so it names a row
//! that is committed with it, and two processes on one file publish one head per day.

use crate::db::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use crate::clock::{rfc3339_ms, utc_day};
use crate::eventlog::GENESIS_HASH;
use crate::keys::ServerKey;
use crate::store::{StoreError, WriteTxn};

/// How many earlier anchors the live head lists under `previous`.
pub const PREVIOUS_MAX: usize = 30;

/// One day's anchor, as stored in `log_heads`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogHead {
    /// The UTC day, `YYYY-MM-DD`.
    pub day: String,
    /// The latest event's seq when the head was published.
    pub seq: i64,
    /// That event's `row_hash` (lowercase hex).
    pub row_hash: String,
    /// kd-log-head-v1 text: recipe, day, seq, row_hash joined by LF.
    pub signed_text: String,
    /// Ed25519 signature by `key_id` over `signed_text`'s UTF-8 bytes, base64url.
    pub signature: String,
    /// The signing key's id, `kd-passport-1`.
    pub key_id: String,
    /// When it was published, Unix milliseconds UTC.
    pub published_ms: i64,
}

impl LogHead {
    /// The anchor as served and as written to `heads/YYYY-MM-DD.json`:
    /// `{recipe, date, seq, row_hash, signed_text, signature, key_id, alg, published_at}`
    /// (`published_at` RFC 3339 UTC with milliseconds; `alg` is `EdDSA`).
    pub fn to_json(&self) -> Value {
        json!({
            "recipe": kd_protocol::log_head::KD_LOG_HEAD_V1,
            "date": self.day,
            "seq": self.seq,
            "row_hash": self.row_hash,
            "signed_text": self.signed_text,
            "signature": self.signature,
            "key_id": self.key_id,
            "alg": "EdDSA",
            "published_at": rfc3339_ms(self.published_ms),
        })
    }
}

const COLUMNS: &str = "day, seq, row_hash, signed_text, signature, key_id, published_ms";

fn from_row(row: &crate::db::Row<'_>) -> crate::db::Result<LogHead> {
    Ok(LogHead {
        day: row.get(0)?,
        seq: row.get(1)?,
        row_hash: row.get(2)?,
        signed_text: row.get(3)?,
        signature: row.get(4)?,
        key_id: row.get(5)?,
        published_ms: row.get(6)?,
    })
}

/// Publishes the head of the UTC day of `txn.now_ms()` when it is due, inside the writer's
/// transaction, and returns that day's head.
///
/// Due means: the day has no head yet, the log is not empty, and no later day has one (a clock
/// set back never writes an anchor out of order). Returns the day's existing head when it has
/// one, and `None` when nothing is due and the day has none.
///
/// # Errors
/// [`StoreError`] when the store fails; the job should return it.
pub fn publish_due(txn: &mut WriteTxn<'_>, key: &ServerKey) -> Result<Option<LogHead>, StoreError> {
    let day = utc_day(txn.now_ms());
    let conn = txn.conn();
    if let Some(head) = on_day(conn, &day)? {
        return Ok(Some(head));
    }
    let head = txn.head().clone();
    if head.seq == 0 {
        return Ok(None);
    }
    let later: bool = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM log_heads WHERE day > ?1)")?
        .query_row([&day], |row| row.get(0))?;
    if later {
        return Ok(None);
    }
    let signed_text = kd_protocol::log_head::signed_text(&day, head.seq, &head.row_hash);
    let published = LogHead {
        signature: key.sign_text(&signed_text),
        key_id: key.key_id().to_owned(),
        day,
        seq: head.seq,
        row_hash: head.row_hash,
        signed_text,
        published_ms: txn.now_ms(),
    };
    txn.conn()
        .prepare_cached(&format!(
            "INSERT INTO log_heads ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
        ))?
        .execute(params![
            published.day,
            published.seq,
            published.row_hash,
            published.signed_text,
            published.signature,
            published.key_id,
            published.published_ms
        ])?;
    Ok(Some(published))
}

/// The head of `day` (`YYYY-MM-DD`), if it has one.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn on_day(conn: &Connection, day: &str) -> Result<Option<LogHead>, StoreError> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM log_heads WHERE day = ?1"))?
        .query_row([day], from_row)
        .optional()?)
}

/// The newest `limit` heads, newest first.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn latest(conn: &Connection, limit: usize) -> Result<Vec<LogHead>, StoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM log_heads ORDER BY day DESC LIMIT CAST(?1 AS BIGINT)"
    ))?;
    let heads = statement
        .query_map([limit], from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(heads)
}

/// Every head published since `day` (exclusive; `""` for all), oldest first.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn since(conn: &Connection, day: &str) -> Result<Vec<LogHead>, StoreError> {
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM log_heads WHERE day > ?1 ORDER BY day"
    ))?;
    let heads = statement
        .query_map([day], from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(heads)
}

/// Checks every stored head against the log: its text is the kd-log-head-v1 text of its own
/// fields, its day is not after `today` (`YYYY-MM-DD`), the event at `seq` has that
/// `row_hash`, seq never goes down from one day to the next, and, when `key` is given, the
/// signature verifies with it. Returns how many heads were checked (0 for a database from
/// before heads), or the first problem found (naming the day).
///
/// # Errors
/// [`StoreError`] when the store cannot be read.
pub fn check(
    conn: &Connection,
    key: Option<&ServerKey>,
    today: &str,
) -> Result<Result<usize, String>, StoreError> {
    let has_table = crate::db::dialect::table_exists(conn, "log_heads")?;
    if !has_table {
        return Ok(Ok(0));
    }
    let heads = since(conn, "")?;
    let mut last_seq = 0;
    for head in &heads {
        let problem = |reason: &str| Ok(Err(format!("head of {}: {reason}", head.day)));
        if !kd_protocol::log_head::is_day(&head.day) {
            return problem("the day is not YYYY-MM-DD");
        }
        if head.day.as_str() > today {
            return problem(
                "it is dated after today: the hub's clock was wrong when it was published",
            );
        }
        if head.signed_text
            != kd_protocol::log_head::signed_text(&head.day, head.seq, &head.row_hash)
        {
            return problem("signed_text is not the kd-log-head-v1 text of its fields");
        }
        if head.seq < last_seq {
            return problem("seq went down from the day before");
        }
        last_seq = head.seq;
        let logged: Option<String> = if head.seq == 0 {
            Some(GENESIS_HASH.to_owned())
        } else {
            conn.prepare_cached("SELECT row_hash FROM events WHERE seq = ?1")?
                .query_row([head.seq], |row| row.get(0))
                .optional()?
        };
        match logged {
            None => return problem("its seq is not in the log"),
            Some(hash) if hash != head.row_hash => {
                return problem("row_hash is not the logged event's row_hash");
            }
            Some(_) => {}
        }
        if let Some(key) = key
            && (head.key_id != key.key_id() || !key.verify_text(&head.signed_text, &head.signature))
        {
            return problem("the signature does not verify with the hub's key");
        }
    }
    Ok(Ok(heads.len()))
}
