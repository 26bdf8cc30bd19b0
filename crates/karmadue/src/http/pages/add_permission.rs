//! `/oauth/add-permission?agent=<id>&scope=<scope>` (permissions document "Connector
//! permissions"): the consent screen for adding one permission to a connected app's live
//! connection, the `approve_url` of a `needs_your_approval` refusal. A visitor signs in first
//! and comes back here; the rule is `connector::permission`.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::html;

use super::account::csrf_field;
use super::authorize::{SWITCHES, encode};
use super::layout::{Data, app_page, redirect_to};
use super::session::{SignedInForm, Visitor};
use crate::connector::ConnectorError;
use crate::connector::permission::{self, ADD_PERMISSION_PATH, PermissionAsk};
use crate::hub::Hub;

/// The query: `agent` (the hosted agent) and `scope`.
#[derive(Debug, Default, serde::Deserialize)]
pub struct AddQuery {
    /// The connected app's hosted agent.
    #[serde(default)]
    agent: String,
    /// The one scope to add.
    #[serde(default)]
    scope: String,
}

/// The words the consent screen says of `scope`.
fn words(scope: &str) -> &'static str {
    SWITCHES
        .iter()
        .find(|(_, switch, ..)| *switch == scope)
        .map_or("", |(_, _, words, _)| words)
}

fn refused(error: &ConnectorError) -> Response {
    let status = match error {
        ConnectorError::Store(_) | ConnectorError::Area(_) => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    app_page(
        status,
        "This permission cannot be added",
        true,
        &html! {
            p.error { (error.description()) }
            p { "Nothing changed. " a href="/you/apps" { "Connected apps" } " lists what your apps may do." }
        },
    )
}

fn screen(ask: &PermissionAsk, agent: &str, csrf: &Markup) -> Response {
    let body = html! {
        @if ask.held {
            p { "The app " strong { (Data(&ask.app)) } " already holds " code { (ask.scope) } ". Nothing to add." }
        } @else {
            p {
                "The app " strong { (Data(&ask.app)) } " asks for one more permission on its connection. "
                "Its name is its own words, shown as data."
            }
            p { (words(&ask.scope)) " (" code { (ask.scope) } ")" }
            p { "Everything else stays as you approved it: $0 spend, 40 actions a day." }
            form method="post" action=(ADD_PERMISSION_PATH) {
                (csrf)
                input type="hidden" name="agent" value=(agent);
                input type="hidden" name="scope" value=(ask.scope);
                button name="decision" value="approve" { "Approve" } " "
                button name="decision" value="deny" { "Deny" }
            }
        }
    };
    app_page(StatusCode::OK, "Add a permission", true, &body)
}

use maud::Markup;

/// `GET /oauth/add-permission`: a visitor goes to sign in and comes back; a signed-in person
/// who owns the agent's live connection sees the consent screen.
pub async fn add_permission_page(
    State(hub): State<Arc<Hub>>,
    Visitor(visitor): Visitor,
    Query(query): Query<AddQuery>,
    uri: axum::http::Uri,
) -> Response {
    let Some(signed) = visitor else {
        let back = uri
            .path_and_query()
            .map_or(ADD_PERMISSION_PATH, |path| path.as_str());
        return redirect_to(&format!("/signin?next={}", encode(back)));
    };
    match permission::ask(&hub, &signed.person.person_id, &query.agent, &query.scope).await {
        Ok(ask) => screen(&ask, &query.agent, &csrf_field(&signed.session)),
        Err(error) => refused(&error),
    }
}

/// `POST /oauth/add-permission` (`csrf`, `agent`, `scope`, `decision` = approve | deny).
pub async fn add_permission_decide(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    let (agent, scope) = (form.get("agent"), form.get("scope"));
    if form.get("decision") != "approve" {
        return app_page(
            StatusCode::OK,
            "Nothing changed",
            true,
            &html! { p { "You declined. The app keeps what you approved before." } },
        );
    }
    match permission::add(&hub, &signed.person.person_id, agent, scope).await {
        Ok(scopes) => app_page(
            StatusCode::OK,
            "Permission added",
            true,
            &html! {
                p { "The app may now: " code { (scopes.join(" ")) } ". It applies to its next request." }
                p { "To take a permission away, remove the app in " a href="/you/apps" { "Connected apps" } " and connect it again." }
            },
        ),
        Err(error) => refused(&error),
    }
}
