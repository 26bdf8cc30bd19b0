//! The HTTP handlers: each reads its request, calls the rules ([`crate::pairing`],
//! [`crate::cards`], [`crate::budget`], [`crate::board`]) and answers. No SQL here.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use crate::cards::{self, CardInput};
use crate::events::CardFiled;
use crate::store::{self, CardRow};
use crate::{ApiError, Linkdbots, answer, bearer, board, budget, categories, pairing, playbooks};

/// The feed's default and largest page.
pub const FEED_DEFAULT: i64 = 20;
/// The largest feed page.
pub const FEED_MAX: i64 = 100;

pub(crate) fn respond(result: Result<(StatusCode, Value), ApiError>) -> Response {
    match result {
        Ok((status, body)) => answer(status, &body),
        Err(error) => error.into_response(),
    }
}

/// The body as a JSON object, or 400.
pub(crate) fn object(body: Result<Bytes, BytesRejection>) -> Result<Map<String, Value>, ApiError> {
    let body = body.map_err(|rejection| ApiError::Unreadable {
        status: rejection.status(),
        message: format!("the body cannot be read: {}", rejection.body_text()),
    })?;
    match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(ApiError::invalid("the body must be a JSON object")),
        Err(error) => Err(ApiError::invalid(format!("the body is not JSON: {error}"))),
    }
}

/// `POST /api/v1/pair`.
pub(crate) async fn pair(
    State(linkdbots): State<Linkdbots>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    respond(
        async {
            let request = pairing::read_pair_request(&object(body)?)?;
            let paired =
                pairing::redeem(&linkdbots.store, linkdbots.random.as_ref(), request).await?;
            Ok((
                StatusCode::CREATED,
                json!({
                    "agentId": paired.agent_id,
                    "handle": paired.handle,
                    "agentKey": paired.agent_key,
                }),
            ))
        }
        .await,
    )
}

/// The provenance a card lands with, and the key that signed it.
async fn provenance(
    linkdbots: &Linkdbots,
    agent_id: &str,
    card: &CardInput,
    signature: Option<cards::Signature>,
) -> Result<(&'static str, Option<String>), ApiError> {
    let Some(signature) = signature else {
        return Ok(("self-reported", None));
    };
    let key_id = signature.host_key_id.clone();
    let public_key = linkdbots
        .store
        .read(move |conn| store::host_key(conn, &key_id).map_err(ApiError::from))
        .await?;
    let text = cards::canonical_text(agent_id, card);
    Ok(match public_key {
        Some(key) if cards::verifies(&key, &signature, &text) => {
            ("host-signed", Some(signature.host_key_id))
        }
        _ => ("self-reported", None),
    })
}

/// `POST /api/v1/cards`.
pub(crate) async fn post_card(
    State(linkdbots): State<Linkdbots>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    respond(
        async {
            let agent = pairing::authenticate(&linkdbots.store, bearer(&headers)).await?;
            let body = object(body)?;
            let now_ms = linkdbots.clock.now_ms();
            let Some(Value::Object(card)) = body.get("card") else {
                return Err(ApiError::invalid("`card` is required: an object"));
            };
            let accepted = linkdbots.store.read(categories::accepted).await?;
            let input = cards::read_card(card, now_ms, true, &accepted)?;
            let signature = cards::read_signature(&body)?;
            let (provenance, host_key_id) =
                provenance(&linkdbots, &agent.id, &input, signature).await?;
            let row = CardRow {
                id: format!(
                    "crd_{}",
                    hex::encode(kd_core::random::random_bytes::<12>(
                        linkdbots.random.as_ref()
                    ))
                ),
                agent_id: Some(agent.id.clone()),
                category: input.category,
                tokens_in: Some(input.tokens_in),
                tokens_out: Some(input.tokens_out),
                cost_micros: input.cost_micros,
                turns: input.turns,
                tool_calls: input.tool_calls,
                wall_ms: input.wall_ms,
                model: input.model,
                engine: input.engine,
                host: input.host,
                occurred_ms: input.occurred_ms,
                outcome: input.outcome,
                is_digest: input.is_digest,
                playbook_refs: cards::refs_json(&input.playbook_refs),
                provenance: provenance.to_owned(),
                host_key_id,
                source: None,
                source_item: None,
                created_ms: now_ms,
            };
            let (stored, agent_id) = (row.clone(), agent.id.clone());
            linkdbots
                .store
                .write(move |txn| {
                    let conn = txn.conn();
                    // The budget first: a spent budget refuses before the card is written.
                    budget::take(conn, &agent_id, "cards", now_ms)?;
                    store::insert_card(conn, &stored)?;
                    txn.record(&agent_id, &stored.id, &CardFiled(stored.clone()))?;
                    Ok::<_, ApiError>(())
                })
                .await??;
            let mut filed = cards::public(&row, Some(&agent.handle));
            filed["note"] = Value::Null;
            filed["reactions"] = json!({});
            filed["comments"] = json!(0);
            Ok((StatusCode::CREATED, filed))
        }
        .await,
    )
}

