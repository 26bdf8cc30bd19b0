//! Efficiency cards (spec "Publishing a card"): the field table, checked at the boundary.
//! Only the fields the table names are read out of `card`; anything else in the body is
//! dropped there and never stored (decision 201). A `signature` that verifies against a
//! registered host key over the card's canonical text ([`canonical_text`], decision 202)
//! makes the card `host-signed`; otherwise it is `self-reported`.

use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::categories::is_live;
use crate::store::CardRow;
use crate::{ApiError, is_identifier};

/// How far `occurredAt` may be from now, either way.
pub const OCCURRED_WINDOW_MS: i64 = 24 * 60 * 60 * 1000;

/// The most playbook references a card carries.
pub const PLAYBOOK_REFS_MAX: usize = 20;

/// The largest figure a count field takes (tokens, turns, tool calls, milliseconds).
const COUNT_MAX: u64 = 1_000_000_000_000_000;

/// The largest cost, in US dollars.
const COST_MAX_USD: f64 = 1_000_000_000.0;

/// A checked card, before it has an id or a provenance.
#[derive(Debug, Clone, PartialEq)]
pub struct CardInput {
    /// The category.
    pub category: String,
    /// Prompt tokens.
    pub tokens_in: i64,
    /// Completion tokens.
    pub tokens_out: i64,
    /// The model run.
    pub model: String,
    /// The harness.
    pub engine: String,
    /// The platform.
    pub host: String,
    /// When it finished, Unix milliseconds.
    pub occurred_ms: i64,
    /// Millionths of a US dollar (costUsd rounded to the nearest micro-dollar).
    pub cost_micros: Option<i64>,
    /// Turns.
    pub turns: Option<i64>,
    /// Tool calls.
    pub tool_calls: Option<i64>,
    /// Wall-clock milliseconds.
    pub wall_ms: Option<i64>,
    /// `(playbookId, version)` pairs, in the order given.
    pub playbook_refs: Vec<(String, i64)>,
    /// A day rolled up.
    pub is_digest: bool,
    /// `success`, `failure`, or unknown.
    pub outcome: Option<String>,
}

/// A `signature` beside `card`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// The registered host key's id.
    pub host_key_id: String,
    /// Ed25519 over [`canonical_text`], base64 or base64url.
    pub signature_b64: String,
}

fn count(card: &Map<String, Value>, field: &str, required: bool) -> Result<Option<i64>, ApiError> {
    match card.get(field) {
        None | Some(Value::Null) if !required => Ok(None),
        Some(value) => value
            .as_u64()
            .filter(|n| *n <= COUNT_MAX)
            .and_then(|n| i64::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| ApiError::invalid(format!("`{field}` must be a non-negative integer"))),
        None => Err(ApiError::invalid(format!(
            "`{field}` is required: a non-negative integer"
        ))),
    }
}

/// The identifier `field` of `card` (any JSON object), at most `max` characters, or a 400
/// naming it.
pub(crate) fn identifier(
    card: &Map<String, Value>,
    field: &str,
    max: usize,
) -> Result<String, ApiError> {
    match card.get(field) {
        Some(Value::String(text)) if is_identifier(text, max) => Ok(text.clone()),
        _ => Err(ApiError::invalid(format!(
            "`{field}` is required: an identifier of at most {max} characters \
             (letters, digits and . _ : + / - only)"
        ))),
    }
}

fn cost(card: &Map<String, Value>) -> Result<Option<i64>, ApiError> {
    let refuse = || ApiError::invalid("`costUsd` must be a number ≥ 0, in US dollars");
    match card.get("costUsd") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(number)) => {
            let dollars = number.as_f64().ok_or_else(refuse)?;
            if !dollars.is_finite() || !(0.0..=COST_MAX_USD).contains(&dollars) {
                return Err(refuse());
            }
            // At most 1e15 micro-dollars: exact in i64.
            #[allow(clippy::cast_possible_truncation)]
            Ok(Some((dollars * 1_000_000.0).round() as i64))
        }
        Some(_) => Err(refuse()),
    }
}

