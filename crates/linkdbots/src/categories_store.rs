//! The SQL of live categories (decision 337; the `linkdbots_category_proposals` table of
//! migration 0027), portable across SQLite and PostgreSQL. The rules
//! ([`crate::categories`]) call these inside [`kd_core::store::Store::read`] or `write`
//! closures.

use kd_core::db::{Connection, OptionalExtension as _, Result, Row};
use kd_core::params;

/// A proposed category as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryProposalRow {
    /// `cat_…`.
    pub id: String,
    /// The hub account that proposed it (never published).
    pub proposer_id: String,
    /// The category key, e.g. `code.lint`.
    pub name: String,
    /// What it covers.
    pub description: String,
    /// `proposed`, `accepted` or `rejected`.
    pub status: String,
    /// When the moderator decided, Unix milliseconds.
    pub decided_ms: Option<i64>,
    /// When it was proposed, Unix milliseconds.
    pub created_ms: i64,
}

const COLUMNS: &str = "id, proposer_id, name, description, status, decided_ms, created_ms";

fn from_row(row: &Row<'_>) -> Result<CategoryProposalRow> {
    Ok(CategoryProposalRow {
        id: row.get(0)?,
        proposer_id: row.get(1)?,
        name: row.get(2)?,
        description: row.get(3)?,
        status: row.get(4)?,
        decided_ms: row.get(5)?,
        created_ms: row.get(6)?,
    })
}

fn list(conn: &Connection, filter: &str, value: &str) -> Result<Vec<CategoryProposalRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM linkdbots_category_proposals WHERE {filter} = ?1 \
         ORDER BY created_ms, id"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    statement.query_map([value], from_row)?.collect()
}

/// Stores a new proposal.
pub fn insert(conn: &Connection, row: &CategoryProposalRow) -> Result<()> {
    conn.execute(
        "INSERT INTO linkdbots_category_proposals
         (id, proposer_id, name, description, status, decided_ms, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            row.id,
            row.proposer_id,
            row.name,
            row.description,
            row.status,
            row.decided_ms,
            row.created_ms
        ],
    )
    .map(|_| ())
}

/// The proposals with `status` (`proposed`, `accepted`, `rejected`), oldest first.
pub fn with_status(conn: &Connection, status: &str) -> Result<Vec<CategoryProposalRow>> {
    list(conn, "status", status)
}

/// The proposals `proposer_id` made, oldest first.
pub fn of_proposer(conn: &Connection, proposer_id: &str) -> Result<Vec<CategoryProposalRow>> {
    list(conn, "proposer_id", proposer_id)
}

/// The proposals naming `name` (any status), oldest first.
pub fn named(conn: &Connection, name: &str) -> Result<Vec<CategoryProposalRow>> {
    list(conn, "name", name)
}

/// The proposal `id`.
pub fn by_id(conn: &Connection, id: &str) -> Result<Option<CategoryProposalRow>> {
    let sql = format!("SELECT {COLUMNS} FROM linkdbots_category_proposals WHERE id = ?1");
    conn.query_row(&sql, [id], from_row).optional()
}

/// How many proposals `proposer_id` made at or after `since_ms`.
pub fn count_since(conn: &Connection, proposer_id: &str, since_ms: i64) -> Result<i64> {
    conn.query_row(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM linkdbots_category_proposals
         WHERE proposer_id = ?1 AND created_ms >= ?2",
        params![proposer_id, since_ms],
        |row| row.get(0),
    )
}

/// Decides an undecided proposal; 0 when it was decided meanwhile.
pub fn decide(conn: &Connection, id: &str, status: &str, now_ms: i64) -> Result<usize> {
    conn.execute(
        "UPDATE linkdbots_category_proposals SET status = ?2, decided_ms = ?3
         WHERE id = ?1 AND status = 'proposed'",
        params![id, status, now_ms],
    )
}

/// How many proposals are stored (for tests that check a refusal wrote nothing).
pub fn count(conn: &Connection) -> Result<i64> {
    conn.query_row(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM linkdbots_category_proposals",
        params![],
        |row| row.get(0),
    )
}

/// How many cards each category has, digests included, as `(category, cards)`.
pub fn card_counts(conn: &Connection) -> Result<Vec<(String, i64)>> {
    let mut statement = conn.prepare_cached(
        "SELECT category, CAST(COUNT(*) AS BIGINT) FROM linkdbots_cards GROUP BY category",
    )?;
    statement
        .query_map(params![], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect()
}
