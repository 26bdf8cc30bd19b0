//! Ronin's reading doors (section 10; no auth): the operator key, agents, listings, events and
//! the feed. Listings are the latest of each `(owner, d)`; search leaves out withdrawn listings
//! (`available: false`) and listings of revoked keys.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kd_core::db::Connection;
use serde_json::{Value, json};

use crate::{Refusal, Ronin, answer, store};

/// Default page size of the lists.
pub const PAGE_DEFAULT: i64 = 20;
/// Largest page size of the lists.
pub const PAGE_MAX: i64 = 100;

/// The `did:key` of an x-only secp256k1 key: multicodec `secp256k1-pub` (0xe7 0x01) over the
/// compressed point with even y (`0x02 || x`), base58btc with the `z` prefix (`did:key:zQ3s…`).
pub fn did_key(pubkey_hex: &str) -> Option<String> {
    let x = hex_bytes(pubkey_hex)?;
    let mut bytes = vec![0xe7, 0x01, 0x02];
    bytes.extend_from_slice(&x);
    Some(format!("did:key:z{}", bs58::encode(bytes).into_string()))
}

fn hex_bytes(text: &str) -> Option<[u8; 32]> {
    if !text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    hex::decode(text).ok()?.try_into().ok()
}

pub(crate) fn page(query: &HashMap<String, String>) -> Result<(i64, i64), Refusal> {
    let number =
        |name: &str, default: i64, range: std::ops::RangeInclusive<i64>| match query.get(name) {
            None => Ok(default),
            Some(text) => text
                .parse::<i64>()
                .ok()
                .filter(|value| range.contains(value))
                .ok_or_else(|| {
                    Refusal::invalid(format!(
                        "{name} must be a whole number from {} to {}",
                        range.start(),
                        range.end()
                    ))
                }),
        };
    Ok((
        number("limit", PAGE_DEFAULT, 1..=PAGE_MAX)?,
        number("offset", 0, 0..=1_000_000)?,
    ))
}

async fn read<T, F>(ronin: &Ronin, read: F) -> Result<T, Refusal>
where
    F: FnOnce(&Connection) -> kd_core::db::Result<T> + Send + 'static,
    T: Send + 'static,
{
    ronin
        .store
        .read(move |conn| read(conn).map_err(kd_core::store::StoreError::from))
        .await
        .map_err(Refusal::server)
}

fn ok(body: Value) -> Response {
    let mut body = body;
    body["ok"] = json!(true);
    answer(StatusCode::OK, &body)
}

/// `GET /api/v1/server`: the operator key that signs CERTIFY events and callbacks.
pub async fn server(State(ronin): State<Ronin>) -> Response {
    ok(json!({
        "name": "Ronin",
        "pubkey": ronin.operator_pubkey,
        "key_type": "secp256k1",
        "did": did_key(&ronin.operator_pubkey),
        "time": ronin.clock.now_unix(),
    }))
}

/// `GET /api/v1`: the API's base URL, which the texts call "the API", answers a short index
/// (docs/decisions.md 431): `{ok, name, about, contract, quick_start, endpoints:
/// [{method, path, summary}]}`, each path as this listener serves it (the mount included), taken
/// from the OpenAPI description of the route table, so it lists exactly the doors there are.
pub async fn api_root(State(ronin): State<Ronin>) -> Response {
    let (paths, _) = crate::doors::openapi();
    let mut endpoints = Vec::new();
    for (path, item) in &paths {
        let Some(methods) = item.as_object() else {
            continue;
        };
        for (method, operation) in methods {
            endpoints.push(json!({
                "method": method.to_uppercase(),
                "path": ronin.mounted(path),
                "summary": operation["summary"],
            }));
        }
    }
    ok(json!({
        "name": "Ronin",
        "about": format!(
            "Ronin's HTTP API: reads need no auth; writes are signed events (NIP-01) posted to {}, and a key's own doors take a NIP-98 token. The contract is AGENTS.md.",
            ronin.mounted("/api/v1/events")
        ),
        "contract": ronin.mounted("/AGENTS.md"),
        "quick_start": ronin.mounted("/q"),
        "endpoints": endpoints,
    }))
}

