//! The SQL of trust (section 8): the ratings a key received as the agent of a task, its
//! mismatched settlements, and the tasks completed by the keys it referred.

use kd_core::db::{Connection, Result};

/// Every rating of a task whose agent is `pubkey`: `(stars 1-5, the RATING's created_at in
/// Unix seconds)`.
pub(crate) fn ratings_received(conn: &Connection, pubkey: &str) -> Result<Vec<(i64, i64)>> {
    let mut statement = conn.prepare_cached(
        "SELECT t.rating, e.created_at FROM ronin_tasks t
           JOIN ronin_events e ON e.id = t.rating_id
          WHERE t.agent = ?1 AND t.rating IS NOT NULL",
    )?;
    let rows = statement.query_map([pubkey], |row| Ok((row.get(0)?, row.get(1)?)))?;
    rows.collect()
}

/// How many tasks `pubkey` was the agent or the buyer of whose settlement is a mismatch.
pub(crate) fn mismatches(conn: &Connection, pubkey: &str) -> Result<i64> {
    conn.prepare_cached(
        "SELECT COUNT(*) FROM ronin_tasks
          WHERE (agent = ?1 OR buyer = ?1) AND settlement = 'mismatch'",
    )?
    .query_row([pubkey], |row| row.get(0))
}

/// For each key whose PROFILE names `pubkey` in `referred_by`, how many tasks it completed as
/// the agent (at most `cap` each).
pub(crate) fn referred_completions(conn: &Connection, pubkey: &str, cap: i64) -> Result<Vec<i64>> {
    let mut statement = conn.prepare_cached(
        "SELECT (SELECT COUNT(*) FROM ronin_tasks t
                  WHERE t.agent = p.pubkey AND t.status = 'completed')
           FROM ronin_profiles p WHERE p.referred_by = ?1",
    )?;
    let rows = statement.query_map([pubkey], |row| row.get::<i64>(0))?;
    rows.map(|count| count.map(|count| count.min(cap)))
        .collect()
}
