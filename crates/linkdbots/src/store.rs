//! Every SQL statement of Linkdbots (the `linkdbots_*` tables of migration 0017), portable
//! across SQLite and PostgreSQL. Handlers and the rules never hold SQL: they call these
//! functions inside [`kd_core::store::Store::read`] or `write` closures.

use kd_core::db::{Connection, OptionalExtension as _, Result, Row};
use kd_core::params;

/// A pairing code as stored (its hash is the key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairingCodeRow {
    /// The person who minted it.
    pub person_id: String,
    /// The name the profile will carry.
    pub profile_name: String,
    /// When it stops working, Unix milliseconds.
    pub expires_ms: i64,
    /// When it was redeemed, if it was.
    pub redeemed_ms: Option<i64>,
}

/// A new pairing code.
#[derive(Debug, Clone)]
pub struct NewPairingCode<'a> {
    /// SHA-256 of the code, lowercase hex.
    pub code_hash: &'a str,
    /// The person minting it.
    pub person_id: &'a str,
    /// The profile's display name.
    pub profile_name: &'a str,
    /// The UTC day of minting.
    pub day: &'a str,
    /// Now.
    pub created_ms: i64,
    /// When it expires.
    pub expires_ms: i64,
}

/// An agent profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRow {
    /// `agt_…`.
    pub id: String,
    /// The public handle.
    pub handle: String,
    /// The display name, from the human.
    pub name: String,
    /// The owning hub account.
    pub owner_id: String,
    /// The harness.
    pub engine: String,
    /// The model.
    pub model: String,
    /// The product it runs inside.
    pub host: String,
    /// `active`, `paused` or `revoked`.
    pub status: String,
    /// When it was created.
    pub created_ms: i64,
}

/// A card as stored: every column of `linkdbots_cards`; also the payload of
/// `linkdbots.card_filed` ([`crate::events::CardFiled`]), with `id` named `card_id` there.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardRow {
    /// `crd_…`.
    #[serde(rename = "card_id")]
    pub id: String,
    /// The filing agent (none for imported cards).
    pub agent_id: Option<String>,
    /// The category.
    pub category: String,
    /// Prompt tokens (unknown only on imported cards).
    pub tokens_in: Option<i64>,
    /// Completion tokens.
    pub tokens_out: Option<i64>,
    /// The cost in millionths of a US dollar.
    pub cost_micros: Option<i64>,
    /// Turns.
    pub turns: Option<i64>,
    /// Tool calls.
    pub tool_calls: Option<i64>,
    /// Wall-clock milliseconds.
    pub wall_ms: Option<i64>,
    /// The model run.
    pub model: String,
    /// The harness.
    pub engine: String,
    /// The platform.
    pub host: String,
    /// When the task finished, Unix milliseconds.
    pub occurred_ms: i64,
    /// `success`, `failure`, or unknown.
    pub outcome: Option<String>,
    /// A day rolled up rather than one task.
    pub is_digest: bool,
    /// The playbooks followed, a JSON array.
    pub playbook_refs: String,
    /// `self-reported`, `host-signed` or `imported`.
    pub provenance: String,
    /// The host key that signed it.
    pub host_key_id: Option<String>,
    /// Imported: the data file's source.
    pub source: Option<String>,
    /// Imported: the row and case it came from (unique: a second import skips it).
    pub source_item: Option<String>,
    /// When the hub stored it.
    pub created_ms: i64,
}

const CARD_COLUMNS: &str = "c.id, c.agent_id, c.category, c.tokens_in, c.tokens_out, \
     c.cost_micros, c.turns, c.tool_calls, c.wall_ms, c.model, c.engine, c.host, \
     c.occurred_ms, c.outcome, c.is_digest, c.playbook_refs, c.provenance, c.host_key_id, \
     c.source, c.source_item, c.created_ms";

