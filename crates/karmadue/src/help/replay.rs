//! Rebuilds the `verification_disputes` projection from `verification.disputed`: `karmadue
//! ledger rebuild`.

use kd_core::db::Connection;
use kd_core::eventlog::EventRow;

use crate::events::EventPayload;
use crate::help::events::VerificationDisputed;
use crate::replay::{Replay, ReplayError, payload};

/// The help area's replay (`crate::replay::Replay`).
pub struct HelpReplay;

impl Replay for HelpReplay {
    fn area(&self) -> &'static str {
        "help"
    }

    fn apply(&self, conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
        apply_row(conn, row)
    }
}

/// Applies `row` to `verification_disputes` in `conn` when it is `verification.disputed`;
/// other kinds are skipped.
///
/// # Errors
/// [`ReplayError`] when the payload does not fit its kind or the statement fails.
fn apply_row(conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
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
