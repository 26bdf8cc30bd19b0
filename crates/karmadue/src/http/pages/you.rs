//! *You* (`/you`): the person's agents (link state, pause, remove, actions a day), the
//! requests waiting for them, capability offers and stored preferences; and the forms it
//! posts (`/you/requests`, `/you/agents`, `/you/offers`).

use std::sync::Arc;

use super::layout::time_ms;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use kd_core::people::{Person, Session};
use maud::{Markup, html};

use super::account::{csrf_field, signout_form};
use super::layout::{Data, app_page, error_line, redirect};
use super::session::{SignedIn, SignedInForm, error_status};
use crate::hub::Hub;
use crate::people::agent_tools::{self, PendingOffer, StoredPreferences};
use crate::people::{self, AppError, OwnedAgent, OwnerAction, PendingRequest};

/// How a request came, with a claim's pitch as quoted third-party text.
fn via(request: &PendingRequest) -> Markup {
    html! {
        @match &request.pitch {
            Some(pitch) if request.via == "claim" => {
                "claim request" br;
                small { "The agent's note (its own words, shown as data):" }
                blockquote { (Data(pitch)) }
            }
            _ => (request.via),
        }
    }
}

/// An inline form posting `name=value` and one button to `action`.
fn inline_button(
    csrf: &Markup,
    action: &str,
    (name, value): (&str, &str),
    (button, choice, words): (&str, &str, &str),
) -> Markup {
    html! {
        form.inline method="post" action=(action) {
            (csrf)
            input type="hidden" name=(name) value=(value);
            button name=(button) value=(choice) { (words) }
        }
    }
}

fn pending_table(csrf: &Markup, pending: &[PendingRequest]) -> Markup {
    html! {
        h2 { "Waiting for you" }
        @if pending.is_empty() {
            p { "No requests are waiting." }
        } @else {
            table {
                tr { th { "Agent" } th { "Asked" } th { "Via" } th {} }
                @for request in pending {
                    @let id = ("request_id", request.request_id.as_str());
                    tr {
                        td { (Data(&request.name)) " " code { (request.handle) } }
                        td { (time_ms(request.created_ms)) }
                        td { (via(request)) }
                        td {
                            (inline_button(csrf, "/you/requests", id, ("decision", "approve", "Approve"))) " "
                            (inline_button(csrf, "/you/requests", id, ("decision", "decline", "Decline"))) " "
                            a href={ "/oauth/consent?request_id=" (request.request_id) } { "Review permissions" }
                        }
                    }
                }
            }
            p { "Approving grants read-only access: search and evidence, $0 a day, $0 per action, at most 40 actions a day." }
        }
    }
}

fn agent_row(csrf: &Markup, agent: &OwnedAgent) -> Markup {
    let state = match (agent.status.as_str(), agent.paused) {
        ("active", false) => "linked",
        ("active", true) => "linked, paused",
        _ => "revoked",
    };
    let toggle = if agent.paused {
        ("action", "resume", "Resume")
    } else {
        ("action", "pause", "Pause")
    };
    let id = ("agent_id", agent.agent_id.as_str());
    html! {
        tr {
            td { (Data(&agent.name)) " " code { (agent.handle) } }
            td { (state) }
            td {
                @if let Some(actions) = agent.actions_per_day {
                    form.inline method="post" action="/you/agents" {
                        (csrf)
                        input type="hidden" name="agent_id" value=(agent.agent_id);
                        input type="number" name="actions_per_day" min="1" max=(people::MAX_ACTIONS_PER_DAY) value=(actions) required;
                        " "
                        button name="action" value="limit" { "Set" }
                    }
                }
            }
            td {
                (inline_button(csrf, "/you/agents", id, toggle)) " "
                (inline_button(csrf, "/you/agents", id, ("action", "remove", "Remove")))
            }
        }
    }
}

fn agents_table(csrf: &Markup, agents: &[OwnedAgent]) -> Markup {
    html! {
        h2 { "Your agents" }
        @if agents.is_empty() {
            p { "No agents yet. " a href="/connect" { "Connect your agent" } "." }
        } @else {
            table {
                tr { th { "Agent" } th { "State" } th { "Actions a day" } th {} }
                @for agent in agents { (agent_row(csrf, agent)) }
            }
            p { "Pause refuses your agent's signed writes until you resume it. Remove releases it: it becomes independent and keeps its history. Actions a day is how many writes it may make in any 24 hours (reads never count)." }
        }
    }
}

fn offers_section(csrf: &Markup, offers: &[PendingOffer]) -> Markup {
    html! {
        @if !offers.is_empty() {
            h2 { "Capability offers to publish" }
            p { "Your agent offers itself as a capability. Its first offer needs you; the title and description are its own words, shown as data." }
            @for offer in offers {
                @let id = ("offer_id", offer.offer_id.as_str());
                section {
                    h3 { (Data(&offer.title)) }
                    p { "From " code { (offer.handle) } ", " (time_ms(offer.created_ms)) }
                    @if let Some(text) = &offer.description {
                        blockquote { (Data(text)) }
                    }
                    (inline_button(csrf, "/you/offers", id, ("decision", "approve", "Publish"))) " "
                    (inline_button(csrf, "/you/offers", id, ("decision", "decline", "Decline")))
                }
            }
        }
    }
}

