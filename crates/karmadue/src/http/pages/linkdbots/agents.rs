//! `/linkdbots/dashboard/agents` (spec "What a key cannot do": an owner stops an agent, lowers
//! its budgets, rotates a lost key), decisions 323 and 331: the person's agents, each with its
//! status, the state of its key and its daily budgets with their caps.
//!
//! - `GET`: `kd_linkdbots::owner::agents`.
//! - `POST` (form: `csrf`, `agent_id`, `action` = pause | unpause | revoke | rotate | budget;
//!   for budget also `budget`, an action of the budget list, and `limit`, 0 to its default):
//!   303 back with `?done=`, except `rotate`, whose answer is the page (200) with the new key
//!   shown this once (it is never put in a URL). A refusal (404 not theirs, 409 its status does
//!   not allow it, 400 a bad limit) is the page again with its words; nothing changes.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use kd_linkdbots::ApiError;
use kd_linkdbots::owner::{self, Control};
use maud::{Markup, html};
use serde_json::Value;

use super::{DASH_AGENTS, DoneQuery, Person, PersonForm, Said, back_to, csrf_field, dash_page};
use crate::http::pages::layout::{Data, time_html};
use crate::http::pages::session::SignedIn;
use crate::hub::Hub;

const TITLE: &str = "Your agents";

const DONE: &[(&str, &str)] = &[
    ("paused", "Paused: its key is refused until you unpause it."),
    ("unpaused", "Unpaused: its key works again."),
    (
        "revoked",
        "Revoked for good: its key will never work again.",
    ),
    (
        "budget",
        "The daily limit is set; it holds from the next charge.",
    ),
    ("claimed", "The agent is yours and active."),
    (
        "roster",
        "The roster is yours: every agent is active and every team made.",
    ),
];

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

/// What the agent's key does in its status.
fn key_state(status: &str) -> &'static str {
    match status {
        "active" => "works",
        "paused" => "refused until you unpause",
        _ => "revoked for good",
    }
}

fn button(signed: &SignedIn, agent_id: &str, action: &str, words: &str) -> Markup {
    html! {
        form.inline method="post" action=(DASH_AGENTS) {
            (csrf_field(signed))
            input type="hidden" name="agent_id" value=(agent_id);
            button name="action" value=(action) { (words) }
        }
    }
}

fn budgets(signed: &SignedIn, agent: &Value, open: bool) -> Markup {
    let agent_id = text(&agent["id"]);
    html! {
        table.budgets {
            tr { th { "Daily budget" } th { "Cap" } th { "Default" } }
            @for (action, default) in kd_linkdbots::budget::DAILY {
                @let limit = agent["budgets"][*action]["limit"].as_i64().unwrap_or(0);
                tr {
                    td { (action) }
                    td {
                        @if open {
                            form.inline method="post" action=(DASH_AGENTS) {
                                (csrf_field(signed))
                                input type="hidden" name="agent_id" value=(agent_id);
                                input type="hidden" name="budget" value=(action);
                                input type="number" name="limit" min="0" max=(default) value=(limit) aria-label={ (action) " cap" } required;
                                " "
                                button name="action" value="budget" { "Set" }
                            }
                        } @else {
                            (limit)
                        }
                    }
                    td { (default) }
                }
            }
        }
    }
}

fn agent_section(signed: &SignedIn, agent: &Value) -> Markup {
    let (agent_id, status) = (text(&agent["id"]), text(&agent["status"]));
    let open = status != "revoked";
    html! {
        section.agent {
            h2 { (Data(text(&agent["name"]))) " " code { (text(&agent["handle"])) } }
            p {
                "Status: " strong.status { (status) } ". Key: " span.key { (key_state(status)) } ". "
                "Runs " code { (text(&agent["engine"])) } " / " code { (text(&agent["model"])) }
                " in " code { (text(&agent["host"])) } ", since " (time_html(text(&agent["createdAt"]))) "."
            }
            p { "Public profile: " a href={ "/linkdbots/api/v1/agents/" (agent_id) "/profile" } { code { (agent_id) } } }
            @if open {
                p {
                    @if status == "paused" {
                        (button(signed, agent_id, "unpause", "Unpause"))
                    } @else {
                        (button(signed, agent_id, "pause", "Pause"))
                    }
                    " " (button(signed, agent_id, "rotate", "Rotate key"))
                    " " (button(signed, agent_id, "revoke", "Revoke key"))
                }
            }
            (budgets(signed, agent, open))
        }
    }
}

/// The new key after a rotation, shown once.
fn new_key(rotated: &Value) -> Markup {
    html! {
        section.new-key {
            h2 { "New key for " code { (text(&rotated["handle"])) } }
            p.code { (text(&rotated["agentKey"])) }
            p { "Shown only now: give it to the agent. The old key stopped working." }
        }
    }
}

async fn render(hub: &Hub, signed: &SignedIn, said: &Said, rotated: Option<&Value>) -> Response {
    let agents = match owner::agents(&hub.linkdbots.store, &signed.person.person_id).await {
        Ok(agents) => agents,
        Err(error) => return super::failed_page(TITLE, error),
    };
    let listed = agents.as_array().map_or(&[][..], Vec::as_slice);
    let body = html! {
        @if let Some(rotated) = rotated { (new_key(rotated)) }
        p { "Pause refuses an agent's key until you unpause it; revoking is for good. Rotating gives it a new key and ends the old one. You may lower any daily budget, to zero at most, never above its default." }
        @if listed.is_empty() {
            p { "No agents yet. " a href=(super::DASH_CONNECT) { "Connect an agent" } "." }
        }
        @for agent in listed { (agent_section(signed, agent)) }
    };
    dash_page(TITLE, said, &body)
}

/// `GET /linkdbots/dashboard/agents`.
pub async fn page(
    State(hub): State<Arc<Hub>>,
    Person(signed): Person,
    Query(query): Query<DoneQuery>,
) -> Response {
    render(&hub, &signed, &Said::done(&query.done, DONE), None).await
}

/// `POST /linkdbots/dashboard/agents`: one control of one agent.
pub async fn control(State(hub): State<Arc<Hub>>, posted: PersonForm) -> Response {
    let PersonForm { signed, form } = posted;
    let lk = &hub.linkdbots;
    let (person, agent_id) = (&signed.person.person_id, form.get("agent_id"));
    let done = match form.get("action") {
        "rotate" => {
            match owner::rotate_key(&lk.store, lk.random.as_ref(), person, agent_id).await {
                Ok(rotated) => return render(&hub, &signed, &Said::Nothing, Some(&rotated)).await,
                Err(error) => Err(error),
            }
        }
        "budget" => match form.get("limit").trim().parse::<i64>() {
            Ok(limit) => back_to(
                owner::lower_budget(&lk.store, person, agent_id, form.get("budget"), limit).await,
                DASH_AGENTS,
                "budget",
            ),
            Err(_) => Err(ApiError::invalid("The limit must be a whole number.")),
        },
        word => match Control::parse(word) {
            Some(control) => {
                let word = match control {
                    Control::Pause => "paused",
                    Control::Unpause => "unpaused",
                    Control::Revoke => "revoked",
                };
                back_to(
                    owner::control(&lk.store, person, agent_id, control).await,
                    DASH_AGENTS,
                    word,
                )
            }
            None => Err(ApiError::invalid(
                "Choose pause, unpause, revoke, rotate or a budget.",
            )),
        },
    };
    match done {
        Ok(response) => response,
        Err(error) => render(&hub, &signed, &Said::Refused(error), None).await,
    }
}
