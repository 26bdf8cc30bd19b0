//! Demo fixtures: a few records marked demo so that `include_demo` has something to show. They
//! are never evidence (spec: "Demo examples are never evidence"), never match a real target, and
//! their claims never count as verification.

use crate::catalog::events::ResourceImported;
use kd_core::db::Connection;
use kd_core::store::WriteTxn;

use super::model::{Claim, Resource, claim_id, store_resource};
use kd_kernel::error::ToolError;

/// (id suffix, title, description, locator).
const DEMOS: [(&str, &str, &str, &str); 3] = [
    (
        "calendar-connector",
        "DEMO calendar connector",
        "DEMO record: a calendar connector used to show what a checked record looks like. Not a real tool.",
        "https://github.com/karmadue-demo/calendar-connector",
    ),
    (
        "speech-to-text",
        "DEMO on-device speech to text",
        "DEMO record: on-device transcription. Not a real tool.",
        "https://github.com/karmadue-demo/speech-to-text",
    ),
    (
        "postgres-mcp",
        "DEMO postgres MCP server",
        "DEMO record: a postgres MCP server. Not a real tool.",
        "https://github.com/karmadue-demo/postgres-mcp",
    ),
];

/// The demo resources with their claims.
pub fn records(now_ms: i64) -> Vec<(Resource, Vec<Claim>)> {
    DEMOS
        .iter()
        .map(|(slug, title, description, locator)| {
            let resource_id = format!("kd:res:demo:{slug}");
            let resource = Resource {
                resource_id: resource_id.clone(),
                source: "demo".into(),
                locator: (*locator).into(),
                title: (*title).into(),
                kind: "mcp_server".into(),
                description: Some((*description).into()),
                owner: "karmadue-demo".into(),
                license: Some("MIT".into()),
                version: Some("0.0.0-demo".into()),
                released_ms: Some(now_ms),
                released_source: "import".into(),
                popularity: 0.0,
                popularity_label: None,
                curated: false,
                archived: false,
                risky: false,
                demo: true,
                package_ids: Vec::new(),
                registered_by: None,
                record_hash: format!("demo:{slug}:1"),
            };
            let claim = Claim {
                claim_id: claim_id(&resource_id, "license", "demo-fixture@1", Some("0.0.0-demo"), Some("MIT")),
                resource_id: resource_id.clone(),
                version: Some("0.0.0-demo".into()),
                kind: "license".into(),
                value: Some("MIT".into()),
                method: "demo-fixture@1".into(),
                evidence_type: "kd_check".into(),
                evidence_label: "DEMO fixture. Shows the shape of a check; it is not evidence and never counts as verification.".into(),
                counts_as_verification: false,
                source: Some((*locator).into()),
                observed_ms: now_ms,
                status: "public".into(),
                demo: true,
            };
            (resource, vec![claim])
        })
        .collect()
}

/// Stores the demo fixtures (one `resource.imported` event each) inside `txn`, skipping a
/// fixture already stored as it is (its `record_hash`): storing them twice, as a resumed
/// first import or two hubs starting at once on one database may, appends nothing twice.
/// Returns how many it stored.
///
/// # Errors
/// `internal` when the store fails.
pub fn store_all(txn: &mut WriteTxn<'_>, now_ms: i64) -> Result<u64, ToolError> {
    let mut stored = 0;
    for (resource, claims) in records(now_ms) {
        let existing = super::store::record_hash(txn.conn(), &resource.resource_id)?;
        if existing.as_deref() == Some(resource.record_hash.as_str()) {
            continue;
        }
        store_resource(txn.conn(), &resource, &claims, txn.now_ms())?;
        txn.record(
            "hub",
            resource.resource_id.clone(),
            &ResourceImported::Fixture {
                file: "demo fixtures".into(),
                resource,
                claims,
            },
        )?;
        stored += 1;
    }
    Ok(stored)
}

/// Whether the demo fixtures are stored (the last step of the bundled first import).
///
/// # Errors
/// `internal` when the store fails.
pub fn stored(conn: &Connection) -> Result<bool, ToolError> {
    let first = format!("kd:res:demo:{}", DEMOS[0].0);
    Ok(super::store::resource_exists(conn, &first)?)
}
