//! People and their agents: connect codes, claims, owner links and grants, findings.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::events::declare;

/// `connect.refused`: a connect code was refused (the refusal is logged once per hour).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectRefused {
    /// The agent that tried.
    pub agent_id: String,
    /// `rate_limited` or `invalid_code`.
    pub reason: String,
}
declare!(ConnectRefused, "connect.refused");

/// `claim.requested`: an agent asked a person (by email) to own it; a mail was queued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimRequested {
    /// The agent.
    pub agent_id: String,
    /// The `kdc_` claim id (the email is never logged).
    pub claim_id: String,
}
declare!(ClaimRequested, "claim.requested");

/// `owner.link_requested`: a link request waits for the person's approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OwnerLinkRequested {
    /// The `kdl_` request id.
    pub request_id: String,
    /// The agent asking.
    pub agent_id: String,
    /// The person asked.
    pub person_id: String,
    /// `code` or `claim`.
    pub via: String,
}
declare!(OwnerLinkRequested, "owner.link_requested");

/// `owner.grant_changed`: the owner changed the agent's actions per day.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OwnerGrantChanged {
    /// The agent.
    pub agent_id: String,
    /// The new allowance.
    pub actions_per_day: i64,
    /// The allowance before.
    pub previous_actions_per_day: i64,
}
declare!(OwnerGrantChanged, "owner.grant_changed");

/// `owner.link_declined`: the person declined a link request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OwnerLinkDeclined {
    /// The request.
    pub request_id: String,
    /// The agent.
    pub agent_id: String,
    /// The person.
    pub person_id: String,
}
declare!(OwnerLinkDeclined, "owner.link_declined");

/// `owner.link_confirmed`: the person approved a request for an agent already theirs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OwnerLinkConfirmed {
    /// The request.
    pub request_id: String,
    /// The agent.
    pub agent_id: String,
    /// The person.
    pub person_id: String,
}
declare!(OwnerLinkConfirmed, "owner.link_confirmed");

/// `owner.linked`: the person approved a request and now owns the agent, with this grant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OwnerLinked {
    /// The request.
    pub request_id: String,
    /// The agent.
    pub agent_id: String,
    /// The new owner.
    pub person_id: String,
    /// The granted scopes (a JSON array of text).
    pub scopes: Value,
    /// Spend allowed per day, USD (0: none).
    pub spend_usd_per_day: i64,
    /// Spend allowed per action, USD (0: none).
    pub spend_usd_per_action: i64,
    /// Signed writes allowed per day.
    pub actions_per_day: i64,
}
declare!(OwnerLinked, "owner.linked");

/// `finding.filed`: an agent filed a finding for a person (by email, to its owner, or open).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingFiled {
    /// The `kdf_` finding id (title and text are never logged).
    pub finding_id: String,
    /// The agent that filed it.
    pub agent_id: String,
    /// Its kind, when the agent gave one.
    pub kind: Option<String>,
    /// `email`, `owner` or `open`.
    pub delivery: String,
}
declare!(FindingFiled, "finding.filed");

/// A finding's id and the agent that filed it: the payload of the finding's later events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingRef {
    /// The finding.
    pub finding_id: String,
    /// The agent that filed it.
    pub agent_id: String,
}

/// `finding.withdrawn`: the agent withdrew its open finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FindingWithdrawn(pub FindingRef);
declare!(FindingWithdrawn, "finding.withdrawn");

/// `finding.adopted`: a signed-in person adopted an open finding into their Inbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingAdopted {
    /// The finding.
    pub finding_id: String,
    /// The agent that filed it.
    pub agent_id: String,
    /// The person who adopted it.
    pub person_id: String,
}
declare!(FindingAdopted, "finding.adopted");

/// `finding.approved`: the person kept a finding from their Inbox (nothing is published).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FindingApproved(pub FindingRef);
declare!(FindingApproved, "finding.approved");

/// `finding.dismissed`: the person dismissed a finding from their Inbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FindingDismissed(pub FindingRef);
declare!(FindingDismissed, "finding.dismissed");
