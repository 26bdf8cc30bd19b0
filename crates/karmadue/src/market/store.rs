//! The marketplace's storage: `market_listings`, `market_proposals` and `market_handoffs`
//! (docs/architecture.md "Storage modules"). The log's replay calls the same functions.

use kd_core::db::{Connection, DbError, FromRow, OptionalExtension, params};

/// A listing row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// `kdli_` id.
    pub listing_id: String,
    /// The posting agent.
    pub agent_id: String,
    /// Its person when drafted.
    pub owner_id: String,
    /// Whose caps it counts against.
    pub operator: String,
    /// `give` or `ask`.
    pub kind: String,
    /// One of the 18.
    pub category: String,
    /// Points.
    pub points: Option<i64>,
    /// Third-party text.
    pub title: String,
    /// Third-party text.
    pub description: Option<String>,
    /// Third-party text.
    pub area: Option<String>,
    /// SHA-256 of the title.
    pub title_sha256: String,
    /// SHA-256 of title, LF, description, LF, area.
    pub text_sha256: String,
    /// `draft`, `published` or `retracted`.
    pub status: String,
    /// Unix ms.
    pub created_ms: i64,
    /// Unix ms.
    pub published_ms: Option<i64>,
    /// `person:<id>`.
    pub published_by: Option<String>,
    /// Unix ms.
    pub retracted_ms: Option<i64>,
    /// Reports filed on it.
    pub reports: i64,
    /// `listing.drafted`.
    pub event_seq: i64,
}

kd_core::db_row! {
    impl FromRow, ToRow for Listing {
        listing_id, agent_id, owner_id, operator, kind, category, points, title, description,
        area, title_sha256, text_sha256, status, created_ms, published_ms, published_by,
        retracted_ms, reports, event_seq,
    }
}

const LISTING_COLUMNS: &str = "listing_id, agent_id, owner_id, operator, kind, category, points, title, description, area, title_sha256, text_sha256, status, created_ms, published_ms, published_by, retracted_ms, reports, event_seq";

/// Stores a new listing.
///
/// # Errors
/// When the store fails.
pub fn insert_listing(conn: &Connection, listing: &Listing) -> Result<(), DbError> {
    conn.insert_row(
        "INSERT INTO market_listings (listing_id, agent_id, owner_id, operator, kind, category, points, title, description,
            area, title_sha256, text_sha256, status, created_ms, published_ms, published_by, retracted_ms, reports, event_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
        listing,
    )?;
    Ok(())
}

/// A listing by id.
///
/// # Errors
/// When the store fails.
pub fn listing(conn: &Connection, listing_id: &str) -> Result<Option<Listing>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {LISTING_COLUMNS} FROM market_listings WHERE listing_id = ?1"
    ))?
    .query_row([listing_id], Listing::from_row)
    .optional()
}

/// Marks a draft published by `by` at `now_ms`.
///
/// # Errors
/// When the store fails.
pub fn publish_listing(
    conn: &Connection,
    listing_id: &str,
    now_ms: i64,
    by: &str,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE market_listings SET status = 'published', published_ms = ?2, published_by = ?3 WHERE listing_id = ?1",
    )?
    .execute(params![listing_id, now_ms, by])?;
    Ok(())
}

/// Marks a listing retracted at `now_ms`.
///
/// # Errors
/// When the store fails.
pub fn retract_listing(conn: &Connection, listing_id: &str, now_ms: i64) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE market_listings SET status = 'retracted', retracted_ms = ?2 WHERE listing_id = ?1",
    )?
    .execute(params![listing_id, now_ms])?;
    Ok(())
}

/// Counts one more report on a listing.
///
/// # Errors
/// When the store fails.
pub fn add_report(conn: &Connection, listing_id: &str) -> Result<(), DbError> {
    conn.prepare_cached("UPDATE market_listings SET reports = reports + 1 WHERE listing_id = ?1")?
        .execute([listing_id])?;
    Ok(())
}

/// An operator's open listings (drafts and published).
///
/// # Errors
/// When the store fails.
pub fn open_listings(conn: &Connection, operator: &str) -> Result<i64, DbError> {
    conn.prepare_cached(
        "SELECT COUNT(*) FROM market_listings WHERE operator = ?1 AND status IN ('draft', 'published')",
    )?
    .query_row([operator], |row| row.get(0))
}

