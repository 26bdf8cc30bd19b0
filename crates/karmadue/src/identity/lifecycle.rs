//! A registered agent's own signed calls about itself: `rename_agent`, `revoke_agent`,
//! `release_agent` and `get_history` (spec "rename_agent" … "get_history").
//!
//! Events: `agent.renamed`, `agent.revoked`, `agent.released`.

use crate::identity::events;
use kd_core::clock::rfc3339_ms;
use kd_core::eventlog;
use serde::Serialize;
use serde_json::Value;

use super::register::check_free;
use super::{IdentityError, names, passport, require_agent, store};
use kd_kernel::Ctx;
use kd_kernel::error::ToolError;
use kd_kernel::input::{Alias, Text};
use kd_kernel::policy::{Connector, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Tool};
use schemars::JsonSchema;
use serde::Deserialize;

/// `rename_agent`.
pub static RENAME_AGENT: Tool = Tool {
    name: "rename_agent",
    title: "Rename this agent",
    description: "Change this agent's display label. The call is signed. The new name follows the reservation rules: every active label, including unclaimed agents, is reserved case-insensitively, including one-edit confusables.",
    access: Access::Signed,
    hints: Hints::IDEMPOTENT_WRITE,
    untrusted: &[],
    arguments: Arguments::Typed(
        kd_kernel::input!(RenameAgent, &RENAME_AGENT_ALIASES)
            .agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(RENAME_AGENT, rename_agent),
};

static RENAME_AGENT_ALIASES: [Alias; 1] = [Alias::new("label", "name")];

/// rename_agent's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RenameAgent {
    /// New display label. label is an alias.
    name: String,
}

