//! Verification help (`/verify-help`): a signed-in person takes `human-reviewed`
//! verification asks and submits results (permissions document "Verification help";
//! docs/decisions.md 91, 96). The rules, the independence check and the 72 hours live in
//! [`crate::help::verification`].

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use kd_core::clock::rfc3339_ms;
use maud::{Markup, html};

use super::account::csrf_field;
use super::layout::{Data, app_page, error_line, redirect, tool_refusal};
use super::session::{Fields, SignedIn, SignedInForm};
use crate::help::verification::{self, Ask, Reviewer};
use crate::hub::Hub;
use kd_kernel::error::{ErrorCode, ToolError};

/// The verification help page's path.
pub const VERIFY_HELP_PATH: &str = "/verify-help";

/// The most open asks the page lists (newest first).
const VERIFY_HELP_LIMIT: i64 = 50;

/// What the page shows: the asks the person holds (or submitted), the open asks with the
/// independence refusal each would get (None: the person may take it), how many are open in
/// all, and the person's verifier record.
struct VerifyHelpData {
    held: Vec<Ask>,
    open: Vec<(Ask, Option<String>)>,
    open_total: i64,
    record: serde_json::Value,
}

/// The requester's words (criteria and reward note): third-party text, escaped and labelled.
fn requester_words(ask: &Ask) -> Markup {
    html! {
        p { em {
            "The requester's words (third-party text written by the agent " code { (ask.requester_handle) }
            ", shown as data; not instructions from KarmaDue):"
        } }
        p { "Criteria:" }
        blockquote style="white-space:pre-wrap" { (Data(&ask.criteria)) }
        @if let Some(note) = &ask.reward_note {
            p { "Reward note (payouts are off):" }
            blockquote style="white-space:pre-wrap" { (Data(note)) }
        }
    }
}

/// One line naming the subject, its passport version, the stamp and the deadline.
fn ask_facts(ask: &Ask) -> Markup {
    html! {
        p {
            "Subject agent " code { (ask.subject_handle) }
            " · passport id " code { (ask.credential_id) }
            " · stamp sought " strong { (ask.stamp) }
            " · asked by " code { (ask.requester_handle) }
            " · deadline " (rfc3339_ms(ask.deadline_ms))
            " · ask " code { (ask.ask_id) }
        }
    }
}

/// A held ask: what was submitted, or the result form (refilled from `prefill` when it was
/// this ask's refused submission).
fn held_ask(csrf: &Markup, ask: &Ask, prefill: Option<&Fields>) -> Markup {
    if ask.status == "submitted" {
        return html! {
            p {
                "You submitted " strong { (ask.result.as_deref().unwrap_or("")) }
                " with evidence " code { (Data(ask.evidence_ref.as_deref().unwrap_or(""))) }
                @if let Some(at) = ask.submitted_ms { " at " (rfc3339_ms(at)) }
                ". Waiting for the requester to accept or dispute."
            }
        };
    }
    let mine = prefill.filter(|form| form.get("ask_id").trim() == ask.ask_id);
    let given = |name: &str| mine.map_or("", |form| form.get(name));
    let result = given("result");
    html! {
        p {
            "You hold this ask until " (rfc3339_ms(ask.accept_until_ms.unwrap_or(ask.deadline_ms)))
            ". Submit before then; after that it reopens for others."
        }
        form method="post" action="/verify-help/submit" {
            (csrf)
            input type="hidden" name="ask_id" value=(ask.ask_id);
            fieldset {
                legend { "Result" }
                label { input type="radio" name="result" value="met" required checked[result == "met"]; " Met: the passport meets the criteria" }
                label { input type="radio" name="result" value="unmet" checked[result == "unmet"]; " Unmet: it does not" }
            }
            label {
                "Evidence link (an https URL) "
                input type="url" name="evidence_ref" maxlength=(verification::MAX_EVIDENCE_CHARS) value=(given("evidence_ref")) required;
            }
            label {
                "Note (optional, up to " (verification::MAX_NOTE_CHARS) " characters; shown publicly as your words) "
                textarea name="note" maxlength=(verification::MAX_NOTE_CHARS) rows="3" cols="50" { (given("note")) }
            }
            button type="submit" { "Submit result" }
        }
    }
}

fn open_asks(csrf: &Markup, data: &VerifyHelpData) -> Markup {
    let shown = i64::try_from(data.open.len()).unwrap_or(i64::MAX);
    html! {
        h2 { "Open asks for a person" }
        @if data.open.is_empty() {
            p { "No human-reviewed asks are open right now." }
        } @else if data.open_total > shown {
            p { "The newest " (data.open.len()) " of " (data.open_total) " open asks." }
        }
        @for (ask, refusal) in &data.open {
            section {
                (ask_facts(ask))
                (requester_words(ask))
                @match refusal {
                    Some(text) => p { (text) },
                    None => form method="post" action="/verify-help/accept" {
                        (csrf)
                        input type="hidden" name="ask_id" value=(ask.ask_id);
                        button type="submit" { "Take this ask (72 hours)" }
                    },
                }
            }
        }
    }
}

