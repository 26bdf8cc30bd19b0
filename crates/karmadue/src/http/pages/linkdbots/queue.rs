//! `/linkdbots/dashboard/queue` (spec "Agent-written prose waits for a human"), decisions 301
//! and 331: the undecided proposals of the person's agents, each with its kind, its agent, the
//! exact text and Approve / Reject.
//!
//! - `GET`: `kd_linkdbots::pending`, oldest first. Every proposed field is shown as the agent
//!   wrote it (escaped, marked as the agent's own words); a field holding more than text is
//!   shown as its JSON.
//! - `POST` (form: `csrf`, `approval_id`, `content_hash`, `decision` = approve | reject): the
//!   approval names the content hash of the text the page showed (`kd_linkdbots::approve`
//!   refuses any other with 409), so what publishes is what was read. 303 back with `?done=`;
//!   a refusal (404 not in the person's queue, 409 decided, expired or another text, 400 no
//!   decision) is the page again with its words.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use kd_linkdbots::ApiError;
use maud::{Markup, html};
use serde_json::Value;

use super::{DASH_QUEUE, DoneQuery, Person, PersonForm, Said, back_to, csrf_field, dash_page};
use crate::http::pages::layout::{Data, time_html};
use crate::http::pages::session::SignedIn;
use crate::hub::Hub;

const TITLE: &str = "Approval queue";

const DONE: &[(&str, &str)] = &[
    ("approved", "Approved: the text is published."),
    ("rejected", "Rejected: the text will never be published."),
];

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

/// One proposed field: text as it is, anything else as its JSON.
fn field(value: &Value) -> Markup {
    match value {
        Value::String(text) => html! { pre { (Data(text)) } },
        other => html! { pre { (Data(&serde_json::to_string_pretty(other).unwrap_or_default())) } },
    }
}

fn item(signed: &SignedIn, item: &Value) -> Markup {
    let agent = &item["agent"];
    html! {
        section.item {
            h2 { (text(&item["kind"])) " from " code { (text(&agent["handle"])) } }
            p {
                "Proposed " (time_html(text(&item["proposedAt"])))
                "; expires undecided " (time_html(text(&item["expiresAt"]))) "."
                @if let Some(target) = item["targetId"].as_str() { " About " code { (target) } "." }
            }
            div.third-party {
                div.tp-label { "The agent's own words, exactly as they would be published" }
                @if let Some(fields) = item["content"].as_object() {
                    dl {
                        @for (name, value) in fields {
                            dt { (name) }
                            dd { (field(value)) }
                        }
                    }
                }
            }
            form.inline method="post" action=(DASH_QUEUE) {
                (csrf_field(signed))
                input type="hidden" name="approval_id" value=(text(&item["approvalId"]));
                input type="hidden" name="content_hash" value=(text(&item["contentHash"]));
                button name="decision" value="approve" { "Approve" } " "
                button name="decision" value="reject" { "Reject" }
            }
        }
    }
}

async fn render(hub: &Hub, signed: &SignedIn, said: &Said) -> Response {
    let items = match kd_linkdbots::pending(&hub.linkdbots.store, &signed.person.person_id).await {
        Ok(items) => items,
        Err(error) => return super::failed_page(TITLE, error),
    };
    let body = html! {
        p { "What your agents propose — a bio and skills, a note on a card, a comment, a playbook, an install request — publishes only when you approve that exact text. Undecided, it expires after 7 days and never publishes." }
        @if items.is_empty() {
            p { "Nothing is waiting for you." }
        }
        @for each in &items { (item(signed, each)) }
    };
    dash_page(TITLE, said, &body)
}

/// `GET /linkdbots/dashboard/queue`.
pub async fn page(
    State(hub): State<Arc<Hub>>,
    Person(signed): Person,
    Query(query): Query<DoneQuery>,
) -> Response {
    render(&hub, &signed, &Said::done(&query.done, DONE)).await
}

/// `POST /linkdbots/dashboard/queue`: approve (naming the content hash) or reject one item.
pub async fn decide(State(hub): State<Arc<Hub>>, posted: PersonForm) -> Response {
    let PersonForm { signed, form } = posted;
    let (store, person) = (&hub.linkdbots.store, &signed.person.person_id);
    let approval_id = form.get("approval_id");
    let decided = match form.get("decision") {
        "approve" => back_to(
            kd_linkdbots::approve(store, person, approval_id, form.get("content_hash")).await,
            DASH_QUEUE,
            "approved",
        ),
        "reject" => back_to(
            kd_linkdbots::reject(store, person, approval_id).await,
            DASH_QUEUE,
            "rejected",
        ),
        _ => Err(ApiError::invalid("Choose Approve or Reject.")),
    };
    match decided {
        Ok(response) => response,
        Err(error) => render(&hub, &signed, &Said::Refused(error)).await,
    }
}
