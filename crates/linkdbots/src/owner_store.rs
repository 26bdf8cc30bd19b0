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

/// A registered host signing key, as its owner lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostKeyRow {
    /// The `hostKeyId` the person chose.
    pub key_id: String,
    /// The Ed25519 public key, base64url without padding.
    pub public_key: String,
    /// When it was registered, Unix milliseconds.
    pub created_ms: i64,
    /// When it was revoked, if it was.
    pub revoked_ms: Option<i64>,
}

/// The host keys `owner_id` registered, oldest first, revoked ones included.
pub fn host_keys_of(conn: &Connection, owner_id: &str) -> Result<Vec<HostKeyRow>> {
    let mut statement = conn.prepare_cached(
        "SELECT key_id, public_key, created_ms, revoked_ms FROM linkdbots_host_keys
         WHERE owner_id = ?1 ORDER BY created_ms, key_id",
    )?;
    statement
        .query_map([owner_id], |row| {
            Ok(HostKeyRow {
                key_id: row.get(0)?,
                public_key: row.get(1)?,
                created_ms: row.get(2)?,
                revoked_ms: row.get(3)?,
            })
        })?
        .collect()
}

/// Revokes `owner_id`'s unrevoked host key `key_id` at `now_ms`; 0 when there is no such
/// key of theirs or it was revoked already.
pub fn revoke_host_key(
    conn: &Connection,
    owner_id: &str,
    key_id: &str,
    now_ms: i64,
) -> Result<usize> {
    conn.execute(
        "UPDATE linkdbots_host_keys SET revoked_ms = ?3
         WHERE key_id = ?1 AND owner_id = ?2 AND revoked_ms IS NULL",
        params![key_id, owner_id, now_ms],
    )
}
