//! Identity's storage: the `agents`, `challenges`, `passports` and `nonces` tables
//! (docs/architecture.md "Storage modules"). Every statement is portable SQL over
//! `kd_core::db`; the handlers in `identity` hold none.

pub mod signers;

use kd_core::db::{Connection, DbError, OptionalExtension, Row, params};

/// An agent as the projection holds it.
#[derive(Debug, Clone)]
pub struct AgentRow {
    /// Agent id.
    pub agent_id: String,
    /// `kd_` handle.
    pub handle: String,
    /// Display label.
    pub name: String,
    /// Client or runtime.
    pub platform: String,
    /// base64url Ed25519 key.
    pub public_key: String,
    /// active | revoked.
    pub status: String,
    /// The owning person, when claimed.
    pub owner_id: Option<String>,
    /// Current passport id.
    pub credential_id: String,
    /// agent | server.
    pub key_source: String,
    /// Unix milliseconds.
    pub created_ms: i64,
    /// When its owner paused it (its signed writes are refused), Unix milliseconds.
    pub paused_ms: Option<i64>,
}

const AGENT_COLUMNS: &str = "agent_id, handle, name, platform, public_key, status, owner_id, credential_id, key_source, created_ms, paused_ms";

fn agent_from_row(row: &Row<'_>) -> kd_core::db::Result<AgentRow> {
    Ok(AgentRow {
        agent_id: row.get(0)?,
        handle: row.get(1)?,
        name: row.get(2)?,
        platform: row.get(3)?,
        public_key: row.get(4)?,
        status: row.get(5)?,
        owner_id: row.get(6)?,
        credential_id: row.get(7)?,
        key_source: row.get(8)?,
        created_ms: row.get(9)?,
        paused_ms: row.get(10)?,
    })
}

/// The agent with this id.
///
/// # Errors
/// When the store fails.
pub fn agent_by_id(conn: &Connection, agent_id: &str) -> Result<Option<AgentRow>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {AGENT_COLUMNS} FROM agents WHERE agent_id = ?1"
    ))?
    .query_row([agent_id], agent_from_row)
    .optional()
}

/// The agent with this `kd_` handle.
///
/// # Errors
/// When the store fails.
pub fn agent_by_handle(conn: &Connection, handle: &str) -> Result<Option<AgentRow>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {AGENT_COLUMNS} FROM agents WHERE handle = ?1"
    ))?
    .query_row([handle], agent_from_row)
    .optional()
}

/// The agent holding `public_key`; only an active one when `active_only`.
///
/// # Errors
/// When the store fails.
pub fn agent_with_key(
    conn: &Connection,
    public_key: &str,
    active_only: bool,
) -> Result<Option<String>, DbError> {
    let sql = if active_only {
        "SELECT agent_id FROM agents WHERE public_key = ?1 AND status = 'active'"
    } else {
        "SELECT agent_id FROM agents WHERE public_key = ?1"
    };
    conn.prepare_cached(sql)?
        .query_row([public_key], |row| row.get(0))
        .optional()
}

/// The folded name (`name_key`) of an agent.
///
/// # Errors
/// When the store fails.
pub fn name_key(conn: &Connection, agent_id: &str) -> Result<Option<String>, DbError> {
    conn.prepare_cached("SELECT name_key FROM agents WHERE agent_id = ?1")?
        .query_row([agent_id], |row| row.get(0))
        .optional()
}

/// Every active agent as (agent id, folded name).
///
/// # Errors
/// When the store fails.
pub fn active_name_keys(conn: &Connection) -> Result<Vec<(String, String)>, DbError> {
    conn.prepare_cached("SELECT agent_id, name_key FROM agents WHERE status = 'active'")?
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect()
}

/// An active agent's (public key, folded name).
///
/// # Errors
/// When the store fails.
pub fn active_key_and_name_key(
    conn: &Connection,
    agent_id: &str,
) -> Result<Option<(String, String)>, DbError> {
    conn.prepare_cached(
        "SELECT public_key, name_key FROM agents WHERE agent_id = ?1 AND status = 'active'",
    )?
    .query_row([agent_id], |row| Ok((row.get(0)?, row.get(1)?)))
    .optional()
}

