//! check_before_acting's answer as a typed output (issue 10), declared with
//! [`kd_kernel::output!`]. Keys come out sorted (the reply goes through `serde_json::Value`).
//! The record (`resource`) and its `claims` keep the catalog's JSON shape
//! ([`crate::catalog::resource_json`]), `reliability_reports` the outcomes area's.

use serde::Serialize;
use serde_json::Value;

/// check_before_acting's `data`.
#[derive(Debug, Serialize)]
pub struct Check {
    /// The target as given (a string or an object).
    pub target: Value,
    /// What it resolved to.
    pub resolved: Resolved,
    /// `intended_action` (or its alias `action`), or null.
    pub intended_action: Option<String>,
    /// Any claim is verification-grade.
    pub counts_as_verification: bool,
    /// One sentence on the evidence.
    pub evidence_summary: String,
    /// The record in the catalog's shape, without `claims` (title and description are
    /// third-party text, lifted at the boundary).
    pub resource: Value,
    /// The record's claims, in the catalog's shape.
    pub claims: Vec<Value>,
    /// Warnings about the record.
    pub warnings: Vec<Warning>,
    /// What the evidence does not prove, for the intended action.
    pub does_not_prove: Vec<String>,
    /// Agents' own reports after use (absent when there are none): not a safety or trust check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reliability_reports: Option<Value>,
    /// A DEMO record.
    pub demo: bool,
    /// `DEMO` or empty.
    pub label: &'static str,
    /// The signed receipt; null for a DEMO record.
    pub receipt: Option<ReceiptView>,
    /// Why a DEMO record has no receipt (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt_note: Option<&'static str>,
    /// What to do with the receipt (absent for a DEMO record).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_step: Option<&'static str>,
}

/// How a target resolved.
#[derive(Debug, Serialize)]
pub struct Resolved {
    /// The record chosen.
    pub kd_resource_id: String,
    /// How it matched (resource_id, github_repo, github_folder, skill_folder, locator,
    /// npm_package, pypi_package, package_id).
    pub matched_by: &'static str,
    /// A note when the match is looser than asked, or null.
    pub note: Option<&'static str>,
    /// Other real records the target matched.
    pub also_matched: Vec<String>,
}

/// A warning about a record.
#[derive(Debug, Serialize)]
pub struct Warning {
    /// demo_record, archived_upstream, risky, registered_by_agent, license_unknown,
    /// not_checked.
    pub code: &'static str,
    /// A plain sentence.
    pub message: &'static str,
}

/// A signed kd-receipt-v1 receipt as answers show it.
#[derive(Debug, Serialize)]
pub struct ReceiptView {
    /// `kdr_` id.
    pub receipt_id: String,
    /// The record, version and commit the receipt is about.
    pub target: ReceiptTarget,
    /// The intended action, or null.
    pub intended_action: Option<String>,
    /// RFC 3339, milliseconds.
    pub issued_at: String,
    /// Unix seconds (the signed line).
    pub issued_at_unix: i64,
    /// RFC 3339, milliseconds: 14 days after issue.
    pub expires_at: String,
    /// The signed caller, or null (an anonymous check; not reportable).
    pub agent_id: Option<String>,
    /// `kd-receipt-v1`.
    pub recipe: &'static str,
    /// The seven signed lines.
    pub signed_text: String,
    /// Ed25519 over `signed_text`, base64url.
    pub signature: String,
    /// `kd-passport-1`.
    pub key_id: &'static str,
    /// `EdDSA`.
    pub alg: &'static str,
    /// It names an agent, so report_outcome takes it.
    pub reportable: bool,
}

/// What a receipt is about.
#[derive(Debug, Serialize)]
pub struct ReceiptTarget {
    /// The record.
    pub kd_resource_id: String,
    /// Its version, or null.
    pub version: Option<String>,
    /// The pinned commit, or null.
    pub commit: Option<String>,
}

kd_kernel::output!(Check);
