//! People's storage for the agent tools: invitations, capability offers, agent preferences.

use kd_core::db::{Connection, DbError, OptionalExtension, params};
use serde_json::Value;

use crate::people::agent_tools::{Invitation, PendingOffer, StoredPreferences};

/// How many invitation cards an agent handed out after `after_ms`, and the oldest.
///
/// # Errors
/// When the store fails.
pub fn invitations_since(
    conn: &Connection,
    agent_id: &str,
    after_ms: i64,
) -> Result<(i64, Option<i64>), DbError> {
    conn.prepare_cached(
        "SELECT COUNT(*), MIN(created_ms) FROM invitations WHERE agent_id = ?1 AND created_ms > ?2",
    )?
    .query_row(params![agent_id, after_ms], |row| {
        Ok((row.get(0)?, row.get(1)?))
    })
}

/// Stores an invitation card.
///
/// # Errors
/// When the store fails.
pub fn insert_invitation(
    conn: &Connection,
    code: &str,
    agent_id: &str,
    credential_id: &str,
    note: Option<&str>,
    now: i64,
    event_seq: i64,
) -> Result<usize, DbError> {
    conn
                .prepare_cached(
                    "INSERT INTO invitations (invite_code, agent_id, credential_id, note, created_ms, event_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )?
                .execute(params![code, agent_id, credential_id, note, now, event_seq])
}

/// The invitation card with this code.
///
/// # Errors
/// When the store fails.
pub fn invitation(conn: &Connection, code: &str) -> Result<Option<Invitation>, DbError> {
    conn
        .prepare_cached(
            "SELECT invite_code, agent_id, credential_id, created_ms FROM invitations WHERE invite_code = ?1",
        )?
        .query_row([code], |row| {
            Ok(Invitation {
                invite_code: row.get(0)?,
                agent_id: row.get(1)?,
                credential_id: row.get(2)?,
                created_ms: row.get(3)?,
            })
        })
        .optional()
}

/// How many capability offers an agent made after `after_ms`, and the oldest.
///
/// # Errors
/// When the store fails.
pub fn offers_since(
    conn: &Connection,
    agent_id: &str,
    after_ms: i64,
) -> Result<(i64, Option<i64>), DbError> {
    conn
                .prepare_cached("SELECT COUNT(*), MIN(created_ms) FROM capability_offers WHERE agent_id = ?1 AND created_ms > ?2")?
                .query_row(params![agent_id, after_ms], |row| Ok((row.get(0)?, row.get(1)?)))
}

/// Stores a capability offer.
///
/// # Errors
/// When the store fails.
pub fn insert_offer(conn: &Connection, offer: &NewOffer<'_>) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO capability_offers (offer_id, agent_id, title, description, status, created_ms, decided_ms, decided_by, event_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        offer.offer_id,
        offer.agent_id,
        offer.title,
        offer.description,
        offer.status,
        offer.now,
        offer.decided.map(|_| offer.now),
        offer.decided,
        offer.event_seq
    ])?;
    Ok(())
}

/// A new capability offer.
#[derive(Debug)]
pub struct NewOffer<'a> {
    /// `kdco_` id.
    pub offer_id: &'a str,
    /// The offering agent.
    pub agent_id: &'a str,
    /// Its title.
    pub title: &'a str,
    /// Its description.
    pub description: Option<&'a str>,
    /// published | pending_owner | needs_owner.
    pub status: &'a str,
    /// Unix ms.
    pub now: i64,
    /// Who decided, when it is published at once.
    pub decided: Option<&'a str>,
    /// The `capability.offered` event.
    pub event_seq: i64,
}

/// A published offer: (offer_id, agent_id, title, description).
pub type PublishedOffer = (String, String, String, Option<String>);

/// The newest published capability offers, at most `limit`.
///
/// # Errors
/// When the store fails.
pub fn published_offers(conn: &Connection, limit: i64) -> Result<Vec<PublishedOffer>, DbError> {
    conn.prepare_cached(
        "SELECT offer_id, agent_id, title, description FROM capability_offers
         WHERE status = 'published' ORDER BY created_ms DESC, offer_id LIMIT CAST(?1 AS BIGINT)",
    )?
    .query_map([limit], |row| {
        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
    })?
    .collect()
}

