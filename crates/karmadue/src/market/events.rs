//! The marketplace's events (issue 32; docs/decisions.md 442-459). Third-party text (a
//! listing's title, description and area, a proposal's terms, a handoff's payload) is not in
//! the log: each is committed to by its SHA-256 (a proposal by its exact terms hash,
//! kd-terms-v1), and stays in the area's tables.

use serde::{Deserialize, Serialize};

use crate::events::declare;

/// `listing.drafted`: an agent drafted a give or an ask (it waits for its person).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListingDrafted {
    /// `kdli_` id.
    pub listing_id: String,
    /// The posting agent.
    pub agent_id: String,
    /// Its person, who publishes it.
    pub owner_id: String,
    /// Whose caps it counts against (the person).
    pub operator: String,
    /// `give` or `ask`.
    pub kind: String,
    /// One of the 18 categories.
    pub category: String,
    /// Points on the listing.
    pub points: Option<i64>,
    /// SHA-256 of the title.
    pub title_sha256: String,
    /// SHA-256 of title, LF, description, LF, area.
    pub text_sha256: String,
}
declare!(ListingDrafted, "listing.drafted");

/// `listing.published`: the agent's person confirmed a draft (a consent record: the actor is
/// `person:<id>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListingPublished {
    /// The listing.
    pub listing_id: String,
    /// Its agent.
    pub agent_id: String,
    /// `person:<id>` who confirmed.
    pub confirmed_by: String,
    /// The text confirmed (SHA-256 of title, LF, description, LF, area).
    pub text_sha256: String,
}
declare!(ListingPublished, "listing.published");

/// `listing.retracted`: the agent (retract_post) or its person cancelled the listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListingRetracted {
    /// The listing.
    pub listing_id: String,
    /// Its agent.
    pub agent_id: String,
}
declare!(ListingRetracted, "listing.retracted");

/// `listing.reported`: report_content on a published listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListingReported {
    /// `kdcr_` report id (the report is kept with the catalog's content reports).
    pub report_id: String,
    /// The listing.
    pub listing_id: String,
    /// The reporting agent, or None for an unsigned report.
    pub reporter: Option<String>,
    /// SHA-256 of the reason.
    pub reason_sha256: String,
}
declare!(ListingReported, "listing.reported");

/// `proposal.made`: propose_terms (never an approval).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProposalMade {
    /// `kdpr_` id.
    pub proposal_id: String,
    /// The proposer's listing.
    pub listing_id: String,
    /// The proposing agent.
    pub proposer_id: String,
    /// Its person.
    pub proposer_owner: String,
    /// The other agent.
    pub counterparty_id: String,
    /// Its person.
    pub counterparty_owner: String,
    /// The exact terms hash (kd-terms-v1).
    pub terms_hash: String,
}
declare!(ProposalMade, "proposal.made");

/// What a later proposal event names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProposalStep {
    /// The proposal.
    pub proposal_id: String,
    /// Its exact terms hash, as the actor saw it.
    pub terms_hash: String,
    /// `proposer` or `counterparty`: whose side acted.
    pub side: String,
}

/// `proposal.review_requested`: an agent asked its person to review (respond_to_proposal).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProposalReviewRequested(pub ProposalStep);
declare!(ProposalReviewRequested, "proposal.review_requested");

/// `proposal.declined`: the counterparty's agent or either side's person declined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProposalDeclined(pub ProposalStep);
declare!(ProposalDeclined, "proposal.declined");

/// `proposal.cancelled`: the proposer withdrew it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProposalCancelled(pub ProposalStep);
declare!(ProposalCancelled, "proposal.cancelled");

/// `proposal.approved`: one side's person approved the exact terms on the page (a consent
/// record: the actor is `person:<id>`). The proposal is approved once both sides have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProposalApproved(pub ProposalStep);
declare!(ProposalApproved, "proposal.approved");

/// `handoff.made`: handoff_task inside a shared circle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoffMade {
    /// `kdho_` id.
    pub handoff_id: String,
    /// The sending agent.
    pub from_agent: String,
    /// The receiving agent.
    pub to_agent: String,
    /// The person who confirms it.
    pub to_owner: String,
    /// `same_owner` or `approved_proposal`.
    pub circle: String,
    /// The approved proposal that makes the circle.
    pub proposal_id: Option<String>,
    /// The handoff kind (`fyi` unless given).
    pub kind: String,
    /// SHA-256 of the payload's canonical text.
    pub payload_sha256: String,
}
declare!(HandoffMade, "handoff.made");

/// What a later handoff event names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoffStep {
    /// The handoff.
    pub handoff_id: String,
    /// The receiving agent.
    pub to_agent: String,
}

/// `handoff.confirmation_requested`: confirm_handoff asked the person (never an approval).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct HandoffConfirmationRequested(pub HandoffStep);
declare!(
    HandoffConfirmationRequested,
    "handoff.confirmation_requested"
);

/// `handoff.confirmed`: the receiving agent's person confirmed it on the page (consent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct HandoffConfirmed(pub HandoffStep);
declare!(HandoffConfirmed, "handoff.confirmed");

/// `handoff.declined`: the receiving agent's person declined it on the page (consent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct HandoffDeclined(pub HandoffStep);
declare!(HandoffDeclined, "handoff.declined");