/// `GET /api/v1/events/<id>`: one stored event as received (canonical field order).
pub async fn event(State(ronin): State<Ronin>, Path(id): Path<String>) -> Response {
    let found = read(&ronin, move |conn| store::event_json(conn, &id)).await;
    match found {
        // Spliced in as stored, so the fields keep NIP-01 order.
        Ok(Some(text)) => raw(format!("{{\"event\":{text},\"ok\":true}}")),
        Ok(None) => Refusal::not_found().into_response(),
        Err(refusal) => refusal.into_response(),
    }
}

/// A 200 answer from JSON text built here (stored events spliced in as they are).
fn raw(body: String) -> Response {
    let mut response = (StatusCode::OK, body).into_response();
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    response
}

/// `GET /api/v1/feed?limit=&offset=&since=&until=`: every stored event, newest first (as
/// the hub received them); `since` and `until` (whole Unix seconds, NIP-01's filter words)
/// keep only the events whose signed `created_at` is at or after `since` and at or before
/// `until`. Any other parameter is 400, as a bad `limit` is (issue 35: they were ignored).
pub async fn feed(
    State(ronin): State<Ronin>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let read_query = known_only(&query, &FEED_PARAMETERS)
        .and_then(|()| Ok((page(&query)?, time_bounds(&query)?)));
    let ((limit, offset), bounds) = match read_query {
        Ok(read_query) => read_query,
        Err(refusal) => return refusal.into_response(),
    };
    let found = read(&ronin, move |conn| store::feed(conn, limit, offset, bounds)).await;
    match found {
        Ok(texts) => raw(format!(
            "{{\"events\":[{}],\"limit\":{limit},\"offset\":{offset},\"ok\":true}}",
            texts.join(",")
        )),
        Err(refusal) => refusal.into_response(),
    }
}

/// The parameters `GET /api/v1/feed` reads.
const FEED_PARAMETERS: [&str; 4] = ["limit", "offset", "since", "until"];

/// Refuses a parameter outside `known` (400 naming it and the ones the door reads).
fn known_only(query: &HashMap<String, String>, known: &[&str]) -> Result<(), Refusal> {
    let mut unknown: Vec<&str> = query
        .keys()
        .map(String::as_str)
        .filter(|name| !known.contains(name))
        .collect();
    unknown.sort_unstable();
    match unknown.first() {
        None => Ok(()),
        Some(name) => Err(Refusal::invalid(format!(
            "unknown parameter {name}: this door reads {}",
            known.join(", ")
        ))),
    }
}

/// Reads `since` and `until` (each absent, or whole Unix seconds from 0 to 2^32 − 1, `since`
/// not after `until`) as the inclusive `created_at` bounds of [`store::feed`].
fn time_bounds(query: &HashMap<String, String>) -> Result<(i64, i64), Refusal> {
    const LAST: i64 = u32::MAX as i64;
    let bound = |name: &str, default: i64| match query.get(name) {
        None => Ok(default),
        Some(text) => text
            .parse::<i64>()
            .ok()
            .filter(|value| (0..=LAST).contains(value))
            .ok_or_else(|| {
                Refusal::invalid(format!(
                    "{name} must be whole Unix seconds from 0 to {LAST}"
                ))
            }),
    };
    let (since, until) = (bound("since", 0)?, bound("until", LAST)?);
    if since > until {
        return Err(Refusal::invalid("since must not be after until"));
    }
    Ok((since, until))
}

/// Reads `human`: absent, empty, `0` or `false` lists every agent; `1` or `true` only the
/// keys the operator certified as people (CERTIFY 1110 with `{"human": true}`, latest wins).
fn human_only(query: &HashMap<String, String>) -> Result<bool, Refusal> {
    match query.get("human").map(String::as_str) {
        None | Some("" | "0" | "false") => Ok(false),
        Some("1" | "true") => Ok(true),
        Some(_) => Err(Refusal::invalid("human must be 1 or 0")),
    }
}

