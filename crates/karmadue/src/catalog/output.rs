//! What the catalog's tools answer: each tool's `data` as a typed output (issue 10), declared
//! with [`kd_kernel::output!`]. Keys come out sorted (the reply goes through
//! `serde_json::Value`); a field that may be `null` is an `Option` without
//! `skip_serializing_if`, so it prints `null`. Titles, descriptions and report texts are
//! third-party text the pipeline lifts into `untrusted_content` (the tools' `untrusted` lifts).
//! A claim stays its JSON row ([`super::model::Claim::to_json`]).

use serde::Serialize;
use serde_json::Value;

/// A resource with its claims, as get_resource, discover_resources' results and
/// check_before_acting show it (spec "get_resource", "Null text fields").
#[derive(Debug, Serialize)]
pub struct ResourceView {
    /// `kd:res:` id.
    pub resource_id: String,
    /// Display title (third-party text).
    pub title: String,
    /// The resource type (mcp_server, package, repo, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// Where it lives.
    pub locator: String,
    /// Its description (third-party text), or null.
    pub description: Option<String>,
    /// Where the record came from (a snapshot, `registered`).
    pub source: String,
    /// Its owner (organisation, user or host).
    pub owner: String,
    /// SPDX licence, or null.
    pub license: Option<String>,
    /// The current version, or null.
    pub version: Option<String>,
    /// RFC 3339, milliseconds, or null.
    pub released_at: Option<String>,
    /// Where the release date came from.
    pub released_at_source: String,
    /// Popularity in words (stars, downloads), or null.
    pub popularity: Option<String>,
    /// Archived upstream.
    pub archived_upstream: bool,
    /// A DEMO fixture.
    pub demo: bool,
    /// "DEMO" for a demo record, else "".
    pub label: &'static str,
    /// What the claims say about verification, in a sentence.
    pub evidence_summary: String,
    /// Whether any claim is verification-grade evidence.
    pub counts_as_verification: bool,
    /// The claims, as rows.
    pub claims: Vec<Value>,
}

/// get_claims' `data` (spec "get_claims").
#[derive(Debug, Serialize)]
pub struct ClaimsView {
    /// `kd:res:` id.
    pub resource_id: String,
    /// Whether a version was asked for.
    pub version_pinned: bool,
    /// The version asked for, else the record's current one, or null.
    pub version: Option<String>,
    /// The claims, as rows.
    pub claims: Vec<Value>,
    /// Whether any claim is verification-grade evidence.
    pub counts_as_verification: bool,
    /// What the claims say about verification, in a sentence.
    pub evidence_summary: String,
    /// A DEMO fixture.
    pub demo: bool,
}

/// One discover_resources result: the resource, why it ranked and where.
#[derive(Debug, Serialize)]
pub struct SearchResult {
    /// The resource and its claims.
    #[serde(flatten)]
    pub resource: ResourceView,
    /// Why it matched and ranked, in a sentence.
    pub ranking_note: String,
    /// Its 1-based position in the whole ranking.
    pub rank: usize,
    /// Agents' reliability reports, when any exist (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reliability_reports: Option<Value>,
}

/// discover_resources' `data` (spec "discover_resources").
#[derive(Debug, Serialize)]
pub struct Discovered {
    /// This page, in order.
    pub results: Vec<SearchResult>,
    /// Every match.
    pub total: u64,
    /// Results skipped.
    pub offset: usize,
    /// The page size.
    pub limit: usize,
    /// The offset of the next page; null on the last.
    pub next_offset: Option<usize>,
    /// What was searched and how, in a sentence.
    pub message: String,
    /// The words the need became.
    pub query: Value,
    /// Whether demo records were included.
    pub include_demo: bool,
    /// Related Arena challenges (none on this hub) and forum threads.
    pub related: Related,
}

/// discover_resources' `related`.
#[derive(Debug, Serialize)]
pub struct Related {
    /// Arena challenges: none are built on this hub.
    pub challenges: Vec<Value>,
    /// Forum threads matching the need.
    pub threads: Vec<Value>,
}

/// register_resource's `data` (spec "register_resource"): a new record, or the existing one
/// left unchanged (`already_listed`; then `title` is null and the new record's fields are
/// absent).
#[derive(Debug, Serialize)]
pub struct Registered {
    /// `kd:res:` id.
    pub resource_id: String,
    /// Whether a record was written.
    pub registered: bool,
    /// Whether a record already existed.
    pub already_listed: bool,
    /// The record's source (`registered` for a new one).
    pub source: String,
    /// Its stored locator.
    pub locator: String,
    /// The title registered; null when already listed.
    pub title: Option<String>,
    /// The type registered.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The registering agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registered_by: Option<String>,
    /// Claims waiting for an ownership check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_claims: Option<Vec<PendingClaim>>,
    /// What happened, in a sentence.
    pub note: &'static str,
    /// The event's sequence number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_seq: Option<i64>,
}

/// A claim a registration implies, waiting for an ownership check.
#[derive(Debug, Serialize)]
pub struct PendingClaim {
    /// Its id.
    pub claim_id: String,
    /// `maintainer`.
    pub kind: String,
    /// `awaiting_ownership_check`.
    pub status: String,
}

/// report_content's `data` (spec "report_content").
#[derive(Debug, Serialize)]
pub struct ContentReported {
    /// `kdcr_` id.
    pub report_id: String,
    /// The record reported.
    pub resource_id: String,
    /// Why (third-party text).
    pub reason: String,
    /// What a reviewer should know (third-party text), or null.
    pub details: Option<String>,
    /// The signed reporting agent, or null.
    pub reporter: Option<String>,
    /// `received`.
    pub status: &'static str,
    /// What happens next, in a sentence.
    pub note: &'static str,
    /// The event's sequence number.
    pub event_seq: i64,
}

kd_kernel::output!(
    ResourceView,
    ClaimsView,
    Discovered,
    Registered,
    ContentReported
);
