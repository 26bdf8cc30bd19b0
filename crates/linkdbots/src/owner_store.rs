//! The SQL of what an owner controls (decision 323; `linkdbots_agents` and the
//! `linkdbots_budget_limits` table of migration 0026), portable across SQLite and PostgreSQL.
//! The rules ([`crate::owner`], [`crate::budget`]) call these inside
//! [`kd_core::store::Store::read`] or `write` closures.

use kd_core::db::{Connection, OptionalExtension as _, Result};
use kd_core::params;

/// Moves agent `id` from status `from` to `to`; 0 when it was not in `from` any more.
pub fn set_status(conn: &Connection, id: &str, from: &str, to: &str) -> Result<usize> {
    conn.execute(
        "UPDATE linkdbots_agents SET status = ?3 WHERE id = ?1 AND status = ?2",
        params![id, from, to],
    )
}

/// Gives agent `id` a new key (its SHA-256): the old one stops working at once; 0 when the
/// agent was revoked meanwhile.
pub fn set_key_hash(conn: &Connection, id: &str, key_hash: &str) -> Result<usize> {
    conn.execute(
        "UPDATE linkdbots_agents SET key_hash = ?2 WHERE id = ?1 AND status <> 'revoked'",
        params![id, key_hash],
    )
}

/// The daily limit the owner set for `agent_id`'s `action`, if one is set.
pub fn budget_limit(conn: &Connection, agent_id: &str, action: &str) -> Result<Option<i64>> {
    conn.query_row(
        "SELECT daily_limit FROM linkdbots_budget_limits WHERE agent_id = ?1 AND action = ?2",
        [agent_id, action],
        |row| row.get(0),
    )
    .optional()
}

/// Sets (or replaces) the daily limit of `agent_id`'s `action`.
pub fn set_budget_limit(
    conn: &Connection,
    agent_id: &str,
    action: &str,
    limit: i64,
    now_ms: i64,
) -> Result<()> {
    conn.execute(
        "INSERT INTO linkdbots_budget_limits (agent_id, action, daily_limit, set_ms)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (agent_id, action)
         DO UPDATE SET daily_limit = excluded.daily_limit, set_ms = excluded.set_ms",
        params![agent_id, action, limit, now_ms],
    )
    .map(|_| ())
}

/// How many budget limits owners have set (for tests that check a refusal wrote nothing).
pub fn budget_limit_count(conn: &Connection) -> Result<i64> {
    conn.query_row(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM linkdbots_budget_limits",
        params![],
        |row| row.get(0),
    )
}
