//! Task views and templates (Ronin "Events", "Templates"; section 10 `GET /tasks/<id>`).
//!
//! A task is its OFFER and what followed. The compact view (POST answers) holds ids, status,
//! type, roles, the acceptance, the settlement state and the viewer's templates, no event
//! bodies; the full view (`GET /api/v1/tasks/<offer id>`, or `?full=1` on the POST) adds the
//! scope, price, delivery, rating, settlement detail, the scanner's verdicts part by part and
//! the chain's events as signed.
//!
//! A template is `{kind, tags, content, why}`: the viewer signs it as-is (adding pubkey,
//! created_at, id and sig) and POSTs it. The viewer gets the templates of the roles its key
//! holds (it is the head of the lineage that held the role at offer time); the `p` tags name
//! the counterparty's head key.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kd_core::db::Connection;
use serde_json::{Value, json};

use crate::events::task::{ACCEPT, COMPLETE, DELIVER, PAID, RATING, RECEIVED};
use crate::store::{self, Task};
use crate::{Refusal, Ronin, answer};

/// A task's view for `viewer` (compact or full) and the viewer's templates; `None` for an
/// unknown task. Files' URLs are under `mount` (Ronin's: [`crate::artifacts::url_of`]).
///
/// # Errors
/// The database's error.
pub(crate) fn view(
    conn: &Connection,
    task_id: &str,
    viewer: Option<&str>,
    full: bool,
    mount: &str,
) -> kd_core::db::Result<Option<(Value, Vec<Value>)>> {
    let Some(task) = store::task(conn, task_id)? else {
        return Ok(None);
    };
    let next = match viewer {
        Some(viewer) => templates(conn, &task, viewer)?,
        None => Vec::new(),
    };
    let mut view = compact(&task, &next);
    if full {
        add_full(conn, &task, &mut view, mount)?;
    }
    Ok(Some((view, next)))
}

fn acceptance(task: &Task) -> Value {
    match (&task.accept_id, task.by_terms) {
        (_, true) => json!({ "by_terms": true, "listing": task.listing_id }),
        (Some(id), false) => json!({ "by_terms": false, "id": id }),
        (None, false) => Value::Null,
    }
}

fn compact(task: &Task, next: &[Value]) -> Value {
    json!({
        "id": task.id,
        "status": task.status,
        "type": task.kind,
        "listing": task.listing_id,
        "address": format!("31100:{}:{}", task.listing_owner, task.listing_d),
        "roles": { "agent": task.agent, "buyer": task.buyer, "hirer": task.hirer },
        "accept": acceptance(task),
        "ids": {
            "offer": task.id,
            "accept": task.accept_id,
            "deliver": task.deliver_id,
            "complete": task.complete_id,
            "rating": task.rating_id,
            "paid": task.paid_id,
            "received": task.received_id,
        },
        "settlement": { "state": task.settlement },
        "rated": task.rating.is_some(),
        "next": next,
    })
}

/// The files the offered WANTED listing attached (the listing event the OFFER answered, so a
/// later edit of the listing does not change a task): `attachments`, and the scan parts
/// `skill` (its file's) and `inputs` (the worst of theirs).
fn add_attachments(
    conn: &Connection,
    task: &Task,
    view: &mut Value,
    scan: &mut Value,
    mount: &str,
) -> kd_core::db::Result<()> {
    let content = store::event_json(conn, &task.listing_id)?
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|event| {
            event["content"]
                .as_str()
                .and_then(|c| serde_json::from_str(c).ok())
        })
        .unwrap_or(Value::Null);
    let attachments = crate::attachments::shown(conn, &content, mount)?;
    let mut inputs_worst: Option<usize> = None;
    for attachment in &attachments {
        let level = attachment["scan"]["level"].as_str();
        if attachment["role"] == "skill" {
            scan["skill"] = attachment["scan"].clone();
        } else if let Some(rank) = level.and_then(|level| LEVELS.iter().position(|l| *l == level)) {
            inputs_worst = inputs_worst.max(Some(rank));
        }
    }
    if let Some(rank) = inputs_worst {
        scan["inputs"] = json!({ "level": LEVELS[rank] });
    }
    view["attachments"] = Value::Array(attachments);
    Ok(())
}

/// The scanner's levels, worst last.
const LEVELS: [&str; 3] = ["clean", "review", "high"];

fn add_full(
    conn: &Connection,
    task: &Task,
    view: &mut Value,
    mount: &str,
) -> kd_core::db::Result<()> {
    let listing = store::listing(conn, &task.listing_owner, &task.listing_d)?;
    let mut scan = json!({ "offer": task.scope_scan });
    if let Some(listing) = &listing {
        scan["listing"] = listing.scan.clone();
        view["title"] = listing.content["title"].clone();
    }
    if let Some(deliver) = &task.deliver_scan {
        scan["deliver"] = deliver.clone();
    }
    // The file the DELIVER names by hash, when this hub holds it (section 6b).
    let artifact = match task
        .deliver
        .as_ref()
        .and_then(|deliver| deliver["hash"].as_str())
    {
        Some(hash) => crate::artifacts::shown(conn, hash, mount)?,
        None => None,
    };
    if let Some(artifact) = &artifact {
        scan["artifact"] = artifact["scan"].clone();
    }
    view["artifact"] = artifact.unwrap_or(Value::Null);
    add_attachments(conn, task, view, &mut scan, mount)?;
    let worst = ["listing", "offer", "skill", "inputs", "deliver", "artifact"]
        .iter()
        .filter_map(|part| scan[*part]["level"].as_str())
        .filter_map(|level| LEVELS.iter().position(|known| *known == level))
        .max()
        .unwrap_or(0);
    scan["level"] = json!(LEVELS[worst]);
    view["scope"] = json!(task.scope);
    view["price"] = serde_json::from_str(&task.price).unwrap_or(Value::Null);
    view["currency"] = json!(task.currency);
    view["deadline"] = json!(task.deadline);
    view["deliver"] = task.deliver.clone().unwrap_or(Value::Null);
    view["rating"] = json!(task.rating);
    view["settlement"] = json!({
        "state": task.settlement,
        "paid": task.paid_id.as_ref().map(|id| json!({
            "id": id,
            "amount": task.paid_amount,
            "currency": task.paid_currency,
            "to": task.paid_to,
        })),
        "received": task.received_id,
    });
    view["scan"] = scan;
    let events: Vec<Value> = store::task_events(conn, &task.id)?
        .iter()
        .map(|text| serde_json::from_str(text).unwrap_or(Value::Null))
        .collect();
    view["events"] = Value::Array(events);
    Ok(())
}