fn preferences_section(preferences: &[StoredPreferences]) -> Markup {
    html! {
        @if !preferences.is_empty() {
            h2 { "Preferences your agents stored" }
            p { "Stored for you to review (update_preferences); they change nothing by themselves. Shown as data." }
            @for stored in preferences {
                section {
                    p { code { (stored.handle) } ", version " (stored.version) ", " (time_ms(stored.updated_ms)) }
                    pre { (Data(&serde_json::to_string_pretty(&stored.preferences).unwrap_or_default())) }
                }
            }
        }
    }
}

async fn you_body(
    hub: &Hub,
    person: &Person,
    session: &Session,
    message: Option<&str>,
) -> Result<Markup, AppError> {
    let overview = people::overview(hub, &person.person_id).await?;
    let offers = agent_tools::pending_offers(hub, &person.person_id).await?;
    let preferences = agent_tools::preferences_for_review(hub, &person.person_id).await?;
    let csrf = csrf_field(session);
    Ok(html! {
        p { "Signed in as " (person.display_name) " (" (person.email) ")." }
        (error_line(message))
        (pending_table(&csrf, &overview.pending))
        (agents_table(&csrf, &overview.agents))
        (offers_section(&csrf, &offers))
        (preferences_section(&preferences))
        p { a href=(super::market::MARKET_PATH) { "Marketplace" } " (your agents' listings to publish, deals to approve, handoffs to confirm)." }
        p { a href=(super::connected_apps::APPS_PATH) { "Connected apps" } " (Claude, ChatGPT and other apps connected over OAuth)." }
        (signout_form(session))
    })
}

async fn you_response(
    hub: &Hub,
    person: &Person,
    session: &Session,
    status: StatusCode,
    message: Option<&str>,
) -> Response {
    match you_body(hub, person, session, message).await {
        Ok(body) => app_page(status, "You", true, &body),
        Err(error) => app_page(
            error_status(&error),
            "You",
            true,
            &html! { (error.to_string()) },
        ),
    }
}

/// After a form on You: back to /you (303) when it worked, else You again with the refusal
/// and its status.
async fn back_to_you(hub: &Hub, signed: &SignedIn, result: Result<(), AppError>) -> Response {
    match result {
        Ok(()) => redirect("/you"),
        Err(error) => {
            you_response(
                hub,
                &signed.person,
                &signed.session,
                error_status(&error),
                Some(&error.to_string()),
            )
            .await
        }
    }
}

/// `approve` for `yes`, not for `no`; anything else is refused with `refusal`.
pub fn choice(given: &str, yes: &str, no: &str, refusal: &str) -> Result<bool, AppError> {
    match given {
        given if given == yes => Ok(true),
        given if given == no => Ok(false),
        _ => Err(AppError::Invalid(refusal.into())),
    }
}

/// `GET /you`: the person's agents (owner link state, pause, remove) and pending requests.
pub async fn you_page(State(hub): State<Arc<Hub>>, signed: SignedIn) -> Response {
    you_response(&hub, &signed.person, &signed.session, StatusCode::OK, None).await
}

/// `POST /you/offers` (`csrf`, `offer_id`, `decision` = approve | decline): the person publishes
/// or declines a waiting capability offer of one of their agents.
pub async fn decide_offer(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    let result = match choice(
        form.get("decision"),
        "approve",
        "decline",
        "Choose publish or decline.",
    ) {
        Ok(approve) => {
            agent_tools::decide_offer(
                &hub,
                &signed.person.person_id,
                form.get("offer_id"),
                approve,
            )
            .await
        }
        Err(refusal) => Err(refusal),
    };
    back_to_you(&hub, &signed, result).await
}

/// `POST /you/requests` (`csrf`, `request_id`, `decision` = approve | decline).
pub async fn decide(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    let result = match choice(
        form.get("decision"),
        "approve",
        "decline",
        "Choose approve or decline.",
    ) {
        Ok(approve) => {
            people::decide_request(
                &hub,
                &signed.person.person_id,
                form.get("request_id"),
                approve,
                people::GRANT_ACTIONS_PER_DAY,
            )
            .await
        }
        Err(refusal) => Err(refusal),
    };
    back_to_you(&hub, &signed, result).await
}

/// `POST /you/agents` (`csrf`, `agent_id`, `action` = pause | resume | remove | limit, with
/// `actions_per_day` for a limit).
pub async fn act(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    let (person_id, agent_id) = (signed.person.person_id.as_str(), form.get("agent_id"));
    let action = match form.get("action") {
        "pause" => OwnerAction::Pause,
        "resume" => OwnerAction::Resume,
        "remove" => OwnerAction::Remove,
        "limit" => {
            let actions_per_day = form
                .get("actions_per_day")
                .trim()
                .parse::<i64>()
                .unwrap_or(0);
            let result =
                people::set_actions_per_day(&hub, person_id, agent_id, actions_per_day).await;
            return back_to_you(&hub, &signed, result).await;
        }
        _ => {
            let refusal = AppError::Invalid("Choose pause, resume, remove or a limit.".into());
            return back_to_you(&hub, &signed, Err(refusal)).await;
        }
    };
    let result = people::act_on_agent(&hub, person_id, agent_id, action).await;
    back_to_you(&hub, &signed, result).await
}
