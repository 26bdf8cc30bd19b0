//! Rebuilds the `resources` and `claims` projections from `resource.*` events with the same
//! `store_resource` the handlers use: `karmadue ledger rebuild`.

use kd_core::db::Connection;
use kd_core::eventlog::EventRow;

use super::import::parse_row;
use super::model::store_resource;
use crate::catalog::events::{ResourceImported, ResourceRegistered};
use crate::events::EventPayload;
use crate::replay::{Replay, ReplayError, payload};

/// The catalog area's replay (`crate::replay::Replay`).
pub struct CatalogReplay;

impl Replay for CatalogReplay {
    fn area(&self) -> &'static str {
        "catalog"
    }

    fn apply(&self, conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
        apply_row(conn, row)
    }
}

/// Applies `row` to `resources` / `claims` in `conn`; other kinds are skipped.
///
/// # Errors
/// [`ReplayError`] when the payload does not fit its kind, a source row no longer parses, or
/// a statement fails.
fn apply_row(conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
    let (resource, claims) = match row.kind.as_str() {
        ResourceImported::KIND => match payload::<ResourceImported>(row)? {
            ResourceImported::Row {
                observed_ms,
                row: source,
                ..
            } => parse_row(&source.to_string(), observed_ms)
                .map_err(|reason| ReplayError::row(row, reason))?,
            ResourceImported::Fixture {
                resource, claims, ..
            } => (resource, claims),
        },
        ResourceRegistered::KIND => {
            let registered: ResourceRegistered = payload(row)?;
            (registered.resource, registered.claims)
        }
        _ => return Ok(()),
    };
    store_resource(conn, &resource, &claims, row.created_ms)
        .map_err(|error| ReplayError::row(row, error))
}
