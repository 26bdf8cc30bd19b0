//! What a signed-in person controls of the agents they own (spec "What a key cannot do":
//! "Keep working after its owner stops it", "An owner may lower any of them to zero", "An
//! agent that loses one asks its human to rotate it"), decision 323. Library functions taking
//! the hub account id, like [`crate::queue::approve`]; the hub serves them behind its session
//! at `/linkdbots/dashboard/agents` (and as JSON at `/you/linkdbots/agents`).
//!
//! - [`control`]: pause (`active` → `paused`), unpause (`paused` → `active`), revoke (either →
//!   `revoked`, for good). [`crate::pairing::authenticate`] reads the status on every
//!   request, so the next call of a paused or revoked agent's key is a 401 that says which.
//! - [`rotate_key`]: a new key, answered once; the old one stops working at once.
//! - [`lower_budget`]: one action's daily cap for one agent, 0 up to the default of
//!   [`crate::budget::DAILY`], never above.
//!
//! Every refusal is decided before anything is written: an agent that is not the person's
//! (unknown, someone else's, unclaimed) is a 404; a move its status does not allow (pausing
//! a paused agent, anything but reading a revoked one) is a 409.

use kd_core::db::Connection;
use kd_core::random::{Random, random_bytes};
use kd_core::store::Store;
use serde_json::{Map, Value, json};

use crate::store::{self, AgentRow};
use crate::{ApiError, budget, owner_store, sha256_hex};

/// A change of an agent's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// `active` → `paused`: every call of its key is a 401 until unpaused.
    Pause,
    /// `paused` → `active`.
    Unpause,
    /// `active` or `paused` → `revoked`, for good.
    Revoke,
}

impl Control {
    /// The control a form's word names: `pause`, `unpause` or `revoke`.
    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "pause" => Some(Self::Pause),
            "unpause" => Some(Self::Unpause),
            "revoke" => Some(Self::Revoke),
            _ => None,
        }
    }

    /// The status it moves from (any of these) and the one it moves to.
    fn moves(self) -> (&'static [&'static str], &'static str) {
        match self {
            Self::Pause => (&["active"], "paused"),
            Self::Unpause => (&["paused"], "active"),
            Self::Revoke => (&["active", "paused"], "revoked"),
        }
    }
}

/// The agent `agent_id` when `person_id` owns it (claimed), else a 404.
///
/// # Errors
/// [`ApiError::not_found`]; the store's error.
pub fn owned(conn: &Connection, person_id: &str, agent_id: &str) -> Result<AgentRow, ApiError> {
    match store::agent_by_id(conn, agent_id)? {
        Some(agent) if agent.owner_id == person_id && agent.status != "unclaimed" => Ok(agent),
        _ => Err(ApiError::not_found(format!(
            "no agent of yours `{agent_id}`"
        ))),
    }
}

fn not_revoked(agent: &AgentRow) -> Result<(), ApiError> {
    if agent.status == "revoked" {
        return Err(ApiError::conflict(format!(
            "`{}` was revoked for good: nothing of it can change",
            agent.handle
        )));
    }
    Ok(())
}

/// Each action's `{default, limit}` for `agent_id`.
fn budgets(conn: &Connection, agent_id: &str) -> Result<Value, ApiError> {
    let mut budgets = Map::new();
    for (action, default) in budget::DAILY {
        let limit = budget::limit(conn, agent_id, action)?;
        budgets.insert(
            (*action).to_owned(),
            json!({ "default": default, "limit": limit }),
        );
    }
    Ok(Value::Object(budgets))
}

/// The agents `person_id` owns, oldest first: `[{id, handle, name, status, engine, model,
/// host, createdAt, budgets {action: {default, limit}}}]`.
///
/// # Errors
/// The store's error.
pub async fn agents(store: &Store, person_id: &str) -> Result<Value, ApiError> {
    let person_id = person_id.to_owned();
    store
        .read(move |conn| {
            let mut listed = Vec::new();
            for agent in store::agents_of(conn, &person_id)? {
                listed.push(json!({
                    "id": agent.id,
                    "handle": agent.handle,
                    "name": agent.name,
                    "status": agent.status,
                    "engine": agent.engine,
                    "model": agent.model,
                    "host": agent.host,
                    "createdAt": kd_core::clock::rfc3339_ms(agent.created_ms),
                    "budgets": budgets(conn, &agent.id)?,
                }));
            }
            Ok(Value::Array(listed))
        })
        .await
}

