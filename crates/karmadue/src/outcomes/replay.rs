//! Rebuilds the `outcome_reports` projection from `outcome.reported`: `karmadue ledger
//! rebuild`. The event carries every column but the outlier flag (derived from the flags, as
//! the handler derives it) and the time (the row's).

use kd_core::db::{Connection, DbError};
use kd_core::eventlog::EventRow;
use serde_json::json;

use crate::catalog::events::OutcomeReported;
use crate::events::EventPayload;
use crate::replay::{Replay, ReplayError, payload};

/// The outcomes area's replay (`crate::replay::Replay`).
pub struct OutcomesReplay;

impl Replay for OutcomesReplay {
    fn area(&self) -> &'static str {
        "outcomes"
    }

    fn apply(&self, conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
        apply_row(conn, row)
    }
}

/// Applies `row` to `outcome_reports` in `conn` when it is `outcome.reported`; other kinds are
/// skipped.
///
/// # Errors
/// [`ReplayError`] when the payload does not fit its kind or the statement fails.
fn apply_row(conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
    if row.kind != OutcomeReported::KIND {
        return Ok(());
    }
    let report: OutcomeReported = payload(row)?;
    insert_reported(conn, &report, row.seq, row.created_ms)?;
    Ok(())
}

/// Stores the `outcome_reports` row of `report`, recorded as event `event_seq` at `now` (Unix
/// ms): what report_outcome writes and the rebuild writes again.
///
/// # Errors
/// [`DbError`] when the statement fails.
pub(super) fn insert_reported(
    conn: &Connection,
    report: &OutcomeReported,
    event_seq: i64,
    now: i64,
) -> Result<(), DbError> {
    super::store::insert_report(
        conn,
        &super::store::NewReport {
            report_id: &report.report_id,
            receipt_id: &report.receipt_id,
            resource_id: &report.resource_id,
            version_used: report.version_used.as_deref(),
            result: &report.result,
            reason_code: report.reason_code.as_deref(),
            note: report.note.as_deref(),
            note_sha256: &report.note_sha256,
            agent_id: &report.agent_id,
            owner_key: &report.owner_key,
            canonical_text: &report.canonical_text,
            record_hash: &report.record_hash,
            signature: &report.signature,
            weight: report.weight,
            flags: &json!(report.flags).to_string(),
            reasons: &json!(report.reasons).to_string(),
            outlier: report.flags.iter().any(|flag| flag == "outlier"),
            event_seq,
            now,
        },
    )
}
