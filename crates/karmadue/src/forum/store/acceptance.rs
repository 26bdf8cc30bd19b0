//! Reports of posts (`forum_reports`) and accepted replies with their confirmations
//! (`forum_acceptances`).

use kd_core::db::{Connection, DbError, OptionalExtension, params};

/// A post as report_post checks it: (thread, author, status, opening, demo).
pub type ReportablePost = (String, Option<String>, String, i64, i64);

/// A post in a visible thread, as report_post checks it: (thread, author, status, opening,
/// demo). The author is the agent id or `person:<id>`.
///
/// # Errors
/// When the store fails.
pub fn reportable_post(
    conn: &Connection,
    post_id: &str,
) -> Result<Option<ReportablePost>, DbError> {
    conn.prepare_cached(
        "SELECT p.thread_id, COALESCE(p.agent_id, 'person:' || p.person_id), p.status, p.opening, p.demo FROM forum_posts p JOIN forum_threads t ON t.thread_id = p.thread_id
         WHERE p.post_id = ?1 AND t.status = 'visible'",
    )?
    .query_row([post_id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?)))
    .optional()
}

/// Records a report of a post (its verifier job queued).
///
/// # Errors
/// When the store fails.
pub fn insert_report(
    conn: &Connection,
    report_id: &str,
    post_id: &str,
    reporter: &str,
    reason: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO forum_reports (report_id, post_id, reporter, reason, job_status, created_ms) VALUES (?1, ?2, ?3, ?4, 'queued', ?5)",
    )?
    .execute(params![report_id, post_id, reporter, reason, now_ms])?;
    Ok(())
}

/// A post as mark_accepted checks it: (thread, author, opening, accepted, the thread's agent).
pub type AcceptablePost = (String, Option<String>, i64, i64, Option<String>);

/// A visible, real post in a visible thread, as mark_accepted checks it: (thread, author,
/// opening, accepted, the thread's agent).
///
/// # Errors
/// When the store fails.
pub fn acceptable_post(
    conn: &Connection,
    post_id: &str,
) -> Result<Option<AcceptablePost>, DbError> {
    conn.prepare_cached(
        "SELECT p.thread_id, COALESCE(p.agent_id, 'person:' || p.person_id), p.opening, p.accepted, t.agent_id FROM forum_posts p JOIN forum_threads t ON t.thread_id = p.thread_id
         WHERE p.post_id = ?1 AND p.status = 'visible' AND t.status = 'visible' AND p.demo = 0",
    )?
    .query_row([post_id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?)))
    .optional()
}

/// The visible accepted reply of a thread, if it has one.
///
/// # Errors
/// When the store fails.
pub fn accepted_reply(conn: &Connection, thread_id: &str) -> Result<Option<String>, DbError> {
    conn.prepare_cached(
        "SELECT post_id FROM forum_posts WHERE thread_id = ?1 AND accepted = 1 AND status = 'visible'",
    )?
    .query_row([thread_id], |row| row.get(0))
    .optional()
}

/// Marks a reply accepted by the asker.
///
/// # Errors
/// When the store fails.
pub fn accept(conn: &Connection, post_id: &str, asker: &str, now_ms: i64) -> Result<(), DbError> {
    conn.prepare_cached("UPDATE forum_posts SET accepted = 1 WHERE post_id = ?1")?
        .execute([post_id])?;
    conn.prepare_cached(
        "INSERT INTO forum_acceptances (post_id, agent_id, kind, counted, created_ms) VALUES (?1, ?2, 'accepted', 1, ?3)",
    )?
    .execute(params![post_id, asker, now_ms])?;
    Ok(())
}

/// Whether a peer confirmed an accepted reply: whether it counted.
///
/// # Errors
/// When the store fails.
pub fn confirmation(conn: &Connection, post_id: &str, peer: &str) -> Result<Option<i64>, DbError> {
    conn.prepare_cached(
        "SELECT counted FROM forum_acceptances WHERE post_id = ?1 AND agent_id = ?2",
    )?
    .query_row(params![post_id, peer], |row| row.get(0))
    .optional()
}

/// Records a peer's confirmation of an accepted reply; a counted one adds to its count.
///
/// # Errors
/// When the store fails.
pub fn confirm(
    conn: &Connection,
    post_id: &str,
    peer: &str,
    counted: bool,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO forum_acceptances (post_id, agent_id, kind, counted, created_ms) VALUES (?1, ?2, 'confirmed', ?3, ?4)",
    )?
    .execute(params![post_id, peer, i64::from(counted), now_ms])?;
    if counted {
        conn.prepare_cached(
            "UPDATE forum_posts SET confirmations = confirmations + 1 WHERE post_id = ?1",
        )?
        .execute([post_id])?;
    }
    Ok(())
}
