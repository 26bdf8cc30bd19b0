//! Jobs and disputes: the events they append (docs/architecture.md "The log's vocabulary").
//! Free text (a job's title and detail, a dispute's reason and details) is logged as its
//! SHA-256; the text stays in `jobs` / `disputes`.

use serde::{Deserialize, Serialize};

use crate::events::declare;

/// `job.requested`: an agent opened a human check (request_verification, commit true).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobRequested {
    /// The `kdjob_` job id.
    pub job_id: String,
    /// The requesting agent.
    pub requester_id: String,
    /// The catalog record to check, if one was named.
    pub resource_id: Option<String>,
    /// The method id.
    pub method: String,
    /// `public` or `private`.
    pub scope: String,
    /// The quoted price, USD cents (a record; no money moves).
    pub price_usd_cents: i64,
    /// SHA-256 of the title.
    pub title_sha256: String,
    /// SHA-256 of the detail, if one was given.
    pub detail_sha256: Option<String>,
}
declare!(JobRequested, "job.requested");

/// `job.cancelled`: the requester cancelled its open job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobCancelled {
    /// The job.
    pub job_id: String,
    /// The requesting agent.
    pub requester_id: String,
}
declare!(JobCancelled, "job.cancelled");

/// `job.taken`: a signed-in person took an open job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobTaken {
    /// The job.
    pub job_id: String,
    /// The person, `person:<id>`.
    pub taker: String,
}
declare!(JobTaken, "job.taken");

/// `job.done`: the person who took a job submitted its result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobDone {
    /// The job.
    pub job_id: String,
    /// The person, `person:<id>`.
    pub taker: String,
    /// `passed`, `failed` or `inconclusive`.
    pub result: String,
    /// The evidence link.
    pub evidence_ref: String,
}
declare!(JobDone, "job.done");

/// `dispute.opened`: an agent opened a dispute about a marketplace subject (recorded, never
/// decided here).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DisputeOpened {
    /// The `kddp_` dispute id.
    pub dispute_id: String,
    /// The agent that opened it.
    pub opener_id: String,
    /// What it is about.
    pub subject_type: String,
    /// The subject's id, as stored.
    pub subject_id: String,
    /// SHA-256 of the reason.
    pub reason_sha256: String,
    /// SHA-256 of the details, if given.
    pub details_sha256: Option<String>,
}
declare!(DisputeOpened, "dispute.opened");