/// A new agent row.
#[derive(Debug)]
pub struct NewAgent<'a> {
    /// Agent id.
    pub agent_id: &'a str,
    /// `kd_` handle.
    pub handle: &'a str,
    /// Display label.
    pub name: &'a str,
    /// The folded label.
    pub name_key: &'a str,
    /// Client or runtime.
    pub platform: &'a str,
    /// base64url Ed25519 key.
    pub public_key: &'a str,
    /// The invite code it came with.
    pub referral: Option<&'a str>,
    /// Its first passport.
    pub credential_id: &'a str,
    /// Unix milliseconds.
    pub now_ms: i64,
}

/// Inserts an active agent whose key the agent brought.
///
/// # Errors
/// When the store fails.
pub fn insert_agent(conn: &Connection, agent: &NewAgent<'_>) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO agents (agent_id, handle, name, name_key, platform, public_key, status,
           referral, credential_id, key_source, created_ms, updated_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'active', ?7, ?8, 'agent', ?9, ?9)",
    )?
    .execute(params![
        agent.agent_id,
        agent.handle,
        agent.name,
        agent.name_key,
        agent.platform,
        agent.public_key,
        agent.referral,
        agent.credential_id,
        agent.now_ms
    ])?;
    Ok(())
}

/// Stores a hosted connector agent (`identity::hosted`): no key, `key_source` `oauth`, and a
/// label that reserves nothing (an empty `name_key`).
///
/// # Errors
/// When the store fails.
pub fn insert_hosted_agent(
    conn: &Connection,
    agent_id: &str,
    handle: &str,
    name: &str,
    platform: &str,
    credential_id: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO agents (agent_id, handle, name, name_key, platform, public_key, status,
           referral, credential_id, key_source, created_ms, updated_ms)
         VALUES (?1, ?2, ?3, '', ?4, '', 'active', NULL, ?5, 'oauth', ?6, ?6)",
    )?
    .execute(params![
        agent_id,
        handle,
        name,
        platform,
        credential_id,
        now_ms
    ])?;
    Ok(())
}

/// Sets an agent's label.
///
/// # Errors
/// When the store fails.
pub fn rename(
    conn: &Connection,
    agent_id: &str,
    name: &str,
    name_key: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE agents SET name = ?2, name_key = ?3, updated_ms = ?4 WHERE agent_id = ?1",
    )?
    .execute(params![agent_id, name, name_key, now_ms])?;
    Ok(())
}

/// Sets an agent's key (brought by the agent) and current passport.
///
/// # Errors
/// When the store fails.
pub fn set_key(
    conn: &Connection,
    agent_id: &str,
    public_key: &str,
    credential_id: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE agents SET public_key = ?2, credential_id = ?3, key_source = 'agent', updated_ms = ?4 WHERE agent_id = ?1",
    )?
    .execute(params![agent_id, public_key, credential_id, now_ms])?;
    Ok(())
}

/// Points an agent at a new passport (a hosted agent's re-issued connector passport), leaving
/// its key and key source as they are.
///
/// # Errors
/// When the store fails.
pub fn set_credential(
    conn: &Connection,
    agent_id: &str,
    credential_id: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE agents SET credential_id = ?2, updated_ms = ?3 WHERE agent_id = ?1",
    )?
    .execute(params![agent_id, credential_id, now_ms])?;
    Ok(())
}

/// Marks an agent revoked.
///
/// # Errors
/// When the store fails.
pub fn revoke(conn: &Connection, agent_id: &str, now_ms: i64) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE agents SET status = 'revoked', updated_ms = ?2 WHERE agent_id = ?1",
    )?
    .execute(params![agent_id, now_ms])?;
    Ok(())
}

/// Clears an agent's owner and pause (release).
///
/// # Errors
/// When the store fails.
pub fn clear_owner(conn: &Connection, agent_id: &str, now_ms: i64) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE agents SET owner_id = NULL, paused_ms = NULL, updated_ms = ?2 WHERE agent_id = ?1",
    )?
    .execute(params![agent_id, now_ms])?;
    Ok(())
}

/// A stored registration challenge.
#[derive(Debug)]
pub struct ChallengeRow {
    /// The text the agent signs.
    pub payload: String,
    /// Unix milliseconds; it works before this.
    pub expires_ms: i64,
    /// When it was used, if it was.
    pub used_ms: Option<i64>,
}

