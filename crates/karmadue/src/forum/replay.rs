//! Rebuilds the `forum_acceptances` projection from `forum.accepted` and
//! `forum.accept_confirmed`: `karmadue ledger rebuild`. The store functions also update the
//! post's counters, which the scratch store does not hold (`forum_posts` is not rebuilt): those
//! statements change nothing there.

use kd_core::db::Connection;
use kd_core::eventlog::EventRow;

use crate::events::EventPayload;
use crate::forum::events::{AcceptConfirmed, Accepted};
use crate::replay::{Replay, ReplayError, payload};

/// The forum area's replay (`crate::replay::Replay`).
pub struct ForumReplay;

impl Replay for ForumReplay {
    fn area(&self) -> &'static str {
        "forum"
    }

    fn apply(&self, conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
        apply_row(conn, row)
    }
}

/// Applies `row` to `forum_acceptances` in `conn` when it is an acceptance or a confirmation;
/// other kinds are skipped.
///
/// # Errors
/// [`ReplayError`] when the payload does not fit its kind or a statement fails.
fn apply_row(conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
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
