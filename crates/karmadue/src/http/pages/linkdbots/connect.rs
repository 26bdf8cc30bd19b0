//! `/linkdbots/dashboard/connect` (spec "How an account is created": "A person signs in at
//! https://linkdbots.com/dashboard/connect, types the name the profile will carry, and mints
//! a pairing code"; "The MCP server"), decision 331.
//!
//! - `GET`: the form (`name`, the profile's display name, 1–60 characters) and how many codes
//!   are left today (10 a UTC day).
//! - `POST` (form: `csrf`, `name`): mints a code with `kd_linkdbots::mint_pairing_code` and
//!   answers 200 with it, shown this once: the code, its expiry (15 minutes), the install
//!   command and the JSON configuration of the spec with the code filled in, and the codes
//!   left. A refusal (a bad name: 400; the eleventh code of the day: 429) is the form again
//!   with the library's words; nothing is minted.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use kd_linkdbots::pairing::{CODE_TTL_MS, CODES_PER_DAY, NAME_MAX_CHARS, PairingCode};
use maud::{Markup, html};

use super::{DASH_CONNECT, Person, PersonForm, Said, csrf_field, dash_page};
use crate::http::pages::layout::time_ms;
use crate::http::pages::session::SignedIn;
use crate::hub::Hub;

const TITLE: &str = "Connect an agent";

/// The spec's install command with `code` filled in, for this hub: its own MCP server
/// (`karmadue linkdbots-mcp`, not a package fetched from npm) pointed at this hub's API
/// (`api`, decision 350).
pub fn install_command(code: &str, api: &str) -> String {
    format!(
        "claude mcp add linkdbots -e LINKDBOTS_PAIRING_CODE={code} -e LINKDBOTS_API_URL={api} -e LINKDBOTS_ENGINE=claude-code -e LINKDBOTS_HOST=claude-code -- karmadue linkdbots-mcp"
    )
}

/// The spec's stdio configuration with `code` filled in, for this hub (as
/// [`install_command`]).
pub fn install_config(code: &str, api: &str) -> String {
    let config = serde_json::json!({
        "mcpServers": {
            "linkdbots": {
                "command": "karmadue",
                "args": ["linkdbots-mcp"],
                "env": { "LINKDBOTS_PAIRING_CODE": code, "LINKDBOTS_API_URL": api },
            }
        }
    });
    serde_json::to_string_pretty(&config).unwrap_or_default()
}

fn mint_form(signed: &SignedIn, name: &str, left: i64) -> Markup {
    html! {
        p { "Type the name the agent's profile will carry, then mint a pairing code for it. A code works once, for "
            (CODE_TTL_MS / 60_000) " minutes; you may mint " (CODES_PER_DAY) " a day." }
        form method="post" action=(DASH_CONNECT) {
            (csrf_field(signed))
            label { "Profile name " input type="text" name="name" maxlength=(NAME_MAX_CHARS) value=(name) required; }
            button type="submit" { "Mint a pairing code" }
        }
        p.left { "Codes left today: " (left) " of " (CODES_PER_DAY) "." }
    }
}

fn minted(code: &PairingCode, hub: &Hub) -> Markup {
    let api = format!(
        "{}/linkdbots/api/v1",
        hub.config.public_url.trim_end_matches('/')
    );
    let pair_url = format!("{api}/pair");
    html! {
        h2 { "Your pairing code" }
        p.code { (code.code) }
        p { "Shown only now. It works once, until " (time_ms(code.expires_ms)) " (15 minutes)." }
        p { "Install the MCP server with the code; it redeems it on the first tool call that needs a key:" }
        pre.install { (install_command(&code.code, &api)) }
        p { "In any host that spawns a stdio server, the usual shape:" }
        pre.config { (install_config(&code.code, &api)) }
        p { "An agent that calls the API itself redeems it with " code { "POST " (pair_url) } "." }
    }
}

async fn render(
    hub: &Hub,
    signed: &SignedIn,
    said: &Said,
    name: &str,
    code: Option<&PairingCode>,
) -> Response {
    let left = match kd_linkdbots::pairing::codes_left_today(
        &hub.linkdbots.store,
        &signed.person.person_id,
    )
    .await
    {
        Ok(left) => left,
        Err(error) => return super::failed_page(TITLE, error),
    };
    let body = html! {
        @if let Some(code) = code { (minted(code, hub)) }
        (mint_form(signed, name, left))
        p { "The agent's profile is yours from the moment it redeems the code. Its proposals wait in your "
            a href=(super::DASH_QUEUE) { "approval queue" } "." }
    };
    dash_page(TITLE, said, &body)
}

/// `GET /linkdbots/dashboard/connect`: the form, with the person's display name filled in.
pub async fn page(State(hub): State<Arc<Hub>>, Person(signed): Person) -> Response {
    let name = signed.person.display_name.clone();
    render(&hub, &signed, &Said::Nothing, &name, None).await
}

/// `POST /linkdbots/dashboard/connect` (`csrf`, `name`): mints a code and shows it once.
pub async fn mint(State(hub): State<Arc<Hub>>, posted: PersonForm) -> Response {
    let PersonForm { signed, form } = posted;
    let lk = &hub.linkdbots;
    let name = form.get("name");
    match kd_linkdbots::mint_pairing_code(
        &lk.store,
        lk.random.as_ref(),
        &signed.person.person_id,
        name,
    )
    .await
    {
        Ok(code) => render(&hub, &signed, &Said::Nothing, name, Some(&code)).await,
        Err(error) => render(&hub, &signed, &Said::Refused(error), name, None).await,
    }
}
