//! Help's storage: watchlists (`watchlists`, `watchlist_items`) and verification help
//! (`verification_asks`, `verification_disputes`) (docs/architecture.md "Storage modules").

use kd_core::clock::rfc3339_ms;
use kd_core::db::{Connection, DbError, FromRow, OptionalExtension, params};
use serde_json::{Value, json};

use super::verification::Ask;
use super::watch::Seen;

/// What the daily check last saw of each listed record of an agent's watchlist.
///
/// # Errors
/// When the store fails.
pub fn seen_items(conn: &Connection, agent_id: &str) -> Result<Vec<(String, Seen)>, DbError> {
    conn.prepare_cached(
        "SELECT resource_id, seen_archived, seen_risky, seen_version, seen_released_ms, seen_broke, seen_reports
         FROM watchlist_items WHERE agent_id = ?1 AND resource_id IS NOT NULL",
    )?
    .query_map([agent_id], |row| {
        Ok((
            row.get::<String>(0)?,
            Seen {
                archived: row.get::<Option<bool>>(1)?.unwrap_or(false),
                risky: row.get::<Option<bool>>(2)?.unwrap_or(false),
                version: row.get(3)?,
                released_ms: row.get(4)?,
                broke: row.get::<Option<i64>>(5)?.unwrap_or(0),
                reports: row.get::<Option<i64>>(6)?.unwrap_or(0),
            },
        ))
    })?
    .collect()
}

/// Stores watchlist item `position` of an agent, with what was seen of its record.
///
/// # Errors
/// When the store fails.
pub fn upsert_item(
    conn: &Connection,
    agent_id: &str,
    position: i64,
    target: &str,
    resolved: Option<(&str, &Seen)>,
) -> Result<(), DbError> {
    let (resource_id, seen) = match resolved {
        Some((id, seen)) => (Some(id), Some(seen)),
        None => (None, None),
    };
    conn.prepare_cached(
        "INSERT INTO watchlist_items (agent_id, position, target, resource_id, seen_archived, seen_risky,
            seen_version, seen_released_ms, seen_broke, seen_reports)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (agent_id, position) DO UPDATE SET target = excluded.target,
            resource_id = excluded.resource_id, seen_archived = excluded.seen_archived,
            seen_risky = excluded.seen_risky, seen_version = excluded.seen_version,
            seen_released_ms = excluded.seen_released_ms, seen_broke = excluded.seen_broke,
            seen_reports = excluded.seen_reports",
    )?
    .execute(params![
        agent_id,
        position,
        target,
        resource_id,
        seen.map(|seen| seen.archived),
        seen.map(|seen| seen.risky),
        seen.and_then(|seen| seen.version.clone()),
        seen.and_then(|seen| seen.released_ms),
        seen.map(|seen| seen.broke),
        seen.map(|seen| seen.reports),
    ])?;
    Ok(())
}

/// Deletes an agent's watchlist items.
///
/// # Errors
/// When the store fails.
pub fn clear_items(conn: &Connection, agent_id: &str) -> Result<usize, DbError> {
    conn.prepare_cached("DELETE FROM watchlist_items WHERE agent_id = ?1")?
        .execute([&agent_id])
}

/// Stores an agent's watchlist head (how many items, when).
///
/// # Errors
/// When the store fails.
pub fn upsert_watchlist(
    conn: &Connection,
    agent_id: &str,
    count: i64,
    now_ms: i64,
) -> Result<usize, DbError> {
    conn
                .prepare_cached(
                    "INSERT INTO watchlists (agent_id, items, set_ms) VALUES (?1, ?2, ?3)
                     ON CONFLICT (agent_id) DO UPDATE SET items = excluded.items, set_ms = excluded.set_ms",
                )?
                .execute(params![agent_id, count, now_ms])
}

/// The day an agent's watchlist was last checked (outer None: it has none).
///
/// # Errors
/// When the store fails.
pub fn last_checked_day(conn: &Connection, agent_id: &str) -> Result<Option<Option<i64>>, DbError> {
    conn.prepare_cached("SELECT last_checked_day FROM watchlists WHERE agent_id = ?1")?
        .query_row([agent_id], |row| row.get(0))
        .optional()
}

