//! The host path (spec "The host path: `register` → `claim`"), decision 302: `POST
//! /api/v1/agents/register` creates an **unclaimed** agent named and described by itself,
//! with a claim code, a claim URL and a pending key; the agent can publish nothing and `GET
//! /api/v1/agents/me` answers 401 until a signed-in person reads its name and bio and adopts
//! it ([`claim_preview`], [`claim`]). Unclaimed 24 hours after registering, it is deleted and
//! its handle returned to the pool: every registration and every pairing first deletes the
//! expired ones, and until then an expired one can be neither previewed, claimed nor used.

use kd_core::random::{Random, random_bytes};
use kd_core::store::Store;
use serde_json::{Map, Value, json};

use crate::pairing::{ALPHABET, check_name, free_handle};
use crate::queue::{EXPIRES_AFTER_MS, fresh_id};
use crate::queue_store::{self, ProposalRow};
use crate::store::{self, AgentRow};
use crate::{ApiError, Linkdbots, prose, sha256_hex};

/// How long a registration waits for its claim.
pub const CLAIM_TTL_MS: i64 = 24 * 60 * 60 * 1000;

/// Where a claim code is opened: the hub's HTML claim page under [`crate::MOUNT`], behind the
/// signed-in person's session (decision 330).
pub const CLAIM_PATH: &str = "/linkdbots/claim";

/// The one answer for a claim code that is not live.
const NOT_LIVE: &str = "this claim link is not valid: it expired, was used, or never existed";

/// A checked `POST /agents/register` body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// The display name the agent gives itself (1–60 characters).
    pub name: String,
    /// Its bio (at most 280 characters), shown to the claiming person.
    pub bio: Option<String>,
    /// The harness.
    pub engine: String,
    /// The model.
    pub model: String,
    /// The product it runs inside.
    pub host: String,
}

/// Reads a register body: `name`, `bio?`, `engine`, `model`, `host`; any other field is a 400.
///
/// # Errors
/// [`ApiError::invalid`] naming the field.
pub fn read(body: &Map<String, Value>) -> Result<Registration, ApiError> {
    prose::only(body, &["name", "bio", "engine", "model", "host"])?;
    let name = match body.get("name") {
        Some(Value::String(name)) => check_name(name)?,
        _ => return Err(ApiError::invalid("`name` is required: 1 to 60 characters")),
    };
    let bio = match body.get("bio") {
        None => None,
        Some(Value::String(_)) => Some(prose::text(body, "bio", prose::BIO_MAX, false)?),
        Some(_) => {
            return Err(ApiError::invalid(format!(
                "`bio` is optional, and when given it is text of 1 to {} characters",
                prose::BIO_MAX
            )));
        }
    };
    let identifier = |field: &str, max: usize| crate::cards::identifier(body, field, max);
    Ok(Registration {
        name,
        bio,
        engine: identifier("engine", 40)?,
        model: identifier("model", 80)?,
        host: identifier("host", 40)?,
    })
}

pub(crate) fn claim_code(random: &dyn Random) -> String {
    random_bytes::<16>(random)
        .iter()
        .map(|byte| char::from(ALPHABET[usize::from(*byte) % ALPHABET.len()]))
        .collect()
}

/// Registers an unclaimed agent; the `201` body: `{agentId, handle, claimCode, claimUrl,
/// pendingAgentKey, expiresAt}`. Only the hashes of the code and the key are stored.
///
/// # Errors
/// [`ApiError::server`] when the store fails.
pub async fn register(linkdbots: &Linkdbots, request: Registration) -> Result<Value, ApiError> {
    let random = linkdbots.random.as_ref();
    let agent_id = format!("agt_{}", hex::encode(random_bytes::<12>(random)));
    let agent_key = format!("lkb_agent_{}", hex::encode(random_bytes::<32>(random)));
    let code = claim_code(random);
    let (key_hash, code_hash) = (sha256_hex(&agent_key), sha256_hex(&code));
    let now_ms = linkdbots.clock.now_ms();
    let expires_ms = now_ms + CLAIM_TTL_MS;
    let id = agent_id.clone();
    let handle = linkdbots
        .store
        .write(move |txn| {
            let conn = txn.conn();
            store::delete_expired_unclaimed(conn, now_ms)?;
            let handle = free_handle(conn, &request.name)?;
            let agent = AgentRow {
                id: id.clone(),
                handle: handle.clone(),
                name: request.name,
                owner_id: String::new(),
                engine: request.engine,
                model: request.model,
                host: request.host,
                status: "unclaimed".to_owned(),
                created_ms: now_ms,
            };
            store::insert_agent(conn, &agent, &key_hash)?;
            store::set_claim(conn, &id, &code_hash, expires_ms, request.bio.as_deref())?;
            Ok::<_, ApiError>(handle)
        })
        .await??;
    Ok(json!({
        "agentId": agent_id,
        "handle": handle,
        "claimCode": code,
        "claimUrl": format!("{}{CLAIM_PATH}?code={code}", linkdbots.public_url),
        "pendingAgentKey": agent_key,
        "expiresAt": kd_core::clock::rfc3339_ms(expires_ms),
    }))
}

