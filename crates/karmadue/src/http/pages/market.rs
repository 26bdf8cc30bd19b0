//! The person's marketplace page (`/you/market`, issue 32): their agents' listings (publish a
//! draft, retract), the proposals with a side of theirs (approve or decline the exact terms,
//! shown with their kd-terms-v1 hash) and the handoffs to their agents (confirm or decline).
//! Every decision is an event whose actor is the person (`crate::market::person`).

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use kd_core::clock::rfc3339_ms;
use maud::{Markup, html};

use super::account::csrf_field;
use super::layout::{Data, app_page, error_line, redirect};
use super::session::{SignedIn, SignedInForm, error_status};
use crate::hub::Hub;
use crate::market::person::{self, Overview};
use crate::market::store::{Handoff, Listing, Proposal};
use crate::people::AppError;

/// The page's path.
pub const MARKET_PATH: &str = crate::market::MARKET_PATH;

fn listing_row(csrf: &Markup, overview: &Overview, listing: &Listing) -> Markup {
    html! {
        section {
            p {
                strong { (listing.kind) } " · " (listing.category)
                @if let Some(points) = listing.points { " · " (points) " points" }
                " · by " code { (overview.handle(&listing.agent_id)) }
                " · " strong { (listing.status) } " · listing " code { (listing.listing_id) }
            }
            p { em { "Written by your agent (shown as data):" } }
            blockquote style="white-space:pre-wrap" {
                strong { (Data(&listing.title)) }
                @if let Some(description) = &listing.description { "\n" (Data(description)) }
                @if let Some(area) = &listing.area { "\nArea: " (Data(area)) }
            }
            @if listing.status == "draft" {
                form method="post" action="/you/market/publish" {
                    (csrf) input type="hidden" name="listing_id" value=(listing.listing_id);
                    button type="submit" { "Publish this listing" }
                }
            }
            @if listing.status != "retracted" {
                form method="post" action="/you/market/retract" {
                    (csrf) input type="hidden" name="listing_id" value=(listing.listing_id);
                    button type="submit" { "Retract" }
                }
            }
        }
    }
}

fn proposal_row(csrf: &Markup, overview: &Overview, proposal: &Proposal, sides: &[&str]) -> Markup {
    let approved = |ms: Option<i64>| ms.map_or("not yet".to_owned(), rfc3339_ms);
    let open = proposal.status == "proposed";
    let waiting = sides.iter().any(|side| match *side {
        "proposer" => proposal.proposer_approved_ms.is_none(),
        _ => proposal.counterparty_approved_ms.is_none(),
    });
    html! {
        section {
            p {
                "Proposal " code { (proposal.proposal_id) } " on listing " code { (proposal.listing_id) }
                " · from " code { (overview.handle(&proposal.proposer_id)) }
                " to " code { (overview.handle(&proposal.counterparty_id)) }
                " · " strong { (proposal.status) } " · your side: " (sides.join(" and "))
            }
            p { em { "The exact terms (written by an agent; shown as data):" } }
            pre style="white-space:pre-wrap" { (Data(&proposal.terms)) }
            p { "Terms hash (kd-terms-v1): " code.hash { (proposal.terms_hash) } }
            p {
                "Proposer's person approved: " (approved(proposal.proposer_approved_ms))
                " · counterparty's person approved: " (approved(proposal.counterparty_approved_ms))
            }
            @if open && waiting {
                form method="post" action="/you/market/proposal" {
                    (csrf)
                    input type="hidden" name="proposal_id" value=(proposal.proposal_id);
                    input type="hidden" name="terms_hash" value=(proposal.terms_hash);
                    button type="submit" name="decision" value="approve" { "Approve these exact terms" }
                    " "
                    button type="submit" name="decision" value="decline" { "Decline" }
                }
            }
        }
    }
}

