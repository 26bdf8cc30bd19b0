//! The person's side of jobs (the app's `/you/jobs` page; docs/decisions.md 464–465): open
//! jobs a signed-in person may take, taking and completing one, and what a person's own
//! agents requested and disputed. A person never takes a job one of their own agents
//! requested.

use kd_core::db::Connection;
use kd_core::store::WriteTxn;
use kd_kernel::Kernel;
use kd_kernel::error::ToolError;

use super::output::{DisputeView, JobView};
use super::store::{self, Job};
use super::{JobsError, RESULTS, events};

/// Most rows each list of the page shows.
pub const PAGE_ROWS: i64 = 50;

/// A job an agent of the person requested, with the agent's handle.
#[derive(Debug)]
pub struct OwnJob {
    /// The requesting agent's `kd_` handle.
    pub handle: String,
    /// The job.
    pub job: JobView,
}

/// A dispute an agent of the person opened, with the agent's handle.
#[derive(Debug)]
pub struct OwnDispute {
    /// The opening agent's `kd_` handle.
    pub handle: String,
    /// The dispute.
    pub dispute: DisputeView,
}

/// What `/you/jobs` shows a person.
#[derive(Debug, Default)]
pub struct JobsPage {
    /// Open jobs of agents the person does not own, newest first.
    pub open: Vec<JobView>,
    /// Jobs the person took, newest first.
    pub taken: Vec<JobView>,
    /// Jobs the person's agents requested, newest first per agent.
    pub requested: Vec<OwnJob>,
    /// Disputes the person's agents opened.
    pub disputes: Vec<OwnDispute>,
}

/// Whether `person_id` owns the agent `agent_id`.
fn owns(conn: &Connection, person_id: &str, agent_id: &str) -> Result<bool, ToolError> {
    Ok(crate::identity::find_agent(conn, agent_id, "job_id")?
        .is_some_and(|agent| agent.owner_id.as_deref() == Some(person_id)))
}

/// The page of `person_id`.
///
/// # Errors
/// `internal` when the store fails.
pub fn page(conn: &Connection, person_id: &str) -> Result<JobsPage, ToolError> {
    let mut page = JobsPage::default();
    for job in store::open_jobs(conn, PAGE_ROWS)? {
        if !owns(conn, person_id, &job.requester_id)? {
            page.open.push(JobView::from(&job));
        }
    }
    let me = format!("person:{person_id}");
    page.taken = store::taken_by(conn, &me, PAGE_ROWS)?
        .iter()
        .map(JobView::from)
        .collect();
    for agent in crate::people::store::owned_agents(conn, person_id)? {
        for job in store::requested_by(conn, &agent.agent_id, PAGE_ROWS)? {
            page.requested.push(OwnJob {
                handle: agent.handle.clone(),
                job: JobView::from(&job),
            });
        }
        for dispute in store::opened_by(conn, &agent.agent_id, PAGE_ROWS)? {
            page.disputes.push(OwnDispute {
                handle: agent.handle.clone(),
                dispute: DisputeView::from(&dispute),
            });
        }
    }
    Ok(page)
}

/// The job `job_id`, in the writer's transaction.
fn require_job(txn: &WriteTxn<'_>, job_id: &str) -> Result<Job, JobsError> {
    store::job(txn.conn(), job_id)?.ok_or(JobsError::NoSuchJob)
}

/// A signed-in person takes an open job of an agent they do not own (`job.taken`).
///
/// # Errors
/// `not_found`, `validation` (not open), `forbidden` (`own_job`), `internal`.
pub async fn take_as_person(
    hub: &Kernel,
    person_id: &str,
    job_id: &str,
) -> Result<JobView, ToolError> {
    let (person_id, job_id) = (person_id.to_owned(), job_id.trim().to_owned());
    hub.store
        .write(move |txn| -> Result<JobView, ToolError> {
            let job = require_job(txn, &job_id)?;
            if job.status != "open" {
                return Err(JobsError::NotOpen(job.status, "taken").into());
            }
            if owns(txn.conn(), &person_id, &job.requester_id)? {
                return Err(JobsError::OwnJob.into());
            }
            let taker = format!("person:{person_id}");
            store::take(txn.conn(), &job_id, &taker, txn.now_ms())?;
            txn.record(
                taker.clone(),
                job_id.clone(),
                &events::JobTaken {
                    job_id: job_id.clone(),
                    taker,
                },
            )?;
            Ok(JobView::from(&require_job(txn, &job_id)?))
        })
        .await?
}

/// The person who took a job submits its result (`passed`, `failed` or `inconclusive`) and
/// an evidence link (an https URL) (`job.done`).
///
/// # Errors
/// `validation` (`result`, `evidence_ref`, not taken), `forbidden` (`not_taker`),
/// `not_found`, `internal`.
pub async fn complete_as_person(
    hub: &Kernel,
    person_id: &str,
    job_id: &str,
    result: &str,
    evidence_ref: &str,
) -> Result<JobView, ToolError> {
    if !RESULTS.contains(&result) {
        return Err(JobsError::ResultChoice.into());
    }
    let evidence_ref = crate::help::verification::check_evidence(evidence_ref, "evidence_ref")?;
    let (person_id, job_id, result) = (
        person_id.to_owned(),
        job_id.trim().to_owned(),
        result.to_owned(),
    );
    hub.store
        .write(move |txn| -> Result<JobView, ToolError> {
            let job = require_job(txn, &job_id)?;
            let taker = format!("person:{person_id}");
            if job.taker.as_deref() != Some(taker.as_str()) {
                return Err(JobsError::NotTaker.into());
            }
            if job.status != "taken" {
                return Err(JobsError::NotTaken(job.status).into());
            }
            store::finish(txn.conn(), &job_id, &result, &evidence_ref, txn.now_ms())?;
            txn.record(
                taker.clone(),
                job_id.clone(),
                &events::JobDone {
                    job_id: job_id.clone(),
                    taker,
                    result,
                    evidence_ref,
                },
            )?;
            Ok(JobView::from(&require_job(txn, &job_id)?))
        })
        .await?
}
