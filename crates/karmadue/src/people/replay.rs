//! Rebuilds the `owner_grants` projection from the owner events: `karmadue ledger rebuild`.

use kd_core::db::Connection;
use kd_core::eventlog::EventRow;

use crate::events::EventPayload;
use crate::identity::events::AgentReleased;
use crate::people::events::{OwnerGrantChanged, OwnerLinked};
use crate::replay::{Replay, ReplayError, payload};

/// The people area's replay (`crate::replay::Replay`).
pub struct PeopleReplay;

impl Replay for PeopleReplay {
    fn area(&self) -> &'static str {
        "people"
    }

    fn apply(&self, conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
        apply_row(conn, row)
    }
}

/// Applies `row` to `owner_grants` in `conn` when it changes a grant; other kinds are skipped.
///
/// # Errors
/// [`ReplayError`] when the payload does not fit its kind or a statement fails.
fn apply_row(conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
    match row.kind.as_str() {
        OwnerLinked::KIND => {
            let linked: OwnerLinked = payload(row)?;
            super::store::upsert_grant(
                conn,
                &linked.agent_id,
                &linked.person_id,
                &linked.scopes.to_string(),
                linked.actions_per_day,
                row.created_ms,
            )?;
        }
        OwnerGrantChanged::KIND => {
            let changed: OwnerGrantChanged = payload(row)?;
            super::store::set_grant_actions(conn, &changed.agent_id, changed.actions_per_day)?;
        }
        AgentReleased::KIND => super::store::delete_owner_grants(conn, &row.subject)?,
        _ => {}
    }
    Ok(())
}