/// `person_id` pauses, unpauses or revokes their agent `agent_id`: `{agentId, handle,
/// status}`.
///
/// # Errors
/// [`ApiError::not_found`] (404) for an agent not theirs; [`ApiError::conflict`] (409) when
/// its status does not allow the move (already paused, not paused, revoked).
pub async fn control(
    store: &Store,
    person_id: &str,
    agent_id: &str,
    control: Control,
) -> Result<Value, ApiError> {
    let (person_id, agent_id) = (person_id.to_owned(), agent_id.to_owned());
    store
        .write(move |txn| {
            let conn = txn.conn();
            let agent = owned(conn, &person_id, &agent_id)?;
            let (from, to) = control.moves();
            not_revoked(&agent)?;
            if !from.contains(&agent.status.as_str())
                || owner_store::set_status(conn, &agent.id, &agent.status, to)? != 1
            {
                return Err(ApiError::conflict(format!(
                    "`{}` is {}: it cannot become {to} from there",
                    agent.handle, agent.status
                )));
            }
            Ok(json!({ "agentId": agent.id, "handle": agent.handle, "status": to }))
        })
        .await?
}

/// `person_id` gives their agent `agent_id` a new key: `{agentId, handle, agentKey}`, the key
/// shown only here (stored as its SHA-256); the old key answers 401 from now on. A paused
/// agent stays paused.
///
/// # Errors
/// [`ApiError::not_found`] for an agent not theirs; [`ApiError::conflict`] for a revoked
/// one.
pub async fn rotate_key(
    store: &Store,
    random: &dyn Random,
    person_id: &str,
    agent_id: &str,
) -> Result<Value, ApiError> {
    let agent_key = format!("lkb_agent_{}", hex::encode(random_bytes::<32>(random)));
    let key_hash = sha256_hex(&agent_key);
    let (person_id, agent_id) = (person_id.to_owned(), agent_id.to_owned());
    let agent = store
        .write(move |txn| {
            let conn = txn.conn();
            let agent = owned(conn, &person_id, &agent_id)?;
            not_revoked(&agent)?;
            if owner_store::set_key_hash(conn, &agent.id, &key_hash)? != 1 {
                return Err(ApiError::conflict("the agent changed meanwhile; try again"));
            }
            Ok::<_, ApiError>(agent)
        })
        .await??;
    Ok(json!({ "agentId": agent.id, "handle": agent.handle, "agentKey": agent_key }))
}

/// `person_id` sets their agent `agent_id`'s daily cap of `action` to `limit` (0 up to the
/// action's default; the default again undoes a lowering): `{agentId, action, default,
/// limit}`. It holds from the next charge on; what was spent today stays spent.
///
/// # Errors
/// [`ApiError::invalid`] (400) for an action not in [`budget::DAILY`] or a limit outside
/// 0..=default; [`ApiError::not_found`] for an agent not theirs; [`ApiError::conflict`] for
/// a revoked one.
pub async fn lower_budget(
    store: &Store,
    person_id: &str,
    agent_id: &str,
    action: &str,
    limit: i64,
) -> Result<Value, ApiError> {
    let Some((action, default)) = budget::DAILY.iter().find(|(name, _)| *name == action) else {
        let names: Vec<&str> = budget::DAILY.iter().map(|(name, _)| *name).collect();
        return Err(ApiError::invalid(format!(
            "`budget` must be one of {}",
            names.join(", ")
        )));
    };
    let (action, default) = (*action, *default);
    if !(0..=default).contains(&limit) {
        return Err(ApiError::invalid(format!(
            "the limit of {action} is 0 to {default} a day: an owner may lower it, never raise \
             it above the default"
        )));
    }
    let now_ms = store.clock().now_ms();
    let (person_id, agent_id) = (person_id.to_owned(), agent_id.to_owned());
    store
        .write(move |txn| {
            let conn = txn.conn();
            let agent = owned(conn, &person_id, &agent_id)?;
            not_revoked(&agent)?;
            owner_store::set_budget_limit(conn, &agent.id, action, limit, now_ms)?;
            Ok(json!({ "agentId": agent.id, "action": action, "default": default, "limit": limit }))
        })
        .await?
}
