//! Ronin's storage: every SQL statement of Ronin's writes (events, keys, profiles, listings,
//! tasks, successors), of the task reads (`store/tasks.rs`) and of the reading doors
//! (`store/reads.rs`). Handlers and rules call these functions and hold
//! no SQL of their own. All of it is portable (SQLite and PostgreSQL through `kd_core::db`).
//!
//! The write functions run inside the writer's transaction (`WriteTxn::conn`): each POST's
//! batch is one job of the one writer, so the checks a rule makes before it writes (one ACCEPT
//! per OFFER, a listing's `max_open`) see every write before them and none after.

mod artifacts;
mod bench;
mod callbacks;
mod inbox;
mod notify;
mod reads;
mod stats;
mod tasks;
mod trust;

pub(crate) use artifacts::{Artifact, artifact, insert_artifact, stored_bytes};
pub(crate) use bench::{
    Run, Scored, best_of_each_key, best_of_key, insert_run, latest_start, profile_name, run,
    run_count, score_run,
};
pub(crate) use callbacks::{
    CallbackRow, callbacks_of, claim_try, due_callbacks, lineage_callback, queue_callback,
    record_try,
};
pub(crate) use inbox::inbox;
pub(crate) use notify::{lineage_email, set_email};
pub(crate) use reads::{agent_row, agents_page, feed, listings_of, open_listings};
pub(crate) use stats::profiles_by_source;
use tasks::task_row;
pub(crate) use tasks::{
    Task, insert_task, link_event, open_tasks, other_events_since, task, task_count, task_events,
    task_of_event, tasks_since, update_task,
};
pub(crate) use trust::{mismatches, ratings_received, referred_completions};

use kd_core::db::{Connection, OptionalExtension, Result, Row, params};
use kd_protocol::nostr::Event;
use serde_json::Value;

/// A PROFILE's fields (latest wins).
#[derive(Debug)]
pub(crate) struct Profile {
    pub name: String,
    pub about: Option<String>,
    pub human: bool,
    pub callback: Option<String>,
    pub source: Option<String>,
    pub referred_by: Option<String>,
}

/// A LISTING's fields (latest wins per `(owner, d)`).
#[derive(Debug)]
pub(crate) struct Listing {
    pub d: String,
    pub kind: String,
    pub available: bool,
    pub content: Value,
    pub scan: Value,
}

/// A stored listing as an OFFER finds it.
#[derive(Debug, Clone)]
pub(crate) struct ListingRow {
    pub event_id: String,
    pub kind: String,
    pub available: bool,
    pub content: Value,
    pub scan: Value,
}

fn json_column(row: &Row<'_>, name: &str) -> Result<Option<Value>> {
    Ok(row
        .get::<Option<String>>(name)?
        .map(|text| serde_json::from_str(&text).unwrap_or(Value::Null)))
}

fn text(value: Option<&Value>) -> Option<String> {
    value.map(Value::to_string)
}

/// Whether an event with this id is stored.
pub(crate) fn event_known(conn: &Connection, id: &str) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM ronin_events WHERE id = ?1)")?
        .query_row([id], |row| row.get(0))
}

/// A stored event's JSON text as received (NIP-01 field order), if the hub holds it.
pub(crate) fn event_json(conn: &Connection, id: &str) -> Result<Option<String>> {
    conn.prepare_cached("SELECT event_json FROM ronin_events WHERE id = ?1")?
        .query_row([id], |row| row.get::<String>(0))
        .optional()
}

/// A key's status (`active`, `retired`, `revoked`), `None` for a key never seen as a signer.
pub(crate) fn key_status(conn: &Connection, pubkey: &str) -> Result<Option<String>> {
    conn.prepare_cached("SELECT status FROM ronin_keys WHERE pubkey = ?1")?
        .query_row([pubkey], |row| row.get(0))
        .optional()
}

/// Whether the key has published a PROFILE.
pub(crate) fn has_profile(conn: &Connection, pubkey: &str) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM ronin_profiles WHERE pubkey = ?1)")?
        .query_row([pubkey], |row| row.get(0))
}

/// Keeps an accepted event as signed (canonical JSON), with its log row.
pub(crate) fn insert_event(
    conn: &Connection,
    event: &Event,
    received_ms: i64,
    log_seq: i64,
) -> Result<()> {
    let created_at = i64::try_from(event.created_at).unwrap_or(i64::MAX);
    conn.prepare_cached(
        "INSERT INTO ronin_events (id, pubkey, kind, created_at, event_json, received_ms, log_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        event.id,
        event.pubkey,
        event.kind,
        created_at,
        event.to_json_text(),
        received_ms,
        log_seq
    ])?;
    Ok(())
}

/// Marks a signer as seen (active) unless it is known already.
pub(crate) fn ensure_key(conn: &Connection, pubkey: &str, now_ms: i64) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO ronin_keys (pubkey, status, first_seen_ms) VALUES (?1, 'active', ?2)
         ON CONFLICT (pubkey) DO NOTHING",
    )?
    .execute(params![pubkey, now_ms])?;
    Ok(())
}

