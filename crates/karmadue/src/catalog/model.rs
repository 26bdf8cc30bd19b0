//! The catalog's records: a [`Resource`] and its [`Claim`]s, as imported from the public
//! snapshots (npm, PyPI, GitHub lists, agent skills) and as stored in the `resources` and
//! `claims` projections.
//!
//! Every imported row carries `metadata-read@1` claims (license, version, released_at) with
//! evidence type `provider_confirmed`, a plain `evidence_label`, and `counts_as_verification:
//! false` (spec "Verification", "Search": "a metadata-read@1 claim is a metadata read, not a
//! check").

use kd_core::db::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use kd_kernel::error::ToolError;

/// The metadata-read method name.
pub const METADATA_READ: &str = "metadata-read@1";

/// Evidence types, weakest first (spec `lookup_findings.min_evidence`).
pub const EVIDENCE_TYPES: [&str; 5] = [
    "agent_reported",
    "provider_confirmed",
    "kd_check",
    "human_verified",
    "outcome_observed",
];

/// Evidence types that count as verification (spec "Verification").
pub const VERIFICATION_GRADE: [&str; 3] = ["kd_check", "human_verified", "outcome_observed"];

/// A catalog resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    /// `kd:res:<source>:<name>`.
    pub resource_id: String,
    /// github | npm | pypi | skill | registered | demo.
    pub source: String,
    /// https URL, `npm:<name>` or `pypi:<name>`.
    pub locator: String,
    /// Display title (third-party text).
    pub title: String,
    /// mcp_server | package | repo | skill | ...
    #[serde(rename = "type")]
    pub kind: String,
    /// Description (third-party text).
    pub description: Option<String>,
    /// Publisher (GitHub owner, npm scope, ...).
    pub owner: String,
    /// License as the public record states it.
    pub license: Option<String>,
    /// Version as the public record states it.
    pub version: Option<String>,
    /// When the version was released upstream, or imported (Unix ms).
    pub released_ms: Option<i64>,
    /// `upstream` or `import`.
    pub released_source: String,
    /// 0..1 popularity from stars, downloads or rank.
    pub popularity: f64,
    /// Plain words for the popularity figure.
    pub popularity_label: Option<String>,
    /// A curated, well-known tool.
    pub curated: bool,
    /// Archived upstream.
    pub archived: bool,
    /// Flagged risky (for example, evading bot detection).
    pub risky: bool,
    /// A demo fixture, never evidence.
    pub demo: bool,
    /// Registry package ids (docker / OCI image ids).
    pub package_ids: Vec<String>,
    /// The agent that registered it, for register_resource.
    pub registered_by: Option<String>,
    /// SHA-256 of the source row (re-imports skip equal rows).
    pub record_hash: String,
}

/// A dated, typed claim about a resource version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// `clm_` + 20 hex characters, stable for the same fact.
    pub claim_id: String,
    /// The resource.
    pub resource_id: String,
    /// The version the claim is about.
    pub version: Option<String>,
    /// license | version | released_at | ...
    pub kind: String,
    /// The claimed value.
    pub value: Option<String>,
    /// How it was established, e.g. `metadata-read@1`.
    pub method: String,
    /// One of [`EVIDENCE_TYPES`].
    pub evidence_type: String,
    /// Plain words about the evidence.
    pub evidence_label: String,
    /// True only for verification-grade evidence.
    pub counts_as_verification: bool,
    /// Where it was read.
    pub source: Option<String>,
    /// When it was observed (Unix ms).
    pub observed_ms: i64,
    /// public | awaiting_ownership_check | retracted.
    pub status: String,
    /// A demo fixture.
    pub demo: bool,
}

