//! The person's side of the marketplace, for the pages (`/you/market`): their agents'
//! listings (publish a draft, retract), the proposals either side of which is theirs (approve
//! or decline the exact terms), and the handoffs to their agents (confirm or decline). Each
//! decision is one event whose actor is `person:<id>`: a consent record in the log.

use std::collections::BTreeMap;

use kd_core::db::OptionalExtension;
use kd_kernel::Kernel;

use super::events::{self, HandoffStep, ProposalStep};
use super::store::{self, Handoff, Listing, Proposal};
use crate::people::AppError;

/// What the marketplace page shows a person.
#[derive(Debug, Clone, Default)]
pub struct Overview {
    /// Their agents' listings, newest first.
    pub listings: Vec<Listing>,
    /// Proposals with a side of theirs, newest first, with the sides that are theirs.
    pub proposals: Vec<(Proposal, Vec<&'static str>)>,
    /// Handoffs to their agents, newest first.
    pub handoffs: Vec<Handoff>,
    /// Handles of the agents named, by agent id.
    pub handles: BTreeMap<String, String>,
}

impl Overview {
    /// The `kd_` handle of an agent (its id when unknown).
    pub fn handle<'a>(&'a self, agent_id: &'a str) -> &'a str {
        self.handles.get(agent_id).map_or(agent_id, String::as_str)
    }
}

/// The sides of `proposal` that are `person_id`'s.
pub fn sides(proposal: &Proposal, person_id: &str) -> Vec<&'static str> {
    let mut sides = Vec::new();
    if proposal.proposer_owner == person_id {
        sides.push("proposer");
    }
    if proposal.counterparty_owner == person_id {
        sides.push("counterparty");
    }
    sides
}

