//! People's storage for findings.

use kd_core::db::{Connection, DbError, OptionalExtension, params};

use crate::people::findings::InboxItem;

/// An agent's live finding with this dedupe key: (id, status, delivery).
///
/// # Errors
/// When the store fails.
pub fn finding_by_dedupe_key(
    conn: &Connection,
    agent_id: &str,
    key: &str,
) -> Result<Option<(String, String, String)>, DbError> {
    conn
                    .prepare_cached(
                        "SELECT finding_id, status, delivery FROM findings WHERE agent_id = ?1 AND dedupe_key = ?2 AND status <> 'withdrawn'",
                    )?
                    .query_row(params![agent_id, key], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
                    .optional()
}

/// How many findings an agent filed after `after_ms`, and the oldest.
///
/// # Errors
/// When the store fails.
pub fn findings_since(
    conn: &Connection,
    agent_id: &str,
    after_ms: i64,
) -> Result<(i64, Option<i64>), DbError> {
    conn.prepare_cached(
        "SELECT COUNT(*), MIN(created_ms) FROM findings WHERE agent_id = ?1 AND created_ms > ?2",
    )?
    .query_row(params![agent_id, after_ms], |row| {
        Ok((row.get(0)?, row.get(1)?))
    })
}

/// Files a finding.
///
/// # Errors
/// When the store fails.
pub fn insert_finding(conn: &Connection, finding: &NewFinding<'_>) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO findings (finding_id, agent_id, kind, title, why, evidence_ref, dedupe_key, delivery, status, person_id, claim_sha256, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
        finding.finding_id,
        finding.agent_id,
        finding.kind,
        finding.title,
        finding.why,
        finding.evidence_ref,
        finding.dedupe_key,
        finding.delivery,
        finding.status,
        finding.person_id,
        finding.claim_sha256,
        finding.now
    ])?;
    Ok(())
}

/// A new finding.
#[derive(Debug)]
pub struct NewFinding<'a> {
    /// `kdf_` id.
    pub finding_id: &'a str,
    /// The filing agent.
    pub agent_id: &'a str,
    /// Its kind, if given.
    pub kind: Option<&'a str>,
    /// Title.
    pub title: &'a str,
    /// Why it matters.
    pub why: &'a str,
    /// Evidence reference.
    pub evidence_ref: &'a str,
    /// The agent's dedupe key.
    pub dedupe_key: Option<&'a str>,
    /// email | owner | open.
    pub delivery: &'a str,
    /// Status.
    pub status: &'a str,
    /// The person it is for, when known.
    pub person_id: Option<&'a str>,
    /// SHA-256 of its claim code, when it has one.
    pub claim_sha256: Option<&'a str>,
    /// Unix ms.
    pub now: i64,
}

/// Withdraws an agent's open finding; how many rows changed.
///
/// # Errors
/// When the store fails.
pub fn withdraw_finding(
    conn: &Connection,
    finding_id: &str,
    agent_id: &str,
    now_ms: i64,
) -> Result<usize, DbError> {
    conn.prepare_cached(
        "UPDATE findings SET status = 'withdrawn', claim_sha256 = NULL, decided_ms = ?3
                     WHERE finding_id = ?1 AND agent_id = ?2 AND status IN ('open', 'inbox')",
    )?
    .execute(params![finding_id, agent_id, now_ms])
}

/// A finding found by its claim code: (id, agent, status, holder).
pub type ClaimedFinding = (String, String, String, Option<String>);

/// The finding with this claim code's SHA-256: (id, agent, status, holder).
///
/// # Errors
/// When the store fails.
pub fn finding_by_claim(
    conn: &Connection,
    hashed: &str,
) -> Result<Option<ClaimedFinding>, DbError> {
    conn.prepare_cached(
        "SELECT finding_id, agent_id, status, person_id FROM findings WHERE claim_sha256 = ?1",
    )?
    .query_row([&hashed], |row| {
        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
    })
    .optional()
}

