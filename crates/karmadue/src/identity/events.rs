//! Agents: registration, names, keys, revocation and the owner's pause.

use serde::{Deserialize, Serialize};

use crate::events::declare;

/// `agent.registered`: an agent registered with its own key and got a Listed passport.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentRegistered {
    /// The new agent id.
    pub agent_id: String,
    /// Its `kd_` handle.
    pub handle: String,
    /// The label it chose (reserved while the agent is active).
    pub name: String,
    /// The platform it named.
    pub platform: String,
    /// Its Ed25519 public key, base64url.
    pub public_key: String,
    /// The `kdp_` passport id issued with it.
    pub credential_id: String,
    /// The invite code it passed, if any.
    pub referral: Option<String>,
}
declare!(AgentRegistered, "agent.registered");

/// `agent.renamed`: an agent changed its label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentRenamed {
    /// The label before.
    pub from: String,
    /// The label now.
    pub to: String,
}
declare!(AgentRenamed, "agent.renamed");

/// `agent.key_rotated`: an agent replaced its key; a new passport id was issued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentKeyRotated {
    /// The key before, base64url.
    pub previous_public_key: String,
    /// The key now, base64url.
    pub public_key: String,
    /// The passport id before.
    pub previous_credential_id: String,
    /// The passport id now.
    pub credential_id: String,
}
declare!(AgentKeyRotated, "agent.key_rotated");

/// `agent.revoked`: an agent revoked itself; its name is free again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentRevoked {
    /// The passport id revoked with it.
    pub credential_id: String,
}
declare!(AgentRevoked, "agent.revoked");

/// `agent.released`: an agent's owner link ended (the agent left, or the owner removed it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentReleased {
    /// The `kdh_` person who owned it.
    pub previous_owner: String,
    /// `agent` or `owner`.
    pub by: String,
}
declare!(AgentReleased, "agent.released");

/// `agent.paused`: the owner paused the agent's signed writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentPaused {
    /// The agent.
    pub agent_id: String,
    /// Always `owner`.
    pub by: String,
}
declare!(AgentPaused, "agent.paused");

/// `agent.resumed`: the owner lifted the pause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentResumed {
    /// The agent.
    pub agent_id: String,
    /// Always `owner`.
    pub by: String,
}
declare!(AgentResumed, "agent.resumed");

/// `agent.connected`: a person's approval of an app made the hosted agent of that (person,
/// app) pair (spec "Using KarmaDue from Claude or ChatGPT": type `hosted_connector`, no key,
/// labelled like "Maya's Claude"). Its owner link follows as `owner.linked`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConnected {
    /// The new agent id.
    pub agent_id: String,
    /// Its `kd_` handle.
    pub handle: String,
    /// Its label, "<person>'s <app>" (not reserved: docs/decisions.md 316).
    pub name: String,
    /// The app's name, as registered.
    pub platform: String,
    /// The `kdp_` passport id issued with it.
    pub credential_id: String,
    /// The person who approved the app.
    pub person_id: String,
    /// The OAuth client.
    pub client_id: String,
}
declare!(AgentConnected, "agent.connected");

/// `visa.issued`: the hub signed a visa for the agent (permissions document, "What your
/// passport unlocks"; docs/decisions.md 402). The visa itself is not recorded: it is a bearer
/// credential until it expires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VisaIssued {
    /// The visa's id (`kdv_…`, its `jti`).
    pub visa_id: String,
    /// The scopes it names.
    pub scopes: Vec<String>,
    /// Issued at, Unix seconds.
    pub issued_at: i64,
    /// Expires at, Unix seconds.
    pub expires_at: i64,
    /// The destination named, if any.
    pub audience: Option<String>,
}
declare!(VisaIssued, "visa.issued");

/// `agent.passport_reissued`: a hosted connector agent's grant changed (a reconnection with
/// other switches, an added permission), so its passport was re-issued to state the new one
/// (permissions document "Connector permissions"; docs/decisions.md 405). The old passport is
/// superseded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassportReissued {
    /// The new `kdp_` passport id.
    pub credential_id: String,
    /// The passport it supersedes.
    pub previous_credential_id: String,
    /// The connection whose grant it states.
    pub connection_id: String,
    /// The granted scopes it states.
    pub scopes: Vec<String>,
}
declare!(PassportReissued, "agent.passport_reissued");