/// An agent's watchlist items in order: (position, target, record).
///
/// # Errors
/// When the store fails.
pub fn items(
    conn: &Connection,
    agent_id: &str,
) -> Result<Vec<(i64, String, Option<String>)>, DbError> {
    conn
        .prepare_cached(
            "SELECT position, target, resource_id FROM watchlist_items WHERE agent_id = ?1 ORDER BY position",
        )?
        .query_map([agent_id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
        .collect()
}

/// Records the day an agent's watchlist was checked.
///
/// # Errors
/// When the store fails.
pub fn set_checked_day(conn: &Connection, agent_id: &str, day: i64) -> Result<usize, DbError> {
    conn.prepare_cached("UPDATE watchlists SET last_checked_day = ?2 WHERE agent_id = ?1")?
        .execute(params![agent_id, day])
}

/// Active agents whose watchlist was not checked on `day`, by id. A named read model over `agents` (status).
///
/// # Errors
/// When the store fails.
pub fn due_watchlists(conn: &Connection, day: i64) -> Result<Vec<String>, DbError> {
    conn
                .prepare_cached(
                    "SELECT w.agent_id FROM watchlists w JOIN agents a ON a.agent_id = w.agent_id
                     WHERE a.status = 'active' AND (w.last_checked_day IS NULL OR w.last_checked_day < ?1)
                     ORDER BY w.agent_id",
                )?
                .query_map([day], |row| row.get(0))?
                .collect::<Result<Vec<String>, _>>()
}

const ASK_COLUMNS: &str = "a.ask_id, a.requester_id, r.handle AS requester_handle, a.subject_id, s.handle AS subject_handle, a.credential_id, a.stamp, a.criteria,
    a.reward_note, a.deadline_ms, a.status, a.reviewer, a.accepted_ms, a.accept_until_ms, a.result, a.evidence_ref, a.note,
    a.submitted_ms, a.resolution, a.resolved_ms, a.stamp_id, a.created_ms";
/// A named read model: the asks with the requester's and the subject's handles (`agents`).
const ASK_FROM: &str = "verification_asks a JOIN agents r ON r.agent_id = a.requester_id JOIN agents s ON s.agent_id = a.subject_id";
/// The open rule at `?1` (now, Unix ms), as `Ask::state` reads it: open before the deadline,
/// or accepted with its 72 hours run out before the deadline. `list_verification_asks` and
/// `verification::open_asks_for_people` share it.
const OPEN_SQL: &str = "((a.status = 'open' AND a.deadline_ms > ?1) OR (a.status = 'accepted' AND a.accept_until_ms <= ?1 AND a.deadline_ms > ?1))";

kd_core::db_row! {
    impl FromRow for Ask {
        ask_id, requester_id, requester_handle, subject_id, subject_handle, credential_id, stamp,
        criteria, reward_note, deadline_ms, status, reviewer, accepted_ms, accept_until_ms, result,
        evidence_ref, note, submitted_ms, resolution, resolved_ms, stamp_id, created_ms,
    }
}

/// One ask by id.
///
/// # Errors
/// When the store fails.
pub fn ask(conn: &Connection, ask_id: &str) -> Result<Option<Ask>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {ASK_COLUMNS} FROM {ASK_FROM} WHERE a.ask_id = ?1"
    ))?
    .query_row([ask_id], Ask::from_row)
    .optional()
}

/// The open asks for `stamp` at `now_ms`, newest first, at most `limit`, and how many in all.
///
/// # Errors
/// When the store fails.
pub fn open_asks_for_stamp(
    conn: &Connection,
    now_ms: i64,
    stamp: &str,
    limit: i64,
) -> Result<(Vec<Ask>, i64), DbError> {
    let filter = format!("{OPEN_SQL} AND a.stamp = ?2");
    let total: i64 = conn
        .prepare_cached(&format!("SELECT COUNT(*) FROM {ASK_FROM} WHERE {filter}"))?
        .query_row(params![now_ms, stamp], |row| row.get(0))?;
    let asks = conn
        .prepare_cached(&format!(
            "SELECT {ASK_COLUMNS} FROM {ASK_FROM} WHERE {filter} ORDER BY a.created_ms DESC, a.ask_id LIMIT CAST(?3 AS BIGINT)"
        ))?
        .query_map(params![now_ms, stamp, limit], Ask::from_row)?
        .collect::<Result<Vec<Ask>, _>>()?;
    Ok((asks, total))
}

