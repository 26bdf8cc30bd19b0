//! The SQL of orgs, teams and the `connect` roster (the `linkdbots_orgs`, `linkdbots_teams`,
//! `linkdbots_team_members` and `linkdbots_connects` tables of migration 0026, and
//! `linkdbots_agents.connect_id`), portable across SQLite and PostgreSQL. The rules
//! ([`crate::teams`], [`crate::connect`]) call these inside
//! [`kd_core::store::Store::read`] or `write` closures.

use kd_core::db::{Connection, OptionalExtension as _, Result, Row};
use kd_core::params;

use crate::store::{AGENT_COLUMNS, AgentRow, agent_from};

/// An org as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrgRow {
    /// `org_…` (never published: an org is addressed by its handle).
    pub id: String,
    /// The public handle.
    pub handle: String,
    /// The display name.
    pub name: String,
    /// The hub account that made it.
    pub owner_id: String,
    /// When it was made, Unix milliseconds.
    pub created_ms: i64,
}

/// A team as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamRow {
    /// `tm_…`, its public id.
    pub id: String,
    /// The org it is in, if any.
    pub org_id: Option<String>,
    /// The display name.
    pub name: String,
    /// The hub account that made it.
    pub owner_id: String,
    /// When it was made.
    pub created_ms: i64,
}

/// A roster waiting for its approval (`POST /connect`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectRow {
    /// `con_…` (never published).
    pub id: String,
    /// The host that reported it.
    pub host: String,
    /// JSON `{agents: [agent id], teams: [{name, members: [agent id]}]}`, in the order
    /// reported.
    pub roster: String,
    /// When it was reported.
    pub created_ms: i64,
    /// When it stops being approvable (and its agents are deleted).
    pub expires_ms: i64,
}

fn org_from(row: &Row<'_>) -> Result<OrgRow> {
    Ok(OrgRow {
        id: row.get(0)?,
        handle: row.get(1)?,
        name: row.get(2)?,
        owner_id: row.get(3)?,
        created_ms: row.get(4)?,
    })
}

fn team_from(row: &Row<'_>) -> Result<TeamRow> {
    Ok(TeamRow {
        id: row.get(0)?,
        org_id: row.get(1)?,
        name: row.get(2)?,
        owner_id: row.get(3)?,
        created_ms: row.get(4)?,
    })
}

const ORG_COLUMNS: &str = "id, handle, name, owner_id, created_ms";
const TEAM_COLUMNS: &str = "t.id, t.org_id, t.name, t.owner_id, t.created_ms";

/// Stores a new org; false when its handle is taken.
pub fn insert_org(conn: &Connection, org: &OrgRow) -> Result<bool> {
    conn.execute(
        "INSERT INTO linkdbots_orgs (id, handle, name, owner_id, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (handle) DO NOTHING",
        params![org.id, org.handle, org.name, org.owner_id, org.created_ms],
    )
    .map(|inserted| inserted == 1)
}

/// The org whose `column` (`handle` or `id`, both unique) is `value`.
fn org_where(conn: &Connection, column: &str, value: &str) -> Result<Option<OrgRow>> {
    let sql = format!("SELECT {ORG_COLUMNS} FROM linkdbots_orgs WHERE {column} = ?1");
    conn.query_row(&sql, [value], org_from).optional()
}

/// The org with `handle`.
pub fn org_by_handle(conn: &Connection, handle: &str) -> Result<Option<OrgRow>> {
    org_where(conn, "handle", handle)
}

/// The org `id`.
pub fn org_by_id(conn: &Connection, id: &str) -> Result<Option<OrgRow>> {
    org_where(conn, "id", id)
}

/// The orgs `owner_id` made, oldest first.
pub fn orgs_of(conn: &Connection, owner_id: &str) -> Result<Vec<OrgRow>> {
    let sql = format!(
        "SELECT {ORG_COLUMNS} FROM linkdbots_orgs WHERE owner_id = ?1 ORDER BY created_ms, id"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    statement.query_map([owner_id], org_from)?.collect()
}

/// Stores a new team.
pub fn insert_team(conn: &Connection, team: &TeamRow) -> Result<()> {
    conn.execute(
        "INSERT INTO linkdbots_teams (id, org_id, name, owner_id, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            team.id,
            team.org_id,
            team.name,
            team.owner_id,
            team.created_ms
        ],
    )
    .map(|_| ())
}

/// The team `id`.
pub fn team(conn: &Connection, id: &str) -> Result<Option<TeamRow>> {
    let sql = format!("SELECT {TEAM_COLUMNS} FROM linkdbots_teams t WHERE t.id = ?1");
    conn.query_row(&sql, [id], team_from).optional()
}

