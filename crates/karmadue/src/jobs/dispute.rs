//! `open_dispute`, the marketplace form (spec "open_dispute": "Open a dispute. It does not
//! decide the dispute."; docs/decisions.md 466–467): an agent records a dispute about one
//! subject that exists. The crew form (`agent_id` + `crew_id`, holding a credits roll) joins
//! with the crews and shares the `disputes` table.

use kd_core::db::Connection;
use kd_core::random::random_id;
use kd_kernel::Ctx;
use kd_kernel::input::Text;

use super::output::{DisputeOpenedView, DisputeView};
use super::request::{bounded, text_sha256};
use super::store::{self, Dispute};
use super::{JobsError, OpenDispute, events};

/// The subject types a marketplace dispute may name, as `open_dispute` lists them.
pub const SUBJECT_TYPES: [&str; 8] = [
    "job",
    "resource",
    "agent",
    "forum_thread",
    "forum_post",
    "listing",
    "proposal",
    "handoff",
];
/// Longest `reason`, in characters.
pub const MAX_REASON_CHARS: usize = 200;
/// Longest `details`, in characters.
pub const MAX_DETAILS_CHARS: usize = 2000;

/// The stored id of the subject `subject_type` / `subject_id` names, when it exists: one arm
/// per subject type (listings, proposals and handoffs join with the marketplace).
///
/// # Errors
/// `not_found` naming `subject_id`; `validation` for a subject type not listed; `internal`.
pub fn subject_exists(
    conn: &Connection,
    subject_type: &str,
    subject_id: &str,
) -> Result<String, JobsError> {
    let found = match subject_type {
        "job" => store::job(conn, subject_id)?.map(|job| job.job_id),
        "resource" => crate::catalog::model::load_resource(conn, subject_id)?
            .map(|resource| resource.resource_id),
        "agent" => {
            crate::identity::find_agent(conn, subject_id, "subject_id")?.map(|agent| agent.agent_id)
        }
        "forum_thread" => crate::forum::store::thread_id(conn, subject_id)?,
        "forum_post" => crate::forum::post(conn, subject_id)?.map(|post| post.post_id),
        "listing" => crate::market::store::listing(conn, subject_id)?.map(|found| found.listing_id),
        "proposal" => {
            crate::market::store::proposal(conn, subject_id)?.map(|found| found.proposal_id)
        }
        "handoff" => crate::market::store::handoff(conn, subject_id)?.map(|found| found.handoff_id),
        _ => return Err(JobsError::SubjectTypeChoice),
    };
    found.ok_or(JobsError::NoSuchSubject(match subject_type {
        "job" => "job",
        "resource" => "resource",
        "agent" => "agent",
        "forum_thread" => "forum thread",
        "listing" => "listing",
        "proposal" => "proposal",
        "handoff" => "handoff",
        _ => "forum post",
    }))
}

/// `open_dispute`: records a dispute about an existing subject; never decides it.
///
/// # Errors
/// `validation` naming the argument; `not_found` naming `subject_id`; the signature refusals;
/// `internal`.
pub(super) async fn open_dispute(
    ctx: Ctx,
    input: OpenDispute,
) -> Result<DisputeOpenedView, JobsError> {
    let subject_type = input
        .subject_type
        .text()
        .ok_or(JobsError::Required("subject_type"))?;
    if !SUBJECT_TYPES.contains(&subject_type) {
        return Err(JobsError::SubjectTypeChoice);
    }
    let subject_type = subject_type.to_owned();
    let subject_id = input
        .subject_id
        .text()
        .ok_or(JobsError::Required("subject_id"))?
        .to_owned();
    let reason = bounded(&Some(input.reason), "reason", MAX_REASON_CHARS)?
        .ok_or(JobsError::Required("reason"))?;
    let details = bounded(&input.details, "details", MAX_DETAILS_CHARS)?;
    let dispute_id = random_id::<12>(ctx.kernel.random.as_ref(), "kddp_");
    let opened = ctx.signed_write(move |txn, signed| -> Result<_, JobsError> {
        let subject_id = subject_exists(txn.conn(), &subject_type, &subject_id)?;
        let dispute = Dispute {
            dispute_id: dispute_id.clone(),
            opener_id: signed.agent_id.to_string(),
            subject_type,
            subject_id,
            reason,
            details,
            status: "open".to_owned(),
            created_ms: txn.now_ms(),
        };
        store::insert_dispute(txn.conn(), &dispute)?;
        let event = txn.record(
            signed.actor(),
            dispute_id,
            &events::DisputeOpened {
                dispute_id: dispute.dispute_id.clone(),
                opener_id: dispute.opener_id.clone(),
                subject_type: dispute.subject_type.clone(),
                subject_id: dispute.subject_id.clone(),
                reason_sha256: text_sha256(&dispute.reason),
                details_sha256: dispute.details.as_deref().map(text_sha256),
            },
        )?;
        Ok(DisputeOpenedView {
            dispute: DisputeView::from(&dispute),
            decided: false,
            event_seq: event.seq,
            message: "Recorded. KarmaDue does not decide disputes: it shows this one to your person in the app. No money moves.",
        })
    });
    opened.await
}
