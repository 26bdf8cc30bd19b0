//! The global, append-only, hash-chained event log (DESIGN rule 1; spec "Signed log head").
//!
//! Each row commits to the row before it. The hashed form of a row, `kd-event-v1`, is eight
//! fields joined by LF (0x0A), no trailing LF, UTF-8:
//!
//! ```text
//! kd-event-v1
//! <seq>            decimal, 1 for the first row
//! <prev_hash>      lowercase hex row_hash of seq - 1; 64 zeros for seq 1
//! <created_ms>     decimal Unix milliseconds, UTC
//! <kind>           e.g. agent.registered
//! <actor>          agent id, "person:<id>" or "hub"
//! <subject>        the id the event is about, or empty
//! <payload>        the payload's jsonb-canonical text (kd_protocol::canonical)
//! ```
//!
//! `row_hash` is the lowercase hex SHA-256 of those bytes. No field but the payload may
//! contain LF, and the canonical payload text never does (LF inside strings is escaped), so the
//! form is unambiguous. [`verify_chain`] recomputes every hash from row 1.

use crate::db::{Connection, FromRow, params};
use sha2::{Digest, Sha256};

use crate::store::StoreError;

/// The payload key an event written by a connected app carries (spec "Using KarmaDue from
/// Claude or ChatGPT": "Every event it writes records auth_method oauth"): the writer adds
/// `"auth_method": "oauth"` to the payload of every event a job appends after
/// [`crate::store::WriteTxn::set_auth_method`] (docs/decisions.md 315). An event without the
/// key was written by a signature, an owner's session or the hub.
pub const AUTH_METHOD_KEY: &str = "auth_method";

/// Splits a stored payload into the kind's own fields and the writer's [`AUTH_METHOD_KEY`]
/// (absent for most rows), so a payload struct that refuses unknown fields reads a connected
/// app's event too.
///
/// # Errors
/// The serde error when `payload` is not JSON.
pub fn split_auth_method(
    payload: &str,
) -> Result<(serde_json::Value, Option<String>), serde_json::Error> {
    let mut value: serde_json::Value = serde_json::from_str(payload)?;
    let method = value
        .as_object_mut()
        .and_then(|fields| fields.remove(AUTH_METHOD_KEY))
        .and_then(|method| method.as_str().map(str::to_owned));
    Ok((value, method))
}

/// The `prev_hash` of the first row: 64 zeros.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// An event about to be appended. `kind`, `actor` and `subject` must not contain LF.
#[derive(Debug, Clone)]
pub struct NewEvent {
    /// Event kind, dotted lowercase, e.g. `agent.renamed`.
    pub kind: &'static str,
    /// Who acted: an agent id, `person:<id>`, or `hub`.
    pub actor: String,
    /// What the event is about (an id), or empty.
    pub subject: String,
    /// The event's data. Stored as its jsonb-canonical text.
    pub payload: serde_json::Value,
}

/// The payload of one event kind: a serde struct whose fields are the payload's keys. The
/// log stores the payload's jsonb-canonical text, so the order of the fields does not matter,
/// but their names and value types are the log's vocabulary: renaming one changes the bytes
/// new rows hash. `kd_karmadue::kinds::ALL` lists every kind the hub appends.
pub trait EventPayload: serde::Serialize {
    /// The event kind, dotted lowercase, e.g. `agent.renamed`.
    const KIND: &'static str;

    /// The event to append: this payload under [`Self::KIND`].
    ///
    /// # Errors
    /// [`StoreError::Invalid`] when the payload does not serialise to JSON (a payload with a
    /// map keyed by something other than text: a bug).
    fn event(
        &self,
        actor: impl Into<String>,
        subject: impl Into<String>,
    ) -> Result<NewEvent, StoreError> {
        let payload = serde_json::to_value(self)
            .map_err(|error| StoreError::Invalid(format!("{} payload: {error}", Self::KIND)))?;
        Ok(NewEvent {
            kind: Self::KIND,
            actor: actor.into(),
            subject: subject.into(),
            payload,
        })
    }
}