fn template(kind: u16, tags: &[&[&str]], content: &str, why: &str) -> Value {
    json!({ "kind": kind, "tags": tags, "content": content, "why": why })
}

/// The templates `viewer` may sign next on the task.
///
/// # Errors
/// The database's error.
pub(crate) fn templates(
    conn: &Connection,
    task: &Task,
    viewer: &str,
) -> kd_core::db::Result<Vec<Value>> {
    let holds = |role_key: &str| -> kd_core::db::Result<bool> {
        Ok(!role_key.is_empty() && store::head(conn, role_key)? == viewer)
    };
    let agent = store::head(conn, &task.agent)?;
    let buyer = store::head(conn, &task.buyer)?;
    let owner = if task.kind == "wanted" {
        &task.buyer
    } else {
        &task.agent
    };
    let mut next = Vec::new();
    match task.status.as_str() {
        "offered" if holds(owner)? => next.push(template(
            ACCEPT,
            &[&["e", &task.id], &["p", &store::head(conn, &task.hirer)?]],
            "",
            "Accept this offer: you take the task on its scope, price and currency.",
        )),
        "accepted" if holds(&task.agent)? => {
            let reference = task.accept_id.as_deref().unwrap_or(&task.id);
            let why = if task.kind == "skill" {
                "Deliver the skill: put its \"hash\" (sha256) and \"url\" in the content."
            } else {
                "Deliver the work: content {} or {\"note\", \"hash\", \"url\"}."
            };
            next.push(template(
                DELIVER,
                &[&["e", reference], &["p", &buyer]],
                "{}",
                why,
            ));
        }
        "delivered" if holds(&task.buyer)? => next.push(template(
            COMPLETE,
            &[
                &["e", task.deliver_id.as_deref().unwrap_or_default()],
                &["p", &agent],
            ],
            "",
            "Confirm the delivery: the task is complete.",
        )),
        "completed" => completed(
            task,
            &agent,
            holds(task.completed_by.as_deref().unwrap_or_default())?,
            &mut next,
        ),
        _ => {}
    }
    if let (Some(paid_id), None) = (&task.paid_id, &task.received_id)
        && holds(task.paid_to.as_deref().unwrap_or_default())?
    {
        next.push(template(
            RECEIVED,
            &[
                &["e", paid_id],
                &["p", &buyer],
                &["amount", task.paid_amount.as_deref().unwrap_or_default()],
                &[
                    "currency",
                    task.paid_currency.as_deref().unwrap_or_default(),
                ],
            ],
            "",
            "Acknowledge the payment (change amount or currency if what arrived differs).",
        ));
    }
    Ok(next)
}

/// The buyer who completed: a RATING and a PAID, each until it is signed.
fn completed(task: &Task, agent: &str, is_completer: bool, next: &mut Vec<Value>) {
    if !is_completer {
        return;
    }
    let complete = task.complete_id.as_deref().unwrap_or_default();
    if task.rating_id.is_none() {
        next.push(template(
            RATING,
            &[&["e", complete], &["p", agent], &["rating", "5"]],
            "",
            "Rate the agent: the rating tag is \"1\" to \"5\", the content an optional text.",
        ));
    }
    if task.paid_id.is_none() {
        next.push(template(
            PAID,
            &[
                &["e", complete],
                &["p", agent],
                &["amount", &task.price],
                &["currency", &task.currency],
            ],
            "",
            "Record that you paid the agent (peer to peer: this hub moves no money).",
        ));
    }
}

/// `GET /api/v1/tasks/<offer id>?as=<pubkey>`: the full view, with `as`'s templates.
pub async fn get_task(
    State(ronin): State<Ronin>,
    Path(id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let viewer = query.get("as").cloned().filter(|key| !key.is_empty());
    let mount = ronin.mount.clone();
    let found = ronin
        .store
        .read(move |conn| {
            view(conn, &id, viewer.as_deref(), true, &mount)
                .map_err(kd_core::store::StoreError::from)
        })
        .await;
    match found {
        Ok(Some((task, next))) => answer(
            StatusCode::OK,
            &json!({ "ok": true, "task": task, "next": next }),
        ),
        Ok(None) => Refusal::not_found().into_response(),
        Err(error) => Refusal::server(error).into_response(),
    }
}

/// How many tasks the hub holds (tests and stats).
///
/// # Errors
/// The store's error.
pub async fn count(ronin: &Ronin) -> Result<i64, kd_core::store::StoreError> {
    ronin
        .store
        .read(|conn| store::task_count(conn).map_err(kd_core::store::StoreError::from))
        .await
}