/// Moves a finding into a person's Inbox.
///
/// # Errors
/// When the store fails.
pub fn adopt_finding(
    conn: &Connection,
    finding_id: &str,
    person_id: &str,
) -> Result<usize, DbError> {
    conn.prepare_cached(
        "UPDATE findings SET status = 'inbox', person_id = ?2 WHERE finding_id = ?1",
    )?
    .execute(params![finding_id, person_id])
}

/// A person's Inbox, newest first. A named read model over `agents` (handle).
///
/// # Errors
/// When the store fails.
pub fn inbox(conn: &Connection, person_id: &str) -> Result<Vec<InboxItem>, DbError> {
    conn
                .prepare_cached(
                    "SELECT f.finding_id, a.handle, f.kind, f.title, f.why, f.evidence_ref, f.created_ms
                     FROM findings f JOIN agents a ON a.agent_id = f.agent_id
                     WHERE f.person_id = ?1 AND f.status = 'inbox' ORDER BY f.created_ms DESC, f.finding_id",
                )?
                .query_map([&person_id], |row| {
                    Ok(InboxItem {
                        finding_id: row.get(0)?,
                        handle: row.get(1)?,
                        kind: row.get(2)?,
                        title: row.get(3)?,
                        why: row.get(4)?,
                        evidence_ref: row.get(5)?,
                        created_ms: row.get(6)?,
                    })
                })?
                .collect()
}

/// The agent of a finding in `person_id`'s Inbox.
///
/// # Errors
/// When the store fails.
pub fn inbox_finding_agent(
    conn: &Connection,
    finding_id: &str,
    person_id: &str,
) -> Result<Option<String>, DbError> {
    conn
                .prepare_cached("SELECT agent_id FROM findings WHERE finding_id = ?1 AND person_id = ?2 AND status = 'inbox'")?
                .query_row(params![finding_id, person_id], |row| row.get(0))
                .optional()
}

/// Records a person's decision on an Inbox finding.
///
/// # Errors
/// When the store fails.
pub fn decide_finding(
    conn: &Connection,
    finding_id: &str,
    status: &str,
    now_ms: i64,
) -> Result<usize, DbError> {
    conn
                .prepare_cached("UPDATE findings SET status = ?2, claim_sha256 = NULL, decided_ms = ?3 WHERE finding_id = ?1")?
                .execute(params![finding_id, status, now_ms])
}

/// A finding its person approved, with the filing agent's handle.
#[derive(Debug, Clone)]
pub struct ApprovedFinding {
    /// `kdf_` id.
    pub finding_id: String,
    /// Its kind, if given.
    pub kind: Option<String>,
    /// Title.
    pub title: String,
    /// Why it matters.
    pub why: String,
    /// Evidence reference.
    pub evidence_ref: String,
    /// Unix ms.
    pub created_ms: i64,
    /// When it was approved, Unix ms.
    pub decided_ms: Option<i64>,
    /// The filing agent's handle.
    pub handle: String,
}

/// The latest 2000 approved findings, newest approval first. A named read model over
/// `agents` (handle).
///
/// # Errors
/// When the store fails.
pub fn approved_findings(conn: &Connection) -> Result<Vec<ApprovedFinding>, DbError> {
    conn.prepare_cached(
        "SELECT f.finding_id, f.kind, f.title, f.why, f.evidence_ref, f.created_ms, f.decided_ms, a.handle
         FROM findings f JOIN agents a ON a.agent_id = f.agent_id
         WHERE f.status = 'approved' ORDER BY f.decided_ms DESC, f.finding_id LIMIT 2000",
    )?
    .query_map([], |row| {
        Ok(ApprovedFinding {
            finding_id: row.get(0)?,
            kind: row.get(1)?,
            title: row.get(2)?,
            why: row.get(3)?,
            evidence_ref: row.get(4)?,
            created_ms: row.get(5)?,
            decided_ms: row.get(6)?,
            handle: row.get(7)?,
        })
    })?
    .collect()
}
