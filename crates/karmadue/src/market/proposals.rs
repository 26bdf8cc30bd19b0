//! Proposals: `propose_terms`, `get_proposal`, `respond_to_proposal`. No tool approves: each
//! side's person approves the exact terms on the page ([`super::person`]).

use kd_core::db::Connection;
use kd_core::random::random_id;
use serde_json::Value;

use kd_kernel::Ctx;
use kd_kernel::input::Text;

use super::error::MarketError;
use super::events::{self, ProposalStep};
use super::output::{ProposalAnswered, ProposalRead, ProposalView};
use super::store::{self, Proposal};
use super::terms::{self, TermsIds};
use super::{
    DAY_MS, GetProposal, MAX_TERMS_BYTES, PROPOSALS_PER_DAY, ProposeTerms, RespondToProposal,
    market_url,
};

/// A proposal id's prefix.
pub const PROPOSAL_PREFIX: &str = "kdpr_";

/// An active agent named by id or `kd_` handle: (agent id, owner).
pub(super) fn active_agent(
    conn: &Connection,
    named: &str,
) -> Result<Option<(String, Option<String>)>, MarketError> {
    let row = if named.starts_with("kd_") {
        crate::identity::store::agent_by_handle(conn, named)?
    } else {
        crate::identity::store::agent_by_id(conn, named)?
    };
    Ok(row
        .filter(|agent| agent.status == "active")
        .map(|agent| (agent.agent_id, agent.owner_id)))
}

/// Which side of `proposal` the agent is on.
pub(super) fn side_of(proposal: &Proposal, agent_id: &str) -> Option<&'static str> {
    if proposal.proposer_id == agent_id {
        Some("proposer")
    } else if proposal.counterparty_id == agent_id {
        Some("counterparty")
    } else {
        None
    }
}

fn read_of(proposal: &Proposal, side: &'static str, url: String) -> ProposalRead {
    let next_step = match (proposal.status.as_str(), side) {
        ("proposed", "proposer") => {
            "Waiting for both people to approve these exact terms on the KarmaDue page (approve_url). You can cancel it, or request_review to ask your person to look."
        }
        ("proposed", _) => {
            "Proposed to you. Your person approves or declines it on the KarmaDue page (approve_url); you can decline it, or request_review to ask your person to look."
        }
        ("approved", _) => {
            "Approved by both people. handoff_task can now hand work to the other side."
        }
        _ => "Closed. Nothing more changes on it.",
    };
    ProposalRead {
        proposal: ProposalView::of(proposal, url),
        your_side: side,
        next_step,
    }
}

/// Appends `proposal.made` for `proposal` by `actor` and stores it with the event's seq.
fn record_made(
    txn: &mut kd_core::store::WriteTxn<'_>,
    actor: String,
    proposal: &mut Proposal,
) -> Result<(), MarketError> {
    let event = txn.record(
        actor,
        proposal.proposer_id.clone(),
        &events::ProposalMade {
            proposal_id: proposal.proposal_id.clone(),
            listing_id: proposal.listing_id.clone(),
            proposer_id: proposal.proposer_id.clone(),
            proposer_owner: proposal.proposer_owner.clone(),
            counterparty_id: proposal.counterparty_id.clone(),
            counterparty_owner: proposal.counterparty_owner.clone(),
            terms_hash: proposal.terms_hash.clone(),
        },
    )?;
    proposal.event_seq = event.seq;
    store::insert_proposal(txn.conn(), proposal)?;
    Ok(())
}

/// `propose_terms`.
pub(super) async fn propose_terms(
    ctx: Ctx,
    input: ProposeTerms,
) -> Result<ProposalRead, MarketError> {
    let my_listing_id = input
        .my_listing_id
        .required_text("my_listing_id")?
        .to_owned();
    let counterparty = input
        .counterparty_id
        .required_text("counterparty_id")?
        .to_owned();
    let terms_value = Value::Object(input.terms.unwrap_or_default());
    let canonical = terms::canonical_terms(&terms_value);
    if canonical.len() > MAX_TERMS_BYTES || !terms::integers_only(&terms_value) {
        return Err(MarketError::Terms);
    }
    let proposal_id = random_id::<12>(ctx.kernel.random.as_ref(), PROPOSAL_PREFIX);
    let url = market_url(&ctx.kernel);
    ctx.signed_write(move |txn, signed| -> Result<_, MarketError> {
        let agent_id = signed.agent_id.to_string();
        let now = txn.now_ms();
        let listing = store::listing(txn.conn(), &my_listing_id)?
            .filter(|listing| listing.agent_id == agent_id)
            .ok_or(MarketError::NoListing("my_listing_id"))?;
        if listing.status != "published" {
            return Err(MarketError::ListingState {
                field: "my_listing_id",
                status: listing.status,
                what: "only a published listing takes proposals (your person publishes drafts in the KarmaDue app)",
            });
        }
        let (counterparty_id, their_owner) =
            active_agent(txn.conn(), &counterparty)?.ok_or(MarketError::NoCounterparty)?;
        if counterparty_id == agent_id || their_owner.as_deref() == Some(listing.owner_id.as_str()) {
            return Err(MarketError::SameSide);
        }
        let their_owner = their_owner.ok_or(MarketError::CounterpartyUnowned)?;
        let my_owner = crate::identity::store::owner_of(txn.conn(), &agent_id)?
            .ok_or(MarketError::NeedsOwner)?;
        if my_owner == their_owner {
            return Err(MarketError::SameSide);
        }
        let (made, oldest) = store::proposals_since(txn.conn(), &agent_id, now - DAY_MS)?;
        if made >= PROPOSALS_PER_DAY {
            return Err(MarketError::ProposalsSpent {
                limit: PROPOSALS_PER_DAY,
                retry_after_s: super::listings::day_wait_s(oldest, now),
            });
        }
        let terms_hash = terms::terms_hash(
            TermsIds {
                proposal_id: &proposal_id,
                listing_id: &listing.listing_id,
                proposer_id: &agent_id,
                counterparty_id: &counterparty_id,
            },
            &canonical,
        );
        let mut proposal = Proposal {
            proposal_id,
            listing_id: listing.listing_id,
            proposer_id: agent_id,
            proposer_owner: my_owner,
            counterparty_id,
            counterparty_owner: their_owner,
            terms: canonical,
            terms_hash,
            status: "proposed".into(),
            proposer_approved_ms: None,
            counterparty_approved_ms: None,
            review_requested_ms: None,
            decided_ms: None,
            decided_by: None,
            created_ms: now,
            event_seq: 0,
        };
        record_made(txn, signed.actor(), &mut proposal)?;
        Ok(read_of(&proposal, "proposer", url))
    })
    .await
}

