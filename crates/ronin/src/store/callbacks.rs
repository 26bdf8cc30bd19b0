//! The SQL of the signed callbacks (`ronin_callbacks`, section 6 "Push instead"): the
//! lineage's callback URL, the queue, and the deliverer's claims and outcomes.

use kd_core::db::{Connection, OptionalExtension, Result, params};

/// One queued callback as the deliverer reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CallbackRow {
    /// The log position of the change (the payload's cursor is `c<seq>`).
    pub seq: i64,
    /// The lineage's head key the payload was made for.
    pub pubkey: String,
    pub url: String,
    /// The exact bytes to POST.
    pub body: String,
    pub tries: i64,
    pub state: String,
    pub last_error: Option<String>,
}

/// The callback URL of the newest PROFILE among `keys` (a lineage), if that profile has one.
pub(crate) fn lineage_callback(conn: &Connection, keys: &[String]) -> Result<Option<String>> {
    let mut newest: Option<(i64, String, Option<String>)> = None;
    for key in keys {
        let profile: Option<(i64, String, Option<String>)> = conn
            .prepare_cached(
                "SELECT created_at, event_id, callback FROM ronin_profiles WHERE pubkey = ?1",
            )?
            .query_row([key], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .optional()?;
        // Latest wins as for one key's profiles: a newer created_at, or the same with a
        // lower id.
        if let Some(profile) = profile
            && newest.as_ref().is_none_or(|best| {
                profile.0 > best.0 || (profile.0 == best.0 && profile.1 < best.1)
            })
        {
            newest = Some(profile);
        }
    }
    Ok(newest.and_then(|(_, _, callback)| callback))
}

/// Queues a callback, its first try due at `now_ms`.
pub(crate) fn queue_callback(
    conn: &Connection,
    seq: i64,
    pubkey: &str,
    url: &str,
    body: &str,
    now_ms: i64,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO ronin_callbacks (seq, pubkey, url, body, created_ms, tries, next_ms, state)
         VALUES (?1, ?2, ?3, ?4, ?5, 0, ?5, 'pending')",
    )?
    .execute(params![seq, pubkey, url, body, now_ms])?;
    Ok(())
}

fn row(row: &kd_core::db::Row<'_>) -> Result<CallbackRow> {
    Ok(CallbackRow {
        seq: row.get(0)?,
        pubkey: row.get(1)?,
        url: row.get(2)?,
        body: row.get(3)?,
        tries: row.get(4)?,
        state: row.get(5)?,
        last_error: row.get(6)?,
    })
}

/// The pending callbacks whose next try is due at `now_ms`, oldest first, at most `limit`.
pub(crate) fn due_callbacks(
    conn: &Connection,
    now_ms: i64,
    limit: i64,
) -> Result<Vec<CallbackRow>> {
    let mut statement = conn.prepare_cached(
        "SELECT seq, pubkey, url, body, tries, state, last_error FROM ronin_callbacks
          WHERE state = 'pending' AND next_ms <= ?1
          ORDER BY next_ms, seq, pubkey LIMIT CAST(?2 AS BIGINT)",
    )?;
    let rows = statement.query_map(params![now_ms, limit], row)?;
    rows.collect()
}

/// Counts one more try of a pending callback that has made `tries` (a claim: `false` when
/// another deliverer took it first), with its next try due at `next_ms` or, with `None`,
/// none (then it is given up unless this try succeeds).
pub(crate) fn claim_try(
    conn: &Connection,
    seq: i64,
    pubkey: &str,
    tries: i64,
    next_ms: Option<i64>,
) -> Result<bool> {
    let state = if next_ms.is_some() {
        "pending"
    } else {
        "given_up"
    };
    let claimed = conn
        .prepare_cached(
            "UPDATE ronin_callbacks SET tries = tries + 1, next_ms = ?4, state = ?5
              WHERE seq = ?1 AND pubkey = ?2 AND tries = ?3 AND state = 'pending'",
        )?
        .execute(params![seq, pubkey, tries, next_ms, state])?;
    Ok(claimed == 1)
}

/// Records a try's outcome: delivered (no more tries), or the failure's reason.
pub(crate) fn record_try(
    conn: &Connection,
    seq: i64,
    pubkey: &str,
    failure: Option<&str>,
) -> Result<()> {
    match failure {
        None => conn
            .prepare_cached(
                "UPDATE ronin_callbacks SET state = 'delivered', next_ms = NULL, last_error = NULL
                  WHERE seq = ?1 AND pubkey = ?2",
            )?
            .execute(params![seq, pubkey])?,
        Some(reason) => conn
            .prepare_cached(
                "UPDATE ronin_callbacks SET last_error = ?3 WHERE seq = ?1 AND pubkey = ?2",
            )?
            .execute(params![seq, pubkey, reason])?,
    };
    Ok(())
}

/// Every callback queued for `pubkey`, oldest first.
pub(crate) fn callbacks_of(conn: &Connection, pubkey: &str) -> Result<Vec<CallbackRow>> {
    let mut statement = conn.prepare_cached(
        "SELECT seq, pubkey, url, body, tries, state, last_error FROM ronin_callbacks
          WHERE pubkey = ?1 ORDER BY seq",
    )?;
    let rows = statement.query_map([pubkey], row)?;
    rows.collect()
}
