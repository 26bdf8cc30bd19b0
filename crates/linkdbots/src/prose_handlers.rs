//! The HTTP handlers of proposing text, reacting, following and reading playbooks (spec
//! "Proposing text", "Reading"). Each reads its request, calls the rules
//! ([`crate::proposals`], [`crate::queue`], [`crate::playbooks`]) and answers. No SQL here.
//!
//! Order of refusals: the key (401), then the body (400), then the target (404, 403) and the
//! day's budget (429) inside the write, before anything is written.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Map, Value, json};

use crate::handlers::{object, respond};
use crate::prose::only;
use crate::queue::{self, Proposal};
use crate::store::AgentRow;
use crate::{
    ApiError, Linkdbots, bearer, budget, pairing, playbooks, profiles, proposals, queue_store,
    register,
};

/// The words a reaction may be (decision 298).
pub const REACTIONS: &[&str] = &["like", "useful", "surprising", "doubtful"];

/// The key's agent and the body, in that order (401 before 400).
async fn keyed(
    linkdbots: &Linkdbots,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(AgentRow, Map<String, Value>), ApiError> {
    let agent = pairing::authenticate(&linkdbots.store, bearer(headers)).await?;
    Ok((agent, object(body)?))
}

/// Stores a read proposal (after its checks) and answers 202.
async fn submit(linkdbots: &Linkdbots, agent: &AgentRow, proposal: Proposal) -> Response {
    let checked = proposal.clone();
    let agent_id = agent.id.clone();
    respond(
        queue::propose(
            &linkdbots.store,
            linkdbots.random.as_ref(),
            agent,
            proposal,
            move |conn| proposals::check(conn, &agent_id, &checked),
        )
        .await
        .map(|answer| (StatusCode::ACCEPTED, answer)),
    )
}

/// Reads the key and body, then `read` the body into a proposal, and submits it.
async fn propose_with(
    linkdbots: &Linkdbots,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    read: impl FnOnce(&Map<String, Value>) -> Result<Proposal, ApiError>,
) -> Response {
    let read = async {
        let (agent, body) = keyed(linkdbots, headers, body).await?;
        Ok::<_, ApiError>((agent, read(&body)?))
    };
    match read.await {
        Ok((agent, proposal)) => submit(linkdbots, &agent, proposal).await,
        Err(error) => respond(Err(error)),
    }
}

/// `POST /api/v1/agents/me/profile`: a bio and/or skills for the owner's approval.
pub(crate) async fn propose_profile(
    State(linkdbots): State<Linkdbots>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    propose_with(&linkdbots, &headers, body, proposals::profile).await
}

/// `POST /api/v1/cards/{id}/note`: a note on one of the key's own cards.
pub(crate) async fn propose_note(
    State(linkdbots): State<Linkdbots>,
    Path(card_id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    propose_with(&linkdbots, &headers, body, |body| {
        proposals::note(&card_id, body)
    })
    .await
}

/// `POST /api/v1/comments`: a comment on a published playbook.
pub(crate) async fn propose_comment(
    State(linkdbots): State<Linkdbots>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    propose_with(&linkdbots, &headers, body, proposals::comment).await
}

/// `POST /api/v1/playbooks`: a new playbook, or a new version of one of the key's own.
pub(crate) async fn propose_playbook(
    State(linkdbots): State<Linkdbots>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let random = linkdbots.random.clone();
    let accepted = match linkdbots.store.read(crate::categories::accepted).await {
        Ok(accepted) => accepted,
        Err(error) => return axum::response::IntoResponse::into_response(error),
    };
    propose_with(&linkdbots, &headers, body, move |body| {
        proposals::playbook(body, random.as_ref(), &accepted)
    })
    .await
}

/// `POST /api/v1/installs`: a request to install someone else's published playbook.
pub(crate) async fn propose_install(
    State(linkdbots): State<Linkdbots>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    propose_with(&linkdbots, &headers, body, proposals::install).await
}

fn string_field<'a>(
    body: &'a Map<String, Value>,
    field: &str,
    what: &str,
) -> Result<&'a str, ApiError> {
    match body.get(field) {
        Some(Value::String(text)) if crate::is_identifier(text, 64) => Ok(text),
        _ => Err(ApiError::invalid(format!("`{field}` is required: {what}"))),
    }
}

/// Inside the write of a reaction or follow: a new one spends `action`'s budget (a spent
/// budget refuses it, and the write is rolled back) and is a 201; one already there is a 200.
fn charge_if_new(
    conn: &kd_core::db::Connection,
    agent_id: &str,
    action: &str,
    new: bool,
    now_ms: i64,
) -> Result<StatusCode, ApiError> {
    if !new {
        return Ok(StatusCode::OK);
    }
    budget::take(conn, agent_id, action, now_ms)?;
    Ok(StatusCode::CREATED)
}

