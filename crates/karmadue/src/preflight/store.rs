//! Preflight's storage: the `receipts` table (docs/architecture.md "Storage modules").

use kd_core::db::{Connection, DbError, FromRow, OptionalExtension};

use super::Receipt;

kd_core::db_row! {
    impl FromRow, ToRow for Receipt {
        receipt_id, resource_id, version, commit_ref => commit, agent_id, intended_action,
        issued_ms, expires_ms, signed_text, signature,
    }
}

/// Stores a receipt (working state).
///
/// # Errors
/// When the store fails.
pub fn insert_receipt(conn: &Connection, receipt: &Receipt) -> Result<(), DbError> {
    conn.insert_row(
        "INSERT INTO receipts (receipt_id, resource_id, version, commit_ref, agent_id, intended_action,
            issued_ms, expires_ms, signed_text, signature)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        receipt,
    )?;
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
    .query_row([receipt_id], Receipt::from_row)
    .optional()
}