/// A row of the log as stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EventRow {
    /// Position in the log, from 1.
    pub seq: i64,
    /// `row_hash` of the previous row ([`GENESIS_HASH`] for seq 1).
    pub prev_hash: String,
    /// This row's hash (see the module doc).
    pub row_hash: String,
    /// Event kind.
    pub kind: String,
    /// Who acted.
    pub actor: String,
    /// What it is about.
    pub subject: String,
    /// jsonb-canonical payload text.
    pub payload: String,
    /// Unix milliseconds, UTC.
    pub created_ms: i64,
}

/// The last row's position and hash, which the next append links to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainHead {
    /// Last seq (0 when the log is empty).
    pub seq: i64,
    /// Last row_hash ([`GENESIS_HASH`] when the log is empty).
    pub row_hash: String,
}

impl ChainHead {
    /// Reads the head from the store.
    pub fn load(conn: &Connection) -> Result<Self, StoreError> {
        let head = conn
            .query_row(
                "SELECT seq, row_hash FROM events ORDER BY seq DESC LIMIT 1",
                [],
                ChainHead::from_row,
            )
            .or_else(|error| match error {
                crate::db::DbError::NoRows => Ok(ChainHead {
                    seq: 0,
                    row_hash: GENESIS_HASH.to_owned(),
                }),
                other => Err(other),
            })?;
        Ok(head)
    }
}

crate::db_row! {
    impl FromRow for ChainHead { seq, row_hash }
}

/// The `kd-event-v1` text of a row (see the module doc).
pub fn row_text(
    seq: i64,
    prev_hash: &str,
    created_ms: i64,
    kind: &str,
    actor: &str,
    subject: &str,
    payload: &str,
) -> String {
    format!("kd-event-v1\n{seq}\n{prev_hash}\n{created_ms}\n{kind}\n{actor}\n{subject}\n{payload}")
}

impl EventRow {
    /// The lowercase hex SHA-256 of this row's `kd-event-v1` text: what `row_hash` must be.
    pub fn computed_hash(&self) -> String {
        let text = row_text(
            self.seq,
            &self.prev_hash,
            self.created_ms,
            &self.kind,
            &self.actor,
            &self.subject,
            &self.payload,
        );
        hex::encode(Sha256::digest(text.as_bytes()))
    }
}

/// The log's columns, in the order of [`EventRow`]'s fields: the select list of a read of
/// whole rows (read by name with [`FromRow`]).
pub const ROW_COLUMNS: &str = "seq, prev_hash, row_hash, kind, actor, subject, payload, created_ms";

crate::db_row! {
    impl FromRow, ToRow for EventRow {
        seq, prev_hash, row_hash, kind, actor, subject, payload, created_ms
    }
}

/// Appends `event` after `head` and advances `head`. Runs inside the caller's transaction.
pub(crate) fn append(
    conn: &Connection,
    head: &mut ChainHead,
    created_ms: i64,
    event: NewEvent,
) -> Result<EventRow, StoreError> {
    for field in [event.kind, event.actor.as_str(), event.subject.as_str()] {
        if field.contains('\n') {
            return Err(StoreError::Invalid(
                "event field contains a line feed".into(),
            ));
        }
    }
    let mut row = EventRow {
        seq: head.seq + 1,
        prev_hash: head.row_hash.clone(),
        row_hash: String::new(),
        kind: event.kind.to_owned(),
        actor: event.actor,
        subject: event.subject,
        payload: kd_protocol::canonical::canonical_value_text(&event.payload),
        created_ms,
    };
    row.row_hash = row.computed_hash();
    conn.insert_row(
        &format!("INSERT INTO events ({ROW_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"),
        &row,
    )?;
    head.seq = row.seq;
    head.row_hash.clone_from(&row.row_hash);
    Ok(row)
}

