//! The catalog's storage: `resources`, `claims`, `content_reports` and `milestones`
//! (docs/architecture.md "Storage modules").

use kd_core::db::{Connection, DbError, OptionalExtension, Row, params};

use super::model::{Claim, Resource};
use super::search::Record;

const RESOURCE_COLUMNS: &str = "resource_id, source, locator, title, type, description, owner, license, version, \
     released_ms, released_source, popularity, popularity_label, curated, archived, risky, demo, package_ids, \
     registered_by, record_hash";

fn resource_from_row(row: &Row<'_>) -> kd_core::db::Result<Resource> {
    let package_ids: String = row.get(17)?;
    Ok(Resource {
        resource_id: row.get(0)?,
        source: row.get(1)?,
        locator: row.get(2)?,
        title: row.get(3)?,
        kind: row.get(4)?,
        description: row.get(5)?,
        owner: row.get(6)?,
        license: row.get(7)?,
        version: row.get(8)?,
        released_ms: row.get(9)?,
        released_source: row.get(10)?,
        popularity: row.get(11)?,
        popularity_label: row.get(12)?,
        curated: row.get(13)?,
        archived: row.get(14)?,
        risky: row.get(15)?,
        demo: row.get(16)?,
        package_ids: serde_json::from_str(&package_ids).unwrap_or_default(),
        registered_by: row.get(18)?,
        record_hash: row.get(19)?,
    })
}

const CLAIM_COLUMNS: &str = "claim_id, resource_id, version, kind, value, method, evidence_type, evidence_label, \
     counts_as_verification, source, observed_ms, status, demo";

fn claim_from_row(row: &Row<'_>) -> kd_core::db::Result<Claim> {
    Ok(Claim {
        claim_id: row.get(0)?,
        resource_id: row.get(1)?,
        version: row.get(2)?,
        kind: row.get(3)?,
        value: row.get(4)?,
        method: row.get(5)?,
        evidence_type: row.get(6)?,
        evidence_label: row.get(7)?,
        counts_as_verification: row.get(8)?,
        source: row.get(9)?,
        observed_ms: row.get(10)?,
        status: row.get(11)?,
        demo: row.get(12)?,
    })
}

/// Reads one resource.
///
/// # Errors
/// When the store fails.
pub fn load_resource(conn: &Connection, resource_id: &str) -> Result<Option<Resource>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {RESOURCE_COLUMNS} FROM resources WHERE resource_id = ?1"
    ))?
    .query_row([resource_id], resource_from_row)
    .optional()
}