/// `get_proposal`: its two sides only.
pub(super) async fn get_proposal(
    ctx: Ctx,
    input: GetProposal,
) -> Result<ProposalRead, MarketError> {
    let proposal_id = input.proposal_id.required_text("proposal_id")?.to_owned();
    let url = market_url(&ctx.kernel);
    ctx.signed_write(move |txn, signed| -> Result<_, MarketError> {
        let agent_id = signed.agent_id.to_string();
        let proposal = store::proposal(txn.conn(), &proposal_id)?.ok_or(MarketError::NoProposal)?;
        let side = side_of(&proposal, &agent_id).ok_or(MarketError::NoProposal)?;
        Ok(read_of(&proposal, side, url))
    })
    .await
}

/// `respond_to_proposal`: decline (the counterparty), cancel (the proposer), request_review
/// (either side); approve is refused before anything is read or written.
pub(super) async fn respond_to_proposal(
    ctx: Ctx,
    input: RespondToProposal,
) -> Result<ProposalAnswered, MarketError> {
    let proposal_id = input.proposal_id.required_text("proposal_id")?.to_owned();
    let action = input.action.trim().to_owned();
    match action.as_str() {
        "approve" => {
            return Err(MarketError::ApproveRefused {
                approve_url: market_url(&ctx.kernel),
            });
        }
        "decline" | "cancel" | "request_review" => {}
        _ => return Err(MarketError::Action),
    }
    ctx.signed_write(move |txn, signed| -> Result<_, MarketError> {
        let agent_id = signed.agent_id.to_string();
        let now = txn.now_ms();
        let proposal = store::proposal(txn.conn(), &proposal_id)?.ok_or(MarketError::NoProposal)?;
        let side = side_of(&proposal, &agent_id).ok_or(MarketError::NoProposal)?;
        if proposal.status != "proposed" {
            return Err(MarketError::ProposalClosed(proposal.status));
        }
        let step = ProposalStep {
            proposal_id: proposal.proposal_id.clone(),
            terms_hash: proposal.terms_hash.clone(),
            side: side.to_owned(),
        };
        let actor = signed.actor();
        let (status, event, next_step) = match (action.as_str(), side) {
            ("decline", "counterparty") => {
                store::close_proposal(txn.conn(), &proposal_id, "declined", now, &actor)?;
                let event = txn.record(actor, agent_id.clone(), &events::ProposalDeclined(step))?;
                ("declined", event, "Declined. Nothing more changes on it.")
            }
            ("decline", _) => {
                return Err(MarketError::NotYourSide(
                    "decline answers a proposal made to you; to withdraw your own proposal, use cancel.",
                ));
            }
            ("cancel", "proposer") => {
                store::close_proposal(txn.conn(), &proposal_id, "cancelled", now, &actor)?;
                let event = txn.record(actor, agent_id.clone(), &events::ProposalCancelled(step))?;
                ("cancelled", event, "Cancelled. Nothing more changes on it.")
            }
            ("cancel", _) => {
                return Err(MarketError::NotYourSide(
                    "cancel withdraws a proposal you made; to refuse one made to you, use decline.",
                ));
            }
            _ => {
                store::review_requested(txn.conn(), &proposal_id, now)?;
                let event = txn.record(actor, agent_id.clone(), &events::ProposalReviewRequested(step))?;
                (
                    "proposed",
                    event,
                    "Your person sees it marked for review on the KarmaDue page (approve_url in get_proposal); only they approve or decline it there.",
                )
            }
        };
        Ok(ProposalAnswered {
            proposal_id: proposal.proposal_id,
            action,
            status: status.to_owned(),
            terms_hash: proposal.terms_hash,
            next_step,
            event_seq: event.seq,
        })
    })
    .await
}
