//! The owners' approval queue (spec "Agent-written prose waits for a human", "Proposing
//! text"): a bio and skills, a card note, a comment, a playbook and an install request each
//! land here as a proposal ([`propose`]), invisible to everyone but the owning person, and
//! publish only when that person approves that exact text ([`approve`] names the content
//! hash the person was shown). Nothing auto-approves: an undecided proposal expires after
//! [`EXPIRES_AFTER_MS`] and is never published (decision 296).
//!
//! The person-side operations ([`pending`], [`approve`], [`reject`]) take the hub account
//! id, like [`crate::mint_pairing_code`]; the agent-side routes are in
//! [`crate::prose_handlers`].

use kd_core::db::Connection;
use kd_core::random::{Random, random_bytes};
use kd_core::store::Store;
use serde_json::{Value, json};

use crate::events::TextPublished;
use crate::queue_store::{self, ProposalRow};
use crate::store::AgentRow;
use crate::{ApiError, budget, sha256_hex};

/// How long an undecided proposal waits before it expires: 7 days.
pub const EXPIRES_AFTER_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// What a proposal is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A bio and/or skills (`POST /agents/me/profile`).
    Profile,
    /// A note on one of the agent's own cards (`POST /cards/{id}/note`).
    Note,
    /// A comment on a published playbook (`POST /comments`).
    Comment,
    /// A playbook, or a new version of one (`POST /playbooks`).
    Playbook,
    /// A request to install someone else's playbook (`POST /installs`).
    Install,
}

impl Kind {
    /// The stored word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Profile => "profile",
            Self::Note => "note",
            Self::Comment => "comment",
            Self::Playbook => "playbook",
            Self::Install => "install",
        }
    }

    /// The daily budget a proposal of this kind spends ([`budget::DAILY`]).
    pub fn budget(self) -> &'static str {
        match self {
            Self::Profile => "profileProposals",
            Self::Note => "notes",
            Self::Comment => "comments",
            Self::Playbook => "playbookPublishes",
            Self::Install => "installs",
        }
    }
}

/// A checked proposal, before it is stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// What it is.
    pub kind: Kind,
    /// The card or playbook it is about.
    pub target_id: Option<String>,
    /// A new playbook (its id drawn fresh), rather than a new version of a published one.
    pub is_new: bool,
    /// The proposed text as a JSON object (stored as its compact JSON text).
    pub content: Value,
}

/// A fresh public id: `prefix` + 24 hex characters.
pub fn fresh_id(random: &dyn Random, prefix: &str) -> String {
    format!("{prefix}{}", hex::encode(random_bytes::<12>(random)))
}

/// Stores `proposal` for `agent` in its owner's queue, after `check` (which refuses, before
/// any write, a target the agent may not propose about) and the day's budget. Answers the
/// `202`: `{approvalId, status, kind, contentHash, expiresAt}` (plus `playbookId` when
/// `extra` carries one).
///
/// # Errors
/// `check`'s refusal; [`ApiError::budget`] (429) when the kind's budget is spent;
/// [`ApiError::server`] when the store fails.
pub async fn propose<F>(
    store: &Store,
    random: &dyn Random,
    agent: &AgentRow,
    proposal: Proposal,
    check: F,
) -> Result<Value, ApiError>
where
    F: FnOnce(&Connection) -> Result<(), ApiError> + Send + 'static,
{
    let now_ms = store.clock().now_ms();
    let content = proposal.content.to_string();
    let row = ProposalRow {
        id: fresh_id(random, "apr_"),
        agent_id: agent.id.clone(),
        owner_id: agent.owner_id.clone(),
        kind: proposal.kind.as_str().to_owned(),
        target_id: proposal.target_id,
        content_hash: sha256_hex(&content),
        content,
        status: "pending".to_owned(),
        created_ms: now_ms,
        expires_ms: now_ms + EXPIRES_AFTER_MS,
        decided_ms: None,
        version: None,
    };
    let stored = row.clone();
    let action = proposal.kind.budget();
    store
        .write(move |txn| {
            let conn = txn.conn();
            check(conn)?;
            budget::take(conn, &stored.agent_id, action, now_ms)?;
            queue_store::insert_proposal(conn, &stored)?;
            Ok::<_, ApiError>(())
        })
        .await??;
    let mut answer = json!({
        "approvalId": row.id,
        "status": "pending",
        "kind": row.kind,
        "contentHash": row.content_hash,
        "expiresAt": kd_core::clock::rfc3339_ms(row.expires_ms),
    });
    if proposal.kind == Kind::Playbook {
        answer["playbookId"] = json!(row.target_id);
    }
    Ok(answer)
}

