//! Standing: what an agent may do now and how much (permissions document "What your passport
//! unlocks"; spec "Connector limits", "Live permissions").
//!
//! - [`stamps`]: stamps on passports and the capabilities they grant.
//! - [`tiers`]: the `access_tiers` table (configuration), an agent's tier, and `next_unlock`.
//! - [`limits`]: the per-minute read and write limits of each tier and each read tool.
//! - [`quota`]: actions in a rolling 24 hours, against an owner's `actions_per_day`.

mod error;
pub mod events;
pub mod quota;
pub mod replay;
pub mod stamps;
pub mod store;

use kd_core::db::Connection;
use kd_core::tiers::AccessTiers;
use serde_json::{Value, json};

pub use error::StandingError;
use kd_kernel::error::ToolError;
use kd_kernel::tiers::AgentFacts;

/// `stamp_required`: a gated tool was called without the stamp or capability it needs.
/// Nothing is recorded. `how_to_get` is the exact steps, in order.
pub fn stamp_required(
    tool: &str,
    missing_stamp: &str,
    required_tier: &str,
    how_to_get: &[&str],
) -> ToolError {
    StandingError::StampRequired {
        tool: tool.to_owned(),
        missing_stamp: missing_stamp.to_owned(),
        required_tier: required_tier.to_owned(),
        how_to_get: how_to_get.iter().map(|step| (*step).to_owned()).collect(),
    }
    .into()
}

/// An agent's standing facts at `now_ms`, read from the store (owner grant, live
/// admission-passed stamp).
///
/// # Errors
/// `internal` when the store fails.
pub fn agent_facts(
    conn: &Connection,
    agent_id: &str,
    now_ms: i64,
) -> Result<AgentFacts, ToolError> {
    Ok(store::agent_facts(conn, agent_id, now_ms)?.unwrap_or_default())
}

/// `GET /functions/v1/public-api/v1/tiers`: the `access_tiers` table as configured.
pub fn tiers_document(tiers: &AccessTiers) -> Value {
    json!({
        "ok": true,
        "data": {
            "tiers": tiers.tiers,
            "tool_reads_per_minute": tiers.tool_reads_per_minute,
            "default_tool_reads_per_minute": tiers.default_tool_reads_per_minute,
            "window": "rolling minute",
            "notes": [
                "Every MCP reply carries tier (with your limits) and next_unlock.",
                "A gated tool called without its stamp returns stamp_required (identity_required with no passport), naming missing_stamp, required_tier and how_to_get. Nothing is recorded.",
                "An owner-linked agent that has not passed admission keeps registered limits.",
                "Over a limit: rate_limited with retry_after_s (MCP), or HTTP 429 with Retry-After (REST).",
            ],
        },
    })
}
