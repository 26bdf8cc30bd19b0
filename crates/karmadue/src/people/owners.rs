//! The person's side of the owner link: the You page's agents and requests, approving or
//! declining a request, the granted actions a day, pause, resume and release (spec
//! "Connecting to your person").
//!
//! Events: `owner.linked`, `owner.link_declined`, `owner.grant_changed`, `agent.paused`,
//! `agent.resumed`, `agent.released` (by the owner).

use crate::events::EventPayload as _;
use crate::identity::events as agent_events;
use crate::people::events;
use serde_json::json;

use super::{AppError, store};
use crate::identity::{READ_ONLY_SCOPES, require_agent, store as identity_store};
use kd_kernel::Kernel;

/// One of a person's agents, as the You page lists it.
#[derive(Debug, Clone)]
pub struct OwnedAgent {
    /// Agent id.
    pub agent_id: String,
    /// `kd_` handle.
    pub handle: String,
    /// The agent's own label (third-party text: escape it).
    pub name: String,
    /// active | revoked.
    pub status: String,
    /// Paused by the owner.
    pub paused: bool,
    /// The actions a day the person granted (None: no grant, e.g. revoked).
    pub actions_per_day: Option<i64>,
}

/// Changes the actions a day `person_id` grants their agent `agent_id` (1 to
/// [`MAX_ACTIONS_PER_DAY`]; "the person can raise limits later in the app"):
/// `owner.grant_changed`. The 24-hour count keeps running: only the limit changes.
///
/// # Errors
/// [`AppError::Invalid`] for a number out of range; [`AppError::NotFound`] when the person does
/// not own the agent; [`AppError::Internal`].
pub async fn set_actions_per_day(
    hub: &Kernel,
    person_id: &str,
    agent_id: &str,
    actions_per_day: i64,
) -> Result<(), AppError> {
    if !(1..=MAX_ACTIONS_PER_DAY).contains(&actions_per_day) {
        return Err(AppError::Invalid(format!(
            "Actions a day must be a whole number from 1 to {MAX_ACTIONS_PER_DAY}."
        )));
    }
    let person_id = person_id.to_owned();
    let agent_id = agent_id.to_owned();
    hub.store
        .write(move |txn| -> Result<(), AppError> {
            let before: Option<i64> =
                store::owned_grant_actions(txn.conn(), &agent_id, &person_id)?;
            let before = before.ok_or(AppError::NotFound)?;
            if before == actions_per_day {
                return Ok(());
            }
            store::set_grant_actions(txn.conn(), &agent_id, actions_per_day)?;
            txn.record(
                format!("person:{person_id}"),
                agent_id.clone(),
                &events::OwnerGrantChanged {
                    agent_id: agent_id.clone(),
                    actions_per_day,
                    previous_actions_per_day: before,
                },
            )?;
            Ok(())
        })
        .await?
}

/// A pending link request addressed to a person.
#[derive(Debug, Clone)]
pub struct PendingRequest {
    /// `kdl_` id.
    pub request_id: String,
    /// The agent asking.
    pub agent_id: String,
    /// Its handle.
    pub handle: String,
    /// Its label (third-party text: escape it).
    pub name: String,
    /// code | claim.
    pub via: String,
    /// request_claim's note (third-party text: escape it).
    pub pitch: Option<String>,
    /// Unix milliseconds.
    pub created_ms: i64,
}

/// What the You page shows: the person's agents and the requests waiting for them.
#[derive(Debug, Clone, Default)]
pub struct Overview {
    /// Agents this person owns, newest link first.
    pub agents: Vec<OwnedAgent>,
    /// Pending requests, oldest first.
    pub pending: Vec<PendingRequest>,
}

