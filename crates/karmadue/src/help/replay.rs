//! Rebuilds the `verification_disputes` projection from `verification.disputed`: `karmadue
//! ledger rebuild`.

use kd_core::db::Connection;
use kd_core::eventlog::EventRow;

use crate::events::EventPayload;
use crate::events::help::VerificationDisputed;
use crate::rebuild::{RebuildError, payload};

/// Applies `row` to `verification_disputes` in `conn` when it is `verification.disputed`;
/// other kinds are skipped.
///
/// # Errors
/// [`RebuildError`] when the payload does not fit its kind or the statement fails.
pub fn apply(conn: &Connection, row: &EventRow) -> Result<(), RebuildError> {
    if row.kind != VerificationDisputed::KIND {
        return Ok(());
    }
    let disputed: VerificationDisputed = payload(row)?;
    super::store::insert_dispute(
        conn,
        &disputed.ask_id,
        &disputed.reviewer,
        row.created_ms,
        row.seq,
    )?;
    Ok(())
}