fn card_from(row: &Row<'_>) -> Result<CardRow> {
    Ok(CardRow {
        id: row.get(0)?,
        agent_id: row.get(1)?,
        category: row.get(2)?,
        tokens_in: row.get(3)?,
        tokens_out: row.get(4)?,
        cost_micros: row.get(5)?,
        turns: row.get(6)?,
        tool_calls: row.get(7)?,
        wall_ms: row.get(8)?,
        model: row.get(9)?,
        engine: row.get(10)?,
        host: row.get(11)?,
        occurred_ms: row.get(12)?,
        outcome: row.get(13)?,
        is_digest: row.get::<i64>(14)? != 0,
        playbook_refs: row.get(15)?,
        provenance: row.get(16)?,
        host_key_id: row.get(17)?,
        source: row.get(18)?,
        source_item: row.get(19)?,
        created_ms: row.get(20)?,
    })
}

/// How many codes `person_id` minted on `day`.
pub fn codes_minted_on(conn: &Connection, person_id: &str, day: &str) -> Result<i64> {
    conn.query_row(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM linkdbots_pairing_codes
         WHERE person_id = ?1 AND day = ?2",
        [person_id, day],
        |row| row.get(0),
    )
}

/// Stores a new pairing code.
pub fn insert_pairing_code(conn: &Connection, code: &NewPairingCode<'_>) -> Result<()> {
    conn.execute(
        "INSERT INTO linkdbots_pairing_codes
           (code_hash, person_id, profile_name, day, created_ms, expires_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            code.code_hash,
            code.person_id,
            code.profile_name,
            code.day,
            code.created_ms,
            code.expires_ms
        ],
    )
    .map(|_| ())
}

/// The pairing code whose hash is `code_hash`.
pub fn pairing_code(conn: &Connection, code_hash: &str) -> Result<Option<PairingCodeRow>> {
    conn.query_row(
        "SELECT person_id, profile_name, expires_ms, redeemed_ms
         FROM linkdbots_pairing_codes WHERE code_hash = ?1",
        [code_hash],
        |row| {
            Ok(PairingCodeRow {
                person_id: row.get(0)?,
                profile_name: row.get(1)?,
                expires_ms: row.get(2)?,
                redeemed_ms: row.get(3)?,
            })
        },
    )
    .optional()
}

/// Marks a code redeemed for `agent_id`; 0 when it was already redeemed.
pub fn redeem_pairing_code(
    conn: &Connection,
    code_hash: &str,
    now_ms: i64,
    agent_id: &str,
) -> Result<usize> {
    conn.execute(
        "UPDATE linkdbots_pairing_codes SET redeemed_ms = ?2, agent_id = ?3
         WHERE code_hash = ?1 AND redeemed_ms IS NULL",
        params![code_hash, now_ms, agent_id],
    )
}

/// Whether a profile has `handle`.
pub fn handle_taken(conn: &Connection, handle: &str) -> Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM linkdbots_agents WHERE handle = ?1)",
        [handle],
        |row| row.get(0),
    )
}

/// Stores a new agent with the hash of its key.
pub fn insert_agent(conn: &Connection, agent: &AgentRow, key_hash: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO linkdbots_agents
           (id, handle, name, owner_id, engine, model, host, status, key_hash, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            agent.id,
            agent.handle,
            agent.name,
            agent.owner_id,
            agent.engine,
            agent.model,
            agent.host,
            agent.status,
            key_hash,
            agent.created_ms
        ],
    )
    .map(|_| ())
}

pub(crate) fn agent_from(row: &Row<'_>) -> Result<AgentRow> {
    Ok(AgentRow {
        id: row.get(0)?,
        handle: row.get(1)?,
        name: row.get(2)?,
        owner_id: row.get(3)?,
        engine: row.get(4)?,
        model: row.get(5)?,
        host: row.get(6)?,
        status: row.get(7)?,
        created_ms: row.get(8)?,
    })
}

pub(crate) const AGENT_COLUMNS: &str =
    "id, handle, name, owner_id, engine, model, host, status, created_ms";

/// The agent whose `column` (`key_hash` or `id`, both unique) is `value`.
fn agent_where(conn: &Connection, column: &str, value: &str) -> Result<Option<AgentRow>> {
    let sql = format!("SELECT {AGENT_COLUMNS} FROM linkdbots_agents WHERE {column} = ?1");
    conn.query_row(&sql, [value], agent_from).optional()
}

/// The agent whose key hashes to `key_hash`.
pub fn agent_by_key_hash(conn: &Connection, key_hash: &str) -> Result<Option<AgentRow>> {
    agent_where(conn, "key_hash", key_hash)
}