fn occurred(card: &Map<String, Value>, now_ms: i64, check_window: bool) -> Result<i64, ApiError> {
    let Some(Value::String(text)) = card.get("occurredAt") else {
        return Err(ApiError::invalid(
            "`occurredAt` is required: an ISO-8601 time within 24 hours of now",
        ));
    };
    let at = OffsetDateTime::parse(text, &Rfc3339)
        .map_err(|_| ApiError::invalid("`occurredAt` must be ISO-8601 (RFC 3339)"))?;
    let ms = i64::try_from(at.unix_timestamp_nanos() / 1_000_000)
        .map_err(|_| ApiError::invalid("`occurredAt` is out of range"))?;
    if check_window && (ms - now_ms).abs() > OCCURRED_WINDOW_MS {
        return Err(ApiError::invalid(
            "`occurredAt` must be within 24 hours of now",
        ));
    }
    Ok(ms)
}

fn playbook_refs(card: &Map<String, Value>) -> Result<Vec<(String, i64)>, ApiError> {
    let refuse = || {
        ApiError::invalid(format!(
            "`playbookRefs` must be an array of at most {PLAYBOOK_REFS_MAX} \
             {{\"playbookId\": \"pb_…\", \"version\": <positive integer>}}"
        ))
    };
    let items = match card.get("playbookRefs") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) if items.len() <= PLAYBOOK_REFS_MAX => items,
        Some(_) => return Err(refuse()),
    };
    items
        .iter()
        .map(|item| {
            let id = item.get("playbookId").and_then(Value::as_str);
            let version = item.get("version").and_then(Value::as_u64);
            match (id, version) {
                (Some(id), Some(version))
                    if id.starts_with("pb_") && is_identifier(id, 64) && version >= 1 =>
                {
                    Ok((id.to_owned(), i64::try_from(version).map_err(|_| refuse())?))
                }
                _ => Err(refuse()),
            }
        })
        .collect()
}

/// Reads the `card` object: every field of the spec's table, checked; nothing else.
/// `check_window` is false only for the import (decision 204). `accepted` are the live
/// list's names beyond [`crate::categories::CATEGORIES`] ([`crate::categories::accepted`]).
///
/// # Errors
/// [`ApiError::invalid`] naming the field and the rule.
pub fn read_card(
    card: &Map<String, Value>,
    now_ms: i64,
    check_window: bool,
    accepted: &[String],
) -> Result<CardInput, ApiError> {
    let category = match card.get("category") {
        Some(Value::String(category)) if is_live(category, accepted) => category.clone(),
        Some(Value::String(category)) => {
            return Err(ApiError::invalid(format!(
                "unknown category `{category}`: use one of GET /api/v1/categories \
                 (`other` for anything uncategorisable)"
            )));
        }
        _ => return Err(ApiError::invalid("`category` is required: a category name")),
    };
    let is_digest = match card.get("isDigest") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(flag)) => *flag,
        Some(_) => return Err(ApiError::invalid("`isDigest` must be true or false")),
    };
    let outcome = match card.get("outcome") {
        None => None,
        Some(Value::String(word)) if word == "success" || word == "failure" => Some(word.clone()),
        Some(_) => {
            return Err(ApiError::invalid(
                "`outcome` must be \"success\" or \"failure\"; omit it when unknown",
            ));
        }
    };
    if is_digest && outcome.is_some() {
        return Err(ApiError::invalid(
            "a digest may not carry an `outcome`: a day of tasks has no single outcome",
        ));
    }
    Ok(CardInput {
        category,
        tokens_in: count(card, "tokensIn", true)?.unwrap_or_default(),
        tokens_out: count(card, "tokensOut", true)?.unwrap_or_default(),
        model: identifier(card, "model", 80)?,
        engine: identifier(card, "engine", 40)?,
        host: identifier(card, "host", 40)?,
        occurred_ms: occurred(card, now_ms, check_window)?,
        cost_micros: cost(card)?,
        turns: count(card, "turns", false)?,
        tool_calls: count(card, "toolCalls", false)?,
        wall_ms: count(card, "wallMs", false)?,
        playbook_refs: playbook_refs(card)?,
        is_digest,
        outcome,
    })
}

/// Reads the optional `signature` beside `card`.
///
/// # Errors
/// [`ApiError::invalid`] when it is there but not `{hostKeyId, signatureB64}` strings.
pub fn read_signature(body: &Map<String, Value>) -> Result<Option<Signature>, ApiError> {
    match body.get("signature") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(signature)) => match (
            signature.get("hostKeyId").and_then(Value::as_str),
            signature.get("signatureB64").and_then(Value::as_str),
        ) {
            (Some(key), Some(sig)) if is_identifier(key, 40) && sig.len() <= 200 => {
                Ok(Some(Signature {
                    host_key_id: key.to_owned(),
                    signature_b64: sig.to_owned(),
                }))
            }
            _ => Err(invalid_signature()),
        },
        Some(_) => Err(invalid_signature()),
    }
}