/// A stable claim id from the fact's identity.
pub fn claim_id(
    resource_id: &str,
    kind: &str,
    method: &str,
    version: Option<&str>,
    value: Option<&str>,
) -> String {
    let text = format!(
        "{resource_id}\n{kind}\n{method}\n{}\n{}",
        version.unwrap_or(""),
        value.unwrap_or("")
    );
    format!(
        "clm_{}",
        &hex::encode(Sha256::digest(text.as_bytes()))[..20]
    )
}

/// Evidence type rank (0 = weakest), or None for an unknown type.
pub fn evidence_rank(evidence_type: &str) -> Option<usize> {
    EVIDENCE_TYPES
        .iter()
        .position(|known| *known == evidence_type)
}

impl Claim {
    /// The label of the claim's kind, in plain words.
    pub fn kind_label(&self) -> &'static str {
        match (self.method.as_str(), self.evidence_type.as_str()) {
            (METADATA_READ, _) => "Metadata read (not a check)",
            (_, "kd_check") => "KarmaDue check",
            (_, "human_verified") => "Checked by a person",
            (_, "outcome_observed") => "Seen working",
            (_, "agent_reported") => "Reported by an agent",
            _ => "Provider statement (not a check)",
        }
    }

    /// One sentence saying what the claim says and what it is not.
    pub fn plain(&self) -> String {
        let value = self.value.as_deref().unwrap_or("unknown");
        let what = match self.kind.as_str() {
            "license" => format!("The license is {value}"),
            "version" => format!("The current version is {value}"),
            "released_at" if self.evidence_label == super::import::IMPORT_TIME_LABEL => {
                format!(
                    "No upstream release time is known; this hub imported the record at {value}"
                )
            }
            "released_at" => format!("This version was released upstream at {value}"),
            other => format!("{other}: {value}"),
        };
        let how = if self.counts_as_verification {
            "verification-grade evidence".to_owned()
        } else if self.method == METADATA_READ {
            "read from public metadata; a metadata read, not a check".to_owned()
        } else {
            "not a check".to_owned()
        };
        format!("{what} ({how}).")
    }

    /// The claim as shown to callers.
    pub fn to_json(&self) -> Value {
        json!({
            "claim_id": self.claim_id,
            "resource_id": self.resource_id,
            "version": self.version,
            "kind": self.kind,
            "kind_label": self.kind_label(),
            "value": self.value,
            "plain": self.plain(),
            "method": self.method,
            "evidence_type": self.evidence_type,
            "evidence_label": self.evidence_label,
            "counts_as_verification": self.counts_as_verification,
            "source": self.source,
            "observed_at": kd_core::clock::rfc3339_ms(self.observed_ms),
            "status": self.status,
            "demo": self.demo,
        })
    }
}

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
/// `internal` when the store fails.
pub fn load_resource(conn: &Connection, resource_id: &str) -> Result<Option<Resource>, ToolError> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {RESOURCE_COLUMNS} FROM resources WHERE resource_id = ?1"
        ))?
        .query_row([resource_id], resource_from_row)
        .optional()?)
}

/// Reads resources whose locator is exactly `locator`.
///
/// # Errors
/// `internal` when the store fails.
pub fn resources_by_locator(conn: &Connection, locator: &str) -> Result<Vec<Resource>, ToolError> {
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
/// `internal` when the store fails.
pub fn resources_by_package_id(
    conn: &Connection,
    package_id: &str,
) -> Result<Vec<Resource>, ToolError> {
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
/// `internal` when the store fails.
pub fn load_claims(
    conn: &Connection,
    resource_id: &str,
    version: Option<&str>,
) -> Result<Vec<Claim>, ToolError> {
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
/// `internal` when the store fails.
pub fn store_resource(
    conn: &Connection,
    resource: &Resource,
    claims: &[Claim],
    now_ms: i64,
) -> Result<(), ToolError> {
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
/// `internal` when the store fails.
pub fn resource_count(conn: &Connection) -> Result<i64, ToolError> {
    Ok(conn.query_row("SELECT COUNT(*) FROM resources", [], |row| row.get(0))?)
}