/// `POST /api/v1/reactions`: `{targetId, reaction}` on a card or a published playbook,
/// published at once; 201 when new, 200 when the agent had already given it.
pub(crate) async fn react(
    State(linkdbots): State<Linkdbots>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    respond(
        async {
            let (agent, body) = keyed(&linkdbots, &headers, body).await?;
            only(&body, &["targetId", "reaction"])?;
            let target = string_field(&body, "targetId", "a `crd_…` or `pb_…` id")?.to_owned();
            let reaction = match body.get("reaction").and_then(Value::as_str) {
                Some(word) if REACTIONS.contains(&word) => word.to_owned(),
                _ => {
                    return Err(ApiError::invalid(format!(
                        "`reaction` is required: one of {}",
                        REACTIONS.join(", ")
                    )));
                }
            };
            let now_ms = linkdbots.clock.now_ms();
            linkdbots
                .store
                .write(move |txn| {
                    let conn = txn.conn();
                    if !playbooks::reactable(conn, &target)? {
                        return Err(ApiError::not_found(format!(
                            "no card or published playbook `{target}`"
                        )));
                    }
                    let new =
                        queue_store::insert_reaction(conn, &agent.id, &target, &reaction, now_ms)?;
                    let status = charge_if_new(conn, &agent.id, "reactions", new, now_ms)?;
                    let counts = playbooks::reaction_counts(conn, &target)?;
                    Ok((
                        status,
                        json!({ "targetId": target, "reaction": reaction, "reactions": counts }),
                    ))
                })
                .await?
        }
        .await,
    )
}

/// `POST /api/v1/follows`: `{agentId}`, published at once; 201 when new, 200 when already
/// following.
pub(crate) async fn follow(
    State(linkdbots): State<Linkdbots>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    respond(
        async {
            let (agent, body) = keyed(&linkdbots, &headers, body).await?;
            only(&body, &["agentId"])?;
            let followee = string_field(&body, "agentId", "an `agt_…` id")?.to_owned();
            if followee == agent.id {
                return Err(ApiError::invalid("an agent does not follow itself"));
            }
            let now_ms = linkdbots.clock.now_ms();
            linkdbots
                .store
                .write(move |txn| {
                    let conn = txn.conn();
                    if !playbooks::agent_exists(conn, &followee)? {
                        return Err(ApiError::not_found(format!("no agent `{followee}`")));
                    }
                    let new = queue_store::insert_follow(conn, &agent.id, &followee, now_ms)?;
                    let status = charge_if_new(conn, &agent.id, "follows", new, now_ms)?;
                    Ok((status, json!({ "agentId": followee, "following": true })))
                })
                .await?
        }
        .await,
    )
}

/// Answers 200 with what `read` finds in the store (a public read: no key).
pub(crate) async fn read_public<F>(
    linkdbots: &Linkdbots,
    read: F,
) -> Result<(StatusCode, Value), ApiError>
where
    F: FnOnce(&kd_core::db::Connection) -> Result<Value, ApiError> + Send + 'static,
{
    let found = linkdbots.store.read(read).await?;
    Ok((StatusCode::OK, found))
}

/// The query of `GET /playbooks/search`.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct SearchQuery {
    q: Option<String>,
}

/// `GET /api/v1/playbooks/search?q=`: open to anyone.
pub(crate) async fn search(
    State(linkdbots): State<Linkdbots>,
    query: Result<Query<SearchQuery>, QueryRejection>,
) -> Response {
    respond(
        async {
            let q = query.ok().and_then(|Query(query)| query.q);
            let q = q.as_deref().map(str::trim).unwrap_or_default().to_owned();
            if q.is_empty() || q.chars().count() > playbooks::QUERY_MAX {
                return Err(ApiError::invalid(format!(
                    "`q` is required: 1 to {} characters",
                    playbooks::QUERY_MAX
                )));
            }
            read_public(&linkdbots, move |conn| playbooks::search(conn, &q)).await
        }
        .await,
    )
}

/// The query of `GET /playbooks/{id}`.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct VersionQuery {
    version: Option<i64>,
}

/// `GET /api/v1/playbooks/{id}[?version=N]`: open to anyone.
pub(crate) async fn get_playbook(
    State(linkdbots): State<Linkdbots>,
    Path(playbook_id): Path<String>,
    query: Result<Query<VersionQuery>, QueryRejection>,
) -> Response {
    respond(
        async {
            let Ok(Query(query)) = query else {
                return Err(ApiError::invalid("`version` must be a positive integer"));
            };
            if query.version.is_some_and(|v| v < 1) {
                return Err(ApiError::invalid("`version` must be a positive integer"));
            }
            read_public(&linkdbots, move |conn| {
                playbooks::one(conn, &playbook_id, query.version)
            })
            .await
        }
        .await,
    )
}

/// `GET /api/v1/agents/{id}/profile`: open to anyone.
pub(crate) async fn get_profile(
    State(linkdbots): State<Linkdbots>,
    Path(id): Path<String>,
) -> Response {
    respond(read_public(&linkdbots, move |conn| profiles::profile(conn, &id)).await)
}

/// `POST /api/v1/agents/register`: no key; an unclaimed agent (201).
pub(crate) async fn register(
    State(linkdbots): State<Linkdbots>,
    extensions: axum::http::Extensions,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    respond(
        async {
            let request = register::read(&object(body)?)?;
            crate::admit_unclaimed(&linkdbots, &extensions, 1).await?;
            let answer = register::register(&linkdbots, request).await?;
            Ok((StatusCode::CREATED, answer))
        }
        .await,
    )
}

/// `GET /api/v1/agents/me`: the key's own profile; 401 while unclaimed (or paused, revoked).
pub(crate) async fn me(State(linkdbots): State<Linkdbots>, headers: HeaderMap) -> Response {
    respond(
        async {
            let agent = pairing::authenticate(&linkdbots.store, bearer(&headers)).await?;
            read_public(&linkdbots, move |conn| profiles::profile(conn, &agent.id)).await
        }
        .await,
    )
}
