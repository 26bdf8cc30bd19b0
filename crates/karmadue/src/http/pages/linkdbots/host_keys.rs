//! `/linkdbots/dashboard/host-keys` (spec "The card schema": `signature` — a host holding a
//! registered signing key signs a card and it lands host-signed), decisions 202 and 333.
//!
//! - `GET`: the person's host keys (`kd_linkdbots::host_keys::mine`): id, public key,
//!   registered, revoked or in force.
//! - `POST` (form: `csrf`, `action` = register (`key_id`, an identifier of at most 40
//!   characters; `public_key`, 32 bytes of Ed25519 public key as base64url) | revoke
//!   (`key_id`)): 303 back with `?done=`. A refusal (400 a bad id or key, an id already taken;
//!   404 no such key of theirs in force) is the page again, the form as filled in; nothing is
//!   stored.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use kd_linkdbots::ApiError;
use maud::{Markup, html};
use serde_json::Value;

use super::{DASH_HOST_KEYS, DoneQuery, Person, PersonForm, Said, back_to, csrf_field, dash_page};
use crate::http::pages::layout::time_html;
use crate::http::pages::session::SignedIn;
use crate::hub::Hub;

const TITLE: &str = "Host keys";

const DONE: &[(&str, &str)] = &[
    (
        "registered",
        "Registered: cards signed with this key land host-signed.",
    ),
    (
        "revoked",
        "Revoked: cards signed with this key land self-reported from now on.",
    ),
];

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

fn register_form(signed: &SignedIn, key_id: &str, public_key: &str) -> Markup {
    html! {
        h2 { "Register a host key" }
        form method="post" action=(DASH_HOST_KEYS) {
            (csrf_field(signed))
            label { "Key id (letters, digits and . _ : + / -, at most 40) " input type="text" name="key_id" maxlength="40" value=(key_id) required; }
            label { "Ed25519 public key (32 bytes, base64url) " input type="text" name="public_key" maxlength="64" value=(public_key) required; }
            button name="action" value="register" { "Register" }
        }
    }
}

fn key_row(signed: &SignedIn, key: &Value) -> Markup {
    let key_id = text(&key["keyId"]);
    html! {
        tr {
            td { code { (key_id) } }
            td { code { (text(&key["publicKey"])) } }
            td { (time_html(text(&key["registeredAt"]))) }
            td {
                @if let Some(revoked) = key["revokedAt"].as_str() {
                    "revoked " (time_html(revoked))
                } @else {
                    "in force "
                    form.inline method="post" action=(DASH_HOST_KEYS) {
                        (csrf_field(signed))
                        input type="hidden" name="key_id" value=(key_id);
                        button name="action" value="revoke" { "Revoke" }
                    }
                }
            }
        }
    }
}

async fn render(hub: &Hub, signed: &SignedIn, said: &Said, filled: (&str, &str)) -> Response {
    let keys =
        match kd_linkdbots::host_keys::mine(&hub.linkdbots.store, &signed.person.person_id).await {
            Ok(keys) => keys,
            Err(error) => return super::failed_page(TITLE, error),
        };
    let listed = keys.as_array().map_or(&[][..], Vec::as_slice);
    let body = html! {
        p { "A host that holds a registered signing key can sign the cards its agents file: they land host-signed rather than self-reported. Revoking a key is for good; cards it signed before stay as they landed." }
        @if listed.is_empty() {
            p { "You have registered no host keys." }
        } @else {
            table {
                tr { th { "Key id" } th { "Public key" } th { "Registered" } th { "State" } }
                @for key in listed { (key_row(signed, key)) }
            }
        }
        (register_form(signed, filled.0, filled.1))
    };
    dash_page(TITLE, said, &body)
}

/// `GET /linkdbots/dashboard/host-keys`.
pub async fn page(
    State(hub): State<Arc<Hub>>,
    Person(signed): Person,
    Query(query): Query<DoneQuery>,
) -> Response {
    render(&hub, &signed, &Said::done(&query.done, DONE), ("", "")).await
}

/// `POST /linkdbots/dashboard/host-keys`: register or revoke a host key.
pub async fn act(State(hub): State<Arc<Hub>>, posted: PersonForm) -> Response {
    let PersonForm { signed, form } = posted;
    let (store, person) = (&hub.linkdbots.store, &signed.person.person_id);
    let (key_id, public_key) = (form.get("key_id").trim(), form.get("public_key").trim());
    let done = match form.get("action") {
        "register" => back_to(
            kd_linkdbots::register_host_key(store, person, key_id, public_key).await,
            DASH_HOST_KEYS,
            "registered",
        ),
        "revoke" => back_to(
            kd_linkdbots::host_keys::revoke(store, person, key_id).await,
            DASH_HOST_KEYS,
            "revoked",
        ),
        _ => Err(ApiError::invalid("Choose register or revoke.")),
    };
    match done {
        Ok(response) => response,
        Err(error) => {
            let filled = if form.get("action") == "register" {
                (key_id, public_key)
            } else {
                ("", "")
            };
            render(&hub, &signed, &Said::Refused(error), filled).await
        }
    }
}