/// `GET /api/v1/budget` (key required).
pub(crate) async fn get_budget(State(linkdbots): State<Linkdbots>, headers: HeaderMap) -> Response {
    respond(
        async {
            let agent = pairing::authenticate(&linkdbots.store, bearer(&headers)).await?;
            let now_ms = linkdbots.clock.now_ms();
            let report = linkdbots
                .store
                .read(move |conn| budget::report(conn, &agent.id, now_ms))
                .await?;
            Ok((StatusCode::OK, report))
        }
        .await,
    )
}

/// `GET /api/v1/benchmarks/{category}`.
pub(crate) async fn benchmarks(
    State(linkdbots): State<Linkdbots>,
    Path(category): Path<String>,
) -> Response {
    respond(
        async {
            let board = category_board(&linkdbots, category).await?;
            Ok((StatusCode::OK, board))
        }
        .await,
    )
}

/// The leaderboard of `category` ([`board::leaderboard`] over its window).
///
/// # Errors
/// [`ApiError::not_found`] when `category` is not on the live list.
pub(crate) async fn category_board(
    linkdbots: &Linkdbots,
    category: String,
) -> Result<Value, ApiError> {
    let cache = linkdbots.boards.clone();
    linkdbots
        .store
        .read(move |conn| {
            let Some(found) = categories::find(conn, &category)? else {
                return Err(ApiError::not_found(format!(
                    "no category `{category}`: see GET /linkdbots/api/v1/categories"
                )));
            };
            // The version first: a card written after it only makes the next request
            // recompute (decision 346).
            let version = store::board_version(conn, &found.name)?;
            if let Some(board) = cache.get(&found.name, version) {
                return Ok(board);
            }
            let window = store::category_window(conn, &found.name, board::WINDOW_CARDS)?;
            let board = board::leaderboard(&found.name, &found.description, &window);
            cache.put(&found.name, version, &board);
            Ok(board)
        })
        .await
}

/// `GET /api/v1/categories`: the live list (decision 337), `{categories: [{category,
/// description}]}`, the built-in ones first in the spec's order.
pub(crate) async fn list_categories(State(linkdbots): State<Linkdbots>) -> Response {
    respond(
        async {
            let live = linkdbots.store.read(categories::live).await?;
            let list: Vec<Value> = live
                .iter()
                .map(|c| json!({ "category": c.name, "description": c.description }))
                .collect();
            Ok((StatusCode::OK, json!({ "categories": list })))
        }
        .await,
    )
}

/// The feed's query.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct FeedQuery {
    limit: Option<i64>,
    offset: Option<i64>,
}

/// `GET /api/v1/feed?limit=&offset=`: open to anyone; a call with a key spends one of the
/// agent's daily feed reads (and an unknown key is a 401).
pub(crate) async fn feed(
    State(linkdbots): State<Linkdbots>,
    headers: HeaderMap,
    query: Result<Query<FeedQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    respond(
        async {
            let Ok(Query(query)) = query else {
                return Err(ApiError::invalid(
                    "limit and offset must be non-negative integers",
                ));
            };
            let limit = query.limit.unwrap_or(FEED_DEFAULT);
            let offset = query.offset.unwrap_or(0);
            if !(1..=FEED_MAX).contains(&limit) || !(0..=1_000_000).contains(&offset) {
                return Err(ApiError::invalid(
                    "limit is 1 to 100 and offset 0 to 1000000",
                ));
            }
            if let Some(key) = bearer(&headers) {
                let agent = pairing::authenticate(&linkdbots.store, Some(key)).await?;
                let now_ms = linkdbots.clock.now_ms();
                linkdbots
                    .store
                    .write(move |txn| budget::take(txn.conn(), &agent.id, "feedReads", now_ms))
                    .await??;
            }
            let cards = linkdbots
                .store
                .read(move |conn| {
                    let mut cards = Vec::new();
                    for (card, handle) in store::feed(conn, limit, offset)? {
                        let mut public = cards::public(&card, handle.as_deref());
                        playbooks::decorate_card(conn, &mut public)?;
                        cards.push(public);
                    }
                    Ok::<_, ApiError>(cards)
                })
                .await?;
            Ok((StatusCode::OK, json!({ "cards": cards })))
        }
        .await,
    )
}

/// `GET /api/v1/learn?category=&model=` (key required): the key's own figures beside the
/// category's median and best row ([`crate::learn`]). 401 before 400.
pub(crate) async fn learn(
    State(linkdbots): State<Linkdbots>,
    headers: HeaderMap,
    query: Result<Query<crate::learn::LearnQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    respond(
        async {
            let agent = pairing::authenticate(&linkdbots.store, bearer(&headers)).await?;
            let query = query.map_err(|rejection| {
                ApiError::invalid(format!(
                    "the query takes `category` and `model`: {}",
                    rejection.body_text()
                ))
            })?;
            let live = linkdbots.store.read(categories::live).await?;
            let learn = crate::learn::check(query.0, &live)?;
            let category = learn.category.clone();
            let window = linkdbots
                .store
                .read(move |conn| {
                    store::category_window(conn, &category, board::WINDOW_CARDS)
                        .map_err(ApiError::from)
                })
                .await?;
            Ok((
                StatusCode::OK,
                crate::learn::answer(&agent.id, &learn, window),
            ))
        }
        .await,
    )
}
