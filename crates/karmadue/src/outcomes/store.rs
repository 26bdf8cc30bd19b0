//! Outcomes' storage: the `outcome_reports` table (docs/architecture.md "Storage modules").

use kd_core::db::{Connection, DbError, FromRow, OptionalExtension, params};

use super::Counted;

kd_core::db_row! {
    impl FromRow for Counted { agent_id, owner_key, result, weight, outlier }
}

/// A record's outcome reports, all time: (all, broke).
///
/// # Errors
/// When the store fails.
pub fn report_counts(conn: &Connection, resource_id: &str) -> Result<(i64, i64), DbError> {
    conn
            .prepare_cached(
                "SELECT COUNT(*), COALESCE(SUM(CASE WHEN result = 'broke' THEN 1 ELSE 0 END), 0) FROM outcome_reports WHERE resource_id = ?1",
            )?
            .query_row([resource_id], |row| Ok((row.get(0)?, row.get(1)?)))
}

/// Reports on a record made in `(since_ms, until_ms]`, oldest first.
///
/// # Errors
/// When the store fails.
pub(crate) fn reports_between(
    conn: &Connection,
    resource_id: &str,
    since_ms: i64,
    until_ms: i64,
) -> Result<Vec<Counted>, DbError> {
    conn.prepare_cached(
        "SELECT agent_id, owner_key, result, weight, outlier FROM outcome_reports
         WHERE resource_id = ?1 AND created_ms > ?2 AND created_ms <= ?3
         ORDER BY created_ms, rowid",
    )?
    .query_map(params![resource_id, since_ms, until_ms], Counted::from_row)?
    .collect()
}

/// How many reports one owner made on a record after `after_ms`.
///
/// # Errors
/// When the store fails.
pub fn owner_reports_since(
    conn: &Connection,
    owner_key: &str,
    resource_id: &str,
    after_ms: i64,
) -> Result<i64, DbError> {
    conn
        .prepare_cached("SELECT COUNT(*) FROM outcome_reports WHERE owner_key = ?1 AND resource_id = ?2 AND created_ms > ?3")?
        .query_row(params![owner_key, resource_id, after_ms], |row| row.get(0))
}

/// How many of an owner's `last` reports were outliers.
///
/// # Errors
/// When the store fails.
pub fn recent_outliers(conn: &Connection, owner_key: &str, last: i64) -> Result<i64, DbError> {
    conn
        .prepare_cached(
            "SELECT COALESCE(SUM(outlier), 0) FROM (SELECT outlier FROM outcome_reports WHERE owner_key = ?1
             ORDER BY created_ms DESC, rowid DESC LIMIT CAST(?2 AS BIGINT)) recent",
        )?
        .query_row(params![owner_key, last], |row| row.get(0))
}

/// The report made with a receipt, if any.
///
/// # Errors
/// When the store fails.
pub fn report_for_receipt(conn: &Connection, receipt_id: &str) -> Result<Option<String>, DbError> {
    conn.prepare_cached("SELECT report_id FROM outcome_reports WHERE receipt_id = ?1")?
        .query_row([&receipt_id], |row| row.get(0))
        .optional()
}

/// The times of the reports whose `column` (`agent_id` or `owner_key`) is `value`, made after
/// `after_ms`, oldest first.
///
/// # Errors
/// When the store fails.
pub fn report_times_since(
    conn: &Connection,
    column: &str,
    value: &str,
    after_ms: i64,
) -> Result<Vec<i64>, DbError> {
    let sql = match column {
        "owner_key" => {
            "SELECT created_ms FROM outcome_reports WHERE owner_key = ?1 AND created_ms > ?2 ORDER BY created_ms"
        }
        _ => {
            "SELECT created_ms FROM outcome_reports WHERE agent_id = ?1 AND created_ms > ?2 ORDER BY created_ms"
        }
    };
    conn.prepare_cached(sql)?
        .query_map(params![value, after_ms], |row| row.get::<i64>(0))?
        .collect()
}

/// A new outcome report.
#[derive(Debug)]
pub struct NewReport<'a> {
    /// `kdo_` id.
    pub report_id: &'a str,
    /// The receipt it uses.
    pub receipt_id: &'a str,
    /// The record.
    pub resource_id: &'a str,
    /// The version the agent used.
    pub version_used: Option<&'a str>,
    /// worked | broke | didnt_use.
    pub result: &'a str,
    /// Optional reason code.
    pub reason_code: Option<&'a str>,
    /// Optional note.
    pub note: Option<&'a str>,
    /// SHA-256 of the note.
    pub note_sha256: &'a str,
    /// The reporting agent.
    pub agent_id: &'a str,
    /// The owner key it counts under.
    pub owner_key: &'a str,
    /// The signed record text.
    pub canonical_text: &'a str,
    /// SHA-256 of the text.
    pub record_hash: &'a str,
    /// The hub's signature of the text.
    pub signature: &'a str,
    /// Its weight.
    pub weight: f64,
    /// JSON array of flags.
    pub flags: &'a str,
    /// JSON array of reasons.
    pub reasons: &'a str,
    /// Went against a strong consensus.
    pub outlier: bool,
    /// The `outcome.reported` event.
    pub event_seq: i64,
    /// Unix ms.
    pub now: i64,
}

kd_core::db_row! {
    impl ToRow for NewReport<'_> {
        report_id, receipt_id, resource_id, version_used, result, reason_code, note, note_sha256,
        agent_id, owner_key, canonical_text, record_hash, signature, weight, flags, reasons,
        outlier, event_seq, created_ms => now,
    }
}

/// Stores an outcome report.
///
/// # Errors
/// When the store fails.
pub fn insert_report(conn: &Connection, report: &NewReport<'_>) -> Result<(), DbError> {
    conn.insert_row(
        "INSERT INTO outcome_reports (report_id, receipt_id, resource_id, version_used, result, reason_code, note,
            note_sha256, agent_id, owner_key, canonical_text, record_hash, signature, weight, flags, reasons,
            outlier, event_seq, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
        report,
    )?;
    Ok(())
}
