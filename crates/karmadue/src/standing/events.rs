//! Standing: stamps, capabilities, admission, asks, invitations, offers and preferences.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::events::declare;

/// `stamp.issued`: a stamp was put on an agent's passport.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StampIssued {
    /// The `kdst_` stamp id.
    pub stamp_id: String,
    /// Whose passport carries it.
    pub agent_id: String,
    /// The stamp name.
    pub stamp: String,
    /// When it expires, Unix ms (None: never).
    pub expires_ms: Option<i64>,
    /// `hub`, `person:<id>` or an agent id.
    pub issuer: String,
    /// The passport it names, if any.
    pub credential_id: Option<String>,
    /// A JSON object about why.
    pub detail: Value,
}
declare!(StampIssued, "stamp.issued");

/// `capability.granted`: an agent was granted (or renewed) a capability until `expires_ms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilityGranted {
    /// The agent.
    pub agent_id: String,
    /// The capability, e.g. `publish_ask`.
    pub capability: String,
    /// Until when, Unix ms.
    pub expires_ms: i64,
    /// What granted it, e.g. `admission`.
    pub source: String,
}
declare!(CapabilityGranted, "capability.granted");

/// `admission.started`: an agent drew an admission scenario (the scenario is in the
/// `admission_attempts` table; the log keeps its SHA-256).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdmissionStarted {
    /// The `kdad_` attempt id.
    pub attempt_id: String,
    /// The agent.
    pub agent_id: String,
    /// The catalog listings the scenario shows.
    pub listing_ids: Vec<String>,
    /// SHA-256 of the scenario text.
    pub scenario_sha256: String,
    /// When the attempt expires, Unix ms.
    pub expires_ms: i64,
}
declare!(AdmissionStarted, "admission.started");

/// `admission.passed`: an attempt was graded passed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdmissionPassed {
    /// The attempt.
    pub attempt_id: String,
    /// The agent.
    pub agent_id: String,
    /// Whether a new admission-passed stamp was issued (false: a renewal).
    pub stamp_issued: bool,
    /// The technical bonus granted (0 when none).
    pub technical_bonus: u8,
}
declare!(AdmissionPassed, "admission.passed");

/// `admission.failed`: an attempt was graded failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdmissionFailed {
    /// The attempt.
    pub attempt_id: String,
    /// The agent.
    pub agent_id: String,
    /// The codes of the misses.
    pub reasons: Vec<String>,
}
declare!(AdmissionFailed, "admission.failed");

/// `ask.published`: an admitted agent published an ask (the title is kept as its SHA-256).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskPublished {
    /// The `kdask_` ask id.
    pub ask_id: String,
    /// The agent.
    pub agent_id: String,
    /// Its operator (its owner, or the agent itself).
    pub operator: String,
    /// The topic.
    pub topic: String,
    /// SHA-256 of the title.
    pub title_sha256: String,
    /// When it expires, Unix ms.
    pub expires_ms: i64,
}
declare!(AskPublished, "ask.published");

/// `agent.invited`: an agent made an invite card for another agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentInvited {
    /// The inviting agent.
    pub agent_id: String,
    /// The `kdi_` invite code.
    pub invite_code: String,
    /// The inviting agent's passport id.
    pub credential_id: String,
}
declare!(AgentInvited, "agent.invited");

/// `capability.offered`: an agent offered a capability (title and text are in
/// `capability_offers`, not in the log).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilityOffered {
    /// The `kdo_` offer id.
    pub offer_id: String,
    /// The agent.
    pub agent_id: String,
    /// `published`, `pending_owner` or `needs_owner`.
    pub status: String,
}
declare!(CapabilityOffered, "capability.offered");

/// An offer's id and its agent: the payload of the owner's decision on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OfferRef {
    /// The offer.
    pub offer_id: String,
    /// The agent.
    pub agent_id: String,
}

/// `capability.offer_published`: the owner approved an offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct OfferPublished(pub OfferRef);
declare!(OfferPublished, "capability.offer_published");

/// `capability.offer_declined`: the owner declined an offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct OfferDeclined(pub OfferRef);
declare!(OfferDeclined, "capability.offer_declined");

/// `preferences.updated`: an agent stored a new version of its preferences for its person to
/// review (the document is in `agent_preferences`; the log keeps its SHA-256).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreferencesUpdated {
    /// The agent.
    pub agent_id: String,
    /// The version, from 1.
    pub version: i64,
    /// SHA-256 of the canonical text.
    pub preferences_sha256: String,
    /// Its length in bytes.
    pub bytes: usize,
}
declare!(PreferencesUpdated, "preferences.updated");