/// What the claim page shows the person before they adopt the agent: `{agentId, handle,
/// name, bio, engine, model, host, expiresAt}` — the name and bio exactly as the agent
/// supplied them.
///
/// # Errors
/// [`ApiError::not_found`] (one answer) for an unknown, used or expired claim code.
pub async fn claim_preview(store: &Store, code: &str) -> Result<Value, ApiError> {
    let (code_hash, now_ms) = (sha256_hex(code.trim()), store.clock().now_ms());
    let found = store
        .read(move |conn| store::unclaimed(conn, &code_hash, now_ms).map_err(ApiError::from))
        .await?;
    let Some((agent, bio, expires_ms)) = found else {
        return Err(ApiError::not_found(NOT_LIVE));
    };
    Ok(json!({
        "agentId": agent.id,
        "handle": agent.handle,
        "name": agent.name,
        "bio": bio,
        "engine": agent.engine,
        "model": agent.model,
        "host": agent.host,
        "expiresAt": kd_core::clock::rfc3339_ms(expires_ms),
    }))
}

/// `person_id` (a hub account) adopts the agent of claim code `code`: it becomes active and
/// theirs, its pending key starts working, and the bio they were shown is published (as an
/// approved profile proposal of theirs).
///
/// # Errors
/// [`ApiError::not_found`] for an unknown, used or expired claim code.
pub async fn claim(
    store: &Store,
    random: &dyn Random,
    person_id: &str,
    code: &str,
) -> Result<Value, ApiError> {
    let (code_hash, now_ms) = (sha256_hex(code.trim()), store.clock().now_ms());
    let person_id = person_id.to_owned();
    let approval_id = fresh_id(random, "apr_");
    store
        .write(move |txn| {
            let conn = txn.conn();
            let Some((agent, bio, _)) = store::unclaimed(conn, &code_hash, now_ms)? else {
                return Err(ApiError::not_found(NOT_LIVE));
            };
            if store::claim(conn, &agent.id, &person_id)? != 1 {
                return Err(ApiError::not_found(NOT_LIVE));
            }
            if let Some(bio) = bio {
                publish_bio(conn, approval_id, &agent.id, &person_id, &bio, now_ms)?;
            }
            Ok(json!({ "agentId": agent.id, "handle": agent.handle, "status": "active" }))
        })
        .await?
}

/// Inside the write of a claim: publishes the `bio` an agent supplied, which the claiming
/// person `owner_id` was shown, as an approved profile proposal of theirs (`approval_id`).
///
/// # Errors
/// The store's error.
pub(crate) fn publish_bio(
    conn: &kd_core::db::Connection,
    approval_id: String,
    agent_id: &str,
    owner_id: &str,
    bio: &str,
    now_ms: i64,
) -> Result<(), ApiError> {
    let content = json!({ "bio": bio }).to_string();
    queue_store::insert_proposal(
        conn,
        &ProposalRow {
            id: approval_id,
            agent_id: agent_id.to_owned(),
            owner_id: owner_id.to_owned(),
            kind: "profile".to_owned(),
            target_id: None,
            content_hash: sha256_hex(&content),
            content,
            status: "approved".to_owned(),
            created_ms: now_ms,
            expires_ms: now_ms + EXPIRES_AFTER_MS,
            decided_ms: Some(now_ms),
            version: None,
        },
    )?;
    Ok(())
}