/// The asks `reviewer` (an agent id or `person:<id>`) holds at `now_ms` or submitted, soonest
/// hold end first (at most 200).
///
/// # Errors
/// When the store fails.
pub fn asks_held_by(conn: &Connection, reviewer: &str, now_ms: i64) -> Result<Vec<Ask>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {ASK_COLUMNS} FROM {ASK_FROM} WHERE a.reviewer = ?1
           AND ((a.status = 'accepted' AND a.accept_until_ms > ?2) OR a.status = 'submitted')
         ORDER BY a.status, a.accept_until_ms, a.ask_id LIMIT 200"
    ))?
    .query_map(params![reviewer, now_ms], Ask::from_row)?
    .collect()
}

/// What `list_verification_asks` filters by.
#[derive(Debug)]
pub struct AskFilter<'a> {
    /// open | accepted | submitted | resolved | anything else (all).
    pub status: &'a str,
    /// Unix ms.
    pub now: i64,
    /// Only asks about this agent.
    pub subject: Option<&'a str>,
    /// Only asks for this stamp.
    pub stamp: Option<&'a str>,
    /// Only asks held by this reviewer.
    pub reviewer: Option<&'a str>,
}

/// The asks matching `filter`, newest first, a page of `limit` from `offset`, and how many in
/// all.
///
/// # Errors
/// When the store fails.
pub fn list_asks(
    conn: &Connection,
    filter: &AskFilter<'_>,
    limit: i64,
    offset: i64,
) -> Result<(Vec<Ask>, i64), DbError> {
    let AskFilter {
        status,
        now,
        subject,
        stamp,
        reviewer,
    } = *filter;
    let state = match status {
        "open" => OPEN_SQL,
        "accepted" => "(a.status = 'accepted' AND a.accept_until_ms > ?1)",
        "submitted" => "(a.status = 'submitted' AND ?1 = ?1)",
        "resolved" => "(a.status IN ('resolved', 'closed') AND ?1 = ?1)",
        _ => "(?1 = ?1)",
    };
    let filter = format!(
        "{state} AND (CAST(?2 AS TEXT) IS NULL OR a.subject_id = ?2) AND (CAST(?3 AS TEXT) IS NULL OR a.stamp = ?3) AND (CAST(?4 AS TEXT) IS NULL OR a.reviewer = ?4)"
    );
    let total: i64 = conn
        .prepare_cached(&format!("SELECT COUNT(*) FROM {ASK_FROM} WHERE {filter}"))?
        .query_row(params![now, subject, stamp, reviewer], |row| row.get(0))?;
    let asks = conn
                .prepare_cached(&format!(
                    "SELECT {ASK_COLUMNS} FROM {ASK_FROM} WHERE {filter} ORDER BY a.created_ms DESC, a.ask_id LIMIT CAST(?5 AS BIGINT) OFFSET ?6"
                ))?
                .query_map(params![now, subject, stamp, reviewer, limit, offset], Ask::from_row)?
                .collect::<Result<Vec<Ask>, _>>()?;
    Ok((asks, total))
}

/// How many asks a requester posted after `after_ms`, and the oldest.
///
/// # Errors
/// When the store fails.
pub fn asks_since(
    conn: &Connection,
    requester_id: &str,
    after_ms: i64,
) -> Result<(i64, Option<i64>), DbError> {
    conn
                    .prepare_cached(
                        "SELECT COUNT(*), MIN(created_ms) FROM verification_asks WHERE requester_id = ?1 AND created_ms > ?2",
                    )?
                    .query_row(params![requester_id, after_ms], |row| Ok((row.get(0)?, row.get(1)?)))
}

