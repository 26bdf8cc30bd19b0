//! Rebuilds the `stamps` and `capabilities` projections: `karmadue ledger rebuild`.

use kd_core::db::Connection;
use kd_core::eventlog::EventRow;

use super::stamps::{Capability, Stamp};
use crate::events::EventPayload;
use crate::replay::{Replay, ReplayError, payload};
use crate::standing::events::{CapabilityGranted, StampIssued};

/// The standing area's replay (`crate::replay::Replay`).
pub struct StandingReplay;

impl Replay for StandingReplay {
    fn area(&self) -> &'static str {
        "standing"
    }

    fn apply(&self, conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
        apply_row(conn, row)
    }
}

/// Applies `row` to `stamps` / `capabilities` in `conn`; other kinds are skipped.
///
/// # Errors
/// [`ReplayError`] when the payload does not fit its kind or a statement fails.
fn apply_row(conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
    match row.kind.as_str() {
        StampIssued::KIND => {
            let stamp: StampIssued = payload(row)?;
            let stored = Stamp {
                stamp_id: stamp.stamp_id,
                agent_id: stamp.agent_id,
                stamp: stamp.stamp,
                issued_ms: row.created_ms,
                expires_ms: stamp.expires_ms,
                issuer: stamp.issuer,
                credential_id: stamp.credential_id,
                detail: stamp.detail,
                event_seq: row.seq,
            };
            super::store::insert_stamp(conn, &stored)?;
        }
        CapabilityGranted::KIND => {
            let granted: CapabilityGranted = payload(row)?;
            let capability = Capability {
                capability: granted.capability,
                granted_ms: row.created_ms,
                expires_ms: granted.expires_ms,
                source: granted.source,
            };
            super::store::upsert_capability(conn, &granted.agent_id, &capability)?;
        }
        _ => {}
    }
    Ok(())
}