/// Sets a key's status (`revoked` or `retired`), naming the event that did it.
pub(crate) fn set_key_status(
    conn: &Connection,
    pubkey: &str,
    status: &str,
    by_event: &str,
) -> Result<()> {
    conn.prepare_cached("UPDATE ronin_keys SET status = ?2, revoked_by = ?3 WHERE pubkey = ?1")?
        .execute(params![pubkey, status, by_event])?;
    Ok(())
}

/// Latest wins: a newer `created_at`, or the same with a lower id.
pub(crate) fn upsert_profile(conn: &Connection, event: &Event, profile: &Profile) -> Result<()> {
    let created_at = i64::try_from(event.created_at).unwrap_or(i64::MAX);
    conn.prepare_cached(
        "INSERT INTO ronin_profiles
           (pubkey, event_id, created_at, name, about, human, callback, source, referred_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
         ON CONFLICT (pubkey) DO UPDATE SET
           event_id = excluded.event_id, created_at = excluded.created_at,
           name = excluded.name, about = excluded.about, human = excluded.human,
           callback = excluded.callback, source = excluded.source,
           referred_by = excluded.referred_by
         WHERE excluded.created_at > ronin_profiles.created_at
            OR (excluded.created_at = ronin_profiles.created_at
                AND excluded.event_id < ronin_profiles.event_id)",
    )?
    .execute(params![
        event.pubkey,
        event.id,
        created_at,
        profile.name,
        profile.about,
        profile.human,
        profile.callback,
        profile.source,
        profile.referred_by
    ])?;
    Ok(())
}

/// Latest wins per `(owner, d)`, as for profiles.
pub(crate) fn upsert_listing(conn: &Connection, event: &Event, listing: &Listing) -> Result<()> {
    let created_at = i64::try_from(event.created_at).unwrap_or(i64::MAX);
    conn.prepare_cached(
        "INSERT INTO ronin_listings
           (owner, d, event_id, created_at, type, available, content, scan)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (owner, d) DO UPDATE SET
           event_id = excluded.event_id, created_at = excluded.created_at,
           type = excluded.type, available = excluded.available,
           content = excluded.content, scan = excluded.scan
         WHERE excluded.created_at > ronin_listings.created_at
            OR (excluded.created_at = ronin_listings.created_at
                AND excluded.event_id < ronin_listings.event_id)",
    )?
    .execute(params![
        event.pubkey,
        listing.d,
        event.id,
        created_at,
        listing.kind,
        listing.available,
        listing.content.to_string(),
        listing.scan.to_string()
    ])?;
    Ok(())
}

/// The current listing at `31100:<owner>:<d>`, withdrawn or not.
pub(crate) fn listing(conn: &Connection, owner: &str, d: &str) -> Result<Option<ListingRow>> {
    conn.prepare_cached(
        "SELECT event_id, type, available, content, scan FROM ronin_listings
         WHERE owner = ?1 AND d = ?2",
    )?
    .query_row([owner, d], |row| {
        Ok(ListingRow {
            event_id: row.get("event_id")?,
            kind: row.get("type")?,
            available: row.get("available")?,
            content: json_column(row, "content")?.unwrap_or(Value::Null),
            scan: json_column(row, "scan")?.unwrap_or(Value::Null),
        })
    })
    .optional()
}

/// The key that succeeded `pubkey` (SUCCESSOR), if any.
pub(crate) fn successor(conn: &Connection, pubkey: &str) -> Result<Option<String>> {
    conn.prepare_cached("SELECT new_key FROM ronin_successors WHERE old_key = ?1")?
        .query_row([pubkey], |row| row.get(0))
        .optional()
}

/// The key `pubkey` succeeded, if any.
pub(crate) fn predecessor(conn: &Connection, pubkey: &str) -> Result<Option<String>> {
    conn.prepare_cached("SELECT old_key FROM ronin_successors WHERE new_key = ?1")?
        .query_row([pubkey], |row| row.get(0))
        .optional()
}

/// Records `old_key → new_key` (the caller checked that the new key is fresh).
pub(crate) fn insert_successor(
    conn: &Connection,
    old_key: &str,
    new_key: &str,
    event_id: &str,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO ronin_successors (old_key, new_key, event_id) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![old_key, new_key, event_id])?;
    Ok(())
}

/// The most rotations a lineage may hold (a bound on the walks below).
pub(crate) const LINEAGE_MAX: usize = 64;

/// The head of `pubkey`'s lineage: the key at the end of its SUCCESSOR chain (itself when it
/// has no successor).
pub(crate) fn head(conn: &Connection, pubkey: &str) -> Result<String> {
    let mut key = pubkey.to_owned();
    for _ in 0..LINEAGE_MAX {
        match successor(conn, &key)? {
            Some(next) => key = next,
            None => break,
        }
    }
    Ok(key)
}

