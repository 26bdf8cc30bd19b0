//! The SQL of Ronin's tasks: a task's row (an OFFER and what followed it), the chain events
//! filed under it, and the reads of `me` and the views.

use kd_core::db::{Connection, OptionalExtension, Result, Row, params};
use serde_json::Value;

use super::{json_column, text};

/// One task: an OFFER and what followed it (table `ronin_tasks`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Task {
    pub id: String,
    pub listing_owner: String,
    pub listing_d: String,
    pub listing_id: String,
    pub kind: String,
    pub hirer: String,
    pub agent: String,
    pub buyer: String,
    pub scope: String,
    pub price: String,
    pub currency: String,
    pub deadline: Option<i64>,
    pub scope_scan: Value,
    pub status: String,
    pub by_terms: bool,
    pub accept_id: Option<String>,
    pub deliver_id: Option<String>,
    pub deliver: Option<Value>,
    pub deliver_scan: Option<Value>,
    pub complete_id: Option<String>,
    pub completed_by: Option<String>,
    pub rating_id: Option<String>,
    pub rating: Option<i64>,
    pub paid_id: Option<String>,
    pub paid_amount: Option<String>,
    pub paid_currency: Option<String>,
    pub paid_to: Option<String>,
    pub received_id: Option<String>,
    pub settlement: String,
    pub created_ms: i64,
    pub updated_ms: i64,
}

/// How many tasks of the listing at `(owner, d)` are accepted or delivered (`max_open`).
pub(crate) fn open_tasks(conn: &Connection, owner: &str, d: &str) -> Result<i64> {
    conn.prepare_cached(
        "SELECT COUNT(*) FROM ronin_tasks
         WHERE listing_owner = ?1 AND listing_d = ?2 AND status IN ('accepted', 'delivered')",
    )?
    .query_row([owner, d], |row| row.get(0))
}

/// The task an event of the chain belongs to, and that event's kind.
pub(crate) fn task_of_event(conn: &Connection, event_id: &str) -> Result<Option<(String, u16)>> {
    conn.prepare_cached("SELECT task_id, kind FROM ronin_task_events WHERE event_id = ?1")?
        .query_row([event_id], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()
}

/// Files an event of the chain under its task.
pub(crate) fn link_event(
    conn: &Connection,
    event_id: &str,
    task_id: &str,
    kind: u16,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO ronin_task_events (event_id, task_id, kind) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![event_id, task_id, kind])?;
    Ok(())
}

/// A new task (an OFFER).
pub(crate) fn insert_task(conn: &Connection, task: &Task) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO ronin_tasks
           (id, listing_owner, listing_d, listing_id, type, hirer, agent, buyer, scope, price,
            currency, deadline, scope_scan, status, by_terms, settlement, created_ms, updated_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
    )?
    .execute(params![
        task.id,
        task.listing_owner,
        task.listing_d,
        task.listing_id,
        task.kind,
        task.hirer,
        task.agent,
        task.buyer,
        task.scope,
        task.price,
        task.currency,
        task.deadline,
        task.scope_scan.to_string(),
        task.status,
        task.by_terms,
        task.settlement,
        task.created_ms,
        task.updated_ms
    ])?;
    Ok(())
}

/// Writes back what the chain's later events change (everything after the offer's fields).
pub(crate) fn update_task(conn: &Connection, task: &Task) -> Result<()> {
    conn.prepare_cached(
        "UPDATE ronin_tasks SET status = ?2, by_terms = ?3, accept_id = ?4, deliver_id = ?5,
           deliver = ?6, deliver_scan = ?7, complete_id = ?8, completed_by = ?9,
           rating_id = ?10, rating = ?11, paid_id = ?12, paid_amount = ?13,
           paid_currency = ?14, paid_to = ?15, received_id = ?16, settlement = ?17,
           updated_ms = ?18
         WHERE id = ?1",
    )?
    .execute(params![
        task.id,
        task.status,
        task.by_terms,
        task.accept_id,
        task.deliver_id,
        text(task.deliver.as_ref()),
        text(task.deliver_scan.as_ref()),
        task.complete_id,
        task.completed_by,
        task.rating_id,
        task.rating,
        task.paid_id,
        task.paid_amount,
        task.paid_currency,
        task.paid_to,
        task.received_id,
        task.settlement,
        task.updated_ms
    ])?;
    Ok(())
}

