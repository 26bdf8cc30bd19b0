//! The SQL of Ronin's reading doors ([`crate::read`]): the feed, the agent lists and views,
//! and the listings (the latest of each `(owner, d)`).

use kd_core::db::{Connection, OptionalExtension, Result, Row, params};
use serde_json::{Value, json};

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// The stored events' texts, newest first (`GET /api/v1/feed`), those whose `created_at`
/// is within the inclusive `(since, until)` bounds, Unix seconds.
pub(crate) fn feed(
    conn: &Connection,
    limit: i64,
    offset: i64,
    (since, until): (i64, i64),
) -> Result<Vec<String>> {
    let mut statement = conn.prepare_cached(
        "SELECT event_json FROM ronin_events
         WHERE created_at >= ?3 AND created_at <= ?4
         ORDER BY log_seq DESC
         LIMIT CAST(?1 AS BIGINT) OFFSET ?2",
    )?;
    let rows = statement.query_map(params![limit, offset, since, until], |row| {
        row.get::<String>(0)
    })?;
    rows.collect()
}

/// One agent as lists show it, less its trust (the callers add it: [`crate::trust`]).
fn agent_summary(row: &Row<'_>) -> Result<Value> {
    let pubkey: String = row.get("pubkey")?;
    Ok(json!({
        "pubkey": pubkey,
        "did": crate::read::did_key(&pubkey),
        "name": row.get::<Option<String>>("name")?,
        "about": row.get::<Option<String>>("about")?,
        "human": row.get::<Option<bool>>("human")?.unwrap_or(false),
        "certified": row.get::<Option<bool>>("certified")?.unwrap_or(false),
        "status": row.get::<String>("status")?,
    }))
}

const AGENT_SELECT: &str = "SELECT k.pubkey, k.status, p.name, p.about, p.human, p.source,
        p.referred_by, p.event_id AS profile, k.first_seen_ms, c.human AS certified
     FROM ronin_keys k LEFT JOIN ronin_profiles p ON p.pubkey = k.pubkey
       LEFT JOIN ronin_certifications c ON c.pubkey = k.pubkey";

/// Keys with a profile, newest first, as lists show them (`human`: only the keys the operator
/// certified as people).
pub(crate) fn agents_page(
    conn: &Connection,
    limit: i64,
    offset: i64,
    human: bool,
) -> Result<Vec<Value>> {
    let mut statement = conn.prepare_cached(&format!(
        "{AGENT_SELECT} WHERE p.pubkey IS NOT NULL AND (CAST(?3 AS BIGINT) = 0 OR c.human = 1)
         ORDER BY k.first_seen_ms DESC, k.pubkey LIMIT CAST(?1 AS BIGINT) OFFSET ?2"
    ))?;
    let rows = statement.query_map(params![limit, offset, i64::from(human)], agent_summary)?;
    rows.collect()
}

/// One key as the agent view starts it: the list's fields plus `source`, `referred_by` and
/// `profile` (the PROFILE's id); `None` for a key never seen.
pub(crate) fn agent_row(conn: &Connection, pubkey: &str) -> Result<Option<Value>> {
    conn.prepare_cached(&format!("{AGENT_SELECT} WHERE k.pubkey = ?1"))?
        .query_row([pubkey], |row| {
            let mut agent = agent_summary(row)?;
            agent["source"] = json!(row.get::<Option<String>>("source")?);
            agent["referred_by"] = json!(row.get::<Option<String>>("referred_by")?);
            agent["profile"] = json!(row.get::<Option<String>>("profile")?);
            Ok(agent)
        })
        .optional()
}

const LISTING_SELECT: &str = "SELECT l.owner, l.d, l.event_id, l.created_at, l.type, l.available,
        l.content, l.scan, k.status
     FROM ronin_listings l JOIN ronin_keys k ON k.pubkey = l.owner";

/// A listing as every view shows it: its content, then its id, address, owner, `d`, type,
/// availability, `created_at` and scan.
fn listing_view(row: &Row<'_>) -> Result<Value> {
    let owner: String = row.get("owner")?;
    let d: String = row.get("d")?;
    let mut view = parse(&row.get::<String>("content")?);
    if !view.is_object() {
        view = json!({});
    }
    view["id"] = json!(row.get::<String>("event_id")?);
    view["address"] = json!(format!("31100:{owner}:{d}"));
    view["owner"] = json!(owner);
    view["d"] = json!(d);
    view["type"] = json!(row.get::<String>("type")?);
    view["available"] = json!(row.get::<bool>("available")?);
    view["created_at"] = json!(row.get::<i64>("created_at")?);
    view["scan"] = parse(&row.get::<String>("scan")?);
    Ok(view)
}

/// Every listing of `owner`, withdrawn ones included, newest first.
pub(crate) fn listings_of(conn: &Connection, owner: &str) -> Result<Vec<Value>> {
    let mut statement = conn.prepare_cached(&format!(
        "{LISTING_SELECT} WHERE l.owner = ?1 ORDER BY l.created_at DESC, l.d"
    ))?;
    let rows = statement.query_map([owner], listing_view)?;
    rows.collect()
}

/// The available listings of active keys (of `kind` when given), newest first, each with its
/// content's text in lower case (what `q` searches).
pub(crate) fn open_listings(conn: &Connection, kind: Option<&str>) -> Result<Vec<(String, Value)>> {
    let mut statement = conn.prepare_cached(&format!(
        "{LISTING_SELECT} WHERE l.available = 1 AND k.status = 'active'
           AND (CAST(?1 AS TEXT) IS NULL OR l.type = ?1)
         ORDER BY l.created_at DESC, l.owner, l.d"
    ))?;
    let rows = statement.query_map([&kind], |row| {
        Ok((
            row.get::<String>("content")?.to_lowercase(),
            listing_view(row)?,
        ))
    })?;
    rows.collect()
}