/// The requester's unresolved ask for this stamp on this passport, if any.
///
/// # Errors
/// When the store fails.
pub fn unresolved_ask(
    conn: &Connection,
    requester_id: &str,
    subject_id: &str,
    passport_id: &str,
    stamp: &str,
    now_ms: i64,
) -> Result<Option<String>, DbError> {
    conn
                    .prepare_cached(
                        "SELECT ask_id FROM verification_asks WHERE requester_id = ?1 AND subject_id = ?2 AND credential_id = ?3
                         AND stamp = ?4 AND status IN ('open', 'accepted', 'submitted') AND deadline_ms > ?5",
                    )?
                    .query_row(params![requester_id, subject_id, passport_id, stamp, now_ms], |row| row.get(0))
                    .optional()
}

/// Posts an open ask.
///
/// # Errors
/// When the store fails.
pub fn insert_ask(conn: &Connection, ask: &NewAsk<'_>) -> Result<usize, DbError> {
    conn.insert_row(
        "INSERT INTO verification_asks (ask_id, requester_id, subject_id, credential_id, stamp, criteria, reward_note,
            deadline_ms, status, created_ms, updated_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'open', ?9, ?9)",
        ask,
    )
}

kd_core::db_row! {
    impl ToRow for NewAsk<'_> {
        ask_id, requester_id, subject_id, credential_id => passport_id, stamp, criteria,
        reward_note, deadline_ms, created_ms => now,
    }
}

/// A new verification ask.
#[derive(Debug)]
pub struct NewAsk<'a> {
    /// `kdva_` id.
    pub ask_id: &'a str,
    /// The asking agent.
    pub requester_id: &'a str,
    /// The agent to review.
    pub subject_id: &'a str,
    /// The passport the stamp goes on.
    pub passport_id: &'a str,
    /// The stamp asked for.
    pub stamp: &'a str,
    /// What the reviewer checks.
    pub criteria: &'a str,
    /// An optional reward note.
    pub reward_note: Option<&'a str>,
    /// Unix ms.
    pub deadline_ms: i64,
    /// Unix ms.
    pub now: i64,
}

/// A reviewer takes an ask until `until`.
///
/// # Errors
/// When the store fails.
pub fn accept_ask(
    conn: &Connection,
    ask_id: &str,
    reviewer: &str,
    now: i64,
    until: i64,
) -> Result<usize, DbError> {
    conn
        .prepare_cached(
            "UPDATE verification_asks SET status = 'accepted', reviewer = ?2, accepted_ms = ?3, accept_until_ms = ?4,
                result = NULL, evidence_ref = NULL, note = NULL, submitted_ms = NULL, updated_ms = ?3
             WHERE ask_id = ?1",
        )?
        .execute(params![ask_id, reviewer, now, until])
}

/// Records a reviewer's result.
///
/// # Errors
/// When the store fails.
pub fn submit_result(
    conn: &Connection,
    ask_id: &str,
    result: &str,
    evidence_ref: &str,
    note: Option<&str>,
    now: i64,
) -> Result<usize, DbError> {
    conn
        .prepare_cached(
            "UPDATE verification_asks SET status = 'submitted', result = ?2, evidence_ref = ?3, note = ?4, submitted_ms = ?5, updated_ms = ?5
             WHERE ask_id = ?1",
        )?
        .execute(params![ask_id, result, evidence_ref, note, now])
}

/// Records the requester's dispute of a reviewer's result.
///
/// # Errors
/// When the store fails.
pub fn insert_dispute(
    conn: &Connection,
    ask_id: &str,
    reviewer: &str,
    now: i64,
    event_seq: i64,
) -> Result<usize, DbError> {
    conn
                    .prepare_cached(
                        "INSERT INTO verification_disputes (ask_id, reviewer, disputed_ms, event_seq) VALUES (?1, ?2, ?3, ?4)",
                    )?
                    .execute(params![ask_id, reviewer, now, event_seq])
}

/// Opens a disputed ask again for another reviewer.
///
/// # Errors
/// When the store fails.
pub fn reopen_ask(conn: &Connection, ask_id: &str, now: i64) -> Result<usize, DbError> {
    conn
                        .prepare_cached(
                            "UPDATE verification_asks SET status = 'open', reviewer = NULL, accepted_ms = NULL, accept_until_ms = NULL,
                                result = NULL, evidence_ref = NULL, note = NULL, submitted_ms = NULL, updated_ms = ?2
                             WHERE ask_id = ?1",
                        )?
                        .execute(params![ask_id, now])
}

