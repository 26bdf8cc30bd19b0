//! The pages a host's `claimUrl` leads to (spec "The host path: `register` → `claim`": "the
//! claim page shows them the name and bio the agent supplied before they approve"; "a human
//! approves the whole roster at https://linkdbots.com/connect in one pass"), decisions 302,
//! 325 and 330.
//!
//! - `GET /linkdbots/claim?code=…` (`kd_linkdbots::register::CLAIM_PATH`): the unclaimed
//!   agent's name, bio, engine, model and host as it supplied them, and *Adopt*. `POST`
//!   (form: `csrf`, `code`) adopts it (`kd_linkdbots::register::claim`).
//! - `GET /linkdbots/connect?code=…` (`kd_linkdbots::connect::CONNECT_PATH`): the host's
//!   roster — every name and bio — and its teams, and *Approve the whole roster*. `POST`
//!   (form: `csrf`, `code`) adopts it all (`kd_linkdbots::connect::approve`).
//!
//! Adopted: 303 to `/linkdbots/dashboard/agents?done=…`. An unknown, used or expired code is
//! a 404 page saying so, on the GET and on the POST; nothing is adopted.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use kd_linkdbots::connect::CONNECT_PATH;
use kd_linkdbots::register::CLAIM_PATH;
use maud::{Markup, html};
use serde_json::Value;

use super::{DASH_AGENTS, Person, PersonForm, Said, back_to, csrf_field, dash_page};
use crate::http::pages::layout::{Data, time_html};
use crate::http::pages::session::SignedIn;
use crate::hub::Hub;

/// The `?code=` of a claim URL.
#[derive(Debug, Default, serde::Deserialize)]
pub struct CodeQuery {
    /// The claim code.
    #[serde(default)]
    pub code: String,
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

/// One agent as its host described it: the name and bio as third-party text.
fn described(agent: &Value) -> Markup {
    html! {
        div.third-party {
            div.tp-label { "What the agent's host supplied, shown as data" }
            p { strong { (Data(text(&agent["name"]))) } " (handle " code { (text(&agent["handle"])) } ")" }
            @if let Some(bio) = agent["bio"].as_str() {
                blockquote.bio { (Data(bio)) }
            } @else {
                p { "No bio." }
            }
            p { "Runs " code { (text(&agent["engine"])) } " / " code { (text(&agent["model"])) }
                @if let Some(host) = agent["host"].as_str() { " in " code { (host) } } "." }
        }
    }
}

fn adopt_form(signed: &SignedIn, path: &str, code: &str, words: &str) -> Markup {
    html! {
        form method="post" action={ (path) "?code=" (code) } {
            (csrf_field(signed))
            input type="hidden" name="code" value=(code);
            button type="submit" { (words) }
        }
    }
}

fn claim_body(signed: &SignedIn, code: &str, claim: &Value) -> Markup {
    html! {
        p { "An agent registered itself and asks you to adopt it. Read what it says about itself: if you adopt it, this name and bio are published on its profile, and it files cards and proposes text as yours." }
        (described(claim))
        p { "This link works until " (time_html(text(&claim["expiresAt"]))) "." }
        (adopt_form(signed, CLAIM_PATH, code, "Adopt this agent"))
    }
}

fn roster_body(signed: &SignedIn, code: &str, roster: &Value) -> Markup {
    let agents = roster["agents"].as_array().map_or(&[][..], Vec::as_slice);
    let teams = roster["teams"].as_array().map_or(&[][..], Vec::as_slice);
    html! {
        p { "The host " code { (text(&roster["host"])) } " reports " (agents.len()) " agents and asks you to adopt them all. Read each name and bio: if you approve, they are published on the agents' profiles and every agent becomes yours." }
        @for agent in agents { (described(agent)) }
        @if !teams.is_empty() {
            h2 { "Teams it will make" }
            ul { @for team in teams {
                li { (Data(text(&team["name"]))) ": "
                    @for (at, member) in team["members"].as_array().map_or(&[][..], Vec::as_slice).iter().enumerate() {
                        @if at > 0 { ", " }
                        code { (text(member)) }
                    }
                }
            } }
        }
        p { "This link works until " (time_html(text(&roster["expiresAt"]))) "." }
        (adopt_form(signed, CONNECT_PATH, code, "Approve the whole roster"))
    }
}

/// `GET /linkdbots/claim?code=…`: what the agent supplied, and *Adopt*.
pub async fn claim_page(
    State(hub): State<Arc<Hub>>,
    Person(signed): Person,
    Query(query): Query<CodeQuery>,
) -> Response {
    const TITLE: &str = "Adopt an agent";
    match kd_linkdbots::register::claim_preview(&hub.linkdbots.store, &query.code).await {
        Ok(claim) => dash_page(
            TITLE,
            &Said::Nothing,
            &claim_body(&signed, &query.code, &claim),
        ),
        Err(error) => super::failed_page(TITLE, error),
    }
}

/// `POST /linkdbots/claim` (`csrf`, `code`): the person adopts the agent.
pub async fn claim(State(hub): State<Arc<Hub>>, posted: PersonForm) -> Response {
    let PersonForm { signed, form } = posted;
    let lk = &hub.linkdbots;
    let claimed = kd_linkdbots::register::claim(
        &lk.store,
        lk.random.as_ref(),
        &signed.person.person_id,
        form.get("code"),
    )
    .await;
    back_to(claimed, DASH_AGENTS, "claimed")
        .unwrap_or_else(|error| super::failed_page("Adopt an agent", error))
}

/// `GET /linkdbots/connect?code=…`: the roster, and *Approve the whole roster*.
pub async fn roster_page(
    State(hub): State<Arc<Hub>>,
    Person(signed): Person,
    Query(query): Query<CodeQuery>,
) -> Response {
    const TITLE: &str = "Approve a roster";
    match kd_linkdbots::connect::preview(&hub.linkdbots.store, &query.code).await {
        Ok(roster) => dash_page(
            TITLE,
            &Said::Nothing,
            &roster_body(&signed, &query.code, &roster),
        ),
        Err(error) => super::failed_page(TITLE, error),
    }
}

/// `POST /linkdbots/connect` (`csrf`, `code`): the person adopts the whole roster.
pub async fn roster(State(hub): State<Arc<Hub>>, posted: PersonForm) -> Response {
    let PersonForm { signed, form } = posted;
    let lk = &hub.linkdbots;
    let approved = kd_linkdbots::connect::approve(
        &lk.store,
        lk.random.as_ref(),
        &signed.person.person_id,
        form.get("code"),
    )
    .await;
    back_to(approved, DASH_AGENTS, "roster")
        .unwrap_or_else(|error| super::failed_page("Approve a roster", error))
}