/// Stores a new registration challenge.
///
/// # Errors
/// When the store fails.
pub fn insert_challenge(
    conn: &Connection,
    challenge_id: &str,
    payload: &str,
    issued_ms: i64,
    expires_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO challenges (challenge_id, payload, issued_ms, expires_ms) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![challenge_id, payload, issued_ms, expires_ms])?;
    Ok(())
}

/// A registration challenge by id.
///
/// # Errors
/// When the store fails.
pub fn challenge(conn: &Connection, challenge_id: &str) -> Result<Option<ChallengeRow>, DbError> {
    conn.prepare_cached(
        "SELECT payload, expires_ms, used_ms FROM challenges WHERE challenge_id = ?1",
    )?
    .query_row([challenge_id], |row| {
        Ok(ChallengeRow {
            payload: row.get(0)?,
            expires_ms: row.get(1)?,
            used_ms: row.get(2)?,
        })
    })
    .optional()
}

/// Marks a challenge used (once).
///
/// # Errors
/// When the store fails.
pub fn burn_challenge(conn: &Connection, challenge_id: &str, now_ms: i64) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE challenges SET used_ms = ?2 WHERE challenge_id = ?1 AND used_ms IS NULL",
    )?
    .execute(params![challenge_id, now_ms])?;
    Ok(())
}

/// A stored passport.
#[derive(Debug, Clone)]
pub struct Passport {
    /// `kdp_…`.
    pub credential_id: String,
    /// The agent it names.
    pub agent_id: String,
    /// listed | verified | revoked | superseded.
    pub state: String,
    /// The signed text.
    pub signed_text: String,
    /// base64url Ed25519 signature by kd-passport-1.
    pub signature: String,
    /// Unix milliseconds.
    pub issued_ms: i64,
}

/// Stores a Listed passport.
///
/// # Errors
/// When the store fails.
pub fn insert_passport(conn: &Connection, passport: &Passport) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO passports (credential_id, agent_id, state, signed_text, signature, issued_ms)
         VALUES (?1, ?2, 'listed', ?3, ?4, ?5)",
    )?
    .execute(params![
        passport.credential_id,
        passport.agent_id,
        passport.signed_text,
        passport.signature,
        passport.issued_ms
    ])?;
    Ok(())
}

/// Sets a passport's state and when it ended.
///
/// # Errors
/// When the store fails.
pub fn end_passport(
    conn: &Connection,
    credential_id: &str,
    state: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE passports SET state = ?2, revoked_ms = ?3 WHERE credential_id = ?1",
    )?
    .execute(params![credential_id, state, now_ms])?;
    Ok(())
}

/// A passport by its id.
///
/// # Errors
/// When the store fails.
pub fn passport(conn: &Connection, credential_id: &str) -> Result<Option<Passport>, DbError> {
    conn.prepare_cached(
        "SELECT credential_id, agent_id, state, signed_text, signature, issued_ms
         FROM passports WHERE credential_id = ?1",
    )?
    .query_row([credential_id], |row| {
        Ok(Passport {
            credential_id: row.get(0)?,
            agent_id: row.get(1)?,
            state: row.get(2)?,
            signed_text: row.get(3)?,
            signature: row.get(4)?,
            issued_ms: row.get(5)?,
        })
    })
    .optional()
}

/// When `person_id` owns the agent: its pause time.
///
/// # Errors
/// When the store fails.
pub fn paused_if_owned(
    conn: &Connection,
    agent_id: &str,
    person_id: &str,
) -> Result<Option<Option<i64>>, DbError> {
    conn.prepare_cached("SELECT paused_ms FROM agents WHERE agent_id = ?1 AND owner_id = ?2")?
        .query_row(params![agent_id, person_id], |row| row.get(0))
        .optional()
}

/// Links an agent to its owner (clearing a pause).
///
/// # Errors
/// When the store fails.
pub fn set_owner(
    conn: &Connection,
    agent_id: &str,
    person_id: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE agents SET owner_id = ?2, paused_ms = NULL, updated_ms = ?3 WHERE agent_id = ?1",
    )?
    .execute(params![agent_id, person_id, now_ms])?;
    Ok(())
}

/// What an owner changes on its agent's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ownership {
    /// Set the pause.
    Pause,
    /// Clear the pause.
    Resume,
    /// Clear owner and pause.
    Release,
}