/// The You page's data for `person_id`.
///
/// # Errors
/// [`AppError::Internal`].
pub async fn overview(hub: &Kernel, person_id: &str) -> Result<Overview, AppError> {
    let person_id = person_id.to_owned();
    hub.store
        .read(move |conn| -> Result<Overview, AppError> {
            let agents = store::owned_agents(conn, &person_id)?;
            let pending = store::pending_requests(conn, &person_id)?;
            Ok(Overview { agents, pending })
        })
        .await
}

/// Most actions a day a person may grant on the consent screen.
pub const MAX_ACTIONS_PER_DAY: i64 = 200;

/// Approves (`approve`) or declines a pending request addressed to `person_id`. Approval sets
/// the agent's owner and grants [`READ_ONLY_SCOPES`], $0 a day, $0 per action and
/// `actions_per_day` actions ([`GRANT_ACTIONS_PER_DAY`] from the You page; 1 to
/// [`MAX_ACTIONS_PER_DAY`] from the consent screen) (`owner.linked`); declining changes nothing
/// else (`owner.link_declined`).
///
/// # Errors
/// [`AppError::NotFound`] (not theirs, or not pending); [`AppError::Invalid`] when the agent is
/// revoked or has another owner, or `actions_per_day` is out of range; [`AppError::Internal`].
pub async fn decide_request(
    hub: &Kernel,
    person_id: &str,
    request_id: &str,
    approve: bool,
    actions_per_day: i64,
) -> Result<(), AppError> {
    if !(1..=MAX_ACTIONS_PER_DAY).contains(&actions_per_day) {
        return Err(AppError::Invalid(format!(
            "Actions a day must be a whole number from 1 to {MAX_ACTIONS_PER_DAY}."
        )));
    }
    let person_id = person_id.to_owned();
    let request_id = request_id.to_owned();
    hub.store
        .write(move |txn| -> Result<(), AppError> {
            let agent_id: Option<String> = store::pending_request_agent(txn.conn(), &request_id, &person_id)?;
            let agent_id = agent_id.ok_or(AppError::NotFound)?;
            let now = txn.now_ms();
            let actor = format!("person:{person_id}");
            if !approve {
                store::decline_request(txn.conn(), &request_id, now)?;
                txn.record(actor, agent_id.clone(), &events::OwnerLinkDeclined { request_id: request_id.clone(), agent_id: agent_id.clone(), person_id: person_id.clone() })?;
                return Ok(());
            }
            let agent = require_agent(txn.conn(), &agent_id, "agent_id")?;
            if agent.status != "active" {
                return Err(AppError::Invalid("This agent was revoked; it can no longer be linked.".into()));
            }
            if agent.owner_id.as_ref().is_some_and(|owner| *owner != person_id) {
                return Err(AppError::Invalid(
                    "This agent already has another owner. It must be released before you can link it.".into(),
                ));
            }
            if agent.owner_id.as_deref() == Some(person_id.as_str()) {
                // Already theirs (a second request, approved late): the link and its grant,
                // pause and 24-hour count stay as they are.
                store::approve_request(txn.conn(), &request_id, now)?;
                txn.record(actor, agent_id.clone(), &events::OwnerLinkConfirmed { request_id: request_id.clone(), agent_id: agent_id.clone(), person_id: person_id.clone() })?;
                return Ok(());
            }
            store::approve_request(txn.conn(), &request_id, now)?;
            link(txn, &agent_id, &person_id, &request_id, &READ_ONLY_SCOPES, actions_per_day)?;
            Ok(())
        })
        .await?
}

/// The pending request `request_id` addressed to `person_id`.
///
/// # Errors
/// [`AppError::NotFound`] when it is not theirs or not pending; [`AppError::Internal`].
pub async fn pending_request(
    hub: &Kernel,
    person_id: &str,
    request_id: &str,
) -> Result<PendingRequest, AppError> {
    let person_id = person_id.to_owned();
    let request_id = request_id.to_owned();
    hub.store
        .read(move |conn| -> Result<PendingRequest, AppError> {
            store::pending_request(conn, &request_id, &person_id)?.ok_or(AppError::NotFound)
        })
        .await
}

