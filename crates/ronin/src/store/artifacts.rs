//! The SQL of Ronin's uploaded files (`POST /api/v1/artifacts`, `GET /api/v1/artifacts/<sha256>`):
//! one metadata row per stored file; the bytes are on disk ([`crate::artifacts`]).

use kd_core::db::{Connection, OptionalExtension, Result, params};
use serde_json::Value;

/// One stored file's metadata (table `ronin_artifacts`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Artifact {
    /// sha256 hex of the bytes.
    pub hash: String,
    /// The file's size.
    pub bytes: i64,
    /// Its content type as uploaded.
    pub content_type: String,
    /// The key whose upload stored it.
    pub uploader: String,
    /// The scanner's verdict.
    pub scan: Value,
    /// When it was stored (hub clock, ms).
    pub created_ms: i64,
}

/// The stored file with this hash, if any.
pub(crate) fn artifact(conn: &Connection, hash: &str) -> Result<Option<Artifact>> {
    conn.prepare_cached(
        "SELECT hash, bytes, content_type, uploader, scan, created_ms FROM ronin_artifacts
         WHERE hash = ?1",
    )?
    .query_row([hash], |row| {
        Ok(Artifact {
            hash: row.get("hash")?,
            bytes: row.get("bytes")?,
            content_type: row.get("content_type")?,
            uploader: row.get("uploader")?,
            scan: serde_json::from_str(&row.get::<String>("scan")?).unwrap_or(Value::Null),
            created_ms: row.get("created_ms")?,
        })
    })
    .optional()
}

/// The bytes the files stored by `keys`' uploads hold together (a lineage's use).
pub(crate) fn stored_bytes(conn: &Connection, keys: &[String]) -> Result<i64> {
    let mut total = 0i64;
    for key in keys {
        total = total.saturating_add(
            conn.prepare_cached(
                "SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM ronin_artifacts
                 WHERE uploader = ?1",
            )?
            .query_row([key], |row| row.get::<i64>(0))?,
        );
    }
    Ok(total)
}

/// Records a stored file; `false` when a row with its hash exists already (nothing written).
pub(crate) fn insert_artifact(conn: &Connection, artifact: &Artifact) -> Result<bool> {
    let inserted = conn
        .prepare_cached(
            "INSERT INTO ronin_artifacts (hash, bytes, content_type, uploader, scan, created_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (hash) DO NOTHING",
        )?
        .execute(params![
            artifact.hash,
            artifact.bytes,
            artifact.content_type,
            artifact.uploader,
            artifact.scan.to_string(),
            artifact.created_ms
        ])?;
    Ok(inserted == 1)
}
