//! The mail outbox (DECISIONS 7). A write that decides to mail a person queues the message in
//! its own transaction ([`queue`]), so a refused or rolled-back write never sends anything.
//! With an SMTP relay configured a sender delivers the queue and marks each mail sent;
//! without one the operator reads the queue (`karmadue outbox`). Mail never carries a code,
//! a password or a session token.

use crate::db::{Connection, params};

use crate::store::StoreError;

/// One queued mail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    /// `kdm_` and 24 hex characters.
    pub mail_id: String,
    /// The recipient's normalized address.
    pub to_email: String,
    /// Subject line (one line).
    pub subject: String,
    /// Plain-text body.
    pub body: String,
    /// Queued at, Unix milliseconds.
    pub created_ms: i64,
    /// Delivered at, Unix milliseconds (None: still in the outbox).
    pub sent_ms: Option<i64>,
}

/// Queues `mail` (its `sent_ms` is ignored) in the caller's transaction.
///
/// # Errors
/// [`StoreError`] when the insert fails.
pub fn queue(conn: &Connection, mail: &Mail) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO outbox (mail_id, to_email, subject, body, created_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![mail.mail_id, mail.to_email, mail.subject, mail.body, mail.created_ms])?;
    Ok(())
}

/// Every mail, oldest first (`unsent_only`: those not delivered yet).
///
/// # Errors
/// [`StoreError`] when the store cannot be read.
pub fn list(conn: &Connection, unsent_only: bool) -> Result<Vec<Mail>, StoreError> {
    let sql = if unsent_only {
        "SELECT mail_id, to_email, subject, body, created_ms, sent_ms FROM outbox WHERE sent_ms IS NULL ORDER BY created_ms, mail_id"
    } else {
        "SELECT mail_id, to_email, subject, body, created_ms, sent_ms FROM outbox ORDER BY created_ms, mail_id"
    };
    let mut statement = conn.prepare_cached(sql)?;
    let rows = statement.query_map([], |row| {
        Ok(Mail {
            mail_id: row.get(0)?,
            to_email: row.get(1)?,
            subject: row.get(2)?,
            body: row.get(3)?,
            created_ms: row.get(4)?,
            sent_ms: row.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

/// What a delivered mail's body reads afterwards: the relay has it, and the hub keeps no
/// copy of a link that may still work.
pub const DELIVERED_BODY: &str = "(removed after delivery)";

/// Marks a mail delivered and removes its body (it may hold a claim link that still works);
/// the recipient, subject and times stay as the record of the delivery.
///
/// # Errors
/// [`StoreError`] when the update fails.
pub fn mark_sent(conn: &Connection, mail_id: &str, now_ms: i64) -> Result<(), StoreError> {
    conn.prepare_cached(
        "UPDATE outbox SET sent_ms = ?2, body = ?3 WHERE mail_id = ?1 AND sent_ms IS NULL",
    )?
    .execute(params![mail_id, now_ms, DELIVERED_BODY])?;
    Ok(())
}