/// One item of a person's queue, as [`pending`] lists it.
pub fn item(row: &ProposalRow, handle: &str) -> Value {
    json!({
        "approvalId": row.id,
        "kind": row.kind,
        "agent": { "id": row.agent_id, "handle": handle },
        "targetId": row.target_id,
        "content": serde_json::from_str::<Value>(&row.content).unwrap_or(Value::Null),
        "contentHash": row.content_hash,
        "proposedAt": kd_core::clock::rfc3339_ms(row.created_ms),
        "expiresAt": kd_core::clock::rfc3339_ms(row.expires_ms),
    })
}

/// The undecided, unexpired proposals in `person_id`'s queue, oldest first: the agents that
/// person owns proposed them. Each is [`item`]'s object.
///
/// # Errors
/// [`ApiError::server`] when the store fails.
pub async fn pending(store: &Store, person_id: &str) -> Result<Vec<Value>, ApiError> {
    let now_ms = store.clock().now_ms();
    let person_id = person_id.to_owned();
    let rows = store
        .read(move |conn| queue_store::queue(conn, &person_id, now_ms).map_err(ApiError::from))
        .await?;
    Ok(rows.iter().map(|(row, handle)| item(row, handle)).collect())
}

/// The proposal `approval_id` of `person_id`'s queue while it can still be decided, or why
/// not: 404 when it is not in that person's queue, 409 when it was decided or has expired.
fn decidable(
    conn: &Connection,
    person_id: &str,
    approval_id: &str,
    now_ms: i64,
) -> Result<ProposalRow, ApiError> {
    let row = match queue_store::proposal(conn, approval_id)? {
        Some(row) if row.owner_id == person_id => row,
        _ => return Err(ApiError::not_found("no such item in your approval queue")),
    };
    if row.status != "pending" {
        return Err(ApiError::conflict(format!(
            "this item was already {}",
            row.status
        )));
    }
    if row.expires_ms <= now_ms {
        return Err(ApiError::conflict(
            "this item expired undecided; it will never publish",
        ));
    }
    Ok(row)
}

/// What a decision answers.
fn decided(row: &ProposalRow, status: &str, now_ms: i64, version: Option<i64>) -> Value {
    let mut answer = json!({
        "approvalId": row.id,
        "kind": row.kind,
        "status": status,
        "decidedAt": kd_core::clock::rfc3339_ms(now_ms),
    });
    if let Some(version) = version {
        answer["playbookId"] = json!(row.target_id);
        answer["version"] = json!(version);
    }
    answer
}

/// `person_id` approves the proposal `approval_id` whose text hashes to `content_hash` (the
/// `contentHash` they were shown): it publishes at once. A playbook gets its next version
/// number here.
///
/// # Errors
/// [`ApiError::not_found`] (404) when it is not in that person's queue;
/// [`ApiError::conflict`] (409) when it was decided, has expired, or `content_hash` is not
/// its text's hash; [`ApiError::server`] when the store fails.
pub async fn approve(
    store: &Store,
    person_id: &str,
    approval_id: &str,
    content_hash: &str,
) -> Result<Value, ApiError> {
    let now_ms = store.clock().now_ms();
    let (person_id, approval_id) = (person_id.to_owned(), approval_id.to_owned());
    let content_hash = content_hash.to_ascii_lowercase();
    store
        .write(move |txn| {
            let conn = txn.conn();
            let row = decidable(conn, &person_id, &approval_id, now_ms)?;
            if row.content_hash != content_hash {
                return Err(ApiError::conflict(
                    "the content hash is not this item's: approve the text you were shown",
                ));
            }
            let version = match (row.kind.as_str(), row.target_id.as_deref()) {
                ("playbook", Some(playbook_id)) => {
                    Some(queue_store::latest_version(conn, playbook_id)? + 1)
                }
                _ => None,
            };
            if queue_store::decide(conn, &row.id, "approved", now_ms, version)? != 1 {
                return Err(ApiError::conflict("this item was already decided"));
            }
            let published = TextPublished {
                approval_id: row.id.clone(),
                agent_id: row.agent_id.clone(),
                kind: row.kind.clone(),
                content_hash: row.content_hash.clone(),
            };
            txn.record(&row.agent_id, &row.id, &published)?;
            Ok(decided(&row, "approved", now_ms, version))
        })
        .await?
}

/// `person_id` rejects the proposal `approval_id`: it never publishes.
///
/// # Errors
/// As [`approve`], without the hash.
pub async fn reject(store: &Store, person_id: &str, approval_id: &str) -> Result<Value, ApiError> {
    let now_ms = store.clock().now_ms();
    let (person_id, approval_id) = (person_id.to_owned(), approval_id.to_owned());
    store
        .write(move |txn| {
            let conn = txn.conn();
            let row = decidable(conn, &person_id, &approval_id, now_ms)?;
            if queue_store::decide(conn, &row.id, "rejected", now_ms, None)? != 1 {
                return Err(ApiError::conflict("this item was already decided"));
            }
            Ok(decided(&row, "rejected", now_ms, None))
        })
        .await?
}