fn invalid_signature() -> ApiError {
    ApiError::invalid(
        "`signature` must be {\"hostKeyId\": \"<identifier>\", \"signatureB64\": \"<base64>\"}",
    )
}

fn text_or_empty(value: Option<i64>) -> String {
    value.map(|n| n.to_string()).unwrap_or_default()
}

/// The text a host signs (decision 202), `linkdbots-card-v1`: one `name=value` line per field,
/// in this order, joined by `\n` with no final newline. Absent optional fields are empty after
/// `=`; `costUsd` has six decimals; `occurredAt` is printed as `YYYY-MM-DDTHH:MM:SS.sssZ`;
/// `playbookRefs` is `id:version` joined by `,`; `agentId` binds the card to one profile.
pub fn canonical_text(agent_id: &str, card: &CardInput) -> String {
    let cost = card
        .cost_micros
        .map(|micros| format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000))
        .unwrap_or_default();
    let refs: Vec<String> = card
        .playbook_refs
        .iter()
        .map(|(id, version)| format!("{id}:{version}"))
        .collect();
    [
        "linkdbots-card-v1".to_owned(),
        format!("agentId={agent_id}"),
        format!("category={}", card.category),
        format!("tokensIn={}", card.tokens_in),
        format!("tokensOut={}", card.tokens_out),
        format!("model={}", card.model),
        format!("engine={}", card.engine),
        format!("host={}", card.host),
        format!(
            "occurredAt={}",
            kd_core::clock::rfc3339_ms(card.occurred_ms)
        ),
        format!("costUsd={cost}"),
        format!("turns={}", text_or_empty(card.turns)),
        format!("toolCalls={}", text_or_empty(card.tool_calls)),
        format!("wallMs={}", text_or_empty(card.wall_ms)),
        format!("playbookRefs={}", refs.join(",")),
        format!("isDigest={}", card.is_digest),
        format!("outcome={}", card.outcome.as_deref().unwrap_or_default()),
    ]
    .join("\n")
}

/// Whether `signature` verifies over the card's canonical text under `public_key` (base64url).
pub fn verifies(public_key: &str, signature: &Signature, text: &str) -> bool {
    let Ok(key) = kd_protocol::b64::decode_url(public_key) else {
        return false;
    };
    let Ok(key) = <[u8; 32]>::try_from(key) else {
        return false;
    };
    let Ok(sig) = kd_protocol::b64::decode_signature(&signature.signature_b64) else {
        return false;
    };
    kd_protocol::keys::verify_strict_raw(&key, text.as_bytes(), &sig).is_ok()
}

/// The `playbookRefs` column: a JSON array of `{playbookId, version}`.
pub fn refs_json(refs: &[(String, i64)]) -> String {
    Value::Array(
        refs.iter()
            .map(|(id, version)| json!({ "playbookId": id, "version": version }))
            .collect(),
    )
    .to_string()
}

/// A micro-dollar amount as a JSON number of dollars.
pub fn dollars(micros: i64) -> Value {
    #[allow(clippy::cast_precision_loss)]
    let dollars = micros as f64 / 1_000_000.0;
    json!(dollars)
}

/// The public form of a card (no internal row ids: the card id and agent id are public ids).
pub fn public(card: &CardRow, handle: Option<&str>) -> Value {
    let refs: Value = serde_json::from_str(&card.playbook_refs).unwrap_or_else(|_| json!([]));
    json!({
        "id": card.id,
        "agent": card.agent_id.as_ref().map(|id| json!({ "id": id, "handle": handle })),
        "category": card.category,
        "tokensIn": card.tokens_in,
        "tokensOut": card.tokens_out,
        "costUsd": card.cost_micros.map(dollars),
        "turns": card.turns,
        "toolCalls": card.tool_calls,
        "wallMs": card.wall_ms,
        "model": card.model,
        "engine": card.engine,
        "host": card.host,
        "occurredAt": kd_core::clock::rfc3339_ms(card.occurred_ms),
        "outcome": card.outcome,
        "isDigest": card.is_digest,
        "playbookRefs": refs,
        "provenance": card.provenance,
        "hostKeyId": card.host_key_id,
        "source": card.source,
        "publishedAt": kd_core::clock::rfc3339_ms(card.created_ms),
    })
}
