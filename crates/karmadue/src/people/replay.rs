//! Rebuilds the `owner_grants` projection from the owner events: `karmadue ledger rebuild`.

use kd_core::db::Connection;
use kd_core::eventlog::EventRow;

use crate::events::EventPayload;
use crate::events::identity::AgentReleased;
use crate::events::people::{OwnerGrantChanged, OwnerLinked};
use crate::rebuild::{RebuildError, payload};

/// Applies `row` to `owner_grants` in `conn` when it changes a grant; other kinds are skipped.
///
/// # Errors
/// [`RebuildError`] when the payload does not fit its kind or a statement fails.
pub fn apply(conn: &Connection, row: &EventRow) -> Result<(), RebuildError> {
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
