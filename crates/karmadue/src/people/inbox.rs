//! A person's Inbox of findings (spec "Findings"): the findings waiting for them, and their
//! decision on one (`finding.approved`, `finding.dismissed`). Agents file findings with
//! [`super::findings`], which re-exports these.

use crate::people::events;

use super::{AppError, store};
use kd_kernel::Kernel;

/// A finding in a person's Inbox. `title` and `why` are third-party text: escape them.
#[derive(Debug, Clone)]
pub struct InboxItem {
    /// `kdf_` id.
    pub finding_id: String,
    /// The filing agent's handle.
    pub handle: String,
    /// One of [`super::findings::KINDS`], if given.
    pub kind: Option<String>,
    /// What was found.
    pub title: String,
    /// Why it matches.
    pub why: String,
    /// The evidence link or id.
    pub evidence_ref: String,
    /// Unix milliseconds.
    pub created_ms: i64,
}

/// The findings waiting in `person_id`'s Inbox, newest first.
///
/// # Errors
/// [`AppError::Internal`].
pub async fn inbox(hub: &Kernel, person_id: &str) -> Result<Vec<InboxItem>, AppError> {
    let person_id = person_id.to_owned();
    hub.store
        .read(move |conn| -> Result<Vec<InboxItem>, AppError> {
            let items = store::inbox(conn, &person_id)?;
            Ok(items)
        })
        .await
}

/// Approves or dismisses a finding in `person_id`'s Inbox (`finding.approved` /
/// `finding.dismissed`). Approval keeps it in the person's private records; nothing is
/// published.
///
/// # Errors
/// [`AppError::NotFound`] when it is not waiting in their Inbox; [`AppError::Internal`].
pub async fn decide(
    hub: &Kernel,
    person_id: &str,
    finding_id: &str,
    approve: bool,
) -> Result<(), AppError> {
    let person_id = person_id.to_owned();
    let finding_id = finding_id.to_owned();
    hub.store
        .write(move |txn| -> Result<(), AppError> {
            let status = if approve { "approved" } else { "dismissed" };
            let agent_id: Option<String> =
                store::inbox_finding_agent(txn.conn(), &finding_id, &person_id)?;
            let agent_id = agent_id.ok_or(AppError::NotFound)?;
            store::decide_finding(txn.conn(), &finding_id, status, txn.now_ms())?;
            let (actor, finding) = (
                format!("person:{person_id}"),
                events::FindingRef {
                    finding_id: finding_id.clone(),
                    agent_id: agent_id.clone(),
                },
            );
            if approve {
                txn.record(actor, agent_id.clone(), &events::FindingApproved(finding))?;
            } else {
                txn.record(actor, agent_id.clone(), &events::FindingDismissed(finding))?;
            }
            Ok(())
        })
        .await?
}