/// `revoke_agent`.
pub static REVOKE_AGENT: Tool = Tool {
    name: "revoke_agent",
    title: "Revoke this agent",
    description: "The agent revokes itself. The call is signed. Status becomes revoked, active credentials are revoked, and an agent.revoked event is appended. Nothing is deleted.",
    access: Access::Signed,
    hints: Hints::DESTRUCTIVE,
    untrusted: &[],
    arguments: Arguments::Typed(
        kd_kernel::input!(SigningAgent).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    // With a leaked key burning the day's actions, the owner must still be able to revoke.
    policy: ToolPolicy::write(Connector::Never).exempt_from_quota(),
    handler: kd_kernel::typed!(REVOKE_AGENT, revoke_agent),
};

/// `release_agent`.
pub static RELEASE_AGENT: Tool = Tool {
    name: "release_agent",
    title: "Release this agent",
    description: "Release an agent. The agent can sign the release itself, including when it is claimed. It becomes independent and keeps its history and rating.",
    access: Access::Signed,
    hints: Hints::DESTRUCTIVE,
    untrusted: &[],
    arguments: Arguments::Typed(
        kd_kernel::input!(SigningAgent).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    // With a leaked key burning the day's actions, the owner must still be able to release.
    policy: ToolPolicy::write(Connector::Never).exempt_from_quota(),
    handler: kd_kernel::typed!(RELEASE_AGENT, release_agent),
};

/// The arguments of a signed tool that takes nothing but the signing agent (revoke_agent,
/// release_agent).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SigningAgent {}

/// `get_history`.
pub static GET_HISTORY: Tool = Tool {
    name: "get_history",
    title: "Read your own history",
    description: "Read this agent's own hash-chained events. Sign the request. No linked human is required. The x-karmadue-agent header is optional when agent_id is in the arguments.",
    access: Access::Signed,
    hints: Hints::IDEMPOTENT_WRITE,
    untrusted: &[],
    arguments: Arguments::Typed(
        kd_kernel::input!(GetHistory).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    // A signed read of the agent's own history, offered to every connection.
    policy: ToolPolicy::READ.on_connector(Connector::EveryConnection),
    handler: kd_kernel::typed!(GET_HISTORY, get_history),
};

/// get_history's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetHistory {
    /// How many events to return, from 1 to 200. Default 50.
    limit: Option<i64>,
}

/// `rename_agent`'s `data` (spec "rename_agent").
#[derive(Debug, Serialize)]
pub struct Renamed {
    /// The agent.
    pub agent_id: String,
    /// Its `kd_` handle (unchanged).
    pub handle: String,
    /// The new display name.
    pub name: String,
    /// The name it had.
    pub previous_name: String,
    /// The `agent.renamed` event's sequence number.
    pub event_seq: i64,
}

/// `revoke_agent`'s `data` (spec "revoke_agent").
#[derive(Debug, Serialize)]
pub struct Revoked {
    /// The agent.
    pub agent_id: String,
    /// Always `revoked`.
    pub status: &'static str,
    /// The passports ended (its current one).
    pub revoked_credentials: [String; 1],
    /// Always true: its name is free at once.
    pub name_released: bool,
    /// The `agent.revoked` event's sequence number.
    pub event_seq: i64,
}

/// `release_agent`'s `data` (spec "release_agent"): `event_seq` when an owner was released,
/// `message` when there was none.
#[derive(Debug, Serialize)]
pub struct Released {
    /// The agent.
    pub agent_id: String,
    /// Whether an owner link was ended.
    pub released: bool,
    /// Always true: the agent has no owner now.
    pub independent: bool,
    /// Why nothing was done (no owner); absent when released.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'static str>,
    /// The `agent.released` event's sequence number; absent when nothing was released.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_seq: Option<i64>,
}

/// One event of an agent's history, with its transparency proof (decision 241).
#[derive(Debug, Serialize)]
pub struct HistoryEvent {
    /// The log sequence number.
    pub seq: i64,
    /// The event kind (`agent.registered`, ...).
    pub kind: String,
    /// Who did it.
    pub actor: String,
    /// Whom it is about.
    pub subject: String,
    /// The event's payload as recorded (open-ended: each kind has its own).
    pub payload: Value,
    /// RFC 3339 (ms).
    pub created_at: String,
    /// The previous row's hash.
    pub prev_hash: String,
    /// This row's hash.
    pub row_hash: String,
    /// The inclusion proof route for its seq.
    pub proof_url: String,
    /// Its RFC 6962 inclusion proof under the latest checkpoint; null until one covers it.
    pub proof: Value,
}

/// `get_history`'s `data`: the signing agent's own events, newest first.
#[derive(Debug, Serialize)]
pub struct History {
    /// The agent.
    pub agent_id: String,
    /// Its events (at most `limit`).
    pub events: Vec<HistoryEvent>,
    /// How many events.
    pub count: usize,
    /// Always `newest first`.
    pub order: &'static str,
    /// The latest checkpoint's signed note; null without one (or without transparency).
    pub checkpoint: Option<String>,
}

kd_kernel::output!(Renamed, Revoked, Released, History);

/// `rename_agent`: the signing agent takes a free name.
///
/// # Errors
/// The name's [`IdentityError`] refusals, before anything is written; `internal`.
async fn rename_agent(ctx: Ctx, input: RenameAgent) -> Result<Renamed, IdentityError> {
    let name = names::check_name(input.name.required_text_of(&["name", "label"])?, "name")?;
    let name_index = std::sync::Arc::clone(ctx.area::<std::sync::Arc<names::NameIndex>>()?);
    ctx.signed_write(move |txn, signed| -> Result<_, IdentityError> {
        let id = signed.agent_id.to_string();
        let agent = require_agent(txn.conn(), &id, "agent_id")?;
        check_free(txn, &name_index, &name, &agent.platform, Some(&id), "")?;
        store::rename(txn.conn(), &id, &name, &names::fold(&name), txn.now_ms())?;
        names::reserve(txn, &name_index, &id, &name)?;
        let event = txn.record(
            signed.actor(),
            id.clone(),
            &events::AgentRenamed {
                from: agent.name.clone(),
                to: name.clone(),
            },
        )?;
        Ok(Renamed {
            agent_id: id,
            handle: agent.handle,
            name,
            previous_name: agent.name,
            event_seq: event.seq,
        })
    })
    .await
}

/// `revoke_agent`: the signing agent ends itself; its passport ends and its name is free.
///
/// # Errors
/// `internal` when the store fails.
async fn revoke_agent(ctx: Ctx, _input: SigningAgent) -> Result<Revoked, IdentityError> {
    let name_index = std::sync::Arc::clone(ctx.area::<std::sync::Arc<names::NameIndex>>()?);
    ctx.signed_write(move |txn, signed| -> Result<_, IdentityError> {
        let id = signed.agent_id.to_string();
        let agent = require_agent(txn.conn(), &id, "agent_id")?;
        let now = txn.now_ms();
        store::revoke(txn.conn(), &id, now)?;
        passport::end(txn.conn(), &agent.credential_id, "revoked", now)?;
        // Its name is free at once: the name index confirms every candidate against an
        // active row (names::clashes); this only counts the entries as stale.
        names::release(txn, &name_index)?;
        let event = txn.record(
            signed.actor(),
            id.clone(),
            &events::AgentRevoked {
                credential_id: agent.credential_id.clone(),
            },
        )?;
        Ok(Revoked {
            agent_id: id,
            status: "revoked",
            revoked_credentials: [agent.credential_id],
            name_released: true,
            event_seq: event.seq,
        })
    })
    .await
}

/// `release_agent`: the signing agent (or its owner) ends the owner link.
///
/// # Errors
/// `internal` when the store fails.
async fn release_agent(ctx: Ctx, _input: SigningAgent) -> Result<Released, IdentityError> {
    ctx.signed_write(move |txn, signed| -> Result<_, IdentityError> {
        let id = signed.agent_id.to_string();
        let agent = require_agent(txn.conn(), &id, "agent_id")?;
        let Some(owner) = agent.owner_id else {
            return Ok(Released {
                agent_id: id,
                released: false,
                independent: true,
                message: Some("This agent has no owner; it is already independent."),
                event_seq: None,
            });
        };
        store::clear_owner(txn.conn(), &id, txn.now_ms())?;
        let by = match signed.proof {
            kd_kernel::Proof::Signature { .. } | kd_kernel::Proof::Connector { .. } => "agent",
            kd_kernel::Proof::OwnerSession { .. } => "owner",
        };
        crate::people::store::delete_owner_grants(txn.conn(), &id)?;
        let event = txn.record(
            signed.actor(),
            id.clone(),
            &events::AgentReleased {
                previous_owner: owner,
                by: by.to_owned(),
            },
        )?;
        Ok(Released {
            agent_id: id,
            released: true,
            independent: true,
            message: None,
            event_seq: Some(event.seq),
        })
    })
    .await
}

/// `get_history`: the signing agent's own events, newest first, each with its transparency
/// proof.
///
/// # Errors
/// `validation` naming `limit` (outside 1..=200); `internal` when the store fails.
async fn get_history(ctx: Ctx, input: GetHistory) -> Result<History, IdentityError> {
    let limit = input.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) {
        return Err(IdentityError::HistoryLimit);
    }
    let (agent_id, rows) = ctx
        .signed_write(move |txn, signed| -> Result<_, IdentityError> {
            let id = signed.agent_id.to_string();
            let rows = eventlog::rows_for(txn.conn(), &id, limit)?;
            Ok((id, rows))
        })
        .await?;
    // The proofs are read after the signed read's transaction, off the writer.
    let hashes: Vec<(u64, String)> = rows
        .iter()
        .filter_map(|row| Some((u64::try_from(row.seq).ok()?, row.row_hash.clone())))
        .collect();
    let (checkpoint, proofs) = if ctx.kernel.config.transparency {
        ctx.kernel
            .store
            .read(move |conn| {
                kd_core::tlog::serve::proofs_under_latest(conn, &hashes).map_err(ToolError::from)
            })
            .await?
    } else {
        (None, Vec::new())
    };
    let public_url = &ctx.kernel.config.public_url;
    let events: Vec<HistoryEvent> = rows
        .into_iter()
        .zip(proofs.into_iter().chain(std::iter::repeat(None)))
        .map(|(row, proof)| HistoryEvent {
            proof_url: format!("{public_url}/log/proof/inclusion?seq={}", row.seq),
            proof: proof.unwrap_or(Value::Null),
            seq: row.seq,
            kind: row.kind,
            actor: row.actor,
            subject: row.subject,
            payload: serde_json::from_str::<Value>(&row.payload).unwrap_or(Value::Null),
            created_at: rfc3339_ms(row.created_ms),
            prev_hash: row.prev_hash,
            row_hash: row.row_hash,
        })
        .collect();
    Ok(History {
        agent_id,
        count: events.len(),
        events,
        order: "newest first",
        checkpoint,
    })
}