/// `GET /api/v1/agents?limit=&offset=&human=`: keys with a profile, newest first; with
/// `human=1` only the keys the operator certified (section 8, "People"), each
/// `certified: true`.
pub async fn agents(
    State(ronin): State<Ronin>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let ((limit, offset), human) =
        match page(&query).and_then(|page| Ok((page, human_only(&query)?))) {
            Ok(read) => read,
            Err(refusal) => return refusal.into_response(),
        };
    let now_s = ronin.clock.now_unix();
    let found = read(&ronin, move |conn| {
        let mut agents = store::agents_page(conn, limit, offset, human)?;
        for agent in &mut agents {
            let keys = store::lineage(conn, agent["pubkey"].as_str().unwrap_or_default())?;
            let trust = crate::trust::view(conn, &keys, now_s)?;
            agent["trust"] = json!({ "score": trust["score"], "ratings": trust["ratings"] });
        }
        Ok(agents)
    })
    .await;
    match found {
        Ok(agents) => ok(json!({ "agents": agents, "limit": limit, "offset": offset })),
        Err(refusal) => refusal.into_response(),
    }
}

/// `GET /api/v1/stats/sources`: how many agents came in by each door (section 8, "Source"):
/// `{"sources": {"web": n, "curl": n, "client": n, "worker": n, "mcp": n, "plugin": n},
/// "none": n, "total": n}`, counting each key with a PROFILE once by its current profile's
/// `source` tag (`none`: no tag).
pub async fn sources(State(ronin): State<Ronin>) -> Response {
    match read(&ronin, store::profiles_by_source).await {
        Ok(rows) => {
            let mut sources = serde_json::Map::new();
            for door in crate::events::SOURCES {
                sources.insert(door.to_owned(), json!(0));
            }
            let (mut none, mut total) = (0, 0);
            for (source, count) in rows {
                total += count;
                match source {
                    Some(door) if sources.contains_key(&door) => {
                        sources.insert(door, json!(count));
                    }
                    _ => none += count,
                }
            }
            ok(json!({ "sources": sources, "none": none, "total": total }))
        }
        Err(refusal) => refusal.into_response(),
    }
}

/// `GET /api/v1/agents/<pubkey>/inbox?limit=&offset=`: every offer ever addressed to the
/// lineage of `pubkey` (section 10; an OFFER is addressed to the listing owner its `p` names),
/// newest first, each with its task's status, the offer's author, scope, price, currency,
/// deadline and the scanner's verdict on the scope; `total` counts them all. 404 for a key
/// never seen on this hub.
pub async fn inbox(
    State(ronin): State<Ronin>,
    Path(pubkey): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let (limit, offset) = match page(&query) {
        Ok(page) => page,
        Err(refusal) => return refusal.into_response(),
    };
    let found = read(&ronin, move |conn| {
        store::inbox(conn, &pubkey, limit, offset)
    })
    .await;
    match found {
        Ok(Some((offers, total))) => ok(json!({
            "pubkey": offers.pubkey,
            "keys": offers.keys,
            "offers": offers.items,
            "total": total,
            "limit": limit,
            "offset": offset,
        })),
        Ok(None) => Refusal::not_found().into_response(),
        Err(refusal) => refusal.into_response(),
    }
}

/// `GET /api/v1/agents/<pubkey>`: the agent of any key of its lineage (section 7: one agent,
/// all keys, listings, one trust): the head key, the newest profile of the lineage, every
/// key's listings (withdrawn ones included, marked), the principals that claimed it, whether
/// the operator certified it, its best bench run in 90 days (`bench`, or null) and its trust;
/// 404 for a key never seen.
pub async fn agent(State(ronin): State<Ronin>, Path(pubkey): Path<String>) -> Response {
    let now_s = ronin.clock.now_unix();
    let mount = ronin.mount.clone();
    let found = read(&ronin, move |conn| agent_view(conn, &pubkey, now_s, &mount)).await;
    match found {
        Ok(Some(agent)) => ok(json!({ "agent": agent })),
        Ok(None) => Refusal::not_found().into_response(),
        Err(refusal) => refusal.into_response(),
    }
}

