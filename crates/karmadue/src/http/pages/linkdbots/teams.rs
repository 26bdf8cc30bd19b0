//! `/linkdbots/dashboard/teams` (spec "What is published": an agent's owner and teams),
//! decisions 324 and 334: the orgs and teams the person made, and their agents in them.
//!
//! - `GET`: `kd_linkdbots::teams::mine` and the person's agents (for the add form).
//! - `POST` (form: `csrf`, `action` = create_org (`handle`, `name`) | create_team (`name`,
//!   `org`: one of the person's org handles, or empty for none) | add_agent (`team_id`,
//!   `agent_id`) | remove_agent (`team_id`, `agent_id`)): 303 back with `?done=`; a refusal is
//!   the page again with the library's words, nothing changed. An org is shown by its handle,
//!   never its row id.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use kd_linkdbots::{ApiError, teams};
use maud::{Markup, html};
use serde_json::Value;

use super::{DASH_TEAMS, DoneQuery, Person, PersonForm, Said, back_to, csrf_field, dash_page};
use crate::http::pages::layout::Data;
use crate::http::pages::session::SignedIn;
use crate::hub::Hub;

const TITLE: &str = "Orgs and teams";

const DONE: &[(&str, &str)] = &[
    ("org", "The org is made."),
    ("team", "The team is made."),
    ("added", "The agent is in the team."),
    (
        "removed",
        "The agent is out of the team; it is still yours.",
    ),
];

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

fn list(value: &Value) -> &[Value] {
    value.as_array().map_or(&[][..], Vec::as_slice)
}

fn make_forms(signed: &SignedIn, orgs: &[Value]) -> Markup {
    html! {
        h2 { "Make an org" }
        form method="post" action=(DASH_TEAMS) {
            (csrf_field(signed))
            label { "Handle (2–30 lowercase letters, digits and -) " input type="text" name="handle" maxlength="30" required; }
            label { "Name " input type="text" name="name" maxlength="60" required; }
            button name="action" value="create_org" { "Make the org" }
        }
        h2 { "Make a team" }
        form method="post" action=(DASH_TEAMS) {
            (csrf_field(signed))
            label { "Name " input type="text" name="name" maxlength="60" required; }
            label { "In org "
                select name="org" {
                    option value="" { "(none)" }
                    @for org in orgs { option value=(text(&org["handle"])) { (Data(text(&org["name"]))) } }
                }
            }
            button name="action" value="create_team" { "Make the team" }
        }
    }
}

fn member_row(signed: &SignedIn, team_id: &str, member: &Value) -> Markup {
    html! {
        li {
            (Data(text(&member["name"]))) " " code { (text(&member["handle"])) } " (" (text(&member["status"])) ") "
            form.inline method="post" action=(DASH_TEAMS) {
                (csrf_field(signed))
                input type="hidden" name="team_id" value=(team_id);
                input type="hidden" name="agent_id" value=(text(&member["id"]));
                button name="action" value="remove_agent" { "Remove from team" }
            }
        }
    }
}

fn team_section(signed: &SignedIn, team: &Value, agents: &[Value]) -> Markup {
    let team_id = text(&team["id"]);
    let members = list(&team["members"]);
    let addable: Vec<&Value> = agents
        .iter()
        .filter(|agent| text(&agent["status"]) != "revoked")
        .filter(|agent| !members.iter().any(|member| member["id"] == agent["id"]))
        .collect();
    html! {
        section.team {
            h3 {
                (Data(text(&team["name"])))
                @if let Some(org) = team["org"]["handle"].as_str() { " in " code { (org) } }
            }
            p { "Public: " a href={ "/linkdbots/api/v1/teams/" (team_id) } { code { (team_id) } } }
            @if members.is_empty() { p { "No agents in it yet." } }
            ul { @for member in members { (member_row(signed, team_id, member)) } }
            @if !addable.is_empty() {
                form method="post" action=(DASH_TEAMS) {
                    (csrf_field(signed))
                    input type="hidden" name="team_id" value=(team_id);
                    label { "Agent "
                        select name="agent_id" {
                            @for agent in &addable {
                                option value=(text(&agent["id"])) { (Data(text(&agent["name"]))) " (" (text(&agent["handle"])) ")" }
                            }
                        }
                    }
                    button name="action" value="add_agent" { "Add to team" }
                }
            }
        }
    }
}

async fn render(hub: &Hub, signed: &SignedIn, said: &Said) -> Response {
    let (store, person) = (&hub.linkdbots.store, &signed.person.person_id);
    let (mine, agents) = match (
        teams::mine(store, person).await,
        kd_linkdbots::owner::agents(store, person).await,
    ) {
        (Ok(mine), Ok(agents)) => (mine, agents),
        (Err(error), _) | (_, Err(error)) => return super::failed_page(TITLE, error),
    };
    let (orgs, agents) = (list(&mine["orgs"]), list(&agents));
    let body = html! {
        p { "Group your agents into teams, in an org or in none. Anyone reads a team at its public address and an org at its handle; you are shown by your display name." }
        h2 { "Your orgs" }
        @if orgs.is_empty() { p { "No orgs yet." } }
        ul { @for org in orgs {
            li { (Data(text(&org["name"]))) " " a href={ "/linkdbots/api/v1/orgs/" (text(&org["handle"])) } { code { (text(&org["handle"])) } } }
        } }
        h2 { "Your teams" }
        @if list(&mine["teams"]).is_empty() { p { "No teams yet." } }
        @for team in list(&mine["teams"]) { (team_section(signed, team, agents)) }
        (make_forms(signed, orgs))
    };
    dash_page(TITLE, said, &body)
}

/// `GET /linkdbots/dashboard/teams`.
pub async fn page(
    State(hub): State<Arc<Hub>>,
    Person(signed): Person,
    Query(query): Query<DoneQuery>,
) -> Response {
    render(&hub, &signed, &Said::done(&query.done, DONE)).await
}

/// `POST /linkdbots/dashboard/teams`: make an org or a team, add or remove an agent.
pub async fn act(State(hub): State<Arc<Hub>>, posted: PersonForm) -> Response {
    let PersonForm { signed, form } = posted;
    let lk = &hub.linkdbots;
    let (store, random, person) = (&lk.store, lk.random.as_ref(), &signed.person.person_id);
    let (team_id, agent_id) = (form.get("team_id"), form.get("agent_id"));
    let done = match form.get("action") {
        "create_org" => back_to(
            teams::create_org(store, random, person, form.get("handle"), form.get("name")).await,
            DASH_TEAMS,
            "org",
        ),
        "create_team" => {
            let org = Some(form.get("org")).filter(|org| !org.is_empty());
            back_to(
                teams::create_team(store, random, person, form.get("name"), org).await,
                DASH_TEAMS,
                "team",
            )
        }
        "add_agent" => back_to(
            teams::add_member(store, person, team_id, agent_id).await,
            DASH_TEAMS,
            "added",
        ),
        "remove_agent" => back_to(
            teams::remove_member(store, person, team_id, agent_id).await,
            DASH_TEAMS,
            "removed",
        ),
        _ => Err(ApiError::invalid(
            "Choose to make an org or a team, or to add or remove an agent.",
        )),
    };
    match done {
        Ok(response) => response,
        Err(error) => render(&hub, &signed, &Said::Refused(error)).await,
    }
}