/// What an owner does to one of their agents on the You page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerAction {
    /// Refuse the agent's signed writes (`forbidden`) until resumed (`agent.paused`).
    Pause,
    /// Lift a pause (`agent.resumed`).
    Resume,
    /// Release the agent: it becomes independent (`agent.released`, by the owner).
    Remove,
}

/// Applies `action` to an agent `person_id` owns. Pausing a paused agent or resuming a running
/// one changes nothing and appends nothing.
///
/// # Errors
/// [`AppError::NotFound`] when the person does not own the agent; [`AppError::Internal`].
pub async fn act_on_agent(
    hub: &Kernel,
    person_id: &str,
    agent_id: &str,
    action: OwnerAction,
) -> Result<(), AppError> {
    let person_id = person_id.to_owned();
    let agent_id = agent_id.to_owned();
    hub.store
        .write(move |txn| -> Result<(), AppError> {
            let row: Option<Option<i64>> =
                crate::identity::store::paused_if_owned(txn.conn(), &agent_id, &person_id)?;
            let paused_ms = row.ok_or(AppError::NotFound)?;
            let now = txn.now_ms();
            let actor = format!("person:{person_id}");
            let by = || "owner".to_owned();
            let (change, event) = match action {
                OwnerAction::Pause if paused_ms.is_none() => (
                    identity_store::Ownership::Pause,
                    agent_events::AgentPaused {
                        agent_id: agent_id.clone(),
                        by: by(),
                    }
                    .event(actor, agent_id.clone()),
                ),
                OwnerAction::Resume if paused_ms.is_some() => (
                    identity_store::Ownership::Resume,
                    agent_events::AgentResumed {
                        agent_id: agent_id.clone(),
                        by: by(),
                    }
                    .event(actor, agent_id.clone()),
                ),
                OwnerAction::Remove => (
                    identity_store::Ownership::Release,
                    agent_events::AgentReleased {
                        previous_owner: person_id.clone(),
                        by: by(),
                    }
                    .event(actor, agent_id.clone()),
                ),
                OwnerAction::Pause | OwnerAction::Resume => return Ok(()),
            };
            identity_store::change_ownership(txn.conn(), &agent_id, change, now)?;
            if action == OwnerAction::Remove {
                store::delete_owner_grants(txn.conn(), &agent_id)?;
            }
            txn.append(event?)?;
            Ok(())
        })
        .await?
}

/// Links `agent_id` to `person_id` in the caller's write transaction: owner set (a pause
/// cleared), the grant of `scopes` at $0 and `actions_per_day`, and `owner.linked` by the
/// person naming `request_id`. Used by an approved owner request (read-only scopes) and by a
/// connected app's hosted agent (the connector: the connection as the request, its
/// scopes; a reconnection or an added permission links again with the new grant, the consent
/// screen being the consent record).
///
/// # Errors
/// When the store fails.
pub fn link(
    txn: &mut kd_core::store::WriteTxn<'_>,
    agent_id: &str,
    person_id: &str,
    request_id: &str,
    scopes: &[&str],
    actions_per_day: i64,
) -> Result<(), kd_core::store::StoreError> {
    let now = txn.now_ms();
    let scopes = json!(scopes);
    identity_store::set_owner(txn.conn(), agent_id, person_id, now)?;
    store::upsert_grant(
        txn.conn(),
        agent_id,
        person_id,
        &scopes.to_string(),
        actions_per_day,
        now,
    )?;
    txn.record(
        format!("person:{person_id}"),
        agent_id.to_owned(),
        &events::OwnerLinked {
            request_id: request_id.to_owned(),
            agent_id: agent_id.to_owned(),
            person_id: person_id.to_owned(),
            scopes,
            spend_usd_per_day: 0,
            spend_usd_per_action: 0,
            actions_per_day,
        },
    )?;
    Ok(())
}