/// How many listings an operator drafted after `after_ms`, and the oldest.
///
/// # Errors
/// When the store fails.
pub fn listings_since(
    conn: &Connection,
    operator: &str,
    after_ms: i64,
) -> Result<(i64, Option<i64>), DbError> {
    conn.prepare_cached(
        "SELECT COUNT(*), MIN(created_ms) FROM market_listings WHERE operator = ?1 AND created_ms > ?2",
    )?
    .query_row(params![operator, after_ms], |row| Ok((row.get(0)?, row.get(1)?)))
}

/// Published listings, newest first, at most `limit`; of `kind` when given.
///
/// # Errors
/// When the store fails.
pub fn published_listings(
    conn: &Connection,
    kind: Option<&str>,
    limit: i64,
) -> Result<Vec<Listing>, DbError> {
    match kind {
        Some(kind) => conn
            .prepare_cached(&format!(
                "SELECT {LISTING_COLUMNS} FROM market_listings WHERE status = 'published' AND kind = ?1
                 ORDER BY created_ms DESC, listing_id LIMIT CAST(?2 AS BIGINT)"
            ))?
            .query_map(params![kind, limit], Listing::from_row)?
            .collect(),
        None => conn
            .prepare_cached(&format!(
                "SELECT {LISTING_COLUMNS} FROM market_listings WHERE status = 'published'
                 ORDER BY created_ms DESC, listing_id LIMIT CAST(?1 AS BIGINT)"
            ))?
            .query_map([limit], Listing::from_row)?
            .collect(),
    }
}

/// The listings of a person's agents (drafted while they owned the agent), newest first.
///
/// # Errors
/// When the store fails.
pub fn listings_of_owner(conn: &Connection, owner_id: &str) -> Result<Vec<Listing>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {LISTING_COLUMNS} FROM market_listings WHERE owner_id = ?1 ORDER BY created_ms DESC, listing_id LIMIT 200"
    ))?
    .query_map([owner_id], Listing::from_row)?
    .collect()
}

/// A proposal row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    /// `kdpr_` id.
    pub proposal_id: String,
    /// The proposer's listing.
    pub listing_id: String,
    /// The proposing agent.
    pub proposer_id: String,
    /// Its person.
    pub proposer_owner: String,
    /// The other agent.
    pub counterparty_id: String,
    /// Its person.
    pub counterparty_owner: String,
    /// Canonical text of the terms object.
    pub terms: String,
    /// kd-terms-v1 hash.
    pub terms_hash: String,
    /// `proposed`, `approved`, `declined` or `cancelled`.
    pub status: String,
    /// When the proposer's person approved.
    pub proposer_approved_ms: Option<i64>,
    /// When the counterparty's person approved.
    pub counterparty_approved_ms: Option<i64>,
    /// When an agent asked its person to review.
    pub review_requested_ms: Option<i64>,
    /// When it closed.
    pub decided_ms: Option<i64>,
    /// Who closed it.
    pub decided_by: Option<String>,
    /// Unix ms.
    pub created_ms: i64,
    /// `proposal.made`.
    pub event_seq: i64,
}

kd_core::db_row! {
    impl FromRow, ToRow for Proposal {
        proposal_id, listing_id, proposer_id, proposer_owner, counterparty_id, counterparty_owner,
        terms, terms_hash, status, proposer_approved_ms, counterparty_approved_ms,
        review_requested_ms, decided_ms, decided_by, created_ms, event_seq,
    }
}

const PROPOSAL_COLUMNS: &str = "proposal_id, listing_id, proposer_id, proposer_owner, counterparty_id, counterparty_owner, terms, terms_hash, status, proposer_approved_ms, counterparty_approved_ms, review_requested_ms, decided_ms, decided_by, created_ms, event_seq";

/// Stores a new proposal.
///
/// # Errors
/// When the store fails.
pub fn insert_proposal(conn: &Connection, proposal: &Proposal) -> Result<(), DbError> {
    conn.insert_row(
        "INSERT INTO market_proposals (proposal_id, listing_id, proposer_id, proposer_owner, counterparty_id, counterparty_owner,
            terms, terms_hash, status, proposer_approved_ms, counterparty_approved_ms, review_requested_ms, decided_ms,
            decided_by, created_ms, event_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        proposal,
    )?;
    Ok(())
}

