//! A registered agent's own signed calls about itself: `rename_agent`, `revoke_agent`,
//! `release_agent` and `get_history` (spec "rename_agent" … "get_history").
//!
//! Events: `agent.renamed`, `agent.revoked`, `agent.released`.

use crate::events::identity as events;
use kd_core::clock::rfc3339_ms;
use kd_core::eventlog;
use serde_json::{Value, json};

use super::register::check_free;
use super::{names, passport, require_agent, store};
use kd_kernel::Ctx;
use kd_kernel::error::ToolError;
use kd_kernel::input::{AGENT_ID_DOC, Alias, Text};
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
    arguments: Arguments::Typed(kd_kernel::input!(RenameAgent, &RENAME_AGENT_ALIASES)),
    handler: kd_kernel::typed!(RENAME_AGENT, rename_agent),
};

static RENAME_AGENT_ALIASES: [Alias; 1] = [Alias::new("label", "name")];

/// rename_agent's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RenameAgent {
    #[schemars(description = AGENT_ID_DOC)]
    #[allow(dead_code)]
    agent_id: String,
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
    arguments: Arguments::Typed(kd_kernel::input!(SigningAgent)),
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
    arguments: Arguments::Typed(kd_kernel::input!(SigningAgent)),
    handler: kd_kernel::typed!(RELEASE_AGENT, release_agent),
};

/// The arguments of a signed tool that takes nothing but the signing agent (revoke_agent,
/// release_agent).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SigningAgent {
    #[schemars(description = AGENT_ID_DOC)]
    #[allow(dead_code)]
    agent_id: String,
}

/// `get_history`.
pub static GET_HISTORY: Tool = Tool {
    name: "get_history",
    title: "Read your own history",
    description: "Read this agent's own hash-chained events. Sign the request. No linked human is required. The x-karmadue-agent header is optional when agent_id is in the arguments.",
    access: Access::Signed,
    hints: Hints::IDEMPOTENT_WRITE,
    untrusted: &[],
    arguments: Arguments::Typed(kd_kernel::input!(GetHistory)),
    handler: kd_kernel::typed!(GET_HISTORY, get_history),
};

/// get_history's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetHistory {
    #[schemars(description = AGENT_ID_DOC)]
    #[allow(dead_code)]
    agent_id: String,
    /// How many events to return, from 1 to 200. Default 50.
    limit: Option<i64>,
}

async fn rename_agent(ctx: Ctx, input: RenameAgent) -> Result<Value, ToolError> {
    let name = names::check_name(input.name.required_text_of(&["name", "label"])?, "name")?;
    let name_index = std::sync::Arc::clone(ctx.area::<std::sync::Arc<names::NameIndex>>()?);
    ctx.signed_write(move |txn, signed| {
        let id = signed.agent_id.to_string();
        let agent = require_agent(txn.conn(), &id, "agent_id")?;
        check_free(txn, &name_index, &name, &agent.platform, Some(&id), "")?;
        store::rename(txn.conn(), &id, &name, &names::fold(&name), txn.now_ms())?;
        names::reserve(txn, &name_index, &id, &name)?;
        let event = txn.record(signed.actor(), id.clone(), &events::AgentRenamed { from: agent.name.clone(), to: name.clone() })?;
        Ok(json!({ "agent_id": id, "handle": agent.handle, "name": name, "previous_name": agent.name, "event_seq": event.seq }))
    })
    .await
}

async fn revoke_agent(ctx: Ctx, _input: SigningAgent) -> Result<Value, ToolError> {
    let name_index = std::sync::Arc::clone(ctx.area::<std::sync::Arc<names::NameIndex>>()?);
    ctx.signed_write(move |txn, signed| {
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
        Ok(json!({
            "agent_id": id,
            "status": "revoked",
            "revoked_credentials": [agent.credential_id],
            "name_released": true,
            "event_seq": event.seq,
        }))
    })
    .await
}

async fn release_agent(ctx: Ctx, _input: SigningAgent) -> Result<Value, ToolError> {
    ctx.signed_write(move |txn, signed| {
        let id = signed.agent_id.to_string();
        let agent = require_agent(txn.conn(), &id, "agent_id")?;
        let Some(owner) = agent.owner_id else {
            return Ok(json!({
                "agent_id": id,
                "released": false,
                "independent": true,
                "message": "This agent has no owner; it is already independent.",
            }));
        };
        store::clear_owner(txn.conn(), &id, txn.now_ms())?;
        let by = match signed.proof {
            kd_kernel::Proof::Signature { .. } => "agent",
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
        Ok(json!({ "agent_id": id, "released": true, "independent": true, "event_seq": event.seq }))
    })
    .await
}

async fn get_history(ctx: Ctx, input: GetHistory) -> Result<Value, ToolError> {
    let limit = input.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) {
        return Err(ToolError::validation(
            "limit",
            "limit must be from 1 to 200",
        ));
    }
    let history = ctx.signed_write(move |txn, signed| {
        let id = signed.agent_id.to_string();
        let rows = eventlog::rows_for(txn.conn(), &id, limit)?;
        let events: Vec<Value> = rows
            .into_iter()
            .map(|row| {
                json!({
                    "seq": row.seq,
                    "kind": row.kind,
                    "actor": row.actor,
                    "subject": row.subject,
                    "payload": serde_json::from_str::<Value>(&row.payload).unwrap_or(Value::Null),
                    "created_at": rfc3339_ms(row.created_ms),
                    "prev_hash": row.prev_hash,
                    "row_hash": row.row_hash,
                })
            })
            .collect();
        Ok(json!({ "agent_id": id, "events": events, "count": events.len(), "order": "newest first" }))
    })
    .await?;
    with_proofs(&ctx, history).await
}

/// Adds to each event of a `get_history` answer its transparency log proof (decision 241):
/// `proof_url` (the inclusion proof route for its seq, always) and `proof` (its RFC 6962
/// inclusion proof under the latest checkpoint, or null until a checkpoint covers it), and
/// `checkpoint` (that checkpoint's signed note, or null) once for all of them. Read after the
/// signed read's transaction, off the writer.
async fn with_proofs(ctx: &Ctx, mut history: Value) -> Result<Value, ToolError> {
    let public_url = ctx.kernel.config.public_url.clone();
    let rows: Vec<(u64, String)> = history["events"]
        .as_array()
        .map(|events| {
            events
                .iter()
                .filter_map(|event| {
                    Some((
                        event["seq"].as_u64()?,
                        event["row_hash"].as_str()?.to_owned(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let (checkpoint, proofs) = if ctx.kernel.config.transparency {
        ctx.kernel
            .store
            .read(move |conn| {
                kd_core::tlog::serve::proofs_under_latest(conn, &rows).map_err(ToolError::internal)
            })
            .await?
    } else {
        (None, Vec::new())
    };
    if let Some(events) = history["events"].as_array_mut() {
        for (at, event) in events.iter_mut().enumerate() {
            let seq = event["seq"].as_u64().unwrap_or_default();
            event["proof_url"] = json!(format!("{public_url}/log/proof/inclusion?seq={seq}"));
            event["proof"] = proofs.get(at).cloned().flatten().unwrap_or(Value::Null);
        }
    }
    history["checkpoint"] = checkpoint.map_or(Value::Null, Value::String);
    Ok(history)
}
