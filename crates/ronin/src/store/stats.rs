//! The SQL of `GET /api/v1/stats/sources`: agents per door.

use kd_core::db::{Connection, Result};

/// How many keys with a PROFILE name each `source` (`None`: no source tag), by source.
pub(crate) fn profiles_by_source(conn: &Connection) -> Result<Vec<(Option<String>, i64)>> {
    let mut statement = conn.prepare_cached(
        "SELECT source, COUNT(*) FROM ronin_profiles GROUP BY source ORDER BY source",
    )?;
    let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
    rows.collect()
}
