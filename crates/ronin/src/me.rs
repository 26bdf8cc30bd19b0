//! `GET /api/v1/me?since=<cursor>` (Ronin "The key is the cookie: me"): what is new for the
//! calling key, authenticated by NIP-98.
//!
//! The `Authorization: Nostr <base64 event>` header carries a kind 27235 event whose `u` tag
//! is exactly the absolute URL called (the hub's public URL, the mount and the path, query
//! included), whose `method` tag is `GET`, with a `nonce`, empty content, and `created_at`
//! within 60 s of the hub clock, checked by the extractor every signed route shares
//! ([`crate::nip98`]); each auth event id works once ([`take_auth`]). Bad auth is
//! `unauthorized:` with 401.
//!
//! The cursor is the global log position the answer covers (`c<seq>`, opaque to callers).
//! The answer lists each task of the caller's lineage (as agent or buyer) with a chain event
//! after the cursor, once, oldest change first, at most [`PAGE`] (then `more: true`), plus
//! how many CLAIM and CERTIFY events named the caller; nothing new is `{"cursor": ...}` only.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kd_core::db::Connection;
use serde_json::{Value, json};
use std::collections::HashMap;

use crate::nip98::Nip98Get;
use crate::store::{self, Task};
use crate::{Refusal, Ronin, answer};
use kd_protocol::nostr::HTTP_AUTH_WINDOW_SECS;

/// The most tasks one answer lists.
pub const PAGE: usize = 20;
/// How long a taken auth event id is remembered, in milliseconds: past the last instant the
/// event can still be accepted. An event is valid while the server's whole second is within
/// [`HTTP_AUTH_WINDOW_SECS`] of its `created_at`, so one first seen at `t` (dated up to the
/// window ahead, the second rounded down) stays valid until just before `t + 2 × window + 1 s`;
/// the id is kept one second more than that (122 s for the 60 s window; issue 35: 120 s let
/// an event replayed at +120.6 s through).
pub const AUTH_KEEP_MS: i64 = (2 * HTTP_AUTH_WINDOW_SECS as i64 + 2) * 1000;

/// Reads `since`: absent or empty is the start; else a cursor this door gave.
pub(crate) fn since(query: &HashMap<String, String>) -> Result<i64, Refusal> {
    match query.get("since").map(String::as_str) {
        None | Some("") => Ok(0),
        Some(cursor) => cursor
            .strip_prefix('c')
            .and_then(|seq| seq.parse::<i64>().ok())
            .filter(|seq| *seq >= 0)
            .ok_or_else(|| Refusal::invalid("since must be a cursor from an earlier answer")),
    }
}

/// Takes an auth event id once (the first write of an authenticated request).
///
/// # Errors
/// `unauthorized: this auth event was used already`, or `error:` when the store fails.
pub(crate) async fn take_auth(ronin: &Ronin, id: String) -> Result<(), Refusal> {
    let now_ms = ronin.clock.now_ms();
    let taken = ronin
        .store
        .write(move |txn| store::take_auth(txn.conn(), &id, now_ms, AUTH_KEEP_MS))
        .await;
    match taken {
        Ok(Ok(true)) => Ok(()),
        Ok(Ok(false)) => Err(Refusal::unauthorized("this auth event was used already")),
        Ok(Err(error)) => Err(Refusal::server(error)),
        Err(error) => Err(Refusal::server(error)),
    }
}

/// What is new for `pubkey` after `since`, read off the async threads.
pub(crate) async fn read_news(ronin: &Ronin, pubkey: String, since: i64) -> Result<Value, Refusal> {
    ronin
        .store
        .read(move |conn| news(conn, &pubkey, since).map_err(kd_core::store::StoreError::from))
        .await
        .map_err(Refusal::server)
}

/// `GET /api/v1/me?since=` (the auth checked by [`Nip98Get`] first).
pub async fn me(
    State(ronin): State<Ronin>,
    Nip98Get(auth): Nip98Get,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let answered = async {
        let since = since(&query)?;
        take_auth(&ronin, auth.id).await?;
        read_news(&ronin, auth.pubkey, since).await
    };
    match answered.await {
        Ok(body) => answer(StatusCode::OK, &body),
        Err(refusal) => refusal.into_response(),
    }
}

/// What is new for `pubkey`'s lineage after `since` (also a callback's body: [`crate::callbacks`]).
pub(crate) fn news(conn: &Connection, pubkey: &str, since: i64) -> kd_core::db::Result<Value> {
    let until = store::latest_seq(conn)?;
    let keys = store::lineage(conn, pubkey)?;
    let limit = i64::try_from(PAGE + 1).unwrap_or(i64::MAX);
    let mut found: Vec<(String, i64)> = Vec::new();
    let mut other_events = 0;
    for key in &keys {
        found.extend(store::tasks_since(conn, key, since, until, limit)?);
        other_events += store::other_events_since(conn, key, since, until)?;
    }
    found.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    found.dedup_by(|a, b| a.0 == b.0);
    let more = found.len() > PAGE;
    found.truncate(PAGE);
    let cursor = match found.last() {
        Some((_, seq)) if more => *seq,
        _ => until,
    };
    let cursor = format!("c{cursor}");
    if found.is_empty() && other_events == 0 {
        return Ok(json!({ "cursor": cursor }));
    }
    let mut tasks = Vec::new();
    let mut next = Vec::new();
    for (id, _) in &found {
        if let Some(task) = store::task(conn, id)? {
            let item = item(conn, &task, pubkey)?;
            next.extend(item["next"].as_array().cloned().unwrap_or_default());
            tasks.push(item);
        }
    }
    let mut body = json!({
        "cursor": cursor,
        "new": { "tasks": tasks, "other_events": other_events },
        "next": next,
    });
    if more {
        body["more"] = json!(true);
    }
    Ok(body)
}

/// One task as `me` lists it, with the caller's role and templates.
fn item(conn: &Connection, task: &Task, pubkey: &str) -> kd_core::db::Result<Value> {
    let agent = store::same_lineage(conn, pubkey, &task.agent)?;
    let counterparty = store::head(conn, if agent { &task.buyer } else { &task.agent })?;
    let next = crate::tasks::templates(conn, task, pubkey)?;
    Ok(json!({
        "task": task.id,
        "status": task.status,
        "type": task.kind,
        "role": if agent { "agent" } else { "buyer" },
        "counterparty": counterparty,
        "listing": task.listing_id,
        "scope": task.scope,
        "price": serde_json::from_str::<Value>(&task.price).unwrap_or(Value::Null),
        "currency": task.currency,
        "deadline": task.deadline,
        "accepted_by_terms": task.by_terms,
        "settlement": task.settlement,
        "rated": task.rating.is_some(),
        "next": next,
    }))
}
