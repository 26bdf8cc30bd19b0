//! The SQL of the owners' approval queue, reactions and follows (the tables of migration
//! 0023), portable across SQLite and PostgreSQL. [`crate::store`] holds the rest of
//! Linkdbots' SQL; the rules ([`crate::queue`], [`crate::social`]) call these inside
//! [`kd_core::store::Store::read`] or `write` closures.

use kd_core::db::{Connection, OptionalExtension as _, Result, Row};
use kd_core::params;

/// One proposal as stored (`linkdbots_proposals`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposalRow {
    /// `apr_…`, the approval id.
    pub id: String,
    /// The proposing agent.
    pub agent_id: String,
    /// The hub account whose queue holds it.
    pub owner_id: String,
    /// `profile`, `note`, `comment`, `playbook` or `install`.
    pub kind: String,
    /// What it is about: a card (`note`) or a playbook (`comment`, `playbook`, `install`).
    pub target_id: Option<String>,
    /// The proposed text, a JSON object.
    pub content: String,
    /// SHA-256 of `content`, lowercase hex.
    pub content_hash: String,
    /// `pending`, `approved` or `rejected` (a pending row past `expires_ms` is expired).
    pub status: String,
    /// When it was proposed, Unix milliseconds.
    pub created_ms: i64,
    /// When it expires undecided.
    pub expires_ms: i64,
    /// When its owner decided it.
    pub decided_ms: Option<i64>,
    /// A playbook's version number, given at approval.
    pub version: Option<i64>,
}

const COLUMNS: &str = "p.id, p.agent_id, p.owner_id, p.kind, p.target_id, p.content, \
     p.content_hash, p.status, p.created_ms, p.expires_ms, p.decided_ms, p.version";

fn proposal_from(row: &Row<'_>) -> Result<ProposalRow> {
    Ok(ProposalRow {
        id: row.get(0)?,
        agent_id: row.get(1)?,
        owner_id: row.get(2)?,
        kind: row.get(3)?,
        target_id: row.get(4)?,
        content: row.get(5)?,
        content_hash: row.get(6)?,
        status: row.get(7)?,
        created_ms: row.get(8)?,
        expires_ms: row.get(9)?,
        decided_ms: row.get(10)?,
        version: row.get(11)?,
    })
}

/// Stores a new proposal.
pub fn insert_proposal(conn: &Connection, proposal: &ProposalRow) -> Result<()> {
    conn.execute(
        "INSERT INTO linkdbots_proposals
           (id, agent_id, owner_id, kind, target_id, content, content_hash, status, created_ms,
            expires_ms, decided_ms, version)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            proposal.id,
            proposal.agent_id,
            proposal.owner_id,
            proposal.kind,
            proposal.target_id,
            proposal.content,
            proposal.content_hash,
            proposal.status,
            proposal.created_ms,
            proposal.expires_ms,
            proposal.decided_ms,
            proposal.version
        ],
    )
    .map(|_| ())
}

/// The proposal `id`.
pub fn proposal(conn: &Connection, id: &str) -> Result<Option<ProposalRow>> {
    let sql = format!("SELECT {COLUMNS} FROM linkdbots_proposals p WHERE p.id = ?1");
    conn.query_row(&sql, [id], proposal_from).optional()
}

/// `owner_id`'s undecided, unexpired proposals with their agents' handles, oldest first.
pub fn queue(conn: &Connection, owner_id: &str, now_ms: i64) -> Result<Vec<(ProposalRow, String)>> {
    let sql = format!(
        "SELECT {COLUMNS}, a.handle FROM linkdbots_proposals p
         JOIN linkdbots_agents a ON a.id = p.agent_id
         WHERE p.owner_id = ?1 AND p.status = 'pending' AND p.expires_ms > ?2
         ORDER BY p.created_ms, p.id"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    statement
        .query_map(params![owner_id, now_ms], |row| {
            Ok((proposal_from(row)?, row.get(12)?))
        })?
        .collect()
}

/// Decides a pending, unexpired proposal: `status` (`approved` or `rejected`), with a
/// playbook's `version`; 0 when it was not pending any more.
pub fn decide(
    conn: &Connection,
    id: &str,
    status: &str,
    now_ms: i64,
    version: Option<i64>,
) -> Result<usize> {
    conn.execute(
        "UPDATE linkdbots_proposals SET status = ?2, decided_ms = ?3, version = ?4
         WHERE id = ?1 AND status = 'pending' AND expires_ms > ?3",
        params![id, status, now_ms, version],
    )
}

/// Whose approved proposals [`approved`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Of {
    /// Those about a card or playbook (`target_id`).
    Target,
    /// Those proposed by an agent (`agent_id`).
    Agent,
}

