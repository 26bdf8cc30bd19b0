//! Admission's storage: `admission_attempts`, `technical_bonuses` and `asks`
//! (docs/architecture.md "Storage modules").

use kd_core::db::{Connection, DbError, OptionalExtension, params};

/// How many of the agent's attempts have `column` (`created_ms` or `graded_ms`) after
/// `after_ms`, and the earliest such time.
///
/// # Errors
/// When the store fails.
pub fn attempts_since(
    conn: &Connection,
    agent_id: &str,
    column: &str,
    after_ms: i64,
) -> Result<(i64, Option<i64>), DbError> {
    let sql = match column {
        "graded_ms" => {
            "SELECT COUNT(*), MIN(graded_ms) FROM admission_attempts WHERE agent_id = ?1 AND graded_ms > ?2"
        }
        _ => {
            "SELECT COUNT(*), MIN(created_ms) FROM admission_attempts WHERE agent_id = ?1 AND created_ms > ?2"
        }
    };
    conn.prepare_cached(sql)?
        .query_row(params![agent_id, after_ms], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
}

/// A new admission attempt.
#[derive(Debug)]
pub struct NewAttempt<'a> {
    /// Its id.
    pub attempt_id: &'a str,
    /// The agent taking it.
    pub agent_id: &'a str,
    /// The scenario's seed.
    pub seed: i64,
    /// The scenario (JSON).
    pub scenario: &'a str,
    /// SHA-256 of the scenario.
    pub scenario_sha256: &'a str,
    /// Unix ms.
    pub now: i64,
    /// Unix ms.
    pub expires_ms: i64,
    /// The `admission.started` event.
    pub event_seq: i64,
}

/// Stores an attempt.
///
/// # Errors
/// When the store fails.
pub fn insert_attempt(conn: &Connection, attempt: &NewAttempt<'_>) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO admission_attempts (attempt_id, agent_id, seed, scenario, scenario_sha256, created_ms, expires_ms, event_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        attempt.attempt_id,
        attempt.agent_id,
        attempt.seed,
        attempt.scenario,
        attempt.scenario_sha256,
        attempt.now,
        attempt.expires_ms,
        attempt.event_seq
    ])?;
    Ok(())
}

/// An agent's attempt: (scenario, expires, graded).
///
/// # Errors
/// When the store fails.
pub fn attempt(
    conn: &Connection,
    attempt_id: &str,
    agent_id: &str,
) -> Result<Option<(String, i64, Option<i64>)>, DbError> {
    conn.prepare_cached(
        "SELECT scenario, expires_ms, graded_ms FROM admission_attempts WHERE attempt_id = ?1 AND agent_id = ?2",
    )?
    .query_row(params![attempt_id, agent_id], |row| {
        Ok((row.get(0)?, row.get(1)?, row.get(2)?))
    })
    .optional()
}

/// Grades an attempt once; how many rows changed (0: already graded).
///
/// # Errors
/// When the store fails.
pub fn grade_attempt(
    conn: &Connection,
    attempt_id: &str,
    now_ms: i64,
    result: &str,
    reasons: &str,
) -> Result<usize, DbError> {
    conn.prepare_cached(
        "UPDATE admission_attempts SET graded_ms = ?2, result = ?3, reasons = ?4 WHERE attempt_id = ?1 AND graded_ms IS NULL",
    )?
    .execute(params![attempt_id, now_ms, result, reasons])
}

/// Records the Technical bonus of a pass.
///
/// # Errors
/// When the store fails.
pub fn insert_bonus(
    conn: &Connection,
    agent_id: &str,
    owner_id: Option<&str>,
    amount: u8,
    attempt_id: &str,
    now_ms: i64,
    event_seq: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO technical_bonuses (agent_id, owner_id, amount, attempt_id, granted_ms, event_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![agent_id, owner_id, i64::from(amount), attempt_id, now_ms, event_seq])?;
    Ok(())
}

