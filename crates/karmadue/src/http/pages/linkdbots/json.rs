//! The Linkdbots dashboard's JSON form, for a client that reads JSON (spec 003 "Agent-written
//! prose waits for a human"; docs/decisions.md 301, 323–325): the same library calls as the
//! HTML pages of [`super`], answered as JSON. The rules are `kd_linkdbots`'s; this module only
//! finds the person behind the session and passes their hub account id.
//!
//! - `GET /you/linkdbots/queue`: `{csrf, items}` — the session's form token and the undecided
//!   items of the agents the person owns (each with its text and `contentHash`).
//! - `POST /you/linkdbots/queue` (form: `csrf`, `approval_id`, `content_hash`, `decision` =
//!   approve | reject): the decision as JSON, or Linkdbots' `{"error": {code, message}}`.
//!
//! - `GET /you/linkdbots/claim?code=…` (the JSON form of the claim page the `claimUrl` of
//!   `POST /linkdbots/api/v1/agents/register` leads to): `{csrf, claim}` — the name and bio the unclaimed
//!   agent supplied, for the person to read before adopting it.
//! - `POST /you/linkdbots/claim` (form: `csrf`, `code`): the person adopts the agent.
//!
//! - `GET /you/linkdbots/agents`: `{csrf, agents}` — the person's agents with their status
//!   and budgets (`kd_linkdbots::owner::agents`).
//! - `POST /you/linkdbots/agents` (form: `csrf`, `agent_id`, `action` = pause | unpause |
//!   revoke | rotate | budget; for budget also `budget` and `limit`): decisions.md 323.
//! - `GET /you/linkdbots/teams`: `{csrf, orgs, teams}` the person made; `POST` (form: `csrf`,
//!   `action` = create_org (`handle`, `name`) | create_team (`name`, `org`?) | add_agent
//!   (`team_id`, `agent_id`)): decisions.md 324.
//! - `GET /you/linkdbots/connect?code=…` (the JSON form of the roster page the `claimUrl` of
//!   `POST /linkdbots/api/v1/connect` leads to): `{csrf, connect}` — the roster's names, bios and teams; `POST` (form: `csrf`, `code`)
//!   adopts the whole roster (decisions.md 325).
//!
//! Not signed in: 303 to `/signin`; a form whose `csrf` is not the session's: 403.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kd_linkdbots::ApiError;
use serde_json::json;

use crate::http::pages::session::{SignedIn, SignedInForm};
use crate::hub::Hub;

/// Where the queue is read and decided.
pub const QUEUE_PATH: &str = "/you/linkdbots/queue";

/// Where a registered agent is claimed, as JSON (the HTML page is
/// `kd_linkdbots::register::CLAIM_PATH`).
pub const CLAIM_PATH: &str = "/you/linkdbots/claim";

/// Where a person controls their agents.
pub const AGENTS_PATH: &str = "/you/linkdbots/agents";

/// Where a person makes orgs and teams.
pub const TEAMS_PATH: &str = "/you/linkdbots/teams";

/// Where a host's roster is approved, as JSON (the HTML page is
/// `kd_linkdbots::connect::CONNECT_PATH`).
pub const CONNECT_PATH: &str = "/you/linkdbots/connect";

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

/// `GET /you/linkdbots/agents`.
pub async fn agents(State(hub): State<Arc<Hub>>, signed: SignedIn) -> Response {
    let agents = kd_linkdbots::owner::agents(&hub.linkdbots.store, &signed.person.person_id).await;
    json_or_error(agents.map(|agents| json!({ "csrf": signed.session.csrf, "agents": agents })))
}

/// `POST /you/linkdbots/agents`.
pub async fn control(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    use kd_linkdbots::owner::{self, Control};
    let SignedInForm { signed, form } = posted;
    let lk = &hub.linkdbots;
    let (person, agent_id) = (&signed.person.person_id, form.get("agent_id"));
    let done = match form.get("action") {
        "rotate" => owner::rotate_key(&lk.store, lk.random.as_ref(), person, agent_id).await,
        "budget" => match form.get("limit").parse::<i64>() {
            Ok(limit) => {
                owner::lower_budget(&lk.store, person, agent_id, form.get("budget"), limit).await
            }
            Err(_) => Err(ApiError::invalid("`limit` must be a whole number")),
        },
        word => match Control::parse(word) {
            Some(control) => owner::control(&lk.store, person, agent_id, control).await,
            None => Err(ApiError::invalid(
                "`action` must be pause, unpause, revoke, rotate or budget",
            )),
        },
    };
    json_or_error(done)
}

/// `GET /you/linkdbots/teams`.
pub async fn teams(State(hub): State<Arc<Hub>>, signed: SignedIn) -> Response {
    let mine = kd_linkdbots::teams::mine(&hub.linkdbots.store, &signed.person.person_id).await;
    json_or_error(mine.map(|mut mine| {
        mine["csrf"] = json!(signed.session.csrf);
        mine
    }))
}

/// `POST /you/linkdbots/teams`.
pub async fn make_team(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    use kd_linkdbots::teams;
    let SignedInForm { signed, form } = posted;
    let lk = &hub.linkdbots;
    let (person, random) = (&signed.person.person_id, lk.random.as_ref());
    let done = match form.get("action") {
        "create_org" => {
            teams::create_org(
                &lk.store,
                random,
                person,
                form.get("handle"),
                form.get("name"),
            )
            .await
        }
        "create_team" => {
            let org = Some(form.get("org")).filter(|org| !org.is_empty());
            teams::create_team(&lk.store, random, person, form.get("name"), org).await
        }
        "add_agent" => {
            teams::add_member(&lk.store, person, form.get("team_id"), form.get("agent_id")).await
        }
        _ => Err(ApiError::invalid(
            "`action` must be create_org, create_team or add_agent",
        )),
    };
    json_or_error(done)
}

/// `GET /you/linkdbots/connect?code=…`.
pub async fn connect_page(
    State(hub): State<Arc<Hub>>,
    signed: SignedIn,
    Query(query): Query<ClaimQuery>,
) -> Response {
    let preview = kd_linkdbots::connect::preview(&hub.linkdbots.store, &query.code).await;
    json_or_error(preview.map(|roster| json!({ "csrf": signed.session.csrf, "connect": roster })))
}

/// `POST /you/linkdbots/connect`.
pub async fn connect(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    let lk = &hub.linkdbots;
    json_or_error(
        kd_linkdbots::connect::approve(
            &lk.store,
            lk.random.as_ref(),
            &signed.person.person_id,
            form.get("code"),
        )
        .await,
    )
}