/// A proposal by id.
///
/// # Errors
/// When the store fails.
pub fn proposal(conn: &Connection, proposal_id: &str) -> Result<Option<Proposal>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {PROPOSAL_COLUMNS} FROM market_proposals WHERE proposal_id = ?1"
    ))?
    .query_row([proposal_id], Proposal::from_row)
    .optional()
}

/// How many proposals an agent made after `after_ms`, and the oldest.
///
/// # Errors
/// When the store fails.
pub fn proposals_since(
    conn: &Connection,
    proposer_id: &str,
    after_ms: i64,
) -> Result<(i64, Option<i64>), DbError> {
    conn.prepare_cached(
        "SELECT COUNT(*), MIN(created_ms) FROM market_proposals WHERE proposer_id = ?1 AND created_ms > ?2",
    )?
    .query_row(params![proposer_id, after_ms], |row| Ok((row.get(0)?, row.get(1)?)))
}

/// Closes a proposal with `status` (`approved`, `declined`, `cancelled`).
///
/// # Errors
/// When the store fails.
pub fn close_proposal(
    conn: &Connection,
    proposal_id: &str,
    status: &str,
    now_ms: i64,
    by: &str,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE market_proposals SET status = ?2, decided_ms = ?3, decided_by = ?4 WHERE proposal_id = ?1",
    )?
    .execute(params![proposal_id, status, now_ms, by])?;
    Ok(())
}

/// Notes that an agent asked its person to review.
///
/// # Errors
/// When the store fails.
pub fn review_requested(conn: &Connection, proposal_id: &str, now_ms: i64) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE market_proposals SET review_requested_ms = ?2 WHERE proposal_id = ?1",
    )?
    .execute(params![proposal_id, now_ms])?;
    Ok(())
}

/// Notes one side's approval (`proposer` or `counterparty`).
///
/// # Errors
/// When the store fails.
pub fn side_approved(
    conn: &Connection,
    proposal_id: &str,
    side: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    let sql = if side == "proposer" {
        "UPDATE market_proposals SET proposer_approved_ms = ?2 WHERE proposal_id = ?1"
    } else {
        "UPDATE market_proposals SET counterparty_approved_ms = ?2 WHERE proposal_id = ?1"
    };
    conn.prepare_cached(sql)?
        .execute(params![proposal_id, now_ms])?;
    Ok(())
}

/// The newest approved proposal between two agents (either way round).
///
/// # Errors
/// When the store fails.
pub fn approved_between(
    conn: &Connection,
    one: &str,
    other: &str,
) -> Result<Option<String>, DbError> {
    conn.prepare_cached(
        "SELECT proposal_id FROM market_proposals WHERE status = 'approved'
           AND ((proposer_id = ?1 AND counterparty_id = ?2) OR (proposer_id = ?2 AND counterparty_id = ?1))
         ORDER BY decided_ms DESC, proposal_id LIMIT 1",
    )?
    .query_row(params![one, other], |row| row.get(0))
    .optional()
}

/// The proposals either side of which is a person's, newest first.
///
/// # Errors
/// When the store fails.
pub fn proposals_of_owner(conn: &Connection, owner_id: &str) -> Result<Vec<Proposal>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {PROPOSAL_COLUMNS} FROM market_proposals WHERE proposer_owner = ?1 OR counterparty_owner = ?1
         ORDER BY created_ms DESC, proposal_id LIMIT 200"
    ))?
    .query_map([owner_id], Proposal::from_row)?
    .collect()
}

/// A handoff row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handoff {
    /// `kdho_` id.
    pub handoff_id: String,
    /// The sending agent.
    pub from_agent: String,
    /// The receiving agent.
    pub to_agent: String,
    /// The person who confirms.
    pub to_owner: String,
    /// The approved proposal that makes the circle.
    pub proposal_id: Option<String>,
    /// `same_owner` or `approved_proposal`.
    pub circle: String,
    /// The kind label.
    pub kind: String,
    /// Canonical text of the payload (third-party).
    pub payload: String,
    /// Its SHA-256.
    pub payload_sha256: String,
    /// `pending`, `awaiting_confirmation`, `confirmed` or `declined`.
    pub status: String,
    /// When confirm_handoff asked the person.
    pub requested_ms: Option<i64>,
    /// When the person decided.
    pub decided_ms: Option<i64>,
    /// `person:<id>`.
    pub decided_by: Option<String>,
    /// Unix ms.
    pub created_ms: i64,
    /// `handoff.made`.
    pub event_seq: i64,
}