/// The agent `id`.
pub fn agent_by_id(conn: &Connection, id: &str) -> Result<Option<AgentRow>> {
    agent_where(conn, "id", id)
}

/// Gives the just-inserted unclaimed agent `id` its claim code's hash, when it expires, and
/// the bio it supplied.
pub fn set_claim(
    conn: &Connection,
    id: &str,
    claim_code_hash: &str,
    expires_ms: i64,
    bio: Option<&str>,
) -> Result<()> {
    conn.execute(
        "UPDATE linkdbots_agents SET claim_code_hash = ?2, claim_expires_ms = ?3, claim_bio = ?4
         WHERE id = ?1",
        params![id, claim_code_hash, expires_ms, bio],
    )
    .map(|_| ())
}

/// The unclaimed agent whose claim code hashes to `claim_code_hash`, while its claim is live:
/// the agent, its supplied bio, when the claim expires.
pub fn unclaimed(
    conn: &Connection,
    claim_code_hash: &str,
    now_ms: i64,
) -> Result<Option<(AgentRow, Option<String>, i64)>> {
    let sql = format!(
        "SELECT {AGENT_COLUMNS}, claim_bio, claim_expires_ms FROM linkdbots_agents
         WHERE claim_code_hash = ?1 AND status = 'unclaimed' AND claim_expires_ms > ?2"
    );
    conn.query_row(&sql, params![claim_code_hash, now_ms], |row| {
        Ok((agent_from(row)?, row.get(9)?, row.get(10)?))
    })
    .optional()
}

/// `owner_id` adopts the unclaimed agent `id`: active, owned, its claim fields cleared; 0
/// when it was no longer unclaimed.
pub fn claim(conn: &Connection, id: &str, owner_id: &str) -> Result<usize> {
    conn.execute(
        "UPDATE linkdbots_agents SET owner_id = ?2, status = 'active', claim_code_hash = NULL,
           claim_expires_ms = NULL, claim_bio = NULL
         WHERE id = ?1 AND status = 'unclaimed'",
        params![id, owner_id],
    )
}

/// Deletes the registrations left unclaimed past their 24 hours (their handles are free
/// again); how many.
pub fn delete_expired_unclaimed(conn: &Connection, now_ms: i64) -> Result<usize> {
    conn.execute(
        "DELETE FROM linkdbots_agents WHERE status = 'unclaimed' AND claim_expires_ms <= ?1",
        params![now_ms],
    )
}

/// The agents `owner_id` owns, oldest first.
pub fn agents_of(conn: &Connection, owner_id: &str) -> Result<Vec<AgentRow>> {
    let mut statement = conn.prepare_cached(
        "SELECT id, handle, name, owner_id, engine, model, host, status, created_ms
         FROM linkdbots_agents WHERE owner_id = ?1 ORDER BY created_ms, id",
    )?;
    statement.query_map([owner_id], agent_from)?.collect()
}

/// Registers a host signing key; false when `key_id` is taken.
pub fn insert_host_key(
    conn: &Connection,
    key_id: &str,
    public_key: &str,
    owner_id: &str,
    now_ms: i64,
) -> Result<bool> {
    conn.execute(
        "INSERT INTO linkdbots_host_keys (key_id, public_key, owner_id, created_ms)
         VALUES (?1, ?2, ?3, ?4) ON CONFLICT (key_id) DO NOTHING",
        params![key_id, public_key, owner_id, now_ms],
    )
    .map(|inserted| inserted == 1)
}

/// The public key (base64url) of the registered, unrevoked host key `key_id`.
pub fn host_key(conn: &Connection, key_id: &str) -> Result<Option<String>> {
    conn.query_row(
        "SELECT public_key FROM linkdbots_host_keys WHERE key_id = ?1 AND revoked_ms IS NULL",
        [key_id],
        |row| row.get(0),
    )
    .optional()
}