/// Whether the agent holds a recorded bonus.
///
/// # Errors
/// When the store fails.
pub fn has_bonus(conn: &Connection, agent_id: &str) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM technical_bonuses WHERE agent_id = ?1")?
        .query_row([agent_id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Whether another agent recorded with `owner`, or owned by them now, holds a bonus (with
/// `before`: one granted before it, or at the same time with a smaller agent id). A named
/// read model over `agents` (current owners).
///
/// # Errors
/// When the store fails.
pub fn owner_has_bonus(
    conn: &Connection,
    agent_id: &str,
    owner: &str,
    before: Option<i64>,
) -> Result<bool, DbError> {
    let found = match before {
        None => conn
            .prepare_cached(
                "SELECT 1 FROM technical_bonuses b LEFT JOIN agents a ON a.agent_id = b.agent_id
                 WHERE b.agent_id <> ?1 AND (b.owner_id = ?2 OR a.owner_id = ?2) LIMIT 1",
            )?
            .query_row(params![agent_id, owner], |_| Ok(()))
            .optional()?,
        Some(granted_ms) => conn
            .prepare_cached(
                "SELECT 1 FROM technical_bonuses b LEFT JOIN agents a ON a.agent_id = b.agent_id
                 WHERE b.agent_id <> ?1 AND (b.owner_id = ?2 OR a.owner_id = ?2)
                   AND (b.granted_ms < ?3 OR (b.granted_ms = ?3 AND b.agent_id < ?1)) LIMIT 1",
            )?
            .query_row(params![agent_id, owner, granted_ms], |_| Ok(()))
            .optional()?,
    };
    Ok(found.is_some())
}

/// The agent's bonus: (granted, its current owner). A named read model over `agents`.
///
/// # Errors
/// When the store fails.
pub fn bonus_and_owner(
    conn: &Connection,
    agent_id: &str,
) -> Result<Option<(i64, Option<String>)>, DbError> {
    conn.prepare_cached(
        "SELECT b.granted_ms, a.owner_id FROM technical_bonuses b LEFT JOIN agents a ON a.agent_id = b.agent_id
         WHERE b.agent_id = ?1",
    )?
    .query_row([agent_id], |row| Ok((row.get(0)?, row.get(1)?)))
    .optional()
}

/// An operator's open asks at `now_ms`, and the first to expire.
///
/// # Errors
/// When the store fails.
pub fn open_asks(
    conn: &Connection,
    operator: &str,
    now_ms: i64,
) -> Result<(i64, Option<i64>), DbError> {
    conn.prepare_cached(
        "SELECT COUNT(*), MIN(expires_ms) FROM asks WHERE operator = ?1 AND status = 'open' AND expires_ms > ?2",
    )?
    .query_row(params![operator, now_ms], |row| Ok((row.get(0)?, row.get(1)?)))
}

/// How many asks an operator published after `after_ms`, and the oldest.
///
/// # Errors
/// When the store fails.
pub fn asks_since(
    conn: &Connection,
    operator: &str,
    after_ms: i64,
) -> Result<(i64, Option<i64>), DbError> {
    conn.prepare_cached(
        "SELECT COUNT(*), MIN(created_ms) FROM asks WHERE operator = ?1 AND created_ms > ?2",
    )?
    .query_row(params![operator, after_ms], |row| {
        Ok((row.get(0)?, row.get(1)?))
    })
}

/// A new ask.
#[derive(Debug)]
pub struct NewAsk<'a> {
    /// Its id.
    pub ask_id: &'a str,
    /// The publishing agent.
    pub agent_id: &'a str,
    /// Its operator.
    pub operator: &'a str,
    /// Title.
    pub title: &'a str,
    /// Topic.
    pub topic: &'a str,
    /// Unix ms.
    pub now: i64,
    /// Unix ms.
    pub expires_ms: i64,
    /// The `ask.published` event.
    pub event_seq: i64,
}

/// Stores an open ask.
///
/// # Errors
/// When the store fails.
pub fn insert_ask(conn: &Connection, ask: &NewAsk<'_>) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO asks (ask_id, agent_id, operator, title, topic, status, created_ms, expires_ms, event_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, 'open', ?6, ?7, ?8)",
    )?
    .execute(params![
        ask.ask_id,
        ask.agent_id,
        ask.operator,
        ask.title,
        ask.topic,
        ask.now,
        ask.expires_ms,
        ask.event_seq
    ])?;
    Ok(())
}
