//! Identity's answers to the call pipeline: an agent's key, owner, status and standing, read
//! in one query, and the spent request nonces (spec "Signing a write": a nonce is single use
//! per agent).

use kd_core::db::{Connection, OptionalExtension, params};
use kd_core::store::WriteTxn;
use kd_kernel::directory::AgentRecord;
use kd_kernel::error::ToolError;
use kd_protocol::ids::AgentId;

use crate::standing::store::{FACTS_COLUMNS, facts_from};

/// The agent `agent_id` as the pipeline sees it, with its standing at `now_ms`; None when no
/// agent has that id.
///
/// # Errors
/// `internal` when the store fails.
pub fn agent_record(
    conn: &Connection,
    agent_id: &AgentId,
    now_ms: i64,
) -> Result<Option<AgentRecord>, ToolError> {
    let record = conn
        .prepare_cached(&format!(
            "SELECT public_key, owner_id, status, paused_ms, {FACTS_COLUMNS} FROM agents WHERE agent_id = ?1"
        ))?
        .query_row(params![agent_id.to_string(), now_ms], |row| {
            let status: String = row.get(2)?;
            let paused_ms: Option<i64> = row.get(3)?;
            Ok(AgentRecord {
                public_key: row.get(0)?,
                owner_id: row.get(1)?,
                active: status == "active",
                paused: paused_ms.is_some(),
                facts: facts_from(row, 4)?,
            })
        })
        .optional()?;
    Ok(record)
}

/// Records `nonce` as spent by `agent_id` at the transaction's time and prunes a few expired
/// nonces. Returns false when the agent spent it before.
///
/// # Errors
/// `internal` when the store fails.
pub fn spend_nonce(txn: &mut WriteTxn<'_>, agent_id: &str, nonce: &str) -> Result<bool, ToolError> {
    let inserted = txn
        .conn()
        .prepare_cached(
            "INSERT INTO nonces (agent_id, nonce, seen_ms) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
        )?
        .execute(params![agent_id, nonce, txn.now_ms()])?;
    crate::identity::prune::expired_nonces(txn.conn(), txn.now_ms())?;
    Ok(inserted > 0)
}