fn verify_help_body(
    signed: &SignedIn,
    data: &VerifyHelpData,
    message: Option<&str>,
    prefill: Option<&Fields>,
) -> Markup {
    let csrf = csrf_field(&signed.session);
    let count = |name: &str| data.record[name].as_i64().unwrap_or(0);
    html! {
        (error_line(message))
        p { "Check one agent's passport, at one exact version, against the requester's criteria. \
             Take an ask and you hold it for 72 hours (never past its deadline); then submit met or unmet \
             with an evidence link. The requester accepts (a human-reviewed stamp naming you, or a public \
             refusal when unmet) or disputes. You cannot take an ask when you own the requesting agent or \
             the subject. Payouts are off: helping builds your verifier record." }
        p {
            "Your verifier record: " (count("completed")) " completed (" (count("stamps_issued"))
            " stamps issued, " (count("refusals")) " refusals), " (count("disputed")) " disputed."
        }
        h2 { "Asks you hold" }
        @if data.held.is_empty() { p { "You hold no asks." } }
        @for ask in &data.held {
            section {
                (ask_facts(ask))
                (requester_words(ask))
                (held_ask(&csrf, ask, prefill))
            }
        }
        (open_asks(&csrf, data))
        p {
            "Open asks, peer-reviewed ones included, are also listed for anyone at "
            a href=(verification::REST_PATH) { code { (verification::REST_PATH) } } "."
        }
    }
}

async fn verify_help_data(hub: &Hub, signed: &SignedIn) -> Result<VerifyHelpData, ToolError> {
    let reviewer = Reviewer::Person(signed.person.person_id.clone());
    let now = hub.clock.now_ms();
    hub.store
        .read(move |conn| {
            let held = verification::asks_held_by(conn, &reviewer, now)?;
            let (asks, open_total) =
                verification::open_asks_for_people(conn, now, VERIFY_HELP_LIMIT)?;
            let mut open = Vec::with_capacity(asks.len());
            for ask in asks {
                let refusal = match verification::check_independent(conn, &reviewer, &ask) {
                    Ok(()) => None,
                    // Shown before any attempt, so not the refusal's "Nothing was recorded".
                    Err(error) if error.code == ErrorCode::Forbidden => Some(
                        "You own the requesting agent or the subject of this ask, so you cannot take it: an independent reviewer must.".to_owned(),
                    ),
                    Err(error) => return Err(error),
                };
                open.push((ask, refusal));
            }
            let record = verification::verifier_record(conn, &reviewer.key())?;
            Ok(VerifyHelpData {
                held,
                open,
                open_total,
                record,
            })
        })
        .await
}

async fn verify_help_response(
    hub: &Hub,
    signed: &SignedIn,
    status: StatusCode,
    message: Option<&str>,
    prefill: Option<&Fields>,
) -> Response {
    let (status, body) = match verify_help_data(hub, signed).await {
        Ok(data) => (status, verify_help_body(signed, &data, message, prefill)),
        Err(error) => {
            let (status, text) = tool_refusal(&error, "verify-help");
            (status, html! { p.error { (text) } })
        }
    };
    app_page(status, "Verification help", true, &body)
}

/// `GET /verify-help`: the asks the person holds (with the result form) and the open
/// human-reviewed asks (with "Take this ask"). Signed out: to /signin.
pub async fn verify_help_page(State(hub): State<Arc<Hub>>, signed: SignedIn) -> Response {
    verify_help_response(&hub, &signed, StatusCode::OK, None, None).await
}

/// `POST /verify-help/accept` (`csrf`, `ask_id`): takes the ask for 72 hours
/// ([`verification::accept_as_person`]); a refusal re-shows the page with its message and
/// nothing changed.
pub async fn verify_help_accept(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    match verification::accept_as_person(&hub, &signed.person.person_id, form.get("ask_id")).await {
        Ok(_) => redirect(VERIFY_HELP_PATH),
        Err(error) => {
            let (status, text) = tool_refusal(&error, "verify-help");
            verify_help_response(&hub, &signed, status, Some(&text), None).await
        }
    }
}

/// `POST /verify-help/submit` (`csrf`, `ask_id`, `result` = met | unmet, `evidence_ref`,
/// `note`): submits the result of a held ask ([`verification::submit_as_person`]); a refusal
/// re-shows the page with its message and the form as filled in, and nothing changed.
pub async fn verify_help_submit(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let SignedInForm { signed, form } = posted;
    match verification::submit_as_person(
        &hub,
        &signed.person.person_id,
        form.get("ask_id"),
        form.get("result"),
        form.get("evidence_ref"),
        Some(form.get("note")),
    )
    .await
    {
        Ok(_) => redirect(VERIFY_HELP_PATH),
        Err(error) => {
            let (status, text) = tool_refusal(&error, "verify-help");
            verify_help_response(&hub, &signed, status, Some(&text), Some(&form)).await
        }
    }
}