/// Applies an owner's change to an agent's row.
///
/// # Errors
/// When the store fails.
pub fn change_ownership(
    conn: &Connection,
    agent_id: &str,
    change: Ownership,
    now_ms: i64,
) -> Result<(), DbError> {
    let sql = match change {
        Ownership::Pause => "UPDATE agents SET paused_ms = ?2, updated_ms = ?2 WHERE agent_id = ?1",
        Ownership::Resume => {
            "UPDATE agents SET paused_ms = NULL, updated_ms = ?2 WHERE agent_id = ?1"
        }
        Ownership::Release => {
            "UPDATE agents SET owner_id = NULL, paused_ms = NULL, updated_ms = ?2 WHERE agent_id = ?1"
        }
    };
    conn.prepare_cached(sql)?
        .execute(params![agent_id, now_ms])?;
    Ok(())
}

/// An agent's handle and current passport id.
///
/// # Errors
/// When the store fails.
pub fn handle_and_credential(
    conn: &Connection,
    agent_id: &str,
) -> Result<(String, String), DbError> {
    conn.prepare_cached("SELECT handle, credential_id FROM agents WHERE agent_id = ?1")?
        .query_row([&agent_id], |row| Ok((row.get(0)?, row.get(1)?)))
}

/// An agent's owner (an error when there is no such agent).
///
/// # Errors
/// When the store fails or there is no such agent.
pub fn owner_of(conn: &Connection, agent_id: &str) -> Result<Option<String>, DbError> {
    conn.prepare_cached("SELECT owner_id FROM agents WHERE agent_id = ?1")?
        .query_row([agent_id], |row| row.get(0))
}

/// Deletes at most `limit` nonces seen before `before_ms`, oldest first; returns how many.
///
/// # Errors
/// When the store fails.
pub fn prune_nonces(conn: &Connection, before_ms: i64, limit: i64) -> Result<usize, DbError> {
    conn.prepare_cached(
        "DELETE FROM nonces WHERE (agent_id, nonce) IN (
            SELECT agent_id, nonce FROM nonces WHERE seen_ms < ?1
            ORDER BY seen_ms LIMIT CAST(?2 AS BIGINT))",
    )?
    .execute(params![before_ms, limit])
}

/// Deletes at most `limit` registration challenges that expired by `now_ms`, first expired
/// first; returns how many.
///
/// # Errors
/// When the store fails.
pub fn prune_challenges(conn: &Connection, now_ms: i64, limit: i64) -> Result<usize, DbError> {
    conn.prepare_cached(
        "DELETE FROM challenges WHERE challenge_id IN (
            SELECT challenge_id FROM challenges WHERE expires_ms <= ?1
            ORDER BY expires_ms LIMIT CAST(?2 AS BIGINT))",
    )?
    .execute(params![now_ms, limit])
}

/// An agent's handle and owner (an error when there is no such agent).
///
/// # Errors
/// When the store fails.
pub fn handle_and_owner(
    conn: &Connection,
    agent_id: &str,
) -> Result<(String, Option<String>), DbError> {
    conn.prepare_cached("SELECT handle, owner_id FROM agents WHERE agent_id = ?1")?
        .query_row([agent_id], |row| Ok((row.get(0)?, row.get(1)?)))
}

/// An agent's id, owner and creation time.
///
/// # Errors
/// When the store fails.
pub fn owner_and_created(
    conn: &Connection,
    agent_id: &str,
) -> Result<Option<(String, Option<String>, i64)>, DbError> {
    conn.prepare_cached("SELECT agent_id, owner_id, created_ms FROM agents WHERE agent_id = ?1")?
        .query_row([agent_id], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .optional()
}

/// When an agent registered (an error when there is no such agent).
///
/// # Errors
/// When the store fails or there is no such agent.
pub fn created_ms(conn: &Connection, agent_id: &str) -> Result<i64, DbError> {
    conn.prepare_cached("SELECT created_ms FROM agents WHERE agent_id = ?1")?
        .query_row([agent_id], |row| row.get(0))
}

/// An agent's `kd_` handle.
///
/// # Errors
/// When the store fails.
pub fn handle(conn: &Connection, agent_id: &str) -> Result<Option<String>, DbError> {
    conn.prepare_cached("SELECT handle FROM agents WHERE agent_id = ?1")?
        .query_row([agent_id], |row| row.get(0))
        .optional()
}