/// Reads resources whose locator is exactly `locator`.
///
/// # Errors
/// When the store fails.
pub fn resources_by_locator(conn: &Connection, locator: &str) -> Result<Vec<Resource>, DbError> {
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {RESOURCE_COLUMNS} FROM resources WHERE locator = ?1"
    ))?;
    let rows = statement
        .query_map([locator], resource_from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Reads resources whose registry package ids contain `package_id` (docker / OCI targets).
///
/// # Errors
/// When the store fails.
pub fn resources_by_package_id(
    conn: &Connection,
    package_id: &str,
) -> Result<Vec<Resource>, DbError> {
    let holds = kd_core::db::dialect::json_array_contains(conn.backend(), "r.package_ids", "?1");
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {RESOURCE_COLUMNS} FROM resources r WHERE {holds}"
    ))?;
    let rows = statement
        .query_map([package_id], resource_from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Reads a resource's public claims, newest first; with `version`, only claims about it.
///
/// # Errors
/// When the store fails.
pub fn load_claims(
    conn: &Connection,
    resource_id: &str,
    version: Option<&str>,
) -> Result<Vec<Claim>, DbError> {
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {CLAIM_COLUMNS} FROM claims WHERE resource_id = ?1 AND status = 'public'
           AND (CAST(?2 AS TEXT) IS NULL OR version = ?2)
         ORDER BY observed_ms DESC, claim_id"
    ))?;
    let rows = statement
        .query_map(params![resource_id, version], claim_from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Writes a resource row (insert or replace) and its claims. Runs in a write transaction.
///
/// # Errors
/// When the store fails.
pub fn store_resource(
    conn: &Connection,
    resource: &Resource,
    claims: &[Claim],
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO resources (resource_id, source, locator, title, type, description, owner, license, version,
            released_ms, released_source, popularity, popularity_label, curated, archived, risky, demo, package_ids,
            registered_by, record_hash, imported_ms, updated_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?21)
         ON CONFLICT (resource_id) DO UPDATE SET source = excluded.source, locator = excluded.locator,
            title = excluded.title, type = excluded.type, description = excluded.description, owner = excluded.owner,
            license = excluded.license, version = excluded.version, released_ms = excluded.released_ms,
            released_source = excluded.released_source, popularity = excluded.popularity,
            popularity_label = excluded.popularity_label, curated = excluded.curated, archived = excluded.archived,
            risky = excluded.risky, demo = excluded.demo, package_ids = excluded.package_ids,
            registered_by = excluded.registered_by, record_hash = excluded.record_hash, updated_ms = excluded.updated_ms",
    )?
    .execute(params![
        resource.resource_id,
        resource.source,
        resource.locator,
        resource.title,
        resource.kind,
        resource.description,
        resource.owner,
        resource.license,
        resource.version,
        resource.released_ms,
        resource.released_source,
        resource.popularity,
        resource.popularity_label,
        resource.curated,
        resource.archived,
        resource.risky,
        resource.demo,
        serde_json::to_string(&resource.package_ids).unwrap_or_else(|_| "[]".into()),
        resource.registered_by,
        resource.record_hash,
        now_ms,
    ])?;
    if resource.source == "github" {
        mark_archived_twin(conn, resource)?;
    }
    let mut insert = conn.prepare_cached(
        "INSERT INTO claims (claim_id, resource_id, version, kind, value, method, evidence_type,
            evidence_label, counts_as_verification, source, observed_ms, status, demo)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
         ON CONFLICT (claim_id) DO UPDATE SET resource_id = excluded.resource_id, version = excluded.version,
            kind = excluded.kind, value = excluded.value, method = excluded.method,
            evidence_type = excluded.evidence_type, evidence_label = excluded.evidence_label,
            counts_as_verification = excluded.counts_as_verification, source = excluded.source,
            observed_ms = excluded.observed_ms, status = excluded.status, demo = excluded.demo",
    )?;
    for claim in claims {
        insert.execute(params![
            claim.claim_id,
            claim.resource_id,
            claim.version,
            claim.kind,
            claim.value,
            claim.method,
            claim.evidence_type,
            claim.evidence_label,
            claim.counts_as_verification,
            claim.source,
            claim.observed_ms,
            claim.status,
            claim.demo,
        ])?;
    }
    Ok(())
}

/// Number of resources in the catalog (demo included).
///
/// # Errors
/// When the store fails.
pub fn resource_count(conn: &Connection) -> Result<i64, DbError> {
    conn.query_row("SELECT COUNT(*) FROM resources", [], |row| row.get(0))
}

/// Resource ids whose lowercase form equals `id`'s, exact match first.
///
/// # Errors
/// When the store fails.
pub fn ids_ignoring_case(conn: &Connection, id: &str) -> Result<Vec<String>, DbError> {
    conn.prepare_cached(
        "SELECT resource_id FROM resources WHERE lower(resource_id) = lower(?1)
         ORDER BY resource_id = ?1 DESC, resource_id",
    )?
    .query_map([id], |row| row.get(0))?
    .collect()
}

/// Resource ids whose locator, lowercased, is `url` or `url/`.
///
/// # Errors
/// When the store fails.
pub fn ids_by_locator(conn: &Connection, url: &str) -> Result<Vec<String>, DbError> {
    conn.prepare_cached(
        "SELECT resource_id FROM resources WHERE lower(locator) IN (lower(?1), lower(?1) || '/') ORDER BY resource_id",
    )?
    .query_map([url], |row| row.get(0))?
    .collect()
}

/// Every resource that lists registry package ids: (resource id, package ids JSON), by id.
///
/// # Errors
/// When the store fails.
pub fn package_ids(conn: &Connection) -> Result<Vec<(String, String)>, DbError> {
    conn.prepare_cached(
        "SELECT resource_id, package_ids FROM resources WHERE package_ids <> '[]' ORDER BY resource_id",
    )?
    .query_map([], |row| Ok((row.get::<String>(0)?, row.get::<String>(1)?)))?
    .collect()
}

