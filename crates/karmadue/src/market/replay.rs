//! Rebuilds the marketplace's projections from the log (`karmadue ledger rebuild`):
//! `market_listings`, `market_proposals` and `market_handoffs` without their third-party text
//! (titles, descriptions, areas, terms, payloads), which the log keeps as hashes only; the
//! rebuild compares every other column (`rebuild::REBUILT`).

use kd_core::db::Connection;
use kd_core::eventlog::EventRow;

use super::events::{
    HandoffConfirmationRequested, HandoffConfirmed, HandoffDeclined, HandoffMade, ListingDrafted,
    ListingPublished, ListingReported, ListingRetracted, ProposalApproved, ProposalCancelled,
    ProposalDeclined, ProposalMade, ProposalReviewRequested,
};
use super::store::{self, Handoff, Listing, Proposal};
use crate::events::EventPayload;
use crate::replay::{Replay, ReplayError, payload};

/// The marketplace's replay (`crate::replay::Replay`).
pub struct MarketReplay;

impl Replay for MarketReplay {
    fn area(&self) -> &'static str {
        "market"
    }

    fn apply(&self, conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
        apply_row(conn, row)
    }
}

fn apply_row(conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
    let at = row.created_ms;
    match row.kind.as_str() {
        ListingDrafted::KIND => drafted(conn, row, at)?,
        ListingPublished::KIND => {
            let published: ListingPublished = payload(row)?;
            store::publish_listing(conn, &published.listing_id, at, &published.confirmed_by)?;
        }
        ListingRetracted::KIND => {
            let retracted: ListingRetracted = payload(row)?;
            store::retract_listing(conn, &retracted.listing_id, at)?;
        }
        ListingReported::KIND => {
            let reported: ListingReported = payload(row)?;
            store::add_report(conn, &reported.listing_id)?;
        }
        ProposalMade::KIND => made(conn, row, at)?,
        ProposalReviewRequested::KIND => {
            let ProposalReviewRequested(step) = payload(row)?;
            store::review_requested(conn, &step.proposal_id, at)?;
        }
        ProposalDeclined::KIND => {
            let ProposalDeclined(step) = payload(row)?;
            store::close_proposal(conn, &step.proposal_id, "declined", at, &row.actor)?;
        }
        ProposalCancelled::KIND => {
            let ProposalCancelled(step) = payload(row)?;
            store::close_proposal(conn, &step.proposal_id, "cancelled", at, &row.actor)?;
        }
        ProposalApproved::KIND => {
            let ProposalApproved(step) = payload(row)?;
            store::side_approved(conn, &step.proposal_id, &step.side, at)?;
            let both = store::proposal(conn, &step.proposal_id)?.is_some_and(|proposal| {
                proposal.proposer_approved_ms.is_some()
                    && proposal.counterparty_approved_ms.is_some()
            });
            if both {
                store::close_proposal(conn, &step.proposal_id, "approved", at, &row.actor)?;
            }
        }
        HandoffMade::KIND => handed(conn, row, at)?,
        HandoffConfirmationRequested::KIND => {
            let HandoffConfirmationRequested(step) = payload(row)?;
            store::handoff_requested(conn, &step.handoff_id, at)?;
        }
        HandoffConfirmed::KIND => {
            let HandoffConfirmed(step) = payload(row)?;
            store::decide_handoff(conn, &step.handoff_id, "confirmed", at, &row.actor)?;
        }
        HandoffDeclined::KIND => {
            let HandoffDeclined(step) = payload(row)?;
            store::decide_handoff(conn, &step.handoff_id, "declined", at, &row.actor)?;
        }
        _ => {}
    }
    Ok(())
}

fn drafted(conn: &Connection, row: &EventRow, at: i64) -> Result<(), ReplayError> {
    let drafted: ListingDrafted = payload(row)?;
    store::insert_listing(
        conn,
        &Listing {
            listing_id: drafted.listing_id,
            agent_id: drafted.agent_id,
            owner_id: drafted.owner_id,
            operator: drafted.operator,
            kind: drafted.kind,
            category: drafted.category,
            points: drafted.points,
            title: String::new(),
            description: None,
            area: None,
            title_sha256: drafted.title_sha256,
            text_sha256: drafted.text_sha256,
            status: "draft".into(),
            created_ms: at,
            published_ms: None,
            published_by: None,
            retracted_ms: None,
            reports: 0,
            event_seq: row.seq,
        },
    )?;
    Ok(())
}

fn made(conn: &Connection, row: &EventRow, at: i64) -> Result<(), ReplayError> {
    let made: ProposalMade = payload(row)?;
    store::insert_proposal(
        conn,
        &Proposal {
            proposal_id: made.proposal_id,
            listing_id: made.listing_id,
            proposer_id: made.proposer_id,
            proposer_owner: made.proposer_owner,
            counterparty_id: made.counterparty_id,
            counterparty_owner: made.counterparty_owner,
            terms: String::new(),
            terms_hash: made.terms_hash,
            status: "proposed".into(),
            proposer_approved_ms: None,
            counterparty_approved_ms: None,
            review_requested_ms: None,
            decided_ms: None,
            decided_by: None,
            created_ms: at,
            event_seq: row.seq,
        },
    )?;
    Ok(())
}

fn handed(conn: &Connection, row: &EventRow, at: i64) -> Result<(), ReplayError> {
    let made: HandoffMade = payload(row)?;
    store::insert_handoff(
        conn,
        &Handoff {
            handoff_id: made.handoff_id,
            from_agent: made.from_agent,
            to_agent: made.to_agent,
            to_owner: made.to_owner,
            proposal_id: made.proposal_id,
            circle: made.circle,
            kind: made.kind,
            payload: String::new(),
            payload_sha256: made.payload_sha256,
            status: "pending".into(),
            requested_ms: None,
            decided_ms: None,
            decided_by: None,
            created_ms: at,
            event_seq: row.seq,
        },
    )?;
    Ok(())
}
