//! What the call pipeline asks the areas about callers. The kernel knows no table: the server
//! implements [`Directory`] over the areas that own the rows (identity: agents, owners and
//! nonces; standing: stamps and the daily quota) and hands it to the [`crate::Kernel`].

use kd_core::db::Connection;
use kd_core::store::WriteTxn;
use kd_protocol::ids::AgentId;
use serde_json::Value;

use crate::error::ToolError;
use crate::tiers::AgentFacts;

/// An agent as the pipeline sees it when it resolves or re-checks a caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRecord {
    /// The agent's current public key, base64url of 32 bytes (as stored).
    pub public_key: String,
    /// The person who owns it, if any.
    pub owner_id: Option<String>,
    /// `status = 'active'` (not revoked).
    pub active: bool,
    /// Paused by its owner: its writes are refused, its reads are not.
    pub paused: bool,
    /// Its standing now (owner grant, live admission stamp).
    pub facts: AgentFacts,
}

/// The areas' answers to the pipeline. Every method runs on the connection or transaction it
/// is given (a read snapshot, or the writer's transaction so that a check sees every commit).
pub trait Directory: Send + Sync + std::fmt::Debug + 'static {
    /// The agent `agent_id`, or None when no agent has that id.
    ///
    /// # Errors
    /// `internal` when the store fails.
    fn agent(
        &self,
        conn: &Connection,
        agent_id: &AgentId,
        now_ms: i64,
    ) -> Result<Option<AgentRecord>, ToolError>;

    /// Records `nonce` as used by `agent_id` (and prunes a few expired ones). Returns false
    /// when it was used before (the caller answers `replay`).
    ///
    /// # Errors
    /// `internal` when the store fails.
    fn spend_nonce(
        &self,
        txn: &mut WriteTxn<'_>,
        agent_id: &str,
        nonce: &str,
    ) -> Result<bool, ToolError>;

    /// Refuses with `rate_limited` (and `quota` in the error) when the owner-linked agent has
    /// no daily action left.
    ///
    /// # Errors
    /// `rate_limited`, or `internal`.
    fn quota_check(&self, conn: &Connection, agent_id: &str, now_ms: i64) -> Result<(), ToolError>;

    /// Counts one action of `agent_id` by `tool`, the write that appended event `seq`.
    ///
    /// # Errors
    /// `internal` when the store fails.
    fn quota_record(
        &self,
        conn: &Connection,
        agent_id: &str,
        tool: &str,
        now_ms: i64,
        seq: i64,
    ) -> Result<(), ToolError>;

    /// The reply's `quota` object of an owner-linked agent allowed `actions_per_day`.
    ///
    /// # Errors
    /// `internal` when the store fails.
    fn quota(
        &self,
        conn: &Connection,
        agent_id: &str,
        actions_per_day: i64,
        now_ms: i64,
    ) -> Result<Value, ToolError>;
}
