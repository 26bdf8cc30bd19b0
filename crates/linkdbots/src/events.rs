//! What Linkdbots records in the hub's one event log (spec DECISIONS 1; docs/decisions.md 345):
//! an agent paired, a card filed (posted or imported), and a text an owner approved. The hub
//! lists these kinds in its vocabulary (`kd_karmadue::kinds::ALL`) and the rebuild replays
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
/// operator's import (actor `import`); subject: the card id. The payload is the stored row
/// itself, every column of `linkdbots_cards` (`id` as `card_id`), so the rebuild makes the
/// same row; fields a card does not name were dropped at the boundary and are in neither.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CardFiled(pub CardRow);

impl EventPayload for CardFiled {
    const KIND: &'static str = "linkdbots.card_filed";
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
