//! The *Inbox* (`/inbox`: findings waiting for the person, to approve or dismiss) and *Adopt
//! a finding* (`/findings/adopt?code=…`). The rules live in [`crate::people::findings`].

use std::collections::HashMap;
use std::sync::Arc;

use super::layout::time_ms;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::html;

use super::account::csrf_field;
use super::layout::{Data, app_page, error_line, redirect};
use super::session::{SignedIn, SignedInForm, Visitor, error_status};
use super::you::choice;
use crate::hub::Hub;
use crate::people::{AppError, findings};

async fn inbox_response(
    hub: &Hub,
    signed: &SignedIn,
    status: StatusCode,
    message: Option<&str>,
) -> Response {
    let items = match findings::inbox(hub, &signed.person.person_id).await {
        Ok(items) => items,
        Err(error) => {
            return app_page(
                error_status(&error),
                "Inbox",
                true,
                &html! { (error.to_string()) },
            );
        }
    };
    let csrf = csrf_field(&signed.session);
    let body = html! {
        (error_line(message))
        @if items.is_empty() {
            p { "Your Inbox is empty." }
        } @else {
            p { "Findings your agents filed, or that you adopted. The title, the reasons and the evidence are the agent's words, shown as data. Approving publishes a finding to the public findings cache (lookup_findings) under the agent's handle, never your name; dismissing keeps it private." }
        }
        @for item in &items {
            section {
                h2 { (Data(&item.title)) }
                p {
                    "From " code { (item.handle) } ", " (time_ms(item.created_ms))
                    @if let Some(kind) = &item.kind { " (" (Data(kind)) ")" }
                }
                blockquote { (Data(&item.why)) }
                p { "Evidence: " code { (Data(&item.evidence_ref)) } }
                form.inline method="post" action="/inbox" {
                    (csrf)
                    input type="hidden" name="finding_id" value=(item.finding_id);
                    button name="decision" value="approve" { "Approve and publish" }
                }
                " "
                form.inline method="post" action="/inbox" {
                    (csrf)
                    input type="hidden" name="finding_id" value=(item.finding_id);
                    button name="decision" value="dismiss" { "Dismiss" }
                }
            }
        }
    };
    app_page(status, "Inbox", true, &body)
}

/// `GET /inbox`: findings waiting for the person, to approve or dismiss.
pub async fn inbox_page(State(hub): State<Arc<Hub>>, signed: SignedIn) -> Response {
    inbox_response(&hub, &signed, StatusCode::OK, None).await
}

/// `POST /inbox` (`csrf`, `finding_id`, `decision` = approve | dismiss).
pub async fn inbox_decide(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    let result = match choice(
        form.get("decision"),
        "approve",
        "dismiss",
        "Choose approve or dismiss.",
    ) {
        Ok(approve) => {
            findings::decide(
                &hub,
                &signed.person.person_id,
                form.get("finding_id"),
                approve,
            )
            .await
        }
        Err(refusal) => Err(refusal),
    };
    match result {
        Ok(()) => redirect("/inbox"),
        Err(error) => {
            let message = error.to_string();
            inbox_response(&hub, &signed, error_status(&error), Some(&message)).await
        }
    }
}

/// `GET /findings/adopt?code=…`: asks a signed-in person to confirm (a GET never adopts);
/// otherwise asks them to sign in first.
pub async fn adopt_page(
    visitor: Visitor,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let code = query.get("code").map_or("", String::as_str);
    match visitor.0 {
        Some(signed) => {
            let body = html! {
                p { "An agent filed a finding and gave you this link. Adopt it to read it in your Inbox." }
                form method="post" action=(findings::ADOPT_PATH) {
                    (csrf_field(&signed.session))
                    input type="hidden" name="code" value=(code);
                    button type="submit" { "Adopt this finding" }
                }
            };
            app_page(StatusCode::OK, "Adopt a finding", true, &body)
        }
        None => app_page(
            StatusCode::OK,
            "Adopt a finding",
            false,
            &html! {
                p { "Sign in (or create an account) first, then open this link again to adopt the finding." }
                p { a href="/signin" { "Sign in" } " · " a href="/signup" { "Sign up" } }
            },
        ),
    }
}

/// `POST /findings/adopt` (`csrf`, `code`): adopts the finding and redirects to `/inbox`.
pub async fn adopt(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    match findings::adopt(&hub, &signed.person.person_id, form.get("code")).await {
        Ok(_) => redirect("/inbox"),
        Err(error) => {
            let error = AppError::from(error);
            let status = match error {
                AppError::Invalid(_) => StatusCode::BAD_REQUEST,
                _ => error_status(&error),
            };
            let body = html! {
                p.error { (error.to_string()) }
                p { a href="/inbox" { "Your Inbox" } }
            };
            app_page(status, "Adopt a finding", true, &body)
        }
    }
}
