//! Jobs' storage: `jobs` and `disputes` (docs/architecture.md "Storage modules"; migration
//! 0033). Rows are read and bound by name (decision 440).

use kd_core::db::{Connection, DbError, FromRow, OptionalExtension, params};

/// One row of `jobs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// `kdjob_` id.
    pub job_id: String,
    /// The requesting agent.
    pub requester_id: String,
    /// The catalog record to check, if named.
    pub resource_id: Option<String>,
    /// Short title (third-party text).
    pub title: String,
    /// What to look at (third-party text).
    pub detail: Option<String>,
    /// The method id.
    pub method: String,
    /// `public` or `private`.
    pub scope: String,
    /// USD cents, a record.
    pub price_cents: i64,
    /// `open`, `taken`, `done` or `cancelled`.
    pub status: String,
    /// `person:<id>` once taken.
    pub taker: Option<String>,
    /// Unix ms.
    pub taken_ms: Option<i64>,
    /// `passed`, `failed` or `inconclusive` once done.
    pub result: Option<String>,
    /// The evidence link once done.
    pub evidence_ref: Option<String>,
    /// Unix ms.
    pub done_ms: Option<i64>,
    /// Unix ms.
    pub cancelled_ms: Option<i64>,
    /// Unix ms.
    pub created_ms: i64,
    /// Unix ms.
    pub updated_ms: i64,
}

kd_core::db_row! {
    impl FromRow, ToRow for Job {
        job_id, requester_id, resource_id, title, detail, method, scope, price_cents, status,
        taker, taken_ms, result, evidence_ref, done_ms, cancelled_ms, created_ms, updated_ms,
    }
}

/// One row of `disputes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispute {
    /// `kddp_` id.
    pub dispute_id: String,
    /// The agent that opened it.
    pub opener_id: String,
    /// What it is about.
    pub subject_type: String,
    /// The subject's id.
    pub subject_id: String,
    /// Why (third-party text).
    pub reason: String,
    /// What a reviewer should know (third-party text).
    pub details: Option<String>,
    /// `open`.
    pub status: String,
    /// Unix ms.
    pub created_ms: i64,
}

kd_core::db_row! {
    impl FromRow, ToRow for Dispute {
        dispute_id, opener_id, subject_type, subject_id, reason, details, status, created_ms,
    }
}

const JOB_COLUMNS: &str =
    "job_id, requester_id, resource_id, title, detail, method, scope, price_cents, status,
    taker, taken_ms, result, evidence_ref, done_ms, cancelled_ms, created_ms, updated_ms";

const DISPUTE_COLUMNS: &str =
    "dispute_id, opener_id, subject_type, subject_id, reason, details, status, created_ms";

/// Stores a new job.
///
/// # Errors
/// When the store fails.
pub fn insert_job(conn: &Connection, job: &Job) -> Result<(), DbError> {
    conn.insert_row(
        "INSERT INTO jobs (job_id, requester_id, resource_id, title, detail, method, scope, price_cents, status,
            taker, taken_ms, result, evidence_ref, done_ms, cancelled_ms, created_ms, updated_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        job,
    )?;
    Ok(())
}

/// One job by id.
///
/// # Errors
/// When the store fails.
pub fn job(conn: &Connection, job_id: &str) -> Result<Option<Job>, DbError> {
    conn.prepare_cached(&format!("SELECT {JOB_COLUMNS} FROM jobs WHERE job_id = ?1"))?
        .query_row([job_id], Job::from_row)
        .optional()
}

/// What `requester_id`'s jobs created after `since_ms` and not cancelled are priced at, in
/// USD cents (today's spend against the per-day cap).
///
/// # Errors
/// When the store fails.
pub fn spent_since(conn: &Connection, requester_id: &str, since_ms: i64) -> Result<i64, DbError> {
    conn.prepare_cached(
        "SELECT CAST(COALESCE(SUM(price_cents), 0) AS BIGINT) AS spent FROM jobs
         WHERE requester_id = ?1 AND created_ms > ?2 AND status <> 'cancelled'",
    )?
    .query_row(params![requester_id, since_ms], |row| {
        row.get_by_name("spent")
    })
}

