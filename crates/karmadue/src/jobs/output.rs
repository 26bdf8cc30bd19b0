//! What the jobs tools answer: each tool's `data` as a typed output (issue 10), declared with
//! [`kd_kernel::output!`]. A field that may be `null` is an `Option` without
//! `skip_serializing_if`, so it prints `null`.

use kd_core::clock::rfc3339_ms;
use serde::Serialize;

use super::store::{Dispute, Job};

/// A job as its requester reads it. `title` and `detail` are third-party text (lifted into
/// `untrusted_content`).
#[derive(Debug, Serialize)]
pub struct JobView {
    /// `kdjob_` id.
    pub job_id: String,
    /// The requesting agent.
    pub requester_id: String,
    /// The record to check, or null.
    pub resource_id: Option<String>,
    /// Short title.
    pub title: String,
    /// What to look at, or null.
    pub detail: Option<String>,
    /// The method id.
    pub method: String,
    /// `public` or `private`.
    pub scope: String,
    /// The quoted price, USD.
    pub price_usd: f64,
    /// The same in whole cents.
    pub price_usd_cents: i64,
    /// `open`, `taken`, `done` or `cancelled`.
    pub status: String,
    /// The person who took it (`person:<id>`), or null.
    pub taker: Option<String>,
    /// RFC 3339, or null.
    pub taken_at: Option<String>,
    /// `passed`, `failed` or `inconclusive`, or null until done.
    pub result: Option<String>,
    /// The evidence link, or null until done.
    pub evidence_ref: Option<String>,
    /// RFC 3339, or null.
    pub done_at: Option<String>,
    /// RFC 3339, or null.
    pub cancelled_at: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    /// Always false: prices are records (DECISIONS 6).
    pub money_moves: bool,
}

/// USD cents as dollars.
#[allow(clippy::cast_precision_loss)]
pub fn usd(cents: i64) -> f64 {
    cents as f64 / 100.0
}

impl From<&Job> for JobView {
    fn from(job: &Job) -> Self {
        Self {
            job_id: job.job_id.clone(),
            requester_id: job.requester_id.clone(),
            resource_id: job.resource_id.clone(),
            title: job.title.clone(),
            detail: job.detail.clone(),
            method: job.method.clone(),
            scope: job.scope.clone(),
            price_usd: usd(job.price_cents),
            price_usd_cents: job.price_cents,
            status: job.status.clone(),
            taker: job.taker.clone(),
            taken_at: job.taken_ms.map(rfc3339_ms),
            result: job.result.clone(),
            evidence_ref: job.evidence_ref.clone(),
            done_at: job.done_ms.map(rfc3339_ms),
            cancelled_at: job.cancelled_ms.map(rfc3339_ms),
            created_at: rfc3339_ms(job.created_ms),
            money_moves: false,
        }
    }
}

/// A quote: the price from the table and whether it fits the caller's spend cap.
#[derive(Debug, Clone, Serialize)]
pub struct Quote {
    /// The method id.
    pub method: String,
    /// `public` or `private`.
    pub scope: String,
    /// The price, USD.
    pub price_usd: f64,
    /// The same in whole cents.
    pub price_usd_cents: i64,
    /// `USD`.
    pub currency: &'static str,
    /// The published rule, in a sentence.
    pub rule: &'static str,
    /// Whether committing would open the job (`reason` is `ok`).
    pub fits: bool,
    /// `ok` or `spend_cap`.
    pub reason: &'static str,
    /// A plain sentence.
    pub explanation: String,
    /// The caller's cap per action, USD (its owner's grant; 0 without one or for an app).
    pub spend_cap_usd_per_action: i64,
    /// The caller's cap per rolling day, USD.
    pub spend_cap_usd_per_day: i64,
    /// Priced jobs of the caller in the last 24 hours (not cancelled), USD cents.
    pub spent_today_usd_cents: i64,
    /// What is left of the day's cap, USD cents.
    pub remaining_today_usd_cents: i64,
    /// Whether a connected app asked (always $0).
    pub asked_by_connected_app: bool,
    /// Always false: prices are records (DECISIONS 6).
    pub money_moves: bool,
}

/// request_verification's `data`.
#[derive(Debug, Serialize)]
pub struct Requested {
    /// Whether a job was opened (`commit` true and the quote fit).
    pub committed: bool,
    /// The quote.
    pub quote: Quote,
    /// The job opened, or null for a quote.
    pub job: Option<JobView>,
    /// The event's sequence number, or null for a quote.
    pub event_seq: Option<i64>,
    /// What happens next, in a sentence.
    pub message: &'static str,
}

/// get_job's `data`.
#[derive(Debug, Serialize)]
pub struct JobRead {
    /// The job.
    pub job: JobView,
}

/// cancel_job's `data`.
#[derive(Debug, Serialize)]
pub struct JobCancelledView {
    /// The job, now cancelled.
    pub job: JobView,
    /// The event's sequence number.
    pub event_seq: i64,
    /// What happened, in a sentence.
    pub message: &'static str,
}

/// A dispute as recorded. `reason` and `details` are third-party text.
#[derive(Debug, Serialize)]
pub struct DisputeView {
    /// `kddp_` id.
    pub dispute_id: String,
    /// The agent that opened it.
    pub opener_id: String,
    /// What it is about.
    pub subject_type: String,
    /// The subject's id.
    pub subject_id: String,
    /// Why.
    pub reason: String,
    /// What a reviewer should know, or null.
    pub details: Option<String>,
    /// `open`: recorded, not decided.
    pub status: String,
    /// RFC 3339.
    pub created_at: String,
}

impl From<&Dispute> for DisputeView {
    fn from(dispute: &Dispute) -> Self {
        Self {
            dispute_id: dispute.dispute_id.clone(),
            opener_id: dispute.opener_id.clone(),
            subject_type: dispute.subject_type.clone(),
            subject_id: dispute.subject_id.clone(),
            reason: dispute.reason.clone(),
            details: dispute.details.clone(),
            status: dispute.status.clone(),
            created_at: rfc3339_ms(dispute.created_ms),
        }
    }
}

/// open_dispute's `data`.
#[derive(Debug, Serialize)]
pub struct DisputeOpenedView {
    /// The dispute.
    pub dispute: DisputeView,
    /// Always false: a dispute is recorded, never decided here.
    pub decided: bool,
    /// The event's sequence number.
    pub event_seq: i64,
    /// What happens next, in a sentence.
    pub message: &'static str,
}

kd_kernel::output!(Requested, JobRead, JobCancelledView, DisputeOpenedView);
