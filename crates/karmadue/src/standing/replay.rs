//! Rebuilds the `stamps` and `capabilities` projections: `karmadue ledger rebuild`.

use kd_core::db::{Connection, params};
use kd_core::eventlog::EventRow;

use crate::events::EventPayload;
use crate::events::standing::{CapabilityGranted, StampIssued};
use crate::rebuild::{RebuildError, payload};

/// Applies `row` to `stamps` / `capabilities` in `conn`; other kinds are skipped.
///
/// # Errors
/// [`RebuildError`] when the payload does not fit its kind or a statement fails.
pub fn apply(conn: &Connection, row: &EventRow) -> Result<(), RebuildError> {
    match row.kind.as_str() {
        StampIssued::KIND => {
            let stamp: StampIssued = payload(row)?;
            conn.prepare_cached(
                "INSERT INTO stamps (stamp_id, agent_id, stamp, issued_ms, expires_ms, issuer, credential_id, detail, event_seq)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![
                stamp.stamp_id,
                stamp.agent_id,
                stamp.stamp,
                row.created_ms,
                stamp.expires_ms,
                stamp.issuer,
                stamp.credential_id,
                stamp.detail.to_string(),
                row.seq
            ])?;
        }
        CapabilityGranted::KIND => {
            let granted: CapabilityGranted = payload(row)?;
            conn.prepare_cached(
                "INSERT INTO capabilities (agent_id, capability, granted_ms, expires_ms, source) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (agent_id, capability) DO UPDATE SET granted_ms = excluded.granted_ms,
                     expires_ms = excluded.expires_ms, source = excluded.source",
            )?
            .execute(params![granted.agent_id, granted.capability, row.created_ms, granted.expires_ms, granted.source])?;
        }
        _ => {}
    }
    Ok(())
}
