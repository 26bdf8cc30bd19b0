//! *You → Connected apps* (`/you/apps`; spec "Using KarmaDue from Claude or ChatGPT"): the
//! apps a person connected over OAuth, each with its permissions, and *Remove*, which revokes
//! every token of the connection at once.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use maud::html;

use super::account::csrf_field;
use super::layout::{Data, app_page, error_line, redirect, time_ms};
use super::session::{SignedIn, SignedInForm};
use crate::connector::{self, ConnectorError};
use crate::hub::Hub;

/// The page's path (GET shows it, POST removes an app).
pub const APPS_PATH: &str = "/you/apps";

async fn apps_response(
    hub: &Hub,
    signed: &SignedIn,
    status: StatusCode,
    message: Option<&str>,
) -> Response {
    let apps = match connector::connected_apps(hub, &signed.person.person_id).await {
        Ok(apps) => apps,
        Err(error) => {
            return app_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Connected apps",
                true,
                &html! { p.error { (error.description()) } },
            );
        }
    };
    let csrf = csrf_field(&signed.session);
    let body = html! {
        (error_line(message))
        @if apps.is_empty() {
            p { "No app is connected. Connect one from Claude, ChatGPT or another MCP client with the connector URL." }
        } @else {
            table {
                tr { th { "App" } th { "Permissions" } th { "Connected" } th {} }
                @for app in &apps {
                    tr {
                        td {
                            (Data(&app.client_name))
                            @if let Some(host) = connector::cimd::document_host(&app.client_id) {
                                " (described on " code { (Data(&host)) } ")"
                            }
                        }
                        td {
                            (app.scope)
                            @for (scope, href) in missing_scopes(app) {
                                br;
                                a href=(href) { "Add " (scope) }
                            }
                        }
                        td { (time_ms(app.created_ms)) }
                        td {
                            form.inline method="post" action=(APPS_PATH) {
                                (csrf)
                                input type="hidden" name="connection_id" value=(app.connection_id);
                                button { "Remove" }
                            }
                        }
                    }
                }
            }
            p { "Removing an app revokes every token it holds at once. To give an app one more permission, follow its Add link: you approve that one permission on its own screen and the app keeps its connection. To take a permission away, remove the app and connect it again." }
        }
        p { a href="/you" { "Back to You" } }
    };
    app_page(status, "Connected apps", true, &body)
}

/// The permissions a connected app may still be given, each with the path of the screen that
/// adds it (`/oauth/add-permission?agent=&scope=`; docs/decisions.md 430). None for a
/// connection without a hosted agent.
fn missing_scopes(app: &connector::store::ConnectedApp) -> Vec<(&'static str, String)> {
    let Some(agent_id) = &app.agent_id else {
        return Vec::new();
    };
    let held: Vec<&str> = app.scope.split(' ').collect();
    connector::SCOPES
        .into_iter()
        .filter(|scope| connector::permission::addable(scope) && !held.contains(scope))
        .map(|scope| {
            (
                scope,
                connector::permission::approve_url("", agent_id, scope),
            )
        })
        .collect()
}

/// `GET /you/apps`.
pub async fn apps_page(State(hub): State<Arc<Hub>>, signed: SignedIn) -> Response {
    apps_response(&hub, &signed, StatusCode::OK, None).await
}

/// `POST /you/apps` (`csrf`, `connection_id`): removes the app, then back to the page; 400 with
/// the page again when the person has no such connection.
pub async fn remove_app(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    match connector::remove_app(&hub, &signed.person.person_id, form.get("connection_id")).await {
        Ok(()) => redirect(APPS_PATH),
        Err(error @ ConnectorError::Store(_)) => {
            apps_response(
                &hub,
                &signed,
                StatusCode::INTERNAL_SERVER_ERROR,
                Some(&error.description()),
            )
            .await
        }
        Err(error) => {
            apps_response(
                &hub,
                &signed,
                StatusCode::BAD_REQUEST,
                Some(&error.description()),
            )
            .await
        }
    }
}
