//! Standing's storage: the `stamps`, `capabilities` and `actions` tables (docs/architecture.md
//! "Storage modules"), plus the standing facts the hub reads with an agent's key.

use kd_core::db::{Connection, DbError, OptionalExtension, params};
use serde_json::Value;

use super::stamps::{Capability, Stamp};
use kd_kernel::tiers::AgentFacts;

/// The standing columns of an agent, for a query over `agents` (`?1` the agent id, `?2` now):
/// the owner's `actions_per_day` and the latest live admission-passed expiry. The hub reads
/// them in the same query as the agent's key. A named read model: it reads people's
/// `owner_grants` (docs/architecture.md "Storage modules").
pub const FACTS_COLUMNS: &str = "(SELECT actions_per_day FROM owner_grants WHERE owner_grants.agent_id = ?1),
    (SELECT MAX(COALESCE(expires_ms, 9223372036854775807)) FROM stamps
      WHERE stamps.agent_id = ?1 AND stamp = 'admission-passed' AND (expires_ms IS NULL OR expires_ms > ?2))";

/// [`AgentFacts`] from the two [`FACTS_COLUMNS`] starting at column `first`.
///
/// # Errors
/// The row's error when a column is not of its type.
pub fn facts_from(row: &kd_core::db::Row<'_>, first: usize) -> kd_core::db::Result<AgentFacts> {
    Ok(AgentFacts {
        actions_per_day: row.get(first)?,
        admission_until: row.get(first + 1)?,
    })
}

/// An agent's standing facts at `now_ms`; the default when there is no such agent.
///
/// # Errors
/// When the store fails.
pub fn agent_facts(
    conn: &Connection,
    agent_id: &str,
    now_ms: i64,
) -> Result<Option<AgentFacts>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {FACTS_COLUMNS} FROM agents WHERE agent_id = ?1"
    ))?
    .query_row(params![agent_id, now_ms], |row| facts_from(row, 0))
    .optional()
}

/// How many distinct people (signed up at least `min_age_ms` before stamping) hold a live
/// human-reviewed stamp on the agent, and how many distinct agents (that old when they
/// stamped) a live peer-reviewed one. A named read model: it reads the reviewers' `people`
/// and `agents` rows.
///
/// # Errors
/// When the store fails.
pub fn independent_reviews(
    conn: &Connection,
    agent_id: &str,
    now_ms: i64,
    min_age_ms: i64,
) -> Result<(i64, i64), DbError> {
    conn.prepare_cached(
        "SELECT
           (SELECT COUNT(DISTINCT s.issuer) FROM stamps s JOIN people p ON p.person_id = substr(s.issuer, 8)
             WHERE s.agent_id = ?1 AND s.stamp = 'human-reviewed' AND (s.expires_ms IS NULL OR s.expires_ms > ?2)
               AND s.issuer LIKE 'person:%' AND s.issued_ms - p.created_ms >= ?3),
           (SELECT COUNT(DISTINCT s.issuer) FROM stamps s JOIN agents r ON r.agent_id = s.issuer
             WHERE s.agent_id = ?1 AND s.stamp = 'peer-reviewed' AND (s.expires_ms IS NULL OR s.expires_ms > ?2)
               AND s.issued_ms - r.created_ms >= ?3)",
    )?
    .query_row(params![agent_id, now_ms, min_age_ms], |row| {
        Ok((row.get(0)?, row.get(1)?))
    })
}

/// How many distinct people have a human-reviewed stamp on some agent (the pool of people who
/// check agents' work; find_collaborators).
///
/// # Errors
/// When the store fails.
pub fn human_reviewer_count(conn: &Connection) -> Result<i64, DbError> {
    conn.prepare_cached(
        "SELECT COUNT(DISTINCT issuer) FROM stamps WHERE stamp = 'human-reviewed' AND issuer LIKE 'person:%'",
    )?
    .query_row([], |row| row.get(0))
}

/// Stores a stamp row (its `stamp.issued` event is `event_seq`).
///
/// # Errors
/// When the store fails.
pub fn insert_stamp(conn: &Connection, stamp: &Stamp) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO stamps (stamp_id, agent_id, stamp, issued_ms, expires_ms, issuer, credential_id, detail, event_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        stamp.stamp_id,
        stamp.agent_id,
        stamp.stamp,
        stamp.issued_ms,
        stamp.expires_ms,
        stamp.issuer,
        stamp.credential_id,
        stamp.detail.to_string(),
        stamp.event_seq
    ])?;
    Ok(())
}

