//! A signed-in person's Linkdbots approval queue, as JSON for a dashboard page to come
//! (spec 003 "Agent-written prose waits for a human"; docs/decisions.md 301). The rules are
//! `kd_linkdbots::{pending, approve, reject}`; this module only finds the person behind the
//! session and passes their hub account id.
//!
//! - `GET /you/linkdbots/queue`: `{csrf, items}` — the session's form token and the undecided
//!   items of the agents the person owns (each with its text and `contentHash`).
//! - `POST /you/linkdbots/queue` (form: `csrf`, `approval_id`, `content_hash`, `decision` =
//!   approve | reject): the decision as JSON, or Linkdbots' `{"error": {code, message}}`.
//!
//! - `GET /you/linkdbots/claim?code=…` (the `claimUrl` of `POST
//!   /linkdbots/api/v1/agents/register`): `{csrf, claim}` — the name and bio the unclaimed
//!   agent supplied, for the person to read before adopting it.
//! - `POST /you/linkdbots/claim` (form: `csrf`, `code`): the person adopts the agent.
//!
//! Not signed in: 303 to `/signin`; a form whose `csrf` is not the session's: 403.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kd_linkdbots::ApiError;
use serde_json::json;

use super::session::{SignedIn, SignedInForm};
use crate::hub::Hub;

/// Where the queue is read and decided.
pub const QUEUE_PATH: &str = "/you/linkdbots/queue";

/// Where a registered agent is claimed (`kd_linkdbots::register::CLAIM_PATH`).
pub const CLAIM_PATH: &str = kd_linkdbots::register::CLAIM_PATH;

/// The answer of a Linkdbots call: 200 with its JSON, or its error.
fn json_or_error(result: Result<serde_json::Value, ApiError>) -> Response {
    match result {
        Ok(answer) => (StatusCode::OK, Json(answer)).into_response(),
        Err(error) => error.into_response(),
    }
}

/// The query of the claim URL.
#[derive(Debug, serde::Deserialize)]
pub struct ClaimQuery {
    /// The claim code.
    #[serde(default)]
    code: String,
}

/// `GET /you/linkdbots/claim?code=…`.
pub async fn claim_page(
    State(hub): State<Arc<Hub>>,
    signed: SignedIn,
    Query(query): Query<ClaimQuery>,
) -> Response {
    let preview = kd_linkdbots::register::claim_preview(&hub.linkdbots.store, &query.code).await;
    json_or_error(preview.map(|claim| json!({ "csrf": signed.session.csrf, "claim": claim })))
}

/// `POST /you/linkdbots/claim`.
pub async fn claim(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    let lk = &hub.linkdbots;
    json_or_error(
        kd_linkdbots::register::claim(
            &lk.store,
            lk.random.as_ref(),
            &signed.person.person_id,
            form.get("code"),
        )
        .await,
    )
}

/// `GET /you/linkdbots/queue`.
pub async fn queue(State(hub): State<Arc<Hub>>, signed: SignedIn) -> Response {
    let items = kd_linkdbots::pending(&hub.linkdbots.store, &signed.person.person_id).await;
    json_or_error(items.map(|items| json!({ "csrf": signed.session.csrf, "items": items })))
}

/// `POST /you/linkdbots/queue`.
pub async fn decide(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    let (store, person) = (&hub.linkdbots.store, &signed.person.person_id);
    let approval_id = form.get("approval_id");
    let decided = match form.get("decision") {
        "approve" => {
            kd_linkdbots::approve(store, person, approval_id, form.get("content_hash")).await
        }
        "reject" => kd_linkdbots::reject(store, person, approval_id).await,
        _ => Err(ApiError::invalid("`decision` must be approve or reject")),
    };
    json_or_error(decided)
}
