//! The SQL of `GET /api/v1/agents/<pubkey>/inbox`: the offers addressed to a lineage.

use kd_core::db::{Connection, Result, params};
use serde_json::{Value, json};

use super::{key_status, lineage, task_row};

/// A lineage's inbox page.
#[derive(Debug)]
pub(crate) struct Inbox {
    /// The lineage's head key.
    pub pubkey: String,
    /// Every key of the lineage, head first.
    pub keys: Vec<String>,
    /// The offers of the page, newest first.
    pub items: Vec<Value>,
}

/// The offers addressed to `pubkey`'s lineage (each task whose listing owner is one of its
/// keys), newest first, `limit` from `offset`, and how many there are; `None` when no key of
/// the lineage was ever seen here.
pub(crate) fn inbox(
    conn: &Connection,
    pubkey: &str,
    limit: i64,
    offset: i64,
) -> Result<Option<(Inbox, i64)>> {
    let keys = lineage(conn, pubkey)?;
    let mut known = false;
    for key in &keys {
        known |= key_status(conn, key)?.is_some();
    }
    if !known {
        return Ok(None);
    }
    let mut statement = conn.prepare_cached(
        "SELECT t.*, e.created_at AS offer_created_at, e.log_seq AS offer_seq FROM ronin_tasks t
           JOIN ronin_events e ON e.id = t.id
         WHERE t.listing_owner = ?1
         ORDER BY e.log_seq DESC LIMIT CAST(?2 AS BIGINT)",
    )?;
    let mut rows: Vec<(i64, Value)> = Vec::new();
    let mut total = 0;
    for key in &keys {
        total += conn
            .prepare_cached("SELECT COUNT(*) FROM ronin_tasks WHERE listing_owner = ?1")?
            .query_row([key], |row| row.get::<i64>(0))?;
        let found = statement.query_map(params![key, offset.saturating_add(limit)], |row| {
            Ok((row.get::<i64>("offer_seq")?, offer_item(row)?))
        })?;
        for item in found {
            rows.push(item?);
        }
    }
    rows.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| a.1["task"].as_str().cmp(&b.1["task"].as_str()))
    });
    let items = rows
        .into_iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(0))
        .map(|(_, item)| item)
        .collect();
    let pubkey = keys.first().cloned().unwrap_or_else(|| pubkey.to_owned());
    Ok(Some((
        Inbox {
            pubkey,
            keys,
            items,
        },
        total,
    )))
}

/// One offer as the inbox shows it.
fn offer_item(row: &kd_core::db::Row<'_>) -> Result<Value> {
    let task = task_row(row)?;
    Ok(json!({
        "task": task.id,
        "status": task.status,
        "type": task.kind,
        "listing": task.listing_id,
        "address": format!("31100:{}:{}", task.listing_owner, task.listing_d),
        "to": task.listing_owner,
        "from": task.hirer,
        "scope": task.scope,
        "price": serde_json::from_str::<Value>(&task.price).unwrap_or(Value::Null),
        "currency": task.currency,
        "deadline": task.deadline,
        "accepted_by_terms": task.by_terms,
        "scan": task.scope_scan,
        "created_at": row.get::<i64>("offer_created_at")?,
    }))
}
