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
//! Not signed in: 303 to `/signin`; a form whose `csrf` is not the session's: 403.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kd_linkdbots::ApiError;
use serde_json::json;

use super::session::{SignedIn, SignedInForm};
use crate::hub::Hub;

/// Where the queue is read and decided.
pub const QUEUE_PATH: &str = "/you/linkdbots/queue";

/// `GET /you/linkdbots/queue`.
pub async fn queue(State(hub): State<Arc<Hub>>, signed: SignedIn) -> Response {
    match kd_linkdbots::pending(&hub.linkdbots.store, &signed.person.person_id).await {
        Ok(items) => (
            StatusCode::OK,
            Json(json!({ "csrf": signed.session.csrf, "items": items })),
        )
            .into_response(),
        Err(error) => error.into_response(),
    }
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
    match decided {
        Ok(answer) => (StatusCode::OK, Json(answer)).into_response(),
        Err(error) => error.into_response(),
    }
}