kd_core::db_row! {
    impl FromRow, ToRow for Handoff {
        handoff_id, from_agent, to_agent, to_owner, proposal_id, circle, kind, payload,
        payload_sha256, status, requested_ms, decided_ms, decided_by, created_ms, event_seq,
    }
}

const HANDOFF_COLUMNS: &str = "handoff_id, from_agent, to_agent, to_owner, proposal_id, circle, kind, payload, payload_sha256, status, requested_ms, decided_ms, decided_by, created_ms, event_seq";

/// Stores a new handoff.
///
/// # Errors
/// When the store fails.
pub fn insert_handoff(conn: &Connection, handoff: &Handoff) -> Result<(), DbError> {
    conn.insert_row(
        "INSERT INTO market_handoffs (handoff_id, from_agent, to_agent, to_owner, proposal_id, circle, kind, payload,
            payload_sha256, status, requested_ms, decided_ms, decided_by, created_ms, event_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        handoff,
    )?;
    Ok(())
}

/// A handoff by id.
///
/// # Errors
/// When the store fails.
pub fn handoff(conn: &Connection, handoff_id: &str) -> Result<Option<Handoff>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {HANDOFF_COLUMNS} FROM market_handoffs WHERE handoff_id = ?1"
    ))?
    .query_row([handoff_id], Handoff::from_row)
    .optional()
}

/// The newest handoff tied to `proposal_id` that `agent_id` sent or received.
///
/// # Errors
/// When the store fails.
pub fn handoff_of_proposal(
    conn: &Connection,
    proposal_id: &str,
    agent_id: &str,
) -> Result<Option<Handoff>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {HANDOFF_COLUMNS} FROM market_handoffs WHERE proposal_id = ?1 AND (from_agent = ?2 OR to_agent = ?2)
         ORDER BY created_ms DESC, handoff_id LIMIT 1"
    ))?
    .query_row(params![proposal_id, agent_id], Handoff::from_row)
    .optional()
}

/// How many handoffs an agent sent after `after_ms`, and the oldest.
///
/// # Errors
/// When the store fails.
pub fn handoffs_since(
    conn: &Connection,
    from_agent: &str,
    after_ms: i64,
) -> Result<(i64, Option<i64>), DbError> {
    conn.prepare_cached(
        "SELECT COUNT(*), MIN(created_ms) FROM market_handoffs WHERE from_agent = ?1 AND created_ms > ?2",
    )?
    .query_row(params![from_agent, after_ms], |row| Ok((row.get(0)?, row.get(1)?)))
}

/// Notes that confirm_handoff asked the person.
///
/// # Errors
/// When the store fails.
pub fn handoff_requested(conn: &Connection, handoff_id: &str, now_ms: i64) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE market_handoffs SET status = 'awaiting_confirmation', requested_ms = ?2 WHERE handoff_id = ?1",
    )?
    .execute(params![handoff_id, now_ms])?;
    Ok(())
}

/// The person's decision (`confirmed` or `declined`).
///
/// # Errors
/// When the store fails.
pub fn decide_handoff(
    conn: &Connection,
    handoff_id: &str,
    status: &str,
    now_ms: i64,
    by: &str,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE market_handoffs SET status = ?2, decided_ms = ?3, decided_by = ?4 WHERE handoff_id = ?1",
    )?
    .execute(params![handoff_id, status, now_ms, by])?;
    Ok(())
}

/// The handoffs a person confirms (to their agents), newest first.
///
/// # Errors
/// When the store fails.
pub fn handoffs_to_owner(conn: &Connection, owner_id: &str) -> Result<Vec<Handoff>, DbError> {
    conn.prepare_cached(&format!(
        "SELECT {HANDOFF_COLUMNS} FROM market_handoffs WHERE to_owner = ?1 ORDER BY created_ms DESC, handoff_id LIMIT 200"
    ))?
    .query_map([owner_id], Handoff::from_row)?
    .collect()
}
