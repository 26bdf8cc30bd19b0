//! The marketplace tools' typed outputs (`kd_kernel::output!`). Titles, descriptions, areas
//! and handoff notes are third-party text: each tool's `untrusted` lifts them.

use serde::Serialize;
use serde_json::Value;

use super::store::{Handoff, Listing, Proposal};

/// A listing as the tools show it.
#[derive(Debug, Serialize)]
pub struct ListingView {
    /// `kdli_` id.
    pub listing_id: String,
    /// The posting agent.
    pub agent_id: String,
    /// `give` or `ask`.
    pub kind: String,
    /// One of the 18.
    pub category: String,
    /// Points.
    pub points: Option<i64>,
    /// Third-party text (lifted).
    pub title: Option<String>,
    /// Third-party text (lifted).
    pub description: Option<String>,
    /// Third-party text (lifted).
    pub area: Option<String>,
    /// `draft`, `published` or `retracted`.
    pub status: String,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339, once published.
    pub published_at: Option<String>,
}

impl From<&Listing> for ListingView {
    fn from(listing: &Listing) -> Self {
        Self {
            listing_id: listing.listing_id.clone(),
            agent_id: listing.agent_id.clone(),
            kind: listing.kind.clone(),
            category: listing.category.clone(),
            points: listing.points,
            title: Some(listing.title.clone()),
            description: listing.description.clone(),
            area: listing.area.clone(),
            status: listing.status.clone(),
            created_at: kd_core::clock::rfc3339_ms(listing.created_ms),
            published_at: listing.published_ms.map(kd_core::clock::rfc3339_ms),
        }
    }
}

/// The operator's pooled caps after a post.
#[derive(Debug, Serialize)]
pub struct PooledCaps {
    /// Asks and listings posted in the last 24 hours.
    pub posts_last_24h: i64,
    /// The daily cap.
    pub posts_per_day: i64,
    /// Open asks and listings.
    pub open: i64,
    /// The open cap.
    pub open_limit: i64,
    /// Who shares them.
    pub shared_by: &'static str,
}

/// post_listing's `data`.
#[derive(Debug, Serialize)]
pub struct ListingPosted {
    /// The listing (its text lifted).
    #[serde(flatten)]
    pub listing: ListingView,
    /// True when the person's own session published it with their confirmation.
    pub published: bool,
    /// What happens next (platform text).
    pub next_step: &'static str,
    /// Where the person confirms it.
    pub confirm_url: String,
    /// The pooled caps.
    pub operator_caps: PooledCaps,
    /// `listing.drafted`.
    pub event_seq: i64,
}

/// retract_post's `data` for a listing.
#[derive(Debug, Serialize)]
pub struct ListingRetracted {
    /// The listing.
    pub listing_id: String,
    /// `listing`.
    pub retracted: &'static str,
    /// `retracted`.
    pub status: &'static str,
    /// Retracted before (nothing written).
    pub already: bool,
    /// `listing.retracted`'s seq.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_seq: Option<i64>,
}

/// report_content's `data` for a listing.
#[derive(Debug, Serialize)]
pub struct ListingReportFiled {
    /// `kdcr_` id.
    pub report_id: String,
    /// The listing.
    pub listing_id: String,
    /// Third-party text (lifted).
    pub reason: String,
    /// Third-party text (lifted).
    pub details: Option<String>,
    /// The reporting agent.
    pub reporter: Option<String>,
    /// `received`.
    pub status: &'static str,
    /// Platform text.
    pub note: &'static str,
    /// `listing.reported`.
    pub event_seq: i64,
}

/// One match candidate.
#[derive(Debug, Serialize)]
pub struct Candidate {
    /// The listing (its text lifted).
    #[serde(flatten)]
    pub listing: ListingView,
    /// Text relevance (BM25 over the stemmed words), rounded to 3 places.
    pub score: f64,
    /// How many of the need's words it matched.
    pub matched_words: usize,
    /// The server's plain sentence about why it ranked (not lifted).
    pub ranking_note: String,
}

/// search_matches' `data`.
#[derive(Debug, Serialize)]
pub struct Matches {
    /// The listing matched, if one was named.
    pub listing_id: Option<String>,
    /// The kind of the candidates (`give` for a need or an ask, `ask` for a give).
    pub looking_for: &'static str,
    /// Candidates, best first.
    pub candidates: Vec<Candidate>,
    /// How many.
    pub total: usize,
    /// `Nothing matched.` when empty.
    pub message: Option<&'static str>,
    /// Platform text.
    pub next_step: &'static str,
}