/// The search index's view of a record: its row and whether it has a public, counting,
/// non-demo claim.
const RECORD_SELECT: &str = "SELECT r.resource_id, r.source, r.title, r.type, r.locator, r.description, r.owner, \
     r.popularity, r.curated, r.archived, r.risky, r.demo, \
     EXISTS (SELECT 1 FROM claims c WHERE c.resource_id = r.resource_id AND c.status = 'public' \
             AND c.counts_as_verification = 1 AND c.demo = 0) \
     FROM resources r";

fn record_from_row(row: &Row<'_>) -> kd_core::db::Result<Record> {
    Ok(Record {
        resource_id: row.get(0)?,
        source: row.get(1)?,
        title: row.get(2)?,
        kind: row.get(3)?,
        locator: row.get(4)?,
        description: row.get(5)?,
        owner: row.get(6)?,
        popularity: row.get(7)?,
        curated: row.get(8)?,
        archived: row.get(9)?,
        risky: row.get(10)?,
        demo: row.get(11)?,
        verified: row.get(12)?,
    })
}

/// Calls `each` with every record, in no promised order.
///
/// # Errors
/// When the store fails, or `each`'s error.
pub fn for_each_record(
    conn: &Connection,
    mut each: impl FnMut(&Record) -> Result<(), DbError>,
) -> Result<(), DbError> {
    conn.prepare_cached(RECORD_SELECT)?
        .for_each([], |row| each(&record_from_row(row)?))
}

/// One record, as the search index reads it.
///
/// # Errors
/// When the store fails.
pub fn record(conn: &Connection, resource_id: &str) -> Result<Option<Record>, DbError> {
    conn.prepare_cached(&format!("{RECORD_SELECT} WHERE r.resource_id = ?1"))?
        .query_row([resource_id], record_from_row)
        .optional()
}

/// A record's stored hash, if it is stored.
///
/// # Errors
/// When the store fails.
pub fn record_hash(conn: &Connection, resource_id: &str) -> Result<Option<String>, DbError> {
    conn.prepare_cached("SELECT record_hash FROM resources WHERE resource_id = ?1")?
        .query_row([resource_id], |row| row.get(0))
        .optional()
}

/// Whether a record is stored.
///
/// # Errors
/// When the store fails.
pub fn resource_exists(conn: &Connection, resource_id: &str) -> Result<bool, DbError> {
    conn.prepare_cached("SELECT 1 FROM resources WHERE resource_id = ?1")?
        .exists([resource_id])
}

/// When milestone `name` was marked and how, if it was.
///
/// # Errors
/// When the store fails.
pub fn milestone(conn: &Connection, name: &str) -> Result<Option<(i64, String)>, DbError> {
    conn.prepare_cached("SELECT done_ms, detail FROM milestones WHERE name = ?1")?
        .query_row([name], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()
}

/// Marks milestone `name` done (once).
///
/// # Errors
/// When the store fails.
pub fn mark_milestone(
    conn: &Connection,
    name: &str,
    now_ms: i64,
    detail: &str,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO milestones (name, done_ms, detail) VALUES (?1, ?2, ?3) ON CONFLICT (name) DO NOTHING",
    )?
    .execute(params![name, now_ms, detail])?;
    Ok(())
}

/// The times of the content reports by `agent_id` (or, without one, by address `ip` with no
/// agent) after `after_ms`, oldest first.
///
/// # Errors
/// When the store fails.
pub fn content_report_times(
    conn: &Connection,
    agent_id: Option<&str>,
    ip: &str,
    after_ms: i64,
) -> Result<Vec<i64>, DbError> {
    let (sql, key) = match agent_id {
        Some(agent) => (
            "SELECT created_ms FROM content_reports WHERE agent_id = ?1 AND created_ms > ?2  ORDER BY created_ms",
            agent,
        ),
        None => (
            "SELECT created_ms FROM content_reports WHERE ip = ?1 AND created_ms > ?2 AND agent_id IS NULL ORDER BY created_ms",
            ip,
        ),
    };
    conn.prepare_cached(sql)?
        .query_map(params![key, after_ms], |row| row.get(0))?
        .collect()
}

/// A new content report.
#[derive(Debug)]
pub struct NewContentReport<'a> {
    /// Its id.
    pub report_id: &'a str,
    /// The record.
    pub resource_id: &'a str,
    /// The reason code.
    pub reason: &'a str,
    /// Details, if any.
    pub details: Option<&'a str>,
    /// The reporting agent, when signed.
    pub agent_id: Option<&'a str>,
    /// The reporter's address.
    pub ip: Option<&'a str>,
    /// Unix ms.
    pub now: i64,
}