/// The page's rows for `person_id`.
///
/// # Errors
/// [`AppError::Internal`].
pub async fn overview(hub: &Kernel, person_id: &str) -> Result<Overview, AppError> {
    let person_id = person_id.to_owned();
    hub.store
        .read(move |conn| -> Result<Overview, AppError> {
            let listings = store::listings_of_owner(conn, &person_id)?;
            let proposals: Vec<(Proposal, Vec<&'static str>)> =
                store::proposals_of_owner(conn, &person_id)?
                    .into_iter()
                    .map(|proposal| {
                        let sides = sides(&proposal, &person_id);
                        (proposal, sides)
                    })
                    .collect();
            let handoffs = store::handoffs_to_owner(conn, &person_id)?;
            let mut handles = BTreeMap::new();
            let named =
                listings
                    .iter()
                    .map(|listing| listing.agent_id.clone())
                    .chain(proposals.iter().flat_map(|(proposal, _)| {
                        [
                            proposal.proposer_id.clone(),
                            proposal.counterparty_id.clone(),
                        ]
                    }))
                    .chain(handoffs.iter().flat_map(|handoff| {
                        [handoff.from_agent.clone(), handoff.to_agent.clone()]
                    }));
            for agent_id in named {
                if !handles.contains_key(&agent_id)
                    && let Some(handle) = crate::identity::store::handle(conn, &agent_id)?
                {
                    handles.insert(agent_id, handle);
                }
            }
            Ok(Overview {
                listings,
                proposals,
                handoffs,
                handles,
            })
        })
        .await
}

/// A listing of one of `person_id`'s agents (the agent still theirs).
fn listing_of(
    conn: &kd_core::db::Connection,
    person_id: &str,
    listing_id: &str,
) -> Result<Listing, AppError> {
    let listing = store::listing(conn, listing_id)?
        .filter(|listing| listing.owner_id == person_id)
        .ok_or(AppError::NotFound)?;
    let owner = crate::identity::store::owner_of(conn, &listing.agent_id)
        .optional()?
        .flatten();
    if owner.as_deref() != Some(person_id) {
        return Err(AppError::NotFound);
    }
    Ok(listing)
}

/// The person publishes a draft of one of their agents (`listing.published`).
///
/// # Errors
/// [`AppError::NotFound`] when it is not their draft; [`AppError::Invalid`] when it is not a
/// draft any more; [`AppError::Internal`].
pub async fn publish_listing(
    hub: &Kernel,
    person_id: &str,
    listing_id: &str,
) -> Result<(), AppError> {
    let person_id = person_id.to_owned();
    let listing_id = listing_id.to_owned();
    hub.store
        .write(move |txn| -> Result<(), AppError> {
            let listing = listing_of(txn.conn(), &person_id, &listing_id)?;
            if listing.status != "draft" {
                return Err(AppError::Invalid(format!(
                    "This listing is {}: only a draft is published.",
                    listing.status
                )));
            }
            let by = format!("person:{person_id}");
            let now = txn.now_ms();
            store::publish_listing(txn.conn(), &listing_id, now, &by)?;
            txn.record(
                by.clone(),
                listing.agent_id.clone(),
                &events::ListingPublished {
                    listing_id,
                    agent_id: listing.agent_id,
                    confirmed_by: by,
                    text_sha256: listing.text_sha256,
                },
            )?;
            Ok(())
        })
        .await?
}

/// The person retracts a listing of one of their agents (`listing.retracted`, by them).
///
/// # Errors
/// [`AppError::NotFound`]; [`AppError::Internal`].
pub async fn retract_listing(
    hub: &Kernel,
    person_id: &str,
    listing_id: &str,
) -> Result<(), AppError> {
    let person_id = person_id.to_owned();
    let listing_id = listing_id.to_owned();
    hub.store
        .write(move |txn| -> Result<(), AppError> {
            let listing = listing_of(txn.conn(), &person_id, &listing_id)?;
            super::listings::retract(
                txn,
                &listing.agent_id,
                &format!("person:{person_id}"),
                &listing_id,
                "listing_id",
            )
            .map_err(kd_kernel::error::ToolError::from)?;
            Ok(())
        })
        .await?
}

/// The person approves (each side of theirs: `proposal.approved`) or declines
/// (`proposal.declined`) an open proposal, naming the terms hash they were shown: a hash that
/// is no longer the proposal's is refused.
///
/// # Errors
/// [`AppError::NotFound`]; [`AppError::Invalid`] for a closed proposal or another hash;
/// [`AppError::Internal`].
pub async fn decide_proposal(
    hub: &Kernel,
    person_id: &str,
    proposal_id: &str,
    approve: bool,
    terms_hash_seen: &str,
) -> Result<(), AppError> {
    let person_id = person_id.to_owned();
    let proposal_id = proposal_id.to_owned();
    let seen = terms_hash_seen.trim().to_owned();
    hub.store
        .write(move |txn| -> Result<(), AppError> {
            let proposal = store::proposal(txn.conn(), &proposal_id)?.ok_or(AppError::NotFound)?;
            let sides = sides(&proposal, &person_id);
            if sides.is_empty() {
                return Err(AppError::NotFound);
            }
            if proposal.status != "proposed" {
                return Err(AppError::Invalid(format!(
                    "This proposal is {} and can no longer change.",
                    proposal.status
                )));
            }
            if seen != proposal.terms_hash {
                return Err(AppError::Invalid(
                    "The terms hash you approved is not this proposal's. Reload the page and read the terms again.".into(),
                ));
            }
            let by = format!("person:{person_id}");
            let now = txn.now_ms();
            let subject = |side: &str| {
                if side == "proposer" {
                    proposal.proposer_id.clone()
                } else {
                    proposal.counterparty_id.clone()
                }
            };
            let step = |side: &str| ProposalStep {
                proposal_id: proposal.proposal_id.clone(),
                terms_hash: proposal.terms_hash.clone(),
                side: side.to_owned(),
            };
            if !approve {
                let side = sides[0];
                store::close_proposal(txn.conn(), &proposal_id, "declined", now, &by)?;
                txn.record(by.clone(), subject(side), &events::ProposalDeclined(step(side)))?;
                return Ok(());
            }
            let mut proposer = proposal.proposer_approved_ms.is_some();
            let mut counterparty = proposal.counterparty_approved_ms.is_some();
            for side in sides {
                let done = if side == "proposer" { &mut proposer } else { &mut counterparty };
                if *done {
                    continue;
                }
                *done = true;
                store::side_approved(txn.conn(), &proposal_id, side, now)?;
                txn.record(by.clone(), subject(side), &events::ProposalApproved(step(side)))?;
            }
            if proposer && counterparty {
                store::close_proposal(txn.conn(), &proposal_id, "approved", now, &by)?;
            }
            Ok(())
        })
        .await?
}

/// The receiving agent's person confirms (`handoff.confirmed`) or declines
/// (`handoff.declined`) an open handoff.
///
/// # Errors
/// [`AppError::NotFound`]; [`AppError::Invalid`] for a decided one; [`AppError::Internal`].
pub async fn decide_handoff(
    hub: &Kernel,
    person_id: &str,
    handoff_id: &str,
    confirm: bool,
) -> Result<(), AppError> {
    let person_id = person_id.to_owned();
    let handoff_id = handoff_id.to_owned();
    hub.store
        .write(move |txn| -> Result<(), AppError> {
            let handoff = store::handoff(txn.conn(), &handoff_id)?
                .filter(|handoff| handoff.to_owner == person_id)
                .ok_or(AppError::NotFound)?;
            if !matches!(handoff.status.as_str(), "pending" | "awaiting_confirmation") {
                return Err(AppError::Invalid(format!(
                    "This handoff is {} and can no longer change.",
                    handoff.status
                )));
            }
            let by = format!("person:{person_id}");
            let status = if confirm { "confirmed" } else { "declined" };
            store::decide_handoff(txn.conn(), &handoff_id, status, txn.now_ms(), &by)?;
            let step = HandoffStep {
                handoff_id: handoff.handoff_id,
                to_agent: handoff.to_agent.clone(),
            };
            if confirm {
                txn.record(by, handoff.to_agent, &events::HandoffConfirmed(step))?;
            } else {
                txn.record(by, handoff.to_agent, &events::HandoffDeclined(step))?;
            }
            Ok(())
        })
        .await?
}
