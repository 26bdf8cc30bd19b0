//! Actions in a rolling 24 hours against an owner's `actions_per_day` (spec "Connector
//! limits"; connect-with-a-code "at most 40 actions a day").
//!
//! One action is one call to a write tool that the hub recorded (it appended at least one
//! event). Reads never count, and neither do refused calls: the row is written in the same
//! transaction as the write, so a refusal rolls it back with everything else. The check runs in
//! the single writer's transaction too, so the limit holds exactly under concurrency.

use kd_core::db::Connection;
use serde::Serialize;
use serde_json::Value;

use kd_kernel::error::ToolError;

use super::StandingError;

/// The window: 24 hours in milliseconds.
pub const WINDOW_MS: i64 = 86_400_000;

/// What `quota.what_counts` says.
pub const WHAT_COUNTS: &str = "One action is one call to a write tool that KarmaDue recorded. Reads (search, discover, check, verify, history) never count, and neither do refused calls.";

/// An agent's use of its daily actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// The owner's limit.
    pub actions_per_day: i64,
    /// Actions recorded in the last 24 hours.
    pub used_last_24h: i64,
    /// When the oldest of those leaves the window (Unix ms), if any.
    pub oldest_ms: Option<i64>,
}

impl Quota {
    /// Actions left now (never below 0).
    pub fn remaining(&self) -> i64 {
        (self.actions_per_day - self.used_last_24h).max(0)
    }

    /// The public shape (`get_standing`'s `quota`, a `rate_limited` refusal's `quota`).
    pub fn view(&self) -> QuotaView {
        QuotaView {
            actions_per_day: self.actions_per_day,
            used_last_24h: self.used_last_24h,
            remaining: self.remaining(),
            window: "rolling 24 hours",
            what_counts: WHAT_COUNTS,
        }
    }

    /// `{actions_per_day, used_last_24h, remaining, window, what_counts}`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.view()).unwrap_or(Value::Null)
    }
}

/// An agent's quota as answers show it (spec "Connector limits").
#[derive(Debug, Clone, Serialize)]
pub struct QuotaView {
    /// The owner's limit: actions in a rolling 24 hours.
    pub actions_per_day: i64,
    /// Actions recorded in the last 24 hours.
    pub used_last_24h: i64,
    /// Actions left now (never below 0).
    pub remaining: i64,
    /// Always `rolling 24 hours`.
    pub window: &'static str,
    /// What counts as an action ([`WHAT_COUNTS`]).
    pub what_counts: &'static str,
}

/// The agent's quota at `now_ms` under `actions_per_day`: its actions of the last 24 hours
/// since its owner granted the link (what it did before the person approved is not the
/// person's allowance).
///
/// # Errors
/// `internal` when the store fails.
pub fn read(
    conn: &Connection,
    agent_id: &str,
    actions_per_day: i64,
    now_ms: i64,
) -> Result<Quota, ToolError> {
    let since_ms = crate::people::store::granted_ms(conn, agent_id)?.unwrap_or(0);
    let (used, oldest) = super::store::actions_since(conn, agent_id, now_ms - WINDOW_MS, since_ms)?;
    Ok(Quota {
        actions_per_day,
        used_last_24h: used,
        oldest_ms: oldest,
    })
}

/// Refuses a write when the linked agent has no action left: `rate_limited` with
/// `retry_after_s` (when enough actions have left the window for one more) and the `quota`.
///
/// # Errors
/// The refusal, or `internal`.
pub fn check(conn: &Connection, agent_id: &str, now_ms: i64) -> Result<(), ToolError> {
    let Some(actions_per_day) =
        crate::people::grant(conn, agent_id)?.map(|grant| grant.actions_per_day)
    else {
        return Ok(());
    };
    let quota = read(conn, agent_id, actions_per_day, now_ms)?;
    if quota.remaining() > 0 {
        return Ok(());
    }
    // One action frees up when the (used − limit + 1)-th oldest leaves the window: the oldest
    // one unless the person lowered the limit below what was already used.
    let since_ms = crate::people::store::granted_ms(conn, agent_id)?.unwrap_or(0);
    let freeing = super::store::action_at(
        conn,
        agent_id,
        now_ms - WINDOW_MS,
        since_ms,
        quota.used_last_24h - quota.actions_per_day,
    )?;
    let leaves = freeing
        .or(quota.oldest_ms)
        .map_or(WINDOW_MS, |at| at + WINDOW_MS - now_ms);
    let retry_after_s = (leaves + 999).div_euclid(1000).max(1);
    Err(StandingError::QuotaSpent {
        quota,
        retry_after_s,
    }
    .into())
}

/// Records one action (inside the write's transaction).
///
/// # Errors
/// `internal` when the store fails.
pub fn record(
    conn: &Connection,
    agent_id: &str,
    tool: &str,
    at_ms: i64,
    event_seq: i64,
) -> Result<(), ToolError> {
    super::store::insert_action(conn, agent_id, tool, at_ms, event_seq)?;
    Ok(())
}
