//! Rebuilds the `resources` and `claims` projections from `resource.*` events with the same
//! `store_resource` the handlers use: `karmadue ledger rebuild`.

use kd_core::db::Connection;
use kd_core::eventlog::EventRow;

use super::import::parse_row;
use super::model::store_resource;
use crate::events::EventPayload;
use crate::events::catalog::{ResourceImported, ResourceRegistered};
use crate::rebuild::{RebuildError, payload};

/// Applies `row` to `resources` / `claims` in `conn`; other kinds are skipped.
///
/// # Errors
/// [`RebuildError`] when the payload does not fit its kind, a source row no longer parses, or
/// a statement fails.
pub fn apply(conn: &Connection, row: &EventRow) -> Result<(), RebuildError> {
    let (resource, claims) = match row.kind.as_str() {
        ResourceImported::KIND => match payload::<ResourceImported>(row)? {
            ResourceImported::Row {
                observed_ms,
                row: source,
                ..
            } => parse_row(&source.to_string(), observed_ms)
                .map_err(|reason| RebuildError::row(row, reason))?,
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
        .map_err(|error| RebuildError::row(row, error))
}