/// Stores a content report.
///
/// # Errors
/// When the store fails.
pub fn insert_content_report(
    conn: &Connection,
    report: &NewContentReport<'_>,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO content_reports (report_id, resource_id, reason, details, agent_id, ip, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        report.report_id,
        report.resource_id,
        report.reason,
        report.details,
        report.agent_id,
        report.ip,
        report.now
    ])?;
    Ok(())
}

/// A GitHub folder whose copy in the owner's `-archived` repository the catalog holds as
/// archived is archived upstream too (docs/decisions.md 246): storing the archived copy marks
/// the current-looking row, and storing that row after its archived copy marks it, so the
/// order of the two rows does not matter (an import, a replay and a rebuild agree).
///
/// # Errors
/// When the store fails.
fn mark_archived_twin(conn: &Connection, resource: &Resource) -> Result<(), DbError> {
    let Some((twin, twin_is_archive)) = super::model::archive_twin(&resource.resource_id) else {
        return Ok(());
    };
    let mark = |resource_id: &str| -> Result<(), DbError> {
        conn.prepare_cached("UPDATE resources SET archived = ?1 WHERE resource_id = ?2")?
            .execute(params![true, resource_id])?;
        Ok(())
    };
    if !twin_is_archive {
        if resource.archived {
            mark(&twin)?;
        }
        return Ok(());
    }
    if !resource.archived {
        let twin_archived: Option<bool> = conn
            .prepare_cached("SELECT archived FROM resources WHERE resource_id = ?1")?
            .query_row(params![twin], |row| row.get(0))
            .optional()?;
        if twin_archived == Some(true) {
            mark(&resource.resource_id)?;
        }
    }
    Ok(())
}

/// Real records, not archived nor risky, with exactly one public license claim that agrees
/// with the record's license: (resource id, title, claim id, license), by id.
///
/// # Errors
/// When the store fails.
pub fn single_license_records(
    conn: &Connection,
) -> Result<Vec<(String, String, String, String)>, DbError> {
    conn.prepare_cached(
        "SELECT r.resource_id, r.title, c.claim_id, c.value FROM resources r
         JOIN claims c ON c.resource_id = r.resource_id AND c.kind = 'license' AND c.status = 'public'
         WHERE r.demo = 0 AND r.archived = 0 AND r.risky = 0 AND c.demo = 0 AND c.value = r.license
           AND (SELECT COUNT(*) FROM claims k WHERE k.resource_id = r.resource_id AND k.kind = 'license'
                AND k.status = 'public') = 1
         ORDER BY r.resource_id",
    )?
    .query_map([], |row| {
        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
    })?
    .collect()
}

/// The lowest and highest row number of `resources`.
///
/// # Errors
/// When the store fails.
pub fn rowid_span(conn: &Connection) -> Result<(Option<i64>, Option<i64>), DbError> {
    conn.prepare_cached("SELECT MIN(rowid), MAX(rowid) FROM resources")?
        .query_row([], |row| Ok((row.get(0)?, row.get(1)?)))
}

/// Which records [`probe_records`] looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// Not archived, no license and no public license claim.
    NoLicense,
    /// Archived upstream.
    Archived,
}

/// Up to 8 real, not risky records matching `probe` from row number `from` on:
/// (resource id, title), in row order.
///
/// # Errors
/// When the store fails.
pub fn probe_records(
    conn: &Connection,
    probe: Probe,
    from: i64,
) -> Result<Vec<(String, String)>, DbError> {
    let sql = match probe {
        Probe::NoLicense => {
            "SELECT r.resource_id, r.title FROM resources r WHERE r.rowid >= ?1 AND r.demo = 0 AND r.risky = 0 AND r.archived = 0 AND r.license IS NULL AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.resource_id = r.resource_id AND c.kind = 'license' AND c.status = 'public')
         ORDER BY r.rowid LIMIT 8"
        }
        Probe::Archived => {
            "SELECT r.resource_id, r.title FROM resources r WHERE r.rowid >= ?1 AND r.demo = 0 AND r.risky = 0 AND r.archived = 1
         ORDER BY r.rowid LIMIT 8"
        }
    };
    conn.prepare_cached(sql)?
        .query_map([from], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect()
}