/// Offers waiting for `person_id`, oldest first. A named read model over `agents` (the owner).
///
/// # Errors
/// When the store fails.
pub fn pending_offers(conn: &Connection, person_id: &str) -> Result<Vec<PendingOffer>, DbError> {
    conn.prepare_cached(
        "SELECT o.offer_id, o.agent_id, a.handle, o.title, o.description, o.created_ms
                     FROM capability_offers o JOIN agents a ON a.agent_id = o.agent_id
                     WHERE a.owner_id = ?1 AND o.status IN ('pending_owner', 'needs_owner')
                     ORDER BY o.created_ms, o.offer_id",
    )?
    .query_map([&person_id], |row| {
        Ok(PendingOffer {
            offer_id: row.get(0)?,
            agent_id: row.get(1)?,
            handle: row.get(2)?,
            title: row.get(3)?,
            description: row.get(4)?,
            created_ms: row.get(5)?,
        })
    })?
    .collect()
}

/// The agent of an offer waiting for `person_id`. A named read model over `agents` (the owner).
///
/// # Errors
/// When the store fails.
pub fn waiting_offer_agent(
    conn: &Connection,
    offer_id: &str,
    person_id: &str,
) -> Result<Option<String>, DbError> {
    conn
                .prepare_cached(
                    "SELECT o.agent_id FROM capability_offers o JOIN agents a ON a.agent_id = o.agent_id
                     WHERE o.offer_id = ?1 AND a.owner_id = ?2 AND o.status IN ('pending_owner', 'needs_owner')",
                )?
                .query_row(params![offer_id, person_id], |row| row.get(0))
                .optional()
}

/// Records a person's decision on an offer.
///
/// # Errors
/// When the store fails.
pub fn decide_offer(
    conn: &Connection,
    offer_id: &str,
    status: &str,
    now_ms: i64,
    actor: &str,
) -> Result<usize, DbError> {
    conn
                .prepare_cached(
                    "UPDATE capability_offers SET status = ?2, decided_ms = ?3, decided_by = ?4 WHERE offer_id = ?1",
                )?
                .execute(params![offer_id, status, now_ms, actor])
}

/// How many preference updates an agent made after `after_ms`, and the oldest.
///
/// # Errors
/// When the store fails.
pub fn preference_updates_since(
    conn: &Connection,
    agent_id: &str,
    after_ms: i64,
) -> Result<(i64, Option<i64>), DbError> {
    conn
                .prepare_cached(
                    "SELECT COUNT(*), MIN(updated_ms) FROM agent_preferences WHERE agent_id = ?1 AND updated_ms > ?2",
                )?
                .query_row(params![agent_id, after_ms], |row| Ok((row.get(0)?, row.get(1)?)))
}

/// The next preferences version of an agent.
///
/// # Errors
/// When the store fails.
pub fn next_preferences_version(conn: &Connection, agent_id: &str) -> Result<i64, DbError> {
    conn.prepare_cached(
        "SELECT COALESCE(MAX(version), 0) + 1 FROM agent_preferences WHERE agent_id = ?1",
    )?
    .query_row([&agent_id], |row| row.get(0))
}

/// Stores a preferences version.
///
/// # Errors
/// When the store fails.
pub fn insert_preferences(
    conn: &Connection,
    agent_id: &str,
    text: &str,
    sha256: &str,
    version: i64,
    now: i64,
    event_seq: i64,
) -> Result<usize, DbError> {
    conn
                .prepare_cached(
                    "INSERT INTO agent_preferences (agent_id, preferences, preferences_sha256, version, updated_ms, event_seq)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )?
                .execute(params![agent_id, text, sha256, version, now, event_seq])
}

/// The latest preferences of each of `person_id`'s agents. A named read model over `agents` (owner, handle).
///
/// # Errors
/// When the store fails.
pub fn latest_preferences(
    conn: &Connection,
    person_id: &str,
) -> Result<Vec<StoredPreferences>, DbError> {
    conn
                .prepare_cached(
                    "SELECT p.agent_id, a.handle, p.preferences, p.version, p.updated_ms
                     FROM agent_preferences p JOIN agents a ON a.agent_id = p.agent_id
                     WHERE a.owner_id = ?1
                       AND p.version = (SELECT MAX(q.version) FROM agent_preferences q WHERE q.agent_id = p.agent_id)
                     ORDER BY p.updated_ms DESC, p.agent_id",
                )?
                .query_map([&person_id], |row| {
                    let text: String = row.get(2)?;
                    Ok(StoredPreferences {
                        agent_id: row.get(0)?,
                        handle: row.get(1)?,
                        preferences: serde_json::from_str(&text).unwrap_or(Value::Null),
                        version: row.get(3)?,
                        updated_ms: row.get(4)?,
                    })
                })?
                .collect()
}

/// Whether the agent has a published capability offer.
///
/// # Errors
/// When the store fails.
pub fn has_published_offer(conn: &Connection, agent_id: &str) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM capability_offers WHERE agent_id = ?1 AND status = 'published' LIMIT 1",
        )?
        .query_row([agent_id], |_| Ok(()))
        .optional()?
        .is_some())
}
