//! The SQL of the bench (section 6e, table `ronin_bench_runs`): a run as started, its score
//! once submitted, the latest start of a key, and the scored runs the leaderboard, the agent
//! view and trust rank ([`crate::bench`]).

use kd_core::db::{Connection, OptionalExtension, Result, Row, params};
use serde_json::Value;

/// One run (a row of `ronin_bench_runs`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Run {
    /// `rb_` and 32 hex.
    pub run_id: String,
    /// The key that started it.
    pub pubkey: String,
    /// The generator's seed (decimal).
    pub seed: String,
    /// The tasks as handed out.
    pub tasks: Value,
    /// The expected answers, in task order.
    pub answers: Vec<String>,
    /// When it started (hub clock, ms).
    pub started_ms: i64,
    /// The last Unix second a submit is taken.
    pub deadline_s: i64,
    /// When it was submitted (ms), if it was.
    pub submitted_ms: Option<i64>,
}

/// A submitted run's score.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scored {
    pub run_id: String,
    /// The key that started it.
    pub pubkey: String,
    pub correct: i64,
    pub elapsed_ms: i64,
    pub submitted_ms: i64,
}

/// Records a started run.
pub(crate) fn insert_run(conn: &Connection, run: &Run) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO ronin_bench_runs (run_id, pubkey, seed, tasks, answers, started_ms, deadline_s)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        run.run_id,
        run.pubkey,
        run.seed,
        run.tasks.to_string(),
        serde_json::to_string(&run.answers).unwrap_or_default(),
        run.started_ms,
        run.deadline_s
    ])?;
    Ok(())
}

/// The run with this id, if any.
pub(crate) fn run(conn: &Connection, run_id: &str) -> Result<Option<Run>> {
    conn.prepare_cached(
        "SELECT run_id, pubkey, seed, tasks, answers, started_ms, deadline_s, submitted_ms
           FROM ronin_bench_runs WHERE run_id = ?1",
    )?
    .query_row([run_id], |row| {
        Ok(Run {
            run_id: row.get("run_id")?,
            pubkey: row.get("pubkey")?,
            seed: row.get("seed")?,
            tasks: serde_json::from_str(&row.get::<String>("tasks")?).unwrap_or(Value::Null),
            answers: serde_json::from_str(&row.get::<String>("answers")?).unwrap_or_default(),
            started_ms: row.get("started_ms")?,
            deadline_s: row.get("deadline_s")?,
            submitted_ms: row.get("submitted_ms")?,
        })
    })
    .optional()
}

/// When `pubkey` last started a run (ms), if ever.
pub(crate) fn latest_start(conn: &Connection, pubkey: &str) -> Result<Option<i64>> {
    conn.prepare_cached("SELECT MAX(started_ms) FROM ronin_bench_runs WHERE pubkey = ?1")?
        .query_row([pubkey], |row| row.get::<Option<i64>>(0))
}

/// Records a run's score; `false` when it was scored already (nothing written).
pub(crate) fn score_run(
    conn: &Connection,
    run_id: &str,
    submitted_by: &str,
    score: &Scored,
    results: &[bool],
) -> Result<bool> {
    let updated = conn
        .prepare_cached(
            "UPDATE ronin_bench_runs SET submitted_ms = ?2, submitted_by = ?3, correct = ?4,
                    results = ?5, elapsed_ms = ?6
              WHERE run_id = ?1 AND submitted_ms IS NULL",
        )?
        .execute(params![
            run_id,
            score.submitted_ms,
            submitted_by,
            score.correct,
            serde_json::to_string(results).unwrap_or_default(),
            score.elapsed_ms
        ])?;
    Ok(updated == 1)
}

fn scored_row(row: &Row<'_>) -> Result<Scored> {
    Ok(Scored {
        run_id: row.get("run_id")?,
        pubkey: row.get("pubkey")?,
        correct: row.get("correct")?,
        elapsed_ms: row.get("elapsed_ms")?,
        submitted_ms: row.get("submitted_ms")?,
    })
}

/// The best run `pubkey` started that was submitted at or after `since_ms`: the most correct
/// answers, then the least time, then the earliest.
pub(crate) fn best_of_key(
    conn: &Connection,
    pubkey: &str,
    since_ms: i64,
) -> Result<Option<Scored>> {
    conn.prepare_cached(
        "SELECT run_id, pubkey, correct, elapsed_ms, submitted_ms FROM ronin_bench_runs
          WHERE pubkey = ?1 AND submitted_ms IS NOT NULL AND submitted_ms >= ?2
          ORDER BY correct DESC, elapsed_ms, submitted_ms, run_id LIMIT 1",
    )?
    .query_row(params![pubkey, since_ms], scored_row)
    .optional()
}

/// Each key's best run submitted at or after `since_ms`, best first (the order of
/// [`best_of_key`]).
pub(crate) fn best_of_each_key(conn: &Connection, since_ms: i64) -> Result<Vec<Scored>> {
    let mut statement = conn.prepare_cached(
        "SELECT run_id, pubkey, correct, elapsed_ms, submitted_ms FROM (
             SELECT run_id, pubkey, correct, elapsed_ms, submitted_ms,
                    ROW_NUMBER() OVER (PARTITION BY pubkey
                        ORDER BY correct DESC, elapsed_ms, submitted_ms, run_id) AS place
               FROM ronin_bench_runs
              WHERE submitted_ms IS NOT NULL AND submitted_ms >= ?1) ranked
          WHERE place = 1
          ORDER BY correct DESC, elapsed_ms, submitted_ms, run_id",
    )?;
    let rows = statement.query_map([since_ms], scored_row)?;
    rows.collect()
}

/// The name of `pubkey`'s PROFILE, if it published one.
pub(crate) fn profile_name(conn: &Connection, pubkey: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT name FROM ronin_profiles WHERE pubkey = ?1")?
        .query_row([pubkey], |row| row.get::<Option<String>>(0))
        .optional()?
        .flatten())
}

/// How many runs were started (tests).
pub(crate) fn run_count(conn: &Connection) -> Result<i64> {
    conn.prepare_cached("SELECT COUNT(*) FROM ronin_bench_runs")?
        .query_row([], |row| row.get(0))
}