/// A proposal as its parties see it.
#[derive(Debug, Serialize)]
pub struct ProposalView {
    /// `kdpr_` id.
    pub proposal_id: String,
    /// The proposer's listing.
    pub listing_id: String,
    /// The proposing agent.
    pub proposer_id: String,
    /// The other agent.
    pub counterparty_id: String,
    /// The terms object as proposed (agent-written data).
    pub terms: Value,
    /// `kd-terms-v1`.
    pub terms_recipe: &'static str,
    /// The exact terms hash: lowercase hex SHA-256 of the kd-terms-v1 text.
    pub terms_hash: String,
    /// How to rebuild it (platform text).
    pub terms_hash_note: &'static str,
    /// `proposed`, `approved`, `declined` or `cancelled`.
    pub status: String,
    /// Each side's person's approval.
    pub approvals: Approvals,
    /// When an agent asked its person to review, RFC 3339.
    pub review_requested_at: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    /// Where the people approve or decline.
    pub approve_url: String,
    /// `proposal.made`.
    pub event_seq: i64,
}

/// Both sides' approvals.
#[derive(Debug, Serialize)]
pub struct Approvals {
    /// The proposer's person, RFC 3339 when approved.
    pub proposer: Option<String>,
    /// The counterparty's person, RFC 3339 when approved.
    pub counterparty: Option<String>,
}

impl ProposalView {
    /// The view of a row.
    pub fn of(proposal: &Proposal, approve_url: String) -> Self {
        Self {
            proposal_id: proposal.proposal_id.clone(),
            listing_id: proposal.listing_id.clone(),
            proposer_id: proposal.proposer_id.clone(),
            counterparty_id: proposal.counterparty_id.clone(),
            terms: serde_json::from_str(&proposal.terms).unwrap_or(Value::Null),
            terms_recipe: super::terms::RECIPE,
            terms_hash: proposal.terms_hash.clone(),
            terms_hash_note: super::TERMS_HASH_NOTE,
            status: proposal.status.clone(),
            approvals: Approvals {
                proposer: proposal
                    .proposer_approved_ms
                    .map(kd_core::clock::rfc3339_ms),
                counterparty: proposal
                    .counterparty_approved_ms
                    .map(kd_core::clock::rfc3339_ms),
            },
            review_requested_at: proposal.review_requested_ms.map(kd_core::clock::rfc3339_ms),
            created_at: kd_core::clock::rfc3339_ms(proposal.created_ms),
            approve_url,
            event_seq: proposal.event_seq,
        }
    }
}

/// propose_terms' and get_proposal's `data`.
#[derive(Debug, Serialize)]
pub struct ProposalRead {
    /// The proposal.
    #[serde(flatten)]
    pub proposal: ProposalView,
    /// Which side the caller is on.
    pub your_side: &'static str,
    /// Platform text.
    pub next_step: &'static str,
}

/// respond_to_proposal's `data`.
#[derive(Debug, Serialize)]
pub struct ProposalAnswered {
    /// The proposal.
    pub proposal_id: String,
    /// What was done.
    pub action: String,
    /// The status now.
    pub status: String,
    /// The exact terms hash acted on.
    pub terms_hash: String,
    /// Platform text.
    pub next_step: &'static str,
    /// The event's seq.
    pub event_seq: i64,
}

/// A handoff as its parties see it.
#[derive(Debug, Serialize)]
pub struct HandoffView {
    /// `kdho_` id.
    pub handoff_id: String,
    /// The sending agent.
    pub from_agent: String,
    /// The receiving agent.
    pub to_agent: String,
    /// `same_owner` or `approved_proposal`.
    pub circle: String,
    /// The approved proposal that makes the circle.
    pub proposal_id: Option<String>,
    /// The kind label.
    pub kind: String,
    /// The payload (agent-written data; its note lifted).
    pub payload: Value,
    /// `pending`, `awaiting_confirmation`, `confirmed` or `declined`.
    pub status: String,
    /// RFC 3339.
    pub created_at: String,
    /// Where the person confirms.
    pub confirm_url: String,
}

impl HandoffView {
    /// The view of a row.
    pub fn of(handoff: &Handoff, confirm_url: String) -> Self {
        Self {
            handoff_id: handoff.handoff_id.clone(),
            from_agent: handoff.from_agent.clone(),
            to_agent: handoff.to_agent.clone(),
            circle: handoff.circle.clone(),
            proposal_id: handoff.proposal_id.clone(),
            kind: handoff.kind.clone(),
            payload: serde_json::from_str(&handoff.payload).unwrap_or(Value::Null),
            status: handoff.status.clone(),
            created_at: kd_core::clock::rfc3339_ms(handoff.created_ms),
            confirm_url,
        }
    }
}

/// handoff_task's and confirm_handoff's `data`.
#[derive(Debug, Serialize)]
pub struct HandoffDone {
    /// The handoff.
    #[serde(flatten)]
    pub handoff: HandoffView,
    /// Platform text.
    pub next_step: &'static str,
    /// The event's seq (absent when nothing was written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_seq: Option<i64>,
}

kd_kernel::output!(
    ListingPosted,
    ListingRetracted,
    ListingReportFiled,
    Matches,
    ProposalRead,
    ProposalAnswered,
    HandoffDone
);
