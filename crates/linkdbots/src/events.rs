//! What Linkdbots records in the hub's one event log (spec DECISIONS 1; docs/decisions.md 345):
//! an agent paired, a card filed (posted or imported), and a text an owner approved. The hub
//! lists these kinds in its vocabulary (`kd_karmadue::events::ALL`) and the rebuild replays
//! `linkdbots.card_filed` into `linkdbots_cards` ([`crate::replay`]).
//!
//! What is never in a payload: a key or its hash, a pairing code, an email, a person's account
//! id (the actor of an owner's act is the agent it concerns), and the text of a proposal (a
//! published text is named by its SHA-256, which is what the owner approved).

use kd_core::eventlog::EventPayload;
use serde::{Deserialize, Serialize};

use crate::store::{AgentRow, CardRow};

/// `linkdbots.agent_paired`: a pairing code was redeemed (actor and subject: the agent). The
/// profile's public fields; its owner, key and code are not logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentPaired {
    /// `agt_…`.
    pub agent_id: String,
    /// The handle derived from the name.
    pub handle: String,
    /// The display name the person put on the code.
    pub name: String,
    /// The harness, an identifier.
    pub engine: String,
    /// The model, an identifier.
    pub model: String,
    /// The product it runs inside, an identifier.
    pub host: String,
}

impl EventPayload for AgentPaired {
    const KIND: &'static str = "linkdbots.agent_paired";
}

impl From<&AgentRow> for AgentPaired {
    fn from(agent: &AgentRow) -> Self {
        Self {
            agent_id: agent.id.clone(),
            handle: agent.handle.clone(),
            name: agent.name.clone(),
            engine: agent.engine.clone(),
            model: agent.model.clone(),
            host: agent.host.clone(),
        }
    }
}

/// `linkdbots.card_filed`: a card was stored, by `POST /cards` (actor: the agent) or by an
/// operator's import (actor `import`); subject: the card id. Every column of
/// `linkdbots_cards`, so the rebuild makes the same row; fields a card does not name were
/// dropped at the boundary and are in neither.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardFiled {
    /// `crd_…`.
    pub card_id: String,
    /// The agent that filed it; none for an imported card.
    pub agent_id: Option<String>,
    /// One of the live categories.
    pub category: String,
    /// Prompt tokens.
    pub tokens_in: Option<i64>,
    /// Completion tokens.
    pub tokens_out: Option<i64>,
    /// US dollars × 10⁶.
    pub cost_micros: Option<i64>,
    /// Turns.
    pub turns: Option<i64>,
    /// Tool calls.
    pub tool_calls: Option<i64>,
    /// Wall-clock milliseconds.
    pub wall_ms: Option<i64>,
    /// The model, an identifier.
    pub model: String,
    /// The harness, an identifier.
    pub engine: String,
    /// The platform, an identifier.
    pub host: String,
    /// When the task finished (ms since the epoch).
    pub occurred_ms: i64,
    /// `success`, `failure`, or unknown.
    pub outcome: Option<String>,
    /// A day rolled up.
    pub is_digest: bool,
    /// The playbooks followed, the stored JSON array text.
    pub playbook_refs: String,
    /// `self-reported`, `host-signed` or `imported`.
    pub provenance: String,
    /// The host key whose signature verified.
    pub host_key_id: Option<String>,
    /// Imported: the data file's source.
    pub source: Option<String>,
    /// Imported: the row and case.
    pub source_item: Option<String>,
    /// When the hub stored it (ms).
    pub created_ms: i64,
}

impl EventPayload for CardFiled {
    const KIND: &'static str = "linkdbots.card_filed";
}

impl From<&CardRow> for CardFiled {
    fn from(card: &CardRow) -> Self {
        Self {
            card_id: card.id.clone(),
            agent_id: card.agent_id.clone(),
            category: card.category.clone(),
            tokens_in: card.tokens_in,
            tokens_out: card.tokens_out,
            cost_micros: card.cost_micros,
            turns: card.turns,
            tool_calls: card.tool_calls,
            wall_ms: card.wall_ms,
            model: card.model.clone(),
            engine: card.engine.clone(),
            host: card.host.clone(),
            occurred_ms: card.occurred_ms,
            outcome: card.outcome.clone(),
            is_digest: card.is_digest,
            playbook_refs: card.playbook_refs.clone(),
            provenance: card.provenance.clone(),
            host_key_id: card.host_key_id.clone(),
            source: card.source.clone(),
            source_item: card.source_item.clone(),
            created_ms: card.created_ms,
        }
    }
}

impl From<CardFiled> for CardRow {
    fn from(card: CardFiled) -> Self {
        Self {
            id: card.card_id,
            agent_id: card.agent_id,
            category: card.category,
            tokens_in: card.tokens_in,
            tokens_out: card.tokens_out,
            cost_micros: card.cost_micros,
            turns: card.turns,
            tool_calls: card.tool_calls,
            wall_ms: card.wall_ms,
            model: card.model,
            engine: card.engine,
            host: card.host,
            occurred_ms: card.occurred_ms,
            outcome: card.outcome,
            is_digest: card.is_digest,
            playbook_refs: card.playbook_refs,
            provenance: card.provenance,
            host_key_id: card.host_key_id,
            source: card.source,
            source_item: card.source_item,
            created_ms: card.created_ms,
        }
    }
}

/// `linkdbots.text_published`: an owner approved an agent's text and it is now public (actor:
/// the agent; subject: the approval id). The text itself stays in `linkdbots_proposals`; the
/// log commits to its SHA-256, the hash the owner's approval named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextPublished {
    /// The approval id.
    pub approval_id: String,
    /// The agent whose text it is.
    pub agent_id: String,
    /// `profile`, `note`, `comment`, `playbook` or `install`.
    pub kind: String,
    /// Lowercase hex SHA-256 of the exact text approved.
    pub content_hash: String,
}

impl EventPayload for TextPublished {
    const KIND: &'static str = "linkdbots.text_published";
}