/// How many jobs `requester_id` has open.
///
/// # Errors
/// When the store fails.
pub fn open_count(conn: &Connection, requester_id: &str) -> Result<i64, DbError> {
    conn.prepare_cached(
        "SELECT COUNT(*) AS open_jobs FROM jobs WHERE requester_id = ?1 AND status = 'open'",
    )?
    .query_row([requester_id], |row| row.get_by_name("open_jobs"))
}

/// Marks an open job cancelled at `now_ms`.
///
/// # Errors
/// When the store fails.
pub fn cancel(conn: &Connection, job_id: &str, now_ms: i64) -> Result<usize, DbError> {
    conn.prepare_cached(
        "UPDATE jobs SET status = 'cancelled', cancelled_ms = ?2, updated_ms = ?2
         WHERE job_id = ?1 AND status = 'open'",
    )?
    .execute(params![job_id, now_ms])
}

/// Marks an open job taken by `taker` at `now_ms`.
///
/// # Errors
/// When the store fails.
pub fn take(conn: &Connection, job_id: &str, taker: &str, now_ms: i64) -> Result<usize, DbError> {
    conn.prepare_cached(
        "UPDATE jobs SET status = 'taken', taker = ?2, taken_ms = ?3, updated_ms = ?3
         WHERE job_id = ?1 AND status = 'open'",
    )?
    .execute(params![job_id, taker, now_ms])
}

/// Marks a taken job done with its result and evidence link at `now_ms`.
///
/// # Errors
/// When the store fails.
pub fn finish(
    conn: &Connection,
    job_id: &str,
    result: &str,
    evidence_ref: &str,
    now_ms: i64,
) -> Result<usize, DbError> {
    conn.prepare_cached(
        "UPDATE jobs SET status = 'done', result = ?2, evidence_ref = ?3, done_ms = ?4, updated_ms = ?4
         WHERE job_id = ?1 AND status = 'taken'",
    )?
    .execute(params![job_id, result, evidence_ref, now_ms])
}

/// Open jobs, newest first, at most `limit`.
///
/// # Errors
/// When the store fails.
pub fn open_jobs(conn: &Connection, limit: i64) -> Result<Vec<Job>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {JOB_COLUMNS} FROM jobs WHERE status = 'open'
         ORDER BY created_ms DESC, job_id LIMIT CAST(?1 AS BIGINT)"
    ))?
    .query_map([limit], Job::from_row)?
    .collect()
}

/// The jobs `taker` took, newest first, at most `limit`.
///
/// # Errors
/// When the store fails.
pub fn taken_by(conn: &Connection, taker: &str, limit: i64) -> Result<Vec<Job>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {JOB_COLUMNS} FROM jobs WHERE taker = ?1
         ORDER BY taken_ms DESC, job_id LIMIT CAST(?2 AS BIGINT)"
    ))?
    .query_map(params![taker, limit], Job::from_row)?
    .collect()
}

/// The jobs `requester_id` requested, newest first, at most `limit`.
///
/// # Errors
/// When the store fails.
pub fn requested_by(
    conn: &Connection,
    requester_id: &str,
    limit: i64,
) -> Result<Vec<Job>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {JOB_COLUMNS} FROM jobs WHERE requester_id = ?1
         ORDER BY created_ms DESC, job_id LIMIT CAST(?2 AS BIGINT)"
    ))?
    .query_map(params![requester_id, limit], Job::from_row)?
    .collect()
}

/// Stores a new dispute.
///
/// # Errors
/// When the store fails.
pub fn insert_dispute(conn: &Connection, dispute: &Dispute) -> Result<(), DbError> {
    conn.insert_row(
        "INSERT INTO disputes (dispute_id, opener_id, subject_type, subject_id, reason, details, status, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        dispute,
    )?;
    Ok(())
}

/// The disputes `opener_id` opened, newest first, at most `limit`.
///
/// # Errors
/// When the store fails.
pub fn opened_by(conn: &Connection, opener_id: &str, limit: i64) -> Result<Vec<Dispute>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {DISPUTE_COLUMNS} FROM disputes WHERE opener_id = ?1
         ORDER BY created_ms DESC, dispute_id LIMIT CAST(?2 AS BIGINT)"
    ))?
    .query_map(params![opener_id, limit], Dispute::from_row)?
    .collect()
}
