//! Handoffs: `handoff_task` (inside a shared circle: the same person, or the other side of a
//! proposal both people approved) and `confirm_handoff` (asks the receiving agent's person; it
//! never confirms).

use kd_core::db::OptionalExtension;
use kd_core::random::random_id;
use serde_json::Value;
use sha2::{Digest, Sha256};

use kd_kernel::Ctx;
use kd_kernel::input::Text;

use super::error::MarketError;
use super::events::{self, HandoffStep};
use super::output::{HandoffDone, HandoffView};
use super::proposals::active_agent;
use super::store::{self, Handoff};
use super::{
    ConfirmHandoff, DAY_MS, HANDOFFS_PER_DAY, HandoffTask, MAX_NOTE_CHARS, MAX_PAYLOAD_BYTES,
    market_url,
};

/// A handoff id's prefix.
pub const HANDOFF_PREFIX: &str = "kdho_";
/// The longest kind label.
const MAX_KIND_CHARS: usize = 40;

/// handoff_task's kind (lowercase letters, digits, `-`, `_`; `fyi` unless given) and its
/// payload's canonical text, checked before anything is read or written.
fn checked(
    kind: Option<String>,
    payload: Option<serde_json::Map<String, Value>>,
) -> Result<(String, String), MarketError> {
    let kind = kind.text().unwrap_or("fyi").to_owned();
    if kind.chars().count() > MAX_KIND_CHARS
        || !kind
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    {
        return Err(MarketError::HandoffKind);
    }
    let payload = payload.unwrap_or_default();
    if payload.get("note").is_some_and(|note| {
        !note.is_string()
            || note
                .as_str()
                .is_some_and(|text| text.chars().count() > MAX_NOTE_CHARS)
    }) {
        return Err(MarketError::Payload);
    }
    let payload_text = kd_protocol::canonical::canonical_value_text(&Value::Object(payload));
    if payload_text.len() > MAX_PAYLOAD_BYTES {
        return Err(MarketError::Payload);
    }
    Ok((kind, payload_text))
}

/// `handoff_task`.
pub(super) async fn handoff_task(ctx: Ctx, input: HandoffTask) -> Result<HandoffDone, MarketError> {
    let to_named = input.to_agent.required_text("to_agent")?.to_owned();
    let (kind, payload_text) = checked(input.kind, input.payload)?;
    let handoff_id = random_id::<12>(ctx.kernel.random.as_ref(), HANDOFF_PREFIX);
    let url = market_url(&ctx.kernel);
    ctx.signed_write(move |txn, signed| -> Result<_, MarketError> {
        let agent_id = signed.agent_id.to_string();
        let now = txn.now_ms();
        let (to_agent, their_owner) =
            active_agent(txn.conn(), &to_named)?.ok_or(MarketError::NoRecipient)?;
        if to_agent == agent_id {
            return Err(MarketError::HandoffToSelf);
        }
        let my_owner = crate::identity::store::owner_of(txn.conn(), &agent_id).optional()?.flatten();
        let (circle, proposal_id) = match (&my_owner, &their_owner) {
            (Some(mine), Some(theirs)) if mine == theirs => ("same_owner", None),
            _ => match store::approved_between(txn.conn(), &agent_id, &to_agent)? {
                Some(proposal_id) => ("approved_proposal", Some(proposal_id)),
                None => return Err(MarketError::OutsideCircle),
            },
        };
        let to_owner = their_owner.ok_or(MarketError::OutsideCircle)?;
        let (sent, oldest) = store::handoffs_since(txn.conn(), &agent_id, now - DAY_MS)?;
        if sent >= HANDOFFS_PER_DAY {
            return Err(MarketError::HandoffsSpent {
                limit: HANDOFFS_PER_DAY,
                retry_after_s: super::listings::day_wait_s(oldest, now),
            });
        }
        let payload_sha256 = hex::encode(Sha256::digest(payload_text.as_bytes()));
        let event = txn.record(
            signed.actor(),
            agent_id.clone(),
            &events::HandoffMade {
                handoff_id: handoff_id.clone(),
                from_agent: agent_id.clone(),
                to_agent: to_agent.clone(),
                to_owner: to_owner.clone(),
                circle: circle.to_owned(),
                proposal_id: proposal_id.clone(),
                kind: kind.clone(),
                payload_sha256: payload_sha256.clone(),
            },
        )?;
        let handoff = Handoff {
            handoff_id,
            from_agent: agent_id,
            to_agent,
            to_owner,
            proposal_id,
            circle: circle.to_owned(),
            kind,
            payload: payload_text,
            payload_sha256,
            status: "pending".into(),
            requested_ms: None,
            decided_ms: None,
            decided_by: None,
            created_ms: now,
            event_seq: event.seq,
        };
        store::insert_handoff(txn.conn(), &handoff)?;
        Ok(HandoffDone {
            handoff: HandoffView::of(&handoff, url),
            next_step: "Handed on. The receiving agent's person confirms it on the KarmaDue page; call confirm_handoff to ask them.",
            event_seq: Some(event.seq),
        })
    })
    .await
}

/// `confirm_handoff`: marks the handoff as waiting for the person (once) and records the
/// request; the person confirms on the page.
pub(super) async fn confirm_handoff(
    ctx: Ctx,
    input: ConfirmHandoff,
) -> Result<HandoffDone, MarketError> {
    let handoff_id = input.handoff_id.text().map(str::to_owned);
    let proposal_id = input.proposal_id.text().map(str::to_owned);
    if handoff_id.is_none() && proposal_id.is_none() {
        return Err(MarketError::HandoffWhich);
    }
    let url = market_url(&ctx.kernel);
    ctx.signed_write(move |txn, signed| -> Result<_, MarketError> {
        let agent_id = signed.agent_id.to_string();
        let now = txn.now_ms();
        let found = match (&handoff_id, &proposal_id) {
            (Some(id), _) => store::handoff(txn.conn(), id)?,
            (None, Some(proposal)) => store::handoff_of_proposal(txn.conn(), proposal, &agent_id)?,
            (None, None) => None,
        };
        let mut handoff = found
            .filter(|handoff| handoff.from_agent == agent_id || handoff.to_agent == agent_id)
            .filter(|handoff| {
                proposal_id.is_none() || handoff.proposal_id.as_deref() == proposal_id.as_deref()
            })
            .ok_or(MarketError::NoHandoff)?;
        match handoff.status.as_str() {
            "pending" => {}
            "awaiting_confirmation" => {
                return Ok(HandoffDone {
                    handoff: HandoffView::of(&handoff, url),
                    next_step: "Already waiting for the person's confirmation on the KarmaDue page. Nothing was written.",
                    event_seq: None,
                });
            }
            status => return Err(MarketError::HandoffClosed(status.to_owned())),
        }
        store::handoff_requested(txn.conn(), &handoff.handoff_id, now)?;
        let event = txn.record(
            signed.actor(),
            agent_id,
            &events::HandoffConfirmationRequested(HandoffStep {
                handoff_id: handoff.handoff_id.clone(),
                to_agent: handoff.to_agent.clone(),
            }),
        )?;
        handoff.status = "awaiting_confirmation".into();
        handoff.requested_ms = Some(now);
        Ok(HandoffDone {
            handoff: HandoffView::of(&handoff, url),
            next_step: "Asked. The receiving agent's person confirms or declines it on the KarmaDue page; this call never confirms.",
            event_seq: Some(event.seq),
        })
    })
    .await
}
