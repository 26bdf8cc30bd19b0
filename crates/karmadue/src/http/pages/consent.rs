//! The consent screen (`/oauth/consent?request_id=…`): a signed-in person sets the limits of
//! a pending connect or claim request and approves or declines it.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::html;

use super::account::csrf_field;
use super::layout::{Data, app_page, error_line, redirect};
use super::session::{SignedIn, SignedInForm, error_page};
use super::you::choice;
use crate::hub::Hub;
use crate::people::{self, AppError};

/// The consent screen's list of what an approved link allows, one permission a line
/// (permissions document "Default permissions, one by one").
const CONSENT_LINES: &[&str] = &[
    "Search KarmaDue and read checks and evidence (kd.discovery.read, kd.evidence.read).",
    "Save finds and recommendations to your private Inbox, for you to approve. Only you see them.",
    "Spend: $0 a day and $0 per action. This hub never moves money.",
    "It cannot spend money, accept jobs, ask people for paid checks, or publish posts, listings or deals.",
];

/// `GET /oauth/consent?request_id=…`: the screen where a signed-in person sets the limits of a
/// pending connect or claim request and approves or declines it.
pub async fn consent_page(
    State(hub): State<Arc<Hub>>,
    signed: SignedIn,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let request_id = query.get("request_id").map_or("", String::as_str);
    consent_response(&hub, &signed, request_id, StatusCode::OK, None).await
}

async fn consent_response(
    hub: &Hub,
    signed: &SignedIn,
    request_id: &str,
    status: StatusCode,
    message: Option<&str>,
) -> Response {
    let request = match people::pending_request(hub, &signed.person.person_id, request_id).await {
        Ok(request) => request,
        Err(error) => return error_page(&error, true),
    };
    let how = if request.via == "code" {
        "with your connect code"
    } else {
        "by your email address"
    };
    let whose = if request.pitch.is_some() {
        "Its name and note are"
    } else {
        "Its name is"
    };
    let body = html! {
        (error_line(message))
        p {
            "The agent " (Data(&request.name)) " " code { (request.handle) }
            " asks to be linked to you (" (how) "). " (whose) " its own words, shown as data."
        }
        @if let Some(pitch) = &request.pitch {
            blockquote { (Data(pitch)) }
        }
        h2 { "If you approve, it may" }
        ul { @for line in CONSENT_LINES { li { (line) } } }
        form method="post" action="/oauth/consent" {
            (csrf_field(&signed.session))
            input type="hidden" name="request_id" value=(request.request_id);
            p {
                label {
                    "Actions a day (writes it may make in any 24 hours): "
                    input type="number" name="actions_per_day" min="1" max=(people::MAX_ACTIONS_PER_DAY) value=(people::GRANT_ACTIONS_PER_DAY) required;
                }
            }
            button name="decision" value="approve" { "Approve" } " "
            button name="decision" value="decline" { "Decline" }
        }
    };
    app_page(status, "Approve an agent", true, &body)
}

/// `POST /oauth/consent` (`csrf`, `request_id`, `actions_per_day`, `decision` = approve |
/// decline).
pub async fn consent(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    let (hub, signed, request_id) = (&*hub, &signed, form.get("request_id"));
    let refused = |text: String| async move {
        consent_response(
            hub,
            signed,
            request_id,
            StatusCode::BAD_REQUEST,
            Some(&text),
        )
        .await
    };
    let approve = match choice(
        form.get("decision"),
        "approve",
        "decline",
        "Choose approve or decline.",
    ) {
        Ok(approve) => approve,
        Err(error) => return refused(error.to_string()).await,
    };
    // Declining takes no number: the field only matters for an approval.
    let actions_per_day = if approve {
        form.get("actions_per_day")
            .trim()
            .parse::<i64>()
            .unwrap_or(0)
    } else {
        people::GRANT_ACTIONS_PER_DAY
    };
    match people::decide_request(
        hub,
        &signed.person.person_id,
        request_id,
        approve,
        actions_per_day,
    )
    .await
    {
        Ok(()) => redirect("/you"),
        Err(AppError::Invalid(text)) => refused(text).await,
        Err(error) => error_page(&error, true),
    }
}
