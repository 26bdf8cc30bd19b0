//! People's storage: owner links (`owner_grants`, `owner_requests`), connect codes
//! (`connect_codes`, `code_attempts`), claims (`claim_requests`), findings, invitations,
//! capability offers and agent preferences (docs/architecture.md "Storage modules").
//! Accounts, sessions and the mail queue are stored by `kd_core::people` and
//! `kd_core::outbox`.

mod agent_tools;
mod findings;

pub use agent_tools::*;
pub use findings::*;

use kd_core::db::{Connection, DbError, OptionalExtension, params};

use super::{OwnedAgent, PendingRequest};

/// Deletes an agent's owner grant (release, remove).
///
/// # Errors
/// When the store fails.
pub fn delete_owner_grants(conn: &Connection, agent_id: &str) -> Result<(), DbError> {
    conn.prepare_cached("DELETE FROM owner_grants WHERE agent_id = ?1")?
        .execute([agent_id])?;
    Ok(())
}

/// When the agent's owner granted its link, if it has one.
///
/// # Errors
/// When the store fails.
pub fn granted_ms(conn: &Connection, agent_id: &str) -> Result<Option<i64>, DbError> {
    conn.prepare_cached("SELECT granted_ms FROM owner_grants WHERE agent_id = ?1")?
        .query_row([agent_id], |row| row.get(0))
        .optional()
}

/// An owner grant: (person, scopes JSON, USD a day, USD per action, actions a day).
pub type GrantRow = (String, String, i64, i64, i64);

/// The owner grant of an agent: (person, scopes JSON, USD a day, USD per action, actions a day).
///
/// # Errors
/// When the store fails.
pub fn grant_row(conn: &Connection, agent_id: &str) -> Result<Option<GrantRow>, DbError> {
    conn
        .prepare_cached(
            "SELECT person_id, scopes, spend_usd_per_day, spend_usd_per_action, actions_per_day FROM owner_grants WHERE agent_id = ?1",
        )?
        .query_row([agent_id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?)))
        .optional()
}

/// How many connect codes a person minted after `after_ms`, and the oldest of them.
///
/// # Errors
/// When the store fails.
pub fn codes_since(
    conn: &Connection,
    person_id: &str,
    after_ms: i64,
) -> Result<(i64, Option<i64>), DbError> {
    conn
                .prepare_cached("SELECT COUNT(*), MIN(created_ms) FROM connect_codes WHERE person_id = ?1 AND created_ms > ?2")?
                .query_row(params![person_id, after_ms], |row| Ok((row.get(0)?, row.get(1)?)))
}

/// Stores a connect code's SHA-256.
///
/// # Errors
/// When the store fails.
pub fn insert_connect_code(
    conn: &Connection,
    hashed: &str,
    person_id: &str,
    now: i64,
    expires_ms: i64,
) -> Result<usize, DbError> {
    conn
                .prepare_cached("INSERT INTO connect_codes (code_sha256, person_id, created_ms, expires_ms) VALUES (?1, ?2, ?3, ?4)")?
                .execute(params![hashed, person_id, now, expires_ms])
}

/// An agent's code attempts in an hour and whether its refusal was logged.
///
/// # Errors
/// When the store fails.
pub fn code_attempts(
    conn: &Connection,
    agent_id: &str,
    hour: i64,
) -> Result<Option<(i64, i64)>, DbError> {
    conn.prepare_cached(
        "SELECT attempts, refusal_logged FROM code_attempts WHERE agent_id = ?1 AND hour = ?2",
    )?
    .query_row(params![agent_id, hour], |row| {
        Ok((row.get(0)?, row.get(1)?))
    })
    .optional()
}

/// Marks an hour's refusal as logged.
///
/// # Errors
/// When the store fails.
pub fn mark_refusal_logged(conn: &Connection, agent_id: &str, hour: i64) -> Result<usize, DbError> {
    conn.prepare_cached(
        "UPDATE code_attempts SET refusal_logged = 1 WHERE agent_id = ?1 AND hour = ?2",
    )?
    .execute(params![agent_id, hour])
}

/// Counts one code attempt in an hour.
///
/// # Errors
/// When the store fails.
pub fn count_code_attempt(conn: &Connection, agent_id: &str, hour: i64) -> Result<usize, DbError> {
    conn
                    .prepare_cached(
                        "INSERT INTO code_attempts (agent_id, hour, attempts) VALUES (?1, ?2, 1)
                         ON CONFLICT (agent_id, hour) DO UPDATE SET attempts = code_attempts.attempts + 1",
                    )?
                    .execute(params![agent_id, hour])
}

/// Forgets code attempts of hours before `before_hour`.
///
/// # Errors
/// When the store fails.
pub fn forget_code_attempts_before(conn: &Connection, before_hour: i64) -> Result<usize, DbError> {
    conn.prepare_cached("DELETE FROM code_attempts WHERE hour < ?1")?
        .execute([before_hour])
}

