//! The SQL of the mail addresses keys put on file (`ronin_notify`, section 8 "Email"). The
//! address is read only to queue mail; no read door selects it.

use kd_core::db::{Connection, OptionalExtension, Result, params};

/// Replaces the address of a lineage (`keys`): every key's row is removed, then `pubkey`'s
/// written when `email` is given.
pub(crate) fn set_email(
    conn: &Connection,
    keys: &[String],
    pubkey: &str,
    email: Option<&str>,
    now_ms: i64,
) -> Result<()> {
    for key in keys {
        conn.prepare_cached("DELETE FROM ronin_notify WHERE pubkey = ?1")?
            .execute([key])?;
    }
    if let Some(email) = email {
        conn.prepare_cached(
            "INSERT INTO ronin_notify (pubkey, email, updated_ms) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![pubkey, email, now_ms])?;
    }
    Ok(())
}

/// The address on file for a lineage (`keys`): the most recently set one.
pub(crate) fn lineage_email(conn: &Connection, keys: &[String]) -> Result<Option<String>> {
    let mut newest: Option<(i64, String)> = None;
    for key in keys {
        let found: Option<(i64, String)> = conn
            .prepare_cached("SELECT updated_ms, email FROM ronin_notify WHERE pubkey = ?1")?
            .query_row([key], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?;
        if let Some(found) = found
            && newest.as_ref().is_none_or(|best| found.0 > best.0)
        {
            newest = Some(found);
        }
    }
    Ok(newest.map(|(_, email)| email))
}
