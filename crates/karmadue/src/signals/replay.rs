//! Rebuilds the `peer_signals` projection from `signal.recorded`: `karmadue ledger rebuild`.
//! The event carries every column but the time and the seq (the row's).

use kd_core::db::Connection;
use kd_core::eventlog::EventRow;

use super::events::SignalRecorded;
use super::store::{StoredSignal, insert_signal};
use crate::events::EventPayload;
use crate::replay::{Replay, ReplayError, payload};

/// The peer signals' replay (`crate::replay::Replay`).
pub struct SignalsReplay;

impl Replay for SignalsReplay {
    fn area(&self) -> &'static str {
        "signals"
    }

    fn apply(&self, conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
        if row.kind != SignalRecorded::KIND {
            return Ok(());
        }
        let record: SignalRecorded = payload(row)?;
        insert_signal(conn, &StoredSignal::of(&record, row.seq, row.created_ms))?;
        Ok(())
    }
}
