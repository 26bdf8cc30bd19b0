//! Rebuilds the `owner_grants` projection from the owner events: `karmadue ledger rebuild`.

use kd_core::db::{Connection, params};
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
            conn.prepare_cached(
                "INSERT INTO owner_grants (agent_id, person_id, scopes, spend_usd_per_day, spend_usd_per_action, actions_per_day, granted_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (agent_id) DO UPDATE SET person_id = excluded.person_id, scopes = excluded.scopes,
                    spend_usd_per_day = excluded.spend_usd_per_day, spend_usd_per_action = excluded.spend_usd_per_action,
                    actions_per_day = excluded.actions_per_day, granted_ms = excluded.granted_ms",
            )?
            .execute(params![
                linked.agent_id,
                linked.person_id,
                linked.scopes.to_string(),
                linked.spend_usd_per_day,
                linked.spend_usd_per_action,
                linked.actions_per_day,
                row.created_ms
            ])?;
        }
        OwnerGrantChanged::KIND => {
            let changed: OwnerGrantChanged = payload(row)?;
            conn.prepare_cached(
                "UPDATE owner_grants SET actions_per_day = ?2 WHERE agent_id = ?1",
            )?
            .execute(params![changed.agent_id, changed.actions_per_day])?;
        }
        AgentReleased::KIND => {
            conn.prepare_cached("DELETE FROM owner_grants WHERE agent_id = ?1")?
                .execute([&row.subject])?;
        }
        _ => {}
    }
    Ok(())
}
