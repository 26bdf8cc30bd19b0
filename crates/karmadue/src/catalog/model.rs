//! The catalog's records: a [`Resource`] and its [`Claim`]s, as imported from the public
//! snapshots (npm, PyPI, GitHub lists, agent skills) and as stored in the `resources` and
//! `claims` projections.
//!
//! Every imported row carries `metadata-read@1` claims (license, version, released_at) with
//! evidence type `provider_confirmed`, a plain `evidence_label`, and `counts_as_verification:
//! false` (spec "Verification", "Search": "a metadata-read@1 claim is a metadata read, not a
//! check").

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

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

pub use super::store::{
    load_claims, load_resource, resources_by_locator, resources_by_package_id, store_resource,
};

/// Number of resources in the catalog (demo included).
///
/// # Errors
/// `internal` when the store fails.
pub fn resource_count(conn: &kd_core::db::Connection) -> Result<i64, kd_kernel::error::ToolError> {
    Ok(super::store::resource_count(conn)?)
}

/// The other copy of a GitHub repository folder across its owner's `-archived` repository
/// (docs/decisions.md 246): for `kd:res:github:<owner>/<repo>/<path>` it is
/// `(kd:res:github:<owner>/<repo>-archived/<path>, true)`, and for the archived copy the first
/// id with `false` (the copy is not the archive). `None` for other ids and for a whole
/// repository (the folders moved; the repository itself stays).
pub fn archive_twin(resource_id: &str) -> Option<(String, bool)> {
    let rest = resource_id.strip_prefix("kd:res:github:")?;
    let mut parts = rest.splitn(3, '/');
    let (owner, repo, path) = (parts.next()?, parts.next()?, parts.next()?);
    if owner.is_empty() || repo.is_empty() || path.is_empty() {
        return None;
    }
    Some(match repo.strip_suffix("-archived") {
        Some(live) if !live.is_empty() => (format!("kd:res:github:{owner}/{live}/{path}"), false),
        Some(_) => return None,
        None => (
            format!("kd:res:github:{owner}/{repo}-archived/{path}"),
            true,
        ),
    })
}

#[cfg(test)]
mod twin_tests {
    use super::archive_twin;

    #[test]
    fn a_folder_and_its_archived_copy_are_twins_and_whole_repositories_are_not() {
        assert_eq!(
            archive_twin("kd:res:github:modelcontextprotocol/servers/src/postgres"),
            Some((
                "kd:res:github:modelcontextprotocol/servers-archived/src/postgres".to_owned(),
                true
            ))
        );
        assert_eq!(
            archive_twin("kd:res:github:modelcontextprotocol/servers-archived/src/puppeteer"),
            Some((
                "kd:res:github:modelcontextprotocol/servers/src/puppeteer".to_owned(),
                false
            ))
        );
        for other in [
            "kd:res:github:modelcontextprotocol/servers",
            "kd:res:github:modelcontextprotocol/servers-archived",
            "kd:res:github:acme/-archived/src/x",
            "kd:res:npm:servers-archived/src/x",
        ] {
            assert_eq!(archive_twin(other), None, "{other}");
        }
    }
}