/// The agent's stamps that are live at `now_ms`, oldest first.
///
/// # Errors
/// When the store fails.
pub fn live_stamps(conn: &Connection, agent_id: &str, now_ms: i64) -> Result<Vec<Stamp>, DbError> {
    let mut statement = conn.prepare_cached(
        "SELECT stamp_id, agent_id, stamp, issued_ms, expires_ms, issuer, credential_id, detail, event_seq
         FROM stamps WHERE agent_id = ?1 AND (expires_ms IS NULL OR expires_ms > ?2)
         ORDER BY issued_ms, stamp_id",
    )?;
    let rows = statement.query_map(params![agent_id, now_ms], |row| {
        let detail: String = row.get(7)?;
        Ok(Stamp {
            stamp_id: row.get(0)?,
            agent_id: row.get(1)?,
            stamp: row.get(2)?,
            issued_ms: row.get(3)?,
            expires_ms: row.get(4)?,
            issuer: row.get(5)?,
            credential_id: row.get(6)?,
            detail: serde_json::from_str(&detail).unwrap_or(Value::Null),
            event_seq: row.get(8)?,
        })
    })?;
    rows.collect()
}

/// Upserts a capability row.
///
/// # Errors
/// When the store fails.
pub fn upsert_capability(
    conn: &Connection,
    agent_id: &str,
    capability: &Capability,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO capabilities (agent_id, capability, granted_ms, expires_ms, source) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (agent_id, capability) DO UPDATE SET granted_ms = excluded.granted_ms,
             expires_ms = excluded.expires_ms, source = excluded.source",
    )?
    .execute(params![
        agent_id,
        capability.capability,
        capability.granted_ms,
        capability.expires_ms,
        capability.source
    ])?;
    Ok(())
}

/// The agent's capabilities that are live at `now_ms`, by name.
///
/// # Errors
/// When the store fails.
pub fn live_capabilities(
    conn: &Connection,
    agent_id: &str,
    now_ms: i64,
) -> Result<Vec<Capability>, DbError> {
    let mut statement = conn.prepare_cached(
        "SELECT capability, granted_ms, expires_ms, source FROM capabilities
         WHERE agent_id = ?1 AND expires_ms > ?2 ORDER BY capability",
    )?;
    let rows = statement.query_map(params![agent_id, now_ms], |row| {
        Ok(Capability {
            capability: row.get(0)?,
            granted_ms: row.get(1)?,
            expires_ms: row.get(2)?,
            source: row.get(3)?,
        })
    })?;
    rows.collect()
}

/// Whether the agent holds `capability` at `now_ms`.
///
/// # Errors
/// When the store fails.
pub fn has_capability(
    conn: &Connection,
    agent_id: &str,
    capability: &str,
    now_ms: i64,
) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM capabilities WHERE agent_id = ?1 AND capability = ?2 AND expires_ms > ?3",
        )?
        .query_row(params![agent_id, capability, now_ms], |_| Ok(()))
        .optional()?
        .is_some())
}

/// The agent's actions after `after_ms` and not before `since_ms`: (count, oldest).
///
/// # Errors
/// When the store fails.
pub fn actions_since(
    conn: &Connection,
    agent_id: &str,
    after_ms: i64,
    since_ms: i64,
) -> Result<(i64, Option<i64>), DbError> {
    conn.prepare_cached(
        "SELECT COUNT(*), MIN(at_ms) FROM actions WHERE agent_id = ?1 AND at_ms > ?2 AND at_ms >= ?3",
    )?
    .query_row(params![agent_id, after_ms, since_ms], |row| {
        Ok((row.get(0)?, row.get(1)?))
    })
}

/// The time of the agent's action number `offset` (from 0, oldest first) among those after
/// `after_ms` and not before `since_ms`.
///
/// # Errors
/// When the store fails.
pub fn action_at(
    conn: &Connection,
    agent_id: &str,
    after_ms: i64,
    since_ms: i64,
    offset: i64,
) -> Result<Option<i64>, DbError> {
    conn.prepare_cached(
        "SELECT at_ms FROM actions WHERE agent_id = ?1 AND at_ms > ?2 AND at_ms >= ?3
         ORDER BY at_ms LIMIT 1 OFFSET ?4",
    )?
    .query_row(params![agent_id, after_ms, since_ms, offset], |row| {
        row.get(0)
    })
    .optional()
}

/// Records one action.
///
/// # Errors
/// When the store fails.
pub fn insert_action(
    conn: &Connection,
    agent_id: &str,
    tool: &str,
    at_ms: i64,
    event_seq: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO actions (agent_id, at_ms, tool, event_seq) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![agent_id, at_ms, tool, event_seq])?;
    Ok(())
}