/// The person of an unused, unexpired connect code.
///
/// # Errors
/// When the store fails.
pub fn connect_code_person(
    conn: &Connection,
    hashed: &str,
    now: i64,
) -> Result<Option<String>, DbError> {
    conn
                    .prepare_cached(
                        "SELECT person_id FROM connect_codes WHERE code_sha256 = ?1 AND used_ms IS NULL AND expires_ms > ?2",
                    )?
                    .query_row(params![hashed, now], |row| row.get(0))
                    .optional()
}

/// Marks a connect code used.
///
/// # Errors
/// When the store fails.
pub fn use_connect_code(conn: &Connection, hashed: &str, now: i64) -> Result<usize, DbError> {
    conn.prepare_cached("UPDATE connect_codes SET used_ms = ?2 WHERE code_sha256 = ?1")?
        .execute(params![hashed, now])
}

/// Records a claim request.
///
/// # Errors
/// When the store fails.
pub fn insert_claim_request(
    conn: &Connection,
    claim_id: &str,
    agent_id: &str,
    email: &str,
    now: i64,
) -> Result<usize, DbError> {
    conn
                .prepare_cached("INSERT INTO claim_requests (claim_id, agent_id, email, created_ms) VALUES (?1, ?2, ?3, ?4)")?
                .execute(params![claim_id, agent_id, email, now])
}

/// Files a pending owner request that came with a claim.
///
/// # Errors
/// When the store fails.
pub fn insert_claim_owner_request(
    conn: &Connection,
    claim_id: &str,
    agent_id: &str,
    person_id: &str,
    pitch: &str,
    now: i64,
) -> Result<usize, DbError> {
    conn
                    .prepare_cached(
                        "INSERT INTO owner_requests (request_id, agent_id, person_id, via, pitch, status, created_ms)
                         VALUES (?1, ?2, ?3, 'claim', ?4, 'pending', ?5)",
                    )?
                    .execute(params![claim_id, agent_id, person_id, pitch, now])
}

/// Files a pending owner request.
///
/// # Errors
/// When the store fails.
pub fn insert_owner_request(
    conn: &Connection,
    request_id: &str,
    agent_id: &str,
    person_id: &str,
    via: &str,
    now_ms: i64,
) -> Result<usize, DbError> {
    conn
        .prepare_cached(
            "INSERT INTO owner_requests (request_id, agent_id, person_id, via, status, created_ms) VALUES (?1, ?2, ?3, ?4, 'pending', ?5)",
        )?
        .execute(params![request_id, agent_id, person_id, via, now_ms])
}

/// The actions a day `person_id` grants `agent_id`, when the person owns it. A named read model: it checks the owner on `agents`.
///
/// # Errors
/// When the store fails.
pub fn owned_grant_actions(
    conn: &Connection,
    agent_id: &str,
    person_id: &str,
) -> Result<Option<i64>, DbError> {
    conn.prepare_cached(
        "SELECT g.actions_per_day FROM owner_grants g JOIN agents a ON a.agent_id = g.agent_id
                     WHERE g.agent_id = ?1 AND g.person_id = ?2 AND a.owner_id = ?2",
    )?
    .query_row(params![agent_id, person_id], |row| row.get(0))
    .optional()
}

/// Changes an owner grant's actions a day.
///
/// # Errors
/// When the store fails.
pub fn set_grant_actions(
    conn: &Connection,
    agent_id: &str,
    actions_per_day: i64,
) -> Result<usize, DbError> {
    conn.prepare_cached("UPDATE owner_grants SET actions_per_day = ?2 WHERE agent_id = ?1")?
        .execute(params![agent_id, actions_per_day])
}

/// The agent of a pending request addressed to a person.
///
/// # Errors
/// When the store fails.
pub fn pending_request_agent(
    conn: &Connection,
    request_id: &str,
    person_id: &str,
) -> Result<Option<String>, DbError> {
    conn
                .prepare_cached(
                    "SELECT agent_id FROM owner_requests WHERE request_id = ?1 AND person_id = ?2 AND status = 'pending'",
                )?
                .query_row(params![request_id, person_id], |row| row.get(0))
                .optional()
}

/// Marks a request declined.
///
/// # Errors
/// When the store fails.
pub fn decline_request(conn: &Connection, request_id: &str, now: i64) -> Result<usize, DbError> {
    conn.prepare_cached(
        "UPDATE owner_requests SET status = 'declined', decided_ms = ?2 WHERE request_id = ?1",
    )?
    .execute(params![request_id, now])
}