/// Closes a disputed ask.
///
/// # Errors
/// When the store fails.
pub fn close_disputed(conn: &Connection, ask_id: &str, now: i64) -> Result<usize, DbError> {
    conn
                        .prepare_cached(
                            "UPDATE verification_asks SET status = 'closed', resolution = 'disputed', resolved_ms = ?2, updated_ms = ?2
                             WHERE ask_id = ?1",
                        )?
                        .execute(params![ask_id, now])
}

/// Resolves an ask (stamped or refused).
///
/// # Errors
/// When the store fails.
pub fn resolve_ask(
    conn: &Connection,
    ask_id: &str,
    resolution: &str,
    now: i64,
    stamp_id: Option<String>,
) -> Result<usize, DbError> {
    conn
                .prepare_cached(
                    "UPDATE verification_asks SET status = 'resolved', resolution = ?2, resolved_ms = ?3, stamp_id = ?4, updated_ms = ?3
                     WHERE ask_id = ?1",
                )?
                .execute(params![ask_id, resolution, now, stamp_id])
}

/// A reviewer's resolved asks of one (resolution, stamp): (resolution, stamp, count, latest ms).
pub type ResolvedCount = (String, String, i64, Option<i64>);

/// A reviewer's resolved asks counted by (resolution, stamp), with the latest resolution time.
///
/// # Errors
/// When the store fails.
pub fn resolved_by(conn: &Connection, reviewer: &str) -> Result<Vec<ResolvedCount>, DbError> {
    conn.prepare_cached(
        "SELECT resolution, stamp, COUNT(*), MAX(resolved_ms) FROM verification_asks
             WHERE reviewer = ?1 AND status = 'resolved' GROUP BY resolution, stamp",
    )?
    .query_map([reviewer], |row| {
        Ok((
            row.get::<String>(0)?,
            row.get::<String>(1)?,
            row.get::<i64>(2)?,
            row.get::<Option<i64>>(3)?,
        ))
    })?
    .collect()
}

/// How many of a reviewer's results were disputed.
///
/// # Errors
/// When the store fails.
pub fn disputes_of(conn: &Connection, reviewer: &str) -> Result<i64, DbError> {
    conn.prepare_cached("SELECT COUNT(*) FROM verification_disputes WHERE reviewer = ?1")?
        .query_row([reviewer], |row| row.get(0))
}

/// The resolved asks about an agent, newest first, at most `limit`, in their public shape.
///
/// # Errors
/// When the store fails.
pub fn resolved_about(
    conn: &Connection,
    agent_id: &str,
    limit: i64,
) -> Result<Vec<Value>, DbError> {
    conn
        .prepare_cached(
            "SELECT ask_id, stamp, credential_id, reviewer, result, resolution, stamp_id, evidence_ref, resolved_ms
             FROM verification_asks WHERE subject_id = ?1 AND status = 'resolved' ORDER BY resolved_ms DESC, ask_id
             LIMIT CAST(?2 AS BIGINT)",
        )?
        .query_map(params![agent_id, limit], |row| {
            Ok(json!({
                "ask_id": row.get::<String>(0)?,
                "stamp": row.get::<String>(1)?,
                "passport_id": row.get::<String>(2)?,
                "reviewer": row.get::<Option<String>>(3)?,
                "result": row.get::<Option<String>>(4)?,
                "resolution": row.get::<Option<String>>(5)?,
                "stamp_id": row.get::<Option<String>>(6)?,
                "evidence_ref": row.get::<Option<String>>(7)?,
                "resolved_at": row.get::<Option<i64>>(8)?.map(rfc3339_ms),
            }))
        })?
        .collect()
}

/// Whether the requester disputed this reviewer's result on this ask.
///
/// # Errors
/// When the store fails.
pub fn disputed(conn: &Connection, ask_id: &str, reviewer: &str) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM verification_disputes WHERE ask_id = ?1 AND reviewer = ?2")?
        .query_row(params![ask_id, reviewer], |_| Ok(()))
        .optional()?
        .is_some())
}