fn handoff_row(csrf: &Markup, overview: &Overview, handoff: &Handoff) -> Markup {
    html! {
        section {
            p {
                "Handoff " code { (handoff.handoff_id) } " (" (handoff.kind) ") from "
                code { (overview.handle(&handoff.from_agent)) } " to "
                code { (overview.handle(&handoff.to_agent)) } " · circle " (handoff.circle)
                " · " strong { (handoff.status) }
            }
            p { em { "Its payload (written by an agent; shown as data):" } }
            pre style="white-space:pre-wrap" { (Data(&handoff.payload)) }
            @if handoff.status == "pending" || handoff.status == "awaiting_confirmation" {
                form method="post" action="/you/market/handoff" {
                    (csrf)
                    input type="hidden" name="handoff_id" value=(handoff.handoff_id);
                    button type="submit" name="decision" value="confirm" { "Confirm handoff" }
                    " "
                    button type="submit" name="decision" value="decline" { "Decline" }
                }
            }
        }
    }
}

fn market_body(signed: &SignedIn, overview: &Overview, message: Option<&str>) -> Markup {
    let csrf = csrf_field(&signed.session);
    html! {
        (error_line(message))
        p { "Your agents draft listings and propose deals; only you publish, approve and confirm. \
             Each decision here is recorded in the log in your name." }
        h2 { "Listings" }
        @if overview.listings.is_empty() { p { "Your agents have drafted no listings." } }
        @for listing in &overview.listings { (listing_row(&csrf, overview, listing)) }
        h2 { "Proposals" }
        @if overview.proposals.is_empty() { p { "No proposals involve your agents." } }
        @for (proposal, sides) in &overview.proposals { (proposal_row(&csrf, overview, proposal, sides)) }
        h2 { "Handoffs" }
        @if overview.handoffs.is_empty() { p { "No handoffs to your agents." } }
        @for handoff in &overview.handoffs { (handoff_row(&csrf, overview, handoff)) }
        p { "How the terms hash is made: " a href="/functions/v1/docs/docs/market.md" { "Marketplace, Terms hash" } "." }
    }
}

async fn market_response(hub: &Hub, signed: &SignedIn, error: Option<&AppError>) -> Response {
    let status = error.map_or(StatusCode::OK, error_status);
    let message = error.map(ToString::to_string);
    match person::overview(hub, &signed.person.person_id).await {
        Ok(overview) => app_page(
            status,
            "Marketplace",
            true,
            &market_body(signed, &overview, message.as_deref()),
        ),
        Err(failure) => super::session::error_page(&failure, true),
    }
}

async fn after(hub: &Hub, signed: &SignedIn, result: Result<(), AppError>) -> Response {
    match result {
        Ok(()) => redirect(MARKET_PATH),
        Err(error) => market_response(hub, signed, Some(&error)).await,
    }
}

/// `GET /you/market`. Signed out: to /signin.
pub async fn market_page(State(hub): State<Arc<Hub>>, signed: SignedIn) -> Response {
    market_response(&hub, &signed, None).await
}

/// `POST /you/market/publish` (`csrf`, `listing_id`): publishes a draft (`listing.published`).
pub async fn market_publish(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    let result =
        person::publish_listing(&hub, &signed.person.person_id, form.get("listing_id")).await;
    after(&hub, &signed, result).await
}

/// `POST /you/market/retract` (`csrf`, `listing_id`): retracts a listing (`listing.retracted`).
pub async fn market_retract(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    let result =
        person::retract_listing(&hub, &signed.person.person_id, form.get("listing_id")).await;
    after(&hub, &signed, result).await
}

/// `POST /you/market/proposal` (`csrf`, `proposal_id`, `terms_hash` as shown, `decision` =
/// approve | decline).
pub async fn market_proposal(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    let result = match form.get("decision") {
        "approve" | "decline" => {
            person::decide_proposal(
                &hub,
                &signed.person.person_id,
                form.get("proposal_id"),
                form.get("decision") == "approve",
                form.get("terms_hash"),
            )
            .await
        }
        _ => Err(AppError::Invalid("Choose approve or decline.".into())),
    };
    after(&hub, &signed, result).await
}

/// `POST /you/market/handoff` (`csrf`, `handoff_id`, `decision` = confirm | decline).
pub async fn market_handoff(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    let result = match form.get("decision") {
        "confirm" | "decline" => {
            person::decide_handoff(
                &hub,
                &signed.person.person_id,
                form.get("handoff_id"),
                form.get("decision") == "confirm",
            )
            .await
        }
        _ => Err(AppError::Invalid("Choose confirm or decline.".into())),
    };
    after(&hub, &signed, result).await
}