/// A person's agents, newest link first, with their grants. A named read model over `agents`.
///
/// # Errors
/// When the store fails.
pub fn owned_agents(conn: &Connection, person_id: &str) -> Result<Vec<OwnedAgent>, DbError> {
    conn
                .prepare_cached(
                    "SELECT a.agent_id, a.handle, a.name, a.status, a.paused_ms, g.actions_per_day
                     FROM agents a LEFT JOIN owner_grants g ON g.agent_id = a.agent_id AND g.person_id = a.owner_id
                     WHERE a.owner_id = ?1 ORDER BY a.updated_ms DESC",
                )?
                .query_map([&person_id], |row| {
                    Ok(OwnedAgent {
                        agent_id: row.get(0)?,
                        handle: row.get(1)?,
                        name: row.get(2)?,
                        status: row.get(3)?,
                        paused: row.get::<Option<i64>>(4)?.is_some(),
                        actions_per_day: row.get(5)?,
                    })
                })?
                .collect()
}

/// The pending requests addressed to a person, oldest first. A named read model over `agents`.
///
/// # Errors
/// When the store fails.
pub fn pending_requests(
    conn: &Connection,
    person_id: &str,
) -> Result<Vec<PendingRequest>, DbError> {
    conn
                .prepare_cached(
                    "SELECT r.request_id, r.agent_id, a.handle, a.name, r.via, r.created_ms, r.pitch
                     FROM owner_requests r JOIN agents a ON a.agent_id = r.agent_id
                     WHERE r.person_id = ?1 AND r.status = 'pending' ORDER BY r.created_ms, r.request_id",
                )?
                .query_map([&person_id], |row| {
                    Ok(PendingRequest {
                        request_id: row.get(0)?,
                        agent_id: row.get(1)?,
                        handle: row.get(2)?,
                        name: row.get(3)?,
                        via: row.get(4)?,
                        created_ms: row.get(5)?,
                        pitch: row.get(6)?,
                    })
                })?
                .collect()
}

/// A pending request addressed to a person. A named read model over `agents`.
///
/// # Errors
/// When the store fails.
pub fn pending_request(
    conn: &Connection,
    request_id: &str,
    person_id: &str,
) -> Result<Option<PendingRequest>, DbError> {
    conn.prepare_cached(
                "SELECT r.request_id, a.name, a.handle, r.via, r.pitch, r.agent_id, r.created_ms FROM owner_requests r
                 JOIN agents a ON a.agent_id = r.agent_id
                 WHERE r.request_id = ?1 AND r.person_id = ?2 AND r.status = 'pending'",
            )?
            .query_row(params![request_id, person_id], |row| {
                Ok(PendingRequest {
                    request_id: row.get(0)?,
                    name: row.get(1)?,
                    handle: row.get(2)?,
                    via: row.get(3)?,
                    pitch: row.get(4)?,
                    agent_id: row.get(5)?,
                    created_ms: row.get(6)?,
                })
            })
            .optional()
}

/// How many claim requests `column` (`agent_id` or `email`) = `key` made after `after_ms`,
/// and the oldest of them.
///
/// # Errors
/// When the store fails.
pub fn claims_since(
    conn: &Connection,
    column: &str,
    key: &str,
    after_ms: i64,
) -> Result<(i64, Option<i64>), DbError> {
    let sql = match column {
        "email" => {
            "SELECT COUNT(*), MIN(created_ms) FROM claim_requests WHERE email = ?1 AND created_ms > ?2"
        }
        _ => {
            "SELECT COUNT(*), MIN(created_ms) FROM claim_requests WHERE agent_id = ?1 AND created_ms > ?2"
        }
    };
    conn.prepare_cached(sql)?
        .query_row(params![key, after_ms], |row| Ok((row.get(0)?, row.get(1)?)))
}

/// Marks a request approved.
///
/// # Errors
/// When the store fails.
pub fn approve_request(conn: &Connection, request_id: &str, now_ms: i64) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE owner_requests SET status = 'approved', decided_ms = ?2 WHERE request_id = ?1",
    )?
    .execute(params![request_id, now_ms])?;
    Ok(())
}

/// Grants (or re-grants) `person_id` the link to `agent_id`: `scopes` (JSON), $0 a day, $0 per
/// action, `actions_per_day`.
///
/// # Errors
/// When the store fails.
pub fn upsert_grant(
    conn: &Connection,
    agent_id: &str,
    person_id: &str,
    scopes: &str,
    actions_per_day: i64,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO owner_grants (agent_id, person_id, scopes, spend_usd_per_day, spend_usd_per_action, actions_per_day, granted_ms)
         VALUES (?1, ?2, ?3, 0, 0, ?4, ?5)
         ON CONFLICT (agent_id) DO UPDATE SET person_id = excluded.person_id, scopes = excluded.scopes,
            spend_usd_per_day = 0, spend_usd_per_action = 0,
            actions_per_day = excluded.actions_per_day, granted_ms = excluded.granted_ms",
    )?
    .execute(params![agent_id, person_id, scopes, actions_per_day, now_ms])?;
    Ok(())
}