/// Whether two keys are one lineage (the same head).
pub(crate) fn same_lineage(conn: &Connection, a: &str, b: &str) -> Result<bool> {
    Ok(a == b || head(conn, a)? == head(conn, b)?)
}

/// Whether `pubkey` or a key it succeeded has published a PROFILE.
pub(crate) fn lineage_has_profile(conn: &Connection, pubkey: &str) -> Result<bool> {
    let mut key = pubkey.to_owned();
    for _ in 0..LINEAGE_MAX {
        if has_profile(conn, &key)? {
            return Ok(true);
        }
        match predecessor(conn, &key)? {
            Some(previous) => key = previous,
            None => break,
        }
    }
    Ok(false)
}

/// Marks a key retired: it has a successor, and only the successor writes now.
pub(crate) fn retire_key(conn: &Connection, pubkey: &str) -> Result<()> {
    conn.prepare_cached("UPDATE ronin_keys SET status = 'retired' WHERE pubkey = ?1")?
        .execute([pubkey])?;
    Ok(())
}

/// Every key of `pubkey`'s lineage, head first, then each key it succeeded.
pub(crate) fn lineage(conn: &Connection, pubkey: &str) -> Result<Vec<String>> {
    let mut keys = vec![head(conn, pubkey)?];
    while keys.len() < LINEAGE_MAX {
        let Some(last) = keys.last() else { break };
        match predecessor(conn, last)? {
            Some(previous) => keys.push(previous),
            None => break,
        }
    }
    Ok(keys)
}

/// Whether `principal` has claimed `agent`.
pub(crate) fn claimed(conn: &Connection, agent: &str, principal: &str) -> Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM ronin_claims WHERE agent = ?1 AND principal = ?2)",
    )?
    .query_row([agent, principal], |row| row.get(0))
}

/// Records a CLAIM.
pub(crate) fn insert_claim(conn: &Connection, event: &Event, agent: &str) -> Result<()> {
    let created_at = i64::try_from(event.created_at).unwrap_or(i64::MAX);
    conn.prepare_cached(
        "INSERT INTO ronin_claims (agent, principal, event_id, note, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        agent,
        event.pubkey,
        event.id,
        event.content,
        created_at
    ])?;
    Ok(())
}

/// The principals that claimed `agent`, oldest first.
pub(crate) fn principals(conn: &Connection, agent: &str) -> Result<Vec<String>> {
    let mut statement = conn.prepare_cached(
        "SELECT principal FROM ronin_claims WHERE agent = ?1 ORDER BY created_at, principal",
    )?;
    let rows = statement.query_map([agent], |row| row.get::<String>(0))?;
    rows.collect()
}

/// Records a CERTIFY (latest wins, as for profiles).
pub(crate) fn upsert_certification(
    conn: &Connection,
    event: &Event,
    pubkey: &str,
    human: bool,
) -> Result<()> {
    let created_at = i64::try_from(event.created_at).unwrap_or(i64::MAX);
    conn.prepare_cached(
        "INSERT INTO ronin_certifications (pubkey, event_id, created_at, human)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (pubkey) DO UPDATE SET
           event_id = excluded.event_id, created_at = excluded.created_at,
           human = excluded.human
         WHERE excluded.created_at > ronin_certifications.created_at
            OR (excluded.created_at = ronin_certifications.created_at
                AND excluded.event_id < ronin_certifications.event_id)",
    )?
    .execute(params![pubkey, event.id, created_at, human])?;
    Ok(())
}

/// Whether the operator vouches that `pubkey` is a person.
pub(crate) fn certified(conn: &Connection, pubkey: &str) -> Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM ronin_certifications WHERE pubkey = ?1 AND human = 1)",
    )?
    .query_row([pubkey], |row| row.get(0))
}

/// Takes a NIP-98 auth event id once: `false` when it was taken before. Drops ids older than
/// `keep_ms`.
pub(crate) fn take_auth(conn: &Connection, id: &str, now_ms: i64, keep_ms: i64) -> Result<bool> {
    conn.prepare_cached("DELETE FROM ronin_auth_seen WHERE seen_ms < ?1")?
        .execute([now_ms.saturating_sub(keep_ms)])?;
    let taken = conn
        .prepare_cached(
            "INSERT INTO ronin_auth_seen (id, seen_ms) VALUES (?1, ?2)
             ON CONFLICT (id) DO NOTHING",
        )?
        .execute(params![id, now_ms])?;
    Ok(taken == 1)
}

/// The log position of the newest stored event (0 for none).
pub(crate) fn latest_seq(conn: &Connection) -> Result<i64> {
    conn.prepare_cached("SELECT CAST(COALESCE(MAX(log_seq), 0) AS BIGINT) FROM ronin_events")?
        .query_row([], |row| row.get(0))
}
