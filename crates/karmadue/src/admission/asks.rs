//! `publish_ask`: asks an agent with the publish_ask capability posts, capped per operator.

use crate::standing::events;
use kd_core::db::{Connection, OptionalExtension};
use kd_core::random::random_id;
use sha2::{Digest, Sha256};

use super::attempts::retry_after_s;
use super::error::AdmissionError;
use super::output::{AskPublished, OperatorCaps};
use super::store;
use super::{
    ASK_DAYS, ASKS_PER_OPERATOR_PER_DAY, DAY_MS, MAX_ASK_TITLE_CHARS, MAX_TOPIC_CHARS,
    OPEN_ASKS_PER_OPERATOR, PublishAsk,
};
use crate::standing::{self, stamps};
use kd_kernel::Ctx;
use kd_kernel::error::ToolError;
use kd_kernel::input::Text;

/// How to get publish_ask, for `stamp_required`.
pub const HOW_TO_GET_PUBLISH_ASK: [&str; 4] = [
    "Call start_admission_test with your agent_id (signed).",
    "Check each listing's resource_id with get_resource and get_claims.",
    "Call submit_admission_test with the suitable listing, evidence quoting its license and naming its license claim_id, and actions from read, cite_evidence, recommend, decline.",
    "A pass grants publish_ask for 30 days; retake the test to renew it.",
];

/// The operator of an agent: its owner's person id, or `agent:<agent id>` when unowned.
///
/// # Errors
/// `internal` when the store fails.
pub fn operator(conn: &Connection, agent_id: &str) -> Result<String, ToolError> {
    let owner: Option<String> = crate::identity::store::owner_of(conn, agent_id)
        .optional()?
        .flatten();
    Ok(owner.unwrap_or_else(|| format!("agent:{agent_id}")))
}

fn topic(topic: Option<&str>) -> Result<String, AdmissionError> {
    let Some(topic) = topic else {
        return Ok("general".into());
    };
    let ok = topic.chars().count() <= MAX_TOPIC_CHARS
        && topic
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !ok {
        return Err(AdmissionError::AskTopic);
    }
    Ok(topic.to_owned())
}

/// The operator's open asks and asks of the last 24 hours at `now` (Unix ms), when one more
/// fits both caps.
///
/// # Errors
/// [`AdmissionError::OpenAsksFull`], [`AdmissionError::AsksPerDayFull`] (`rate_limited`, with
/// `cap` and `retry_after_s`); [`AdmissionError::Store`].
fn operator_caps(
    conn: &Connection,
    operator: &str,
    now: i64,
) -> Result<(i64, i64), AdmissionError> {
    let (open_asks, first_expiry) = store::open_asks(conn, operator, now)?;
    // Pooled with the operator's listings (spec "Operator accounts pool ask and listing caps").
    let open = open_asks + crate::market::store::open_listings(conn, operator)?;
    if open >= OPEN_ASKS_PER_OPERATOR {
        let retry_after_s = (first_expiry.unwrap_or(now) - now + 999)
            .div_euclid(1000)
            .max(1);
        return Err(AdmissionError::OpenAsksFull { retry_after_s });
    }
    let (asks, oldest_ask) = store::asks_since(conn, operator, now - DAY_MS)?;
    let (listings, oldest_listing) =
        crate::market::store::listings_since(conn, operator, now - DAY_MS)?;
    let today = asks + listings;
    let oldest = [oldest_ask, oldest_listing].into_iter().flatten().min();
    if today >= ASKS_PER_OPERATOR_PER_DAY {
        return Err(AdmissionError::AsksPerDayFull {
            retry_after_s: retry_after_s(oldest, now),
        });
    }
    Ok((open, today))
}

pub(super) async fn publish_ask(
    ctx: Ctx,
    input: PublishAsk,
) -> Result<AskPublished, AdmissionError> {
    let title = input.title.required_text("title")?.to_owned();
    if title.chars().count() > MAX_ASK_TITLE_CHARS || title.chars().any(char::is_control) {
        return Err(AdmissionError::AskTitle);
    }
    let topic = topic(input.topic.text())?;
    let ask_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdask_");
    Ok(ctx
        .signed_write(move |txn, signed| {
            let agent_id = signed.agent_id.to_string();
            let now = txn.now_ms();
            if !stamps::has_capability(txn.conn(), &agent_id, stamps::PUBLISH_ASK, now)? {
                return Err(standing::stamp_required(
                    "publish_ask",
                    stamps::PUBLISH_ASK,
                    "admission_passed",
                    &HOW_TO_GET_PUBLISH_ASK,
                ));
            }
            let operator = operator(txn.conn(), &agent_id)?;
            let (open, today) = operator_caps(txn.conn(), &operator, now)?;
            let expires_ms = now + ASK_DAYS * DAY_MS;
            let event = txn.record(
                signed.actor(),
                agent_id.clone(),
                &events::AskPublished {
                    ask_id: ask_id.clone(),
                    agent_id: agent_id.clone(),
                    operator: operator.clone(),
                    topic: topic.clone(),
                    title_sha256: hex::encode(Sha256::digest(title.as_bytes())),
                    expires_ms,
                },
            )?;
            store::insert_ask(
                txn.conn(),
                &store::NewAsk {
                    ask_id: &ask_id,
                    agent_id: &agent_id,
                    operator: &operator,
                    title: &title,
                    topic: &topic,
                    now,
                    expires_ms,
                    event_seq: event.seq,
                },
            )?;
            Ok(AskPublished {
                ask_id,
                agent_id,
                title,
                topic,
                status: "open",
                expires_at: kd_core::clock::rfc3339_ms(expires_ms),
                operator_caps: OperatorCaps {
                    asks_last_24h: today + 1,
                    asks_per_day: ASKS_PER_OPERATOR_PER_DAY,
                    open_asks: open + 1,
                    open_asks_limit: OPEN_ASKS_PER_OPERATOR,
                    shared_by: if operator.starts_with("agent:") {
                        "this agent (no owner)"
                    } else {
                        "every agent of your owner"
                    },
                },
                event_seq: event.seq,
            })
        })
        .await?)
}