/// A struct literal whose listed fields are read from the same-named columns of `row`,
/// followed by the fields given as `name: value` (renamed or decoded columns).
macro_rules! from_columns {
    ($row:ident => $ty:ident { $($column:ident),* $(,)? } $($rest:tt)*) => {
        $ty { $($column: $row.get(stringify!($column))?,)* $($rest)* }
    };
}

pub(super) fn task_row(row: &Row<'_>) -> Result<Task> {
    Ok(from_columns!(row => Task {
        id, listing_owner, listing_d, listing_id, hirer, agent, buyer, scope, price, currency,
        deadline, status, by_terms, accept_id, deliver_id, complete_id, completed_by, rating_id,
        rating, paid_id, paid_amount, paid_currency, paid_to, received_id, settlement,
        created_ms, updated_ms
    }
        kind: row.get("type")?,
        scope_scan: json_column(row, "scope_scan")?.unwrap_or(Value::Null),
        deliver: json_column(row, "deliver")?,
        deliver_scan: json_column(row, "deliver_scan")?,
    ))
}

/// One task by its id (the OFFER id).
pub(crate) fn task(conn: &Connection, id: &str) -> Result<Option<Task>> {
    conn.prepare_cached("SELECT * FROM ronin_tasks WHERE id = ?1")?
        .query_row([id], task_row)
        .optional()
}

/// The task's events as signed (canonical JSON), in the order the hub accepted them.
pub(crate) fn task_events(conn: &Connection, task_id: &str) -> Result<Vec<String>> {
    let mut statement = conn.prepare_cached(
        "SELECT e.event_json FROM ronin_task_events t JOIN ronin_events e ON e.id = t.event_id
         WHERE t.task_id = ?1 ORDER BY e.log_seq",
    )?;
    let rows = statement.query_map([task_id], |row| row.get::<String>(0))?;
    rows.collect()
}

/// How many tasks are stored (for tests and stats).
pub(crate) fn task_count(conn: &Connection) -> Result<i64> {
    conn.prepare_cached("SELECT COUNT(*) FROM ronin_tasks")?
        .query_row([], |row| row.get(0))
}

/// The tasks `pubkey` is agent or buyer on with a chain event in `(since, until]`, each with
/// its newest such position, oldest first, at most `limit`.
pub(crate) fn tasks_since(
    conn: &Connection,
    pubkey: &str,
    since: i64,
    until: i64,
    limit: i64,
) -> Result<Vec<(String, i64)>> {
    let mut statement = conn.prepare_cached(
        "SELECT t.id, MAX(e.log_seq) AS seq FROM ronin_tasks t
           JOIN ronin_task_events te ON te.task_id = t.id
           JOIN ronin_events e ON e.id = te.event_id
         WHERE (t.agent = ?1 OR t.buyer = ?1) AND e.log_seq > ?2 AND e.log_seq <= ?3
         GROUP BY t.id ORDER BY seq, t.id LIMIT CAST(?4 AS BIGINT)",
    )?;
    let rows = statement.query_map(params![pubkey, since, until, limit], |row| {
        Ok((row.get(0)?, row.get(1)?))
    })?;
    rows.collect()
}

/// CLAIM and CERTIFY events naming `pubkey` in `(since, until]`.
pub(crate) fn other_events_since(
    conn: &Connection,
    pubkey: &str,
    since: i64,
    until: i64,
) -> Result<i64> {
    conn.prepare_cached(
        "SELECT COUNT(*) FROM ronin_events e
         WHERE e.log_seq > ?2 AND e.log_seq <= ?3
           AND (e.id IN (SELECT c.event_id FROM ronin_claims c WHERE c.agent = ?1)
             OR e.id IN (SELECT r.event_id FROM ronin_certifications r WHERE r.pubkey = ?1))",
    )?
    .query_row(params![pubkey, since, until], |row| row.get(0))
}
