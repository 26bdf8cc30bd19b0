//! What an area's replay is (`karmadue ledger rebuild`, DESIGN rule 1: the log is the source of
//! truth): [`Replay`], the one trait each area that owns a projection implements in its
//! `replay.rs`, and [`ReplayError`]. The composition root's `rebuild` hands every row of the
//! log, in `seq` order, to each area's replay (`rebuild::REPLAYS`) and compares the tables;
//! no area names `rebuild`.

use kd_core::db::{Connection, DbError};
use kd_core::eventlog::{EventPayload, EventRow};

/// One area's replay: applies the kinds it follows to its projection tables in a scratch
/// store, and skips every other kind.
pub trait Replay: Sync {
    /// The area, for messages (`identity`, `people`, ...).
    fn area(&self) -> &'static str;

    /// Applies `row` (one row of the log, rows arriving in `seq` order) to the area's
    /// projections in `conn`.
    ///
    /// # Errors
    /// [`ReplayError`] when the payload does not fit its kind or a statement fails.
    fn apply(&self, conn: &Connection, row: &EventRow) -> Result<(), ReplayError>;
}

/// Why a row did not replay.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A statement failed.
    #[error("database: {0}")]
    Db(#[from] DbError),
    /// A row's payload does not fit its kind's struct, or its replay failed.
    #[error("row {seq} ({kind}): {reason}")]
    Row {
        /// The row.
        seq: i64,
        /// Its kind.
        kind: String,
        /// What went wrong.
        reason: String,
    },
}

impl ReplayError {
    /// A failure replaying `row`.
    pub fn row(row: &EventRow, reason: impl std::fmt::Display) -> Self {
        Self::Row {
            seq: row.seq,
            kind: row.kind.clone(),
            reason: reason.to_string(),
        }
    }
}

/// Reads `row`'s payload as the struct of its kind.
///
/// # Errors
/// [`ReplayError::Row`] when it does not fit.
pub fn payload<P: EventPayload + serde::de::DeserializeOwned>(
    row: &EventRow,
) -> Result<P, ReplayError> {
    crate::events::parse(&row.payload).map_err(|error| ReplayError::row(row, error))
}
