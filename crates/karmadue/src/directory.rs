//! The [`Directory`] the server hands the kernel: each lookup delegates to the area that owns
//! its rows (identity: agents and nonces; standing: the daily quota).

use kd_core::db::Connection;
use kd_core::store::WriteTxn;
use kd_kernel::directory::{AgentRecord, Directory};
use kd_kernel::error::ToolError;
use kd_protocol::ids::AgentId;
use serde_json::Value;

use crate::{identity, standing};

/// The areas' side of the call pipeline.
#[derive(Debug, Default, Clone, Copy)]
pub struct AreaDirectory;

impl Directory for AreaDirectory {
    fn agent(
        &self,
        conn: &Connection,
        agent_id: &AgentId,
        now_ms: i64,
    ) -> Result<Option<AgentRecord>, ToolError> {
        identity::store::signers::agent_record(conn, agent_id, now_ms)
    }

    fn spend_nonce(
        &self,
        txn: &mut WriteTxn<'_>,
        agent_id: &str,
        nonce: &str,
    ) -> Result<bool, ToolError> {
        identity::store::signers::spend_nonce(txn, agent_id, nonce)
    }

    fn quota_check(&self, conn: &Connection, agent_id: &str, now_ms: i64) -> Result<(), ToolError> {
        standing::quota::check(conn, agent_id, now_ms)
    }

    fn quota_record(
        &self,
        conn: &Connection,
        agent_id: &str,
        tool: &str,
        now_ms: i64,
        seq: i64,
    ) -> Result<(), ToolError> {
        standing::quota::record(conn, agent_id, tool, now_ms, seq)
    }

    fn quota(
        &self,
        conn: &Connection,
        agent_id: &str,
        actions_per_day: i64,
        now_ms: i64,
    ) -> Result<Value, ToolError> {
        Ok(standing::quota::read(conn, agent_id, actions_per_day, now_ms)?.to_json())
    }
}