/// The teams whose `column` (`owner_id` or `org_id`) is `value`, oldest first.
fn teams_where(conn: &Connection, column: &str, value: &str) -> Result<Vec<TeamRow>> {
    let sql = format!(
        "SELECT {TEAM_COLUMNS} FROM linkdbots_teams t WHERE t.{column} = ?1
         ORDER BY t.created_ms, t.id"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    statement.query_map([value], team_from)?.collect()
}

/// The teams `owner_id` made.
pub fn teams_of(conn: &Connection, owner_id: &str) -> Result<Vec<TeamRow>> {
    teams_where(conn, "owner_id", owner_id)
}

/// The teams in org `org_id`.
pub fn teams_in(conn: &Connection, org_id: &str) -> Result<Vec<TeamRow>> {
    teams_where(conn, "org_id", org_id)
}

/// The teams agent `agent_id` is in, oldest first.
pub fn teams_with(conn: &Connection, agent_id: &str) -> Result<Vec<TeamRow>> {
    let sql = format!(
        "SELECT {TEAM_COLUMNS} FROM linkdbots_teams t
         JOIN linkdbots_team_members m ON m.team_id = t.id
         WHERE m.agent_id = ?1 ORDER BY t.created_ms, t.id"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    statement.query_map([agent_id], team_from)?.collect()
}

/// Puts agent `agent_id` in team `team_id`; false when it was there already.
pub fn add_member(conn: &Connection, team_id: &str, agent_id: &str, now_ms: i64) -> Result<bool> {
    conn.execute(
        "INSERT INTO linkdbots_team_members (team_id, agent_id, added_ms) VALUES (?1, ?2, ?3)
         ON CONFLICT (team_id, agent_id) DO NOTHING",
        params![team_id, agent_id, now_ms],
    )
    .map(|inserted| inserted == 1)
}

/// Takes agent `agent_id` out of team `team_id`; false when it was not in it.
pub fn remove_member(conn: &Connection, team_id: &str, agent_id: &str) -> Result<bool> {
    conn.execute(
        "DELETE FROM linkdbots_team_members WHERE team_id = ?1 AND agent_id = ?2",
        params![team_id, agent_id],
    )
    .map(|removed| removed == 1)
}

/// The agents of team `team_id`, in the order they were added.
pub fn members(conn: &Connection, team_id: &str) -> Result<Vec<AgentRow>> {
    let columns = AGENT_COLUMNS
        .split(", ")
        .map(|column| format!("a.{column}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "SELECT {columns} FROM linkdbots_agents a
         JOIN linkdbots_team_members m ON m.agent_id = a.id
         WHERE m.team_id = ?1 ORDER BY m.added_ms, a.id"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    statement.query_map([team_id], agent_from)?.collect()
}

/// How many (orgs, teams, team members) the store holds.
pub fn counts(conn: &Connection) -> Result<(i64, i64, i64)> {
    conn.query_row(
        "SELECT (SELECT CAST(COUNT(*) AS BIGINT) FROM linkdbots_orgs),
                (SELECT CAST(COUNT(*) AS BIGINT) FROM linkdbots_teams),
                (SELECT CAST(COUNT(*) AS BIGINT) FROM linkdbots_team_members)",
        params![],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
    )
}

/// Stores a roster waiting for approval, under the hash of its claim code.
pub fn insert_connect(conn: &Connection, connect: &ConnectRow, code_hash: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO linkdbots_connects (id, code_hash, host, roster, created_ms, expires_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            connect.id,
            code_hash,
            connect.host,
            connect.roster,
            connect.created_ms,
            connect.expires_ms
        ],
    )
    .map(|_| ())
}

/// The roster whose claim code hashes to `code_hash`, while it is live.
pub fn live_connect(conn: &Connection, code_hash: &str, now_ms: i64) -> Result<Option<ConnectRow>> {
    conn.query_row(
        "SELECT id, host, roster, created_ms, expires_ms FROM linkdbots_connects
         WHERE code_hash = ?1 AND expires_ms > ?2",
        params![code_hash, now_ms],
        |row| {
            Ok(ConnectRow {
                id: row.get(0)?,
                host: row.get(1)?,
                roster: row.get(2)?,
                created_ms: row.get(3)?,
                expires_ms: row.get(4)?,
            })
        },
    )
    .optional()
}

/// Deletes a roster (approved, or expired); how many rows.
pub fn delete_connect(conn: &Connection, id: &str) -> Result<usize> {
    conn.execute("DELETE FROM linkdbots_connects WHERE id = ?1", [id])
}

/// Deletes the rosters past their 24 hours (their agents go with
/// [`crate::store::delete_expired_unclaimed`]); how many.
pub fn delete_expired_connects(conn: &Connection, now_ms: i64) -> Result<usize> {
    conn.execute(
        "DELETE FROM linkdbots_connects WHERE expires_ms <= ?1",
        params![now_ms],
    )
}

/// Puts the just-inserted unclaimed agent `id` in roster `connect_id`, with when its claim
/// expires and the bio it supplied.
pub fn set_connect(
    conn: &Connection,
    id: &str,
    connect_id: &str,
    expires_ms: i64,
    bio: Option<&str>,
) -> Result<()> {
    conn.execute(
        "UPDATE linkdbots_agents SET connect_id = ?2, claim_expires_ms = ?3, claim_bio = ?4
         WHERE id = ?1",
        params![id, connect_id, expires_ms, bio],
    )
    .map(|_| ())
}

/// The unclaimed agents of roster `connect_id` with the bios they supplied (by id; the
/// roster's JSON keeps the order they were reported in).
pub fn roster(conn: &Connection, connect_id: &str) -> Result<Vec<(AgentRow, Option<String>)>> {
    let sql = format!(
        "SELECT {AGENT_COLUMNS}, claim_bio FROM linkdbots_agents
         WHERE connect_id = ?1 AND status = 'unclaimed' ORDER BY id"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    statement
        .query_map([connect_id], |row| Ok((agent_from(row)?, row.get(9)?)))?
        .collect()
}

/// `owner_id` adopts every unclaimed agent of roster `connect_id`: active, owned, the
/// roster and claim fields cleared; how many.
pub fn claim_roster(conn: &Connection, connect_id: &str, owner_id: &str) -> Result<usize> {
    conn.execute(
        "UPDATE linkdbots_agents SET owner_id = ?2, status = 'active', connect_id = NULL,
           claim_expires_ms = NULL, claim_bio = NULL
         WHERE connect_id = ?1 AND status = 'unclaimed'",
        params![connect_id, owner_id],
    )
}
