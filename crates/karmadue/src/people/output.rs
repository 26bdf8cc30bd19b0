//! What the people tools answer: each tool's `data` as a typed output (issue 10), declared with
//! [`kd_kernel::output!`]. Keys come out sorted (the reply goes through `serde_json::Value`); a
//! field that may be `null` is an `Option` without `skip_serializing_if`, one that may be
//! absent has it. Pitches, finding titles and reasons, card notes and offer texts are
//! third-party text the pipeline lifts into `untrusted_content` (the tools' `untrusted` lifts).

use serde::Serialize;

/// connect_with_code's `data`: the owner link request filed, or the link that already holds.
#[derive(Debug, Serialize)]
pub struct LinkRequest {
    /// The agent.
    pub agent_id: String,
    /// `kdl_` id of the pending request (absent when the person already owns the agent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// `pending`, or `approved` when the person already owns the agent.
    pub status: &'static str,
    /// Whether the agent is linked to this person now.
    pub owner_linked: bool,
    /// The `owner.link_requested` event's `seq` (absent when nothing was filed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_seq: Option<i64>,
    /// What happens next.
    pub message: &'static str,
}

/// request_claim's `data` (the same whether or not the address has an account).
#[derive(Debug, Serialize)]
pub struct ClaimSent {
    /// The agent.
    pub agent_id: String,
    /// `kdl_` id.
    pub claim_id: String,
    /// `sent`.
    pub status: &'static str,
    /// Whether the agent has an owner already.
    pub owner_linked: bool,
    /// The pitch sent (third-party text).
    pub pitch: String,
    /// The `claim.requested` event's `seq`.
    pub event_seq: i64,
    /// What happens next.
    pub message: &'static str,
}

/// notify_human_of_finding's `data`: a finding filed now, or the one a `dedupe_key` names.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Filing {
    /// Filed now.
    Filed(FindingFiled),
    /// Filed before under the same `dedupe_key`; nothing new was sent.
    Deduplicated(FindingDeduplicated),
}

/// A finding filed now.
#[derive(Debug, Serialize)]
pub struct FindingFiled {
    /// `kdf_` id.
    pub finding_id: String,
    /// Always false.
    pub deduplicated: bool,
    /// `email`, `owner` or `open`.
    pub delivery: &'static str,
    /// `sent` (by email), `inbox` or `open`.
    pub status: &'static str,
    /// One of the kinds, or null.
    pub kind: Option<String>,
    /// What was found (third-party text).
    pub title: String,
    /// Why it matches (third-party text).
    pub why: String,
    /// The evidence link or id.
    pub evidence_ref: String,
    /// The dedupe key, or null.
    pub dedupe_key: Option<String>,
    /// The `finding.filed` event's `seq`.
    pub event_seq: i64,
    /// An open finding's claim code (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim_code: Option<String>,
    /// An open finding's adopt link (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim_url: Option<String>,
    /// What happens next.
    pub message: &'static str,
}

/// A finding filed before under the same `dedupe_key`.
#[derive(Debug, Serialize)]
pub struct FindingDeduplicated {
    /// The finding on file.
    pub finding_id: String,
    /// Always true.
    pub deduplicated: bool,
    /// Its delivery.
    pub delivery: String,
    /// Its status now.
    pub status: String,
    /// The key.
    pub dedupe_key: String,
    /// Nothing new was sent.
    pub message: &'static str,
}

/// withdraw_finding's `data`.
#[derive(Debug, Serialize)]
pub struct Withdrawn {
    /// The finding.
    pub finding_id: String,
    /// `withdrawn`.
    pub status: &'static str,
    /// The reason given, or null.
    pub reason: Option<String>,
    /// The `finding.withdrawn` event's `seq`.
    pub event_seq: i64,
}

/// adopt_finding's `data`.
#[derive(Debug, Serialize)]
pub struct Adopted {
    /// The finding.
    pub finding_id: String,
    /// `inbox`.
    pub status: &'static str,
    /// `/inbox`.
    pub inbox: &'static str,
    /// The `finding.adopted` event's `seq` (absent when it was in this person's Inbox
    /// already).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_seq: Option<i64>,
}

/// invite_agent's `data`.
#[derive(Debug, Serialize)]
pub struct CardGiven {
    /// The card.
    pub card: Card,
    /// Introducing another agent is optional.
    pub optional: &'static str,
    /// The `agent.invited` event's `seq`.
    pub event_seq: i64,
}

/// An agent's card.
#[derive(Debug, Serialize)]
pub struct Card {
    /// `kdi_` code, passed as `referral` to register_agent.
    pub invite_code: String,
    /// The inviter's passport id.
    pub passport_id: String,
    /// The inviter's handle.
    pub handle: String,
    /// The inviter.
    pub agent_id: String,
    /// Absolute link with the code.
    pub link: String,
    /// The note (third-party text), or null.
    pub note: Option<String>,
    /// How to use the card.
    pub how_to_use: &'static str,
}

/// offer_capability's `data`.
#[derive(Debug, Serialize)]
pub struct OfferMade {
    /// `kdco_` id.
    pub offer_id: String,
    /// The offering agent.
    pub agent_id: String,
    /// The title (third-party text).
    pub title: String,
    /// The description (third-party text), or null.
    pub description: Option<String>,
    /// `published`, `pending_owner` or `needs_owner`.
    pub status: &'static str,
    /// `status` is `published`.
    pub published: bool,
    /// What happens next.
    pub message: &'static str,
    /// The `capability.offered` event's `seq`.
    pub event_seq: i64,
}

/// update_preferences' `data`.
#[derive(Debug, Serialize)]
pub struct PreferencesStored {
    /// The agent.
    pub agent_id: String,
    /// 1, 2, ... per agent.
    pub version: i64,
    /// `awaiting_review` or `needs_owner`.
    pub status: &'static str,
    /// SHA-256 of the canonical text, hex.
    pub preferences_sha256: String,
    /// Bytes of the canonical text.
    pub bytes: usize,
    /// What happens next.
    pub message: &'static str,
    /// The `preferences.updated` event's `seq`.
    pub event_seq: i64,
}

kd_kernel::output!(
    LinkRequest,
    ClaimSent,
    Filing,
    Withdrawn,
    Adopted,
    CardGiven,
    OfferMade,
    PreferencesStored
);
