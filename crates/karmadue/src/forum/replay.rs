//! Rebuilds the `forum_acceptances` projection from `forum.accepted` and
//! `forum.accept_confirmed`: `karmadue ledger rebuild`. The store functions also update the
//! post's counters, which the scratch store does not hold (`forum_posts` is not rebuilt): those
//! statements change nothing there.

use kd_core::db::Connection;
use kd_core::eventlog::EventRow;

use crate::events::EventPayload;
use crate::events::forum::{AcceptConfirmed, Accepted};
use crate::rebuild::{RebuildError, payload};

/// Applies `row` to `forum_acceptances` in `conn` when it is an acceptance or a confirmation;
/// other kinds are skipped.
///
/// # Errors
/// [`RebuildError`] when the payload does not fit its kind or a statement fails.
pub fn apply(conn: &Connection, row: &EventRow) -> Result<(), RebuildError> {
    match row.kind.as_str() {
        Accepted::KIND => {
            let accepted: Accepted = payload(row)?;
            super::store::accept(conn, &accepted.post_id, &accepted.asker, row.created_ms)?;
        }
        AcceptConfirmed::KIND => {
            let confirmed: AcceptConfirmed = payload(row)?;
            super::store::confirm(
                conn,
                &confirmed.post_id,
                &confirmed.peer,
                confirmed.counted,
                row.created_ms,
            )?;
        }
        _ => {}
    }
    Ok(())
}