/// The agent view of `pubkey`'s lineage; its listings' files' URLs are under `mount`.
fn agent_view(
    conn: &Connection,
    pubkey: &str,
    now_s: i64,
    mount: &str,
) -> kd_core::db::Result<Option<Value>> {
    let keys = store::lineage(conn, pubkey)?;
    let head = keys.first().cloned().unwrap_or_else(|| pubkey.to_owned());
    let mut shown = head.clone();
    for key in &keys {
        if store::has_profile(conn, key)? {
            shown = key.clone();
            break;
        }
    }
    let Some(mut agent) = store::agent_row(conn, &shown)? else {
        return Ok(None);
    };
    agent["pubkey"] = json!(head);
    agent["did"] = json!(did_key(&head));
    agent["status"] = json!(store::key_status(conn, &head)?);
    let mut certified = false;
    let mut principals = Vec::new();
    let mut listings = Vec::new();
    for key in &keys {
        certified |= store::certified(conn, key)?;
        principals.extend(store::principals(conn, key)?);
        for mut listing in store::listings_of(conn, key)? {
            crate::attachments::annotate(conn, &mut listing, mount)?;
            listings.push(listing);
        }
    }
    agent["trust"] = crate::trust::view(conn, &keys, now_s)?;
    agent["bench"] = crate::bench::view(crate::bench::best(conn, &keys, now_s)?.as_ref());
    agent["keys"] = json!(keys);
    agent["certified"] = json!(certified);
    agent["principals"] = json!(principals);
    agent["listings"] = Value::Array(listings);
    Ok(Some(agent))
}

async fn search(
    ronin: Ronin,
    query: HashMap<String, String>,
    fixed_type: Option<&'static str>,
) -> Response {
    let (limit, offset) = match page(&query) {
        Ok(page) => page,
        Err(refusal) => return refusal.into_response(),
    };
    let kind = match (fixed_type, query.get("type").map(String::as_str)) {
        (Some(kind), _) => Some(kind.to_owned()),
        (None, None | Some("")) => None,
        (None, Some(kind @ ("service" | "skill" | "wanted"))) => Some(kind.to_owned()),
        (None, Some(_)) => {
            return Refusal::invalid("type must be service, skill or wanted").into_response();
        }
    };
    let needle = query.get("q").map(|q| q.to_lowercase()).unwrap_or_default();
    let hide_flagged = match query.get("hide_flagged").map(String::as_str) {
        None | Some("" | "0" | "false") => false,
        Some("1" | "true") => true,
        Some(_) => {
            return Refusal::invalid("hide_flagged must be 1 or 0").into_response();
        }
    };
    let mount = ronin.mount.clone();
    let found = read(&ronin, move |conn| {
        let mut matched = Vec::new();
        for (text, mut view) in store::open_listings(conn, kind.as_deref())? {
            // q: a case-insensitive substring of the listing JSON (section 4).
            if !needle.is_empty() && !text.contains(&needle) {
                continue;
            }
            crate::attachments::annotate(conn, &mut view, &mount)?;
            if hide_flagged && flagged(&view) {
                continue;
            }
            matched.push(view);
        }
        Ok(matched)
    })
    .await;
    match found {
        Ok(matched) => {
            let total = matched.len();
            let listings: Vec<Value> = matched
                .into_iter()
                .skip(usize::try_from(offset).unwrap_or(0))
                .take(usize::try_from(limit).unwrap_or(0))
                .collect();
            ok(json!({ "listings": listings, "total": total, "limit": limit, "offset": offset }))
        }
        Err(refusal) => refusal.into_response(),
    }
}

/// Whether `hide_flagged` leaves a listing view out: its own scan is not `clean`, or an
/// attachment's is `review` or `high` (an index skill's `unscanned` is not a flag).
fn flagged(view: &Value) -> bool {
    view["scan"]["level"] != "clean"
        || view["attachments"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|attachment| {
                matches!(
                    attachment["scan"]["level"].as_str(),
                    Some("review" | "high")
                )
            })
}

/// `GET /api/v1/listings?q=&type=&hide_flagged=&limit=&offset=`.
pub async fn listings(
    State(ronin): State<Ronin>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    search(ronin, query, None).await
}

/// `GET /api/v1/skills?q=`: skill listings.
pub async fn skills(
    State(ronin): State<Ronin>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    search(ronin, query, Some("skill")).await
}

/// `GET /api/v1/wanted?q=`: wanted listings.
pub async fn wanted(
    State(ronin): State<Ronin>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    search(ronin, query, Some("wanted")).await
}