/// Where and why [`verify_chain`] stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("row {seq}: {reason}")]
pub struct ChainBreak {
    /// The first row that does not verify.
    pub seq: i64,
    /// What is wrong with it, in plain words.
    pub reason: String,
}

/// What a successful verification saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainReport {
    /// Rows checked.
    pub rows: i64,
    /// The head after the last row.
    pub head: ChainHead,
}

/// Recomputes every hash from row 1 and checks each row links to the one before.
///
/// # Errors
/// `Ok(Err(ChainBreak))` names the first broken row: a gap in `seq`, a `prev_hash` that is not
/// the previous `row_hash`, a `row_hash` that does not match the row, or a payload that is not
/// canonical text. `Err(StoreError)` when the store cannot be read.
pub fn verify_chain(conn: &Connection) -> Result<Result<ChainReport, ChainBreak>, StoreError> {
    let mut head = ChainHead {
        seq: 0,
        row_hash: GENESIS_HASH.to_owned(),
    };
    // Pages of rows in seq order, so a log of millions of rows is read in bounded memory on
    // either backend.
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {ROW_COLUMNS} FROM events WHERE seq > ?1 ORDER BY seq LIMIT {VERIFY_PAGE}"
    ))?;
    loop {
        let page = statement
            .query_map([head.seq], EventRow::from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        if page.is_empty() {
            break;
        }
        for row in page {
            if let Some(reason) = break_reason(&row, &head) {
                return Ok(Err(ChainBreak {
                    seq: row.seq,
                    reason,
                }));
            }
            head = ChainHead {
                seq: row.seq,
                row_hash: row.row_hash,
            };
        }
    }
    Ok(Ok(ChainReport {
        rows: head.seq,
        head,
    }))
}

/// Rows [`verify_chain`] reads at a time.
const VERIFY_PAGE: i64 = 10_000;

/// Why `row` does not follow `head`, if it does not.
fn break_reason(row: &EventRow, head: &ChainHead) -> Option<String> {
    if row.seq != head.seq + 1 {
        return Some(format!("expected seq {} (rows are missing)", head.seq + 1));
    }
    if row.prev_hash != head.row_hash {
        return Some("prev_hash is not the previous row's row_hash".into());
    }
    if kd_protocol::canonical::canonical_text(&row.payload)
        .ok()
        .as_deref()
        != Some(row.payload.as_str())
    {
        return Some("payload is not canonical jsonb text".into());
    }
    if row.computed_hash() != row.row_hash {
        return Some("row_hash does not match the row's contents".into());
    }
    None
}

/// Reads the rows an agent (or any id) acted in or is the subject of, newest first, at most
/// `limit`.
pub fn rows_for(conn: &Connection, id: &str, limit: i64) -> Result<Vec<EventRow>, StoreError> {
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {ROW_COLUMNS} FROM events
         WHERE seq IN (SELECT seq FROM events WHERE actor = ?1
                       UNION SELECT seq FROM events WHERE subject = ?1)
         ORDER BY seq DESC LIMIT CAST(?2 AS BIGINT)"
    ))?;
    let rows = statement
        .query_map(params![id, limit], EventRow::from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}
/// Reads at most `limit` rows after `after`, in seq order (a page of the log).
///
/// # Errors
/// [`StoreError`] when the store cannot be read.
pub fn rows_after(conn: &Connection, after: i64, limit: i64) -> Result<Vec<EventRow>, StoreError> {
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {ROW_COLUMNS} FROM events WHERE seq > ?1 ORDER BY seq LIMIT CAST(?2 AS BIGINT)"
    ))?;
    let rows = statement
        .query_map(params![after, limit], EventRow::from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Number of rows in the log.
pub fn count(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn.query_row("SELECT COUNT(*) FROM events", [], |row| row.get(0))?)
}
