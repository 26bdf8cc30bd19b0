//! `/linkdbots/dashboard/categories` (spec 003 "Categories": "anyone with an account can
//! propose one … and a platform moderator decides it"; docs/decisions.md 337, 338): a
//! signed-in person's page with the live category list, a form to propose one, and their own
//! proposals with their status. The rules are `kd_linkdbots::categories::{live, propose,
//! proposals_of}`; the hub's operator decides with `karmadue linkdbots categories`.
//!
//! Not signed in: 303 to `/signin?next=/linkdbots/dashboard/categories`; a form whose `csrf`
//! is not the session's: 403. A refused proposal shows the page again with the reason and
//! the status of the refusal (400, 409, 429), and nothing is stored.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use kd_linkdbots::ApiError;
use kd_linkdbots::categories::{self, Category, DESCRIPTION_MAX, NAME_MAX};
use maud::html;
use serde_json::Value;

use super::account::csrf_field;
use super::layout::{Data, app_page, error_line, redirect_to, time_html};
use super::session::{SignedIn, SignedInForm, Visitor};
use crate::hub::Hub;

/// The page's path (GET shows it, POST proposes).
pub const CATEGORIES_PATH: &str = "/linkdbots/dashboard/categories";

const TITLE: &str = "Linkdbots categories";

/// What the page shows: the live list and the person's proposals.
async fn read(hub: &Hub, person_id: &str) -> Result<(Vec<Category>, Vec<Value>), ApiError> {
    let person_id = person_id.to_owned();
    hub.linkdbots
        .store
        .read(move |conn| {
            Ok((
                categories::live(conn)?,
                categories::proposals_of(conn, &person_id)?,
            ))
        })
        .await
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// The page for `signed`, with `status` and, after a refusal, its words and the form's values.
async fn respond(
    hub: &Hub,
    signed: &SignedIn,
    status: StatusCode,
    refused: Option<(&str, &str, &str)>,
) -> Response {
    let (live, mine) = match read(hub, &signed.person.person_id).await {
        Ok(read) => read,
        Err(error) => {
            return app_page(
                error.status(),
                TITLE,
                true,
                &html! { p.error { (error.to_string()) } },
            );
        }
    };
    let (message, name, description) = refused.map_or((None, "", ""), |(m, n, d)| (Some(m), n, d));
    let body = html! {
        p { "Every Linkdbots card names one of these categories. Missing one? Propose it here; a moderator decides, and an accepted category joins the list everywhere: cards, "
            a href="/linkdbots/api/v1/categories" { "GET /categories" } " and the "
            a href="/linkdbots/benchmarks" { "leaderboards" } "." }
        h2 { "Propose a category" }
        (error_line(message))
        form method="post" action=(CATEGORIES_PATH) {
            (csrf_field(&signed.session))
            label { "Name (as cards will spell it, e.g. code.lint)"
                input type="text" name="name" required maxlength=(NAME_MAX) value=(name);
            }
            label { "What it covers (one line)"
                input type="text" name="description" required maxlength=(DESCRIPTION_MAX) value=(description);
            }
            button { "Propose" }
        }
        p { "Names are lowercase letters, digits and single hyphens, in one to three parts joined by dots. "
            (categories::PROPOSALS_PER_DAY) " proposals a day." }
        h2 { "Your proposals" }
        @if mine.is_empty() {
            p { "You have not proposed a category." }
        } @else {
            table id="mine" {
                tr { th { "Name" } th { "What it covers" } th { "Status" } th { "Proposed" } th { "Decided" } }
                @for proposal in &mine {
                    tr {
                        td { code { (Data(text(&proposal["name"]))) } }
                        td { (Data(text(&proposal["description"]))) }
                        td.status { (text(&proposal["status"])) }
                        td { (time_html(text(&proposal["proposedAt"]))) }
                        td { @if let Some(at) = proposal["decidedAt"].as_str() { (time_html(at)) } }
                    }
                }
            }
        }
        h2 { "The live list" }
        table id="live" {
            tr { th { "Category" } th { "What it covers" } }
            @for category in &live {
                tr {
                    td { a href={ "/linkdbots/benchmarks/" (category.name) } { code { (Data(&category.name)) } } }
                    td { (Data(&category.description))
                        @if !category.builtin { " (proposed by a person, accepted)" } }
                }
            }
        }
    };
    app_page(status, TITLE, true, &body)
}

/// `GET /linkdbots/dashboard/categories`.
pub async fn page(State(hub): State<Arc<Hub>>, visitor: Visitor) -> Response {
    match visitor {
        Visitor(Some(signed)) => respond(&hub, &signed, StatusCode::OK, None).await,
        Visitor(None) => redirect_to(&format!("/signin?next={CATEGORIES_PATH}")),
    }
}

/// `POST /linkdbots/dashboard/categories` (`csrf`, `name`, `description`): proposes the
/// category and shows the page again (303); a refusal shows it with the reason.
pub async fn propose(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    let (name, description) = (form.get("name"), form.get("description"));
    let now_ms = hub.linkdbots.clock.now_ms();
    match categories::propose(
        &hub.linkdbots.store,
        hub.linkdbots.random.as_ref(),
        now_ms,
        &signed.person.person_id,
        name,
        description,
    )
    .await
    {
        Ok(_) => redirect_to(CATEGORIES_PATH),
        Err(error) => {
            let words = error.to_string();
            respond(
                &hub,
                &signed,
                error.status(),
                Some((&words, name, description)),
            )
            .await
        }
    }
}
