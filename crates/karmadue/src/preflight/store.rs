//! Preflight's storage: the `receipts` table (docs/architecture.md "Storage modules").

use kd_core::db::{Connection, DbError, OptionalExtension, params};

use super::Receipt;

/// Stores a receipt (working state).
///
/// # Errors
/// When the store fails.
pub fn insert_receipt(conn: &Connection, receipt: &Receipt) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO receipts (receipt_id, resource_id, version, commit_ref, agent_id, intended_action,
            issued_ms, expires_ms, signed_text, signature)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        receipt.receipt_id,
        receipt.resource_id,
        receipt.version,
        receipt.commit,
        receipt.agent_id,
        receipt.intended_action,
        receipt.issued_ms,
        receipt.expires_ms,
        receipt.signed_text,
        receipt.signature,
    ])?;
    Ok(())
}

/// A receipt by id.
///
/// # Errors
/// When the store fails.
pub fn receipt(conn: &Connection, receipt_id: &str) -> Result<Option<Receipt>, DbError> {
    conn.prepare_cached(
        "SELECT receipt_id, resource_id, version, commit_ref, agent_id, intended_action, issued_ms, expires_ms,
            signed_text, signature
         FROM receipts WHERE receipt_id = ?1",
    )?
    .query_row([receipt_id], |row| {
        Ok(Receipt {
            receipt_id: row.get(0)?,
            resource_id: row.get(1)?,
            version: row.get(2)?,
            commit: row.get(3)?,
            agent_id: row.get(4)?,
            intended_action: row.get(5)?,
            issued_ms: row.get(6)?,
            expires_ms: row.get(7)?,
            signed_text: row.get(8)?,
            signature: row.get(9)?,
        })
    })
    .optional()
}