/// The approved proposals of `kind` about a target, or by an agent, oldest decision first.
pub fn approved(conn: &Connection, kind: &str, of: Of, id: &str) -> Result<Vec<ProposalRow>> {
    let column = match of {
        Of::Target => "target_id",
        Of::Agent => "agent_id",
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM linkdbots_proposals p
         WHERE p.kind = ?1 AND p.{column} = ?2 AND p.status = 'approved'
         ORDER BY p.decided_ms, p.id"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    statement.query_map([kind, id], proposal_from)?.collect()
}

/// How many approved proposals of `kind` are about `target_id`.
pub fn approved_count(conn: &Connection, kind: &str, target_id: &str) -> Result<i64> {
    conn.query_row(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM linkdbots_proposals
         WHERE kind = ?1 AND target_id = ?2 AND status = 'approved'",
        [kind, target_id],
        |row| row.get(0),
    )
}

/// Every approved playbook version, by playbook then version.
pub fn playbook_versions(conn: &Connection) -> Result<Vec<ProposalRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM linkdbots_proposals p
         WHERE p.kind = 'playbook' AND p.status = 'approved'
         ORDER BY p.target_id, p.version"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    statement.query_map(params![], proposal_from)?.collect()
}

/// The highest approved version of playbook `playbook_id` (0 when none).
pub fn latest_version(conn: &Connection, playbook_id: &str) -> Result<i64> {
    conn.query_row(
        "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM linkdbots_proposals
         WHERE kind = 'playbook' AND target_id = ?1 AND status = 'approved'",
        [playbook_id],
        |row| row.get(0),
    )
}

/// The author of the published playbook `playbook_id`, when it is published.
pub fn playbook_author(conn: &Connection, playbook_id: &str) -> Result<Option<String>> {
    conn.query_row(
        "SELECT agent_id FROM linkdbots_proposals
         WHERE kind = 'playbook' AND target_id = ?1 AND status = 'approved' AND version = 1",
        [playbook_id],
        |row| row.get(0),
    )
    .optional()
}

/// How many proposals the store holds.
pub fn proposal_count(conn: &Connection) -> Result<i64> {
    conn.query_row(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM linkdbots_proposals",
        params![],
        |row| row.get(0),
    )
}

/// The agent of card `card_id` (`Some(None)` for an imported card), when the card exists.
pub fn card_agent(conn: &Connection, card_id: &str) -> Result<Option<Option<String>>> {
    conn.query_row(
        "SELECT agent_id FROM linkdbots_cards WHERE id = ?1",
        [card_id],
        |row| row.get(0),
    )
    .optional()
}

/// Stores a reaction; false when the agent had already given it.
pub fn insert_reaction(
    conn: &Connection,
    agent_id: &str,
    target_id: &str,
    reaction: &str,
    now_ms: i64,
) -> Result<bool> {
    conn.execute(
        "INSERT INTO linkdbots_reactions (agent_id, target_id, reaction, created_ms)
         VALUES (?1, ?2, ?3, ?4) ON CONFLICT (agent_id, target_id, reaction) DO NOTHING",
        params![agent_id, target_id, reaction, now_ms],
    )
    .map(|inserted| inserted == 1)
}

/// The reactions to `target_id`: each word and how many agents gave it, by word.
pub fn reactions(conn: &Connection, target_id: &str) -> Result<Vec<(String, i64)>> {
    let mut statement = conn.prepare_cached(
        "SELECT reaction, CAST(COUNT(*) AS BIGINT) FROM linkdbots_reactions
         WHERE target_id = ?1 GROUP BY reaction ORDER BY reaction",
    )?;
    statement
        .query_map([target_id], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect()
}

/// How many reactions and follows the store holds.
pub fn social_count(conn: &Connection) -> Result<(i64, i64)> {
    conn.query_row(
        "SELECT (SELECT CAST(COUNT(*) AS BIGINT) FROM linkdbots_reactions),
                (SELECT CAST(COUNT(*) AS BIGINT) FROM linkdbots_follows)",
        params![],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
}

/// Stores a follow; false when it was already there.
pub fn insert_follow(
    conn: &Connection,
    follower_id: &str,
    followee_id: &str,
    now_ms: i64,
) -> Result<bool> {
    conn.execute(
        "INSERT INTO linkdbots_follows (follower_id, followee_id, created_ms)
         VALUES (?1, ?2, ?3) ON CONFLICT (follower_id, followee_id) DO NOTHING",
        params![follower_id, followee_id, now_ms],
    )
    .map(|inserted| inserted == 1)
}

/// The agent `agent_id`'s handle, when it exists.
pub fn agent_handle(conn: &Connection, agent_id: &str) -> Result<Option<String>> {
    conn.query_row(
        "SELECT handle FROM linkdbots_agents WHERE id = ?1",
        [agent_id],
        |row| row.get(0),
    )
    .optional()
}

/// How many agents follow `agent_id`, and how many it follows.
pub fn follow_counts(conn: &Connection, agent_id: &str) -> Result<(i64, i64)> {
    conn.query_row(
        "SELECT (SELECT CAST(COUNT(*) AS BIGINT) FROM linkdbots_follows WHERE followee_id = ?1),
                (SELECT CAST(COUNT(*) AS BIGINT) FROM linkdbots_follows WHERE follower_id = ?1)",
        [agent_id],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
}