/// Stores a card and counts it in its category's board version ([`board_version`]); 0 when an
/// imported card with the same `source_item` is already there.
pub fn insert_card(conn: &Connection, card: &CardRow) -> Result<usize> {
    let written = conn
        .prepare_cached(
            "INSERT INTO linkdbots_cards
           (id, agent_id, category, tokens_in, tokens_out, cost_micros, turns, tool_calls,
            wall_ms, model, engine, host, occurred_ms, outcome, is_digest, playbook_refs,
            provenance, host_key_id, source, source_item, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                 ?17, ?18, ?19, ?20, ?21)
         ON CONFLICT (source_item) DO NOTHING",
        )?
        .execute(params![
            card.id,
            card.agent_id,
            card.category,
            card.tokens_in,
            card.tokens_out,
            card.cost_micros,
            card.turns,
            card.tool_calls,
            card.wall_ms,
            card.model,
            card.engine,
            card.host,
            card.occurred_ms,
            card.outcome,
            i64::from(card.is_digest),
            card.playbook_refs,
            card.provenance,
            card.host_key_id,
            card.source,
            card.source_item,
            card.created_ms
        ])?;
    if written == 1 {
        conn.prepare_cached(
            "INSERT INTO linkdbots_board_versions (category, version) VALUES (?1, 1)
             ON CONFLICT (category) DO UPDATE
             SET version = linkdbots_board_versions.version + 1",
        )?
        .execute(params![card.category])?;
    }
    Ok(written)
}

/// How many cards `category` has been given (0 for none): the leaderboard cache's key
/// (decision 346).
pub fn board_version(conn: &Connection, category: &str) -> Result<i64> {
    Ok(conn
        .query_row(
            "SELECT version FROM linkdbots_board_versions WHERE category = ?1",
            params![category],
            |row| row.get(0),
        )
        .optional()?
        .unwrap_or(0))
}

/// The `limit` most recent cards of `category` (by when they occurred, then id), digests
/// included: the leaderboard's window.
pub fn category_window(conn: &Connection, category: &str, limit: i64) -> Result<Vec<CardRow>> {
    let sql = format!(
        "SELECT {CARD_COLUMNS} FROM linkdbots_cards c WHERE c.category = ?1
         ORDER BY c.occurred_ms DESC, c.id DESC LIMIT CAST(?2 AS BIGINT)"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    statement
        .query_map(params![category, limit], card_from)?
        .collect()
}

/// A page of the feed: the most recent cards across the platform, each with its agent's
/// handle (none for imported cards).
pub fn feed(conn: &Connection, limit: i64, offset: i64) -> Result<Vec<(CardRow, Option<String>)>> {
    let sql = format!(
        "SELECT {CARD_COLUMNS}, a.handle FROM linkdbots_cards c
         LEFT JOIN linkdbots_agents a ON a.id = c.agent_id
         ORDER BY c.occurred_ms DESC, c.id DESC
         LIMIT CAST(?1 AS BIGINT) OFFSET CAST(?2 AS BIGINT)"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    statement
        .query_map(params![limit, offset], |row| {
            Ok((card_from(row)?, row.get(21)?))
        })?
        .collect()
}

/// How many cards the store holds.
pub fn card_count(conn: &Connection) -> Result<i64> {
    conn.query_row(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM linkdbots_cards",
        params![],
        |row| row.get(0),
    )
}

/// How many agent profiles the store holds.
pub fn agent_count(conn: &Connection) -> Result<i64> {
    conn.query_row(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM linkdbots_agents",
        params![],
        |row| row.get(0),
    )
}

/// What `agent_id` spent of `action`'s budget on `day`.
pub fn budget_used(conn: &Connection, agent_id: &str, day: &str, action: &str) -> Result<i64> {
    conn.query_row(
        "SELECT used FROM linkdbots_budget_use WHERE agent_id = ?1 AND day = ?2 AND action = ?3",
        [agent_id, day, action],
        |row| row.get(0),
    )
    .optional()
    .map(Option::unwrap_or_default)
}

/// Charges one `action` to `agent_id`'s budget of `day`.
pub fn budget_charge(conn: &Connection, agent_id: &str, day: &str, action: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO linkdbots_budget_use (agent_id, day, action, used) VALUES (?1, ?2, ?3, 1)
         ON CONFLICT (agent_id, day, action)
         DO UPDATE SET used = linkdbots_budget_use.used + 1",
        [agent_id, day, action],
    )
    .map(|_| ())
}
