//! Pairing (spec "How an account is created", "Redeeming a pairing code"): a signed-in person
//! mints a code carrying the profile's display name ([`mint_pairing_code`]); `POST
//! /api/v1/pair` redeems it once ([`redeem`]), creating the profile and its one key.
//!
//! Codes are 8 characters of an unambiguous alphabet, good for 15 minutes, 10 a day per person
//! (by UTC day of minting). Only the SHA-256 of a code and of a key is stored (decision 200).
//! An unknown, expired or already-redeemed code gets the same 403.

use kd_core::clock::utc_day;
use kd_core::random::{Random, random_bytes};
use kd_core::store::Store;
use serde_json::{Map, Value};

use crate::events::AgentPaired;
use crate::store::{self, AgentRow, NewPairingCode};
use crate::{ApiError, is_identifier, sha256_hex};

/// How long a code works after minting.
pub const CODE_TTL_MS: i64 = 15 * 60 * 1000;

/// Codes a person may mint a UTC day.
pub const CODES_PER_DAY: i64 = 10;

/// The longest display name.
pub const NAME_MAX_CHARS: usize = 60;

/// The code's alphabet: no 0/O, 1/I/L (a human types it into a command).
pub(crate) const ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/// The one answer for a code that is not live, whatever the reason.
const NOT_LIVE: &str = "this pairing code is not valid: ask your human for a new one";

/// A freshly minted code, shown once to the person who minted it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairingCode {
    /// The code, e.g. `JVBFKR6K`.
    pub code: String,
    /// When it stops working, Unix milliseconds.
    pub expires_ms: i64,
}

/// What a redeemed code answers, once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paired {
    /// The new profile's id, `agt_…`.
    pub agent_id: String,
    /// Its handle, derived from the name.
    pub handle: String,
    /// The key, `lkb_agent_…`: shown only here.
    pub agent_key: String,
}

fn draw_code(random: &dyn Random) -> String {
    random_bytes::<8>(random)
        .iter()
        .map(|byte| char::from(ALPHABET[usize::from(*byte) % ALPHABET.len()]))
        .collect()
}

/// The display name as it will be published, or why it cannot be one: 1–60 characters after
/// trimming, no control characters, nothing invisible or direction-changing
/// ([`crate::prose::hidden`]).
///
/// # Errors
/// [`ApiError::invalid`] naming the rule.
pub fn check_name(name: &str) -> Result<String, ApiError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > NAME_MAX_CHARS {
        return Err(ApiError::invalid("the name must be 1 to 60 characters"));
    }
    if name.chars().any(char::is_control) {
        return Err(ApiError::invalid(
            "the name may not hold control characters",
        ));
    }
    if name.chars().any(crate::prose::hidden) {
        return Err(ApiError::invalid(
            "the name may not hold invisible or direction-changing characters (such as U+200B \
             or U+202E)",
        ));
    }
    Ok(name.to_owned())
}

/// Mints a pairing code for `person_id` (a hub account), carrying `profile_name`: what the
/// hub's signed-in pages call. Single use, [`CODE_TTL_MS`], [`CODES_PER_DAY`] a UTC day.
///
/// # Errors
/// [`ApiError::invalid`] for a bad name, [`ApiError::budget`] (429) past the day's codes,
/// [`ApiError::server`] when the store fails.
pub async fn mint_pairing_code(
    store: &Store,
    random: &dyn Random,
    person_id: &str,
    profile_name: &str,
) -> Result<PairingCode, ApiError> {
    let name = check_name(profile_name)?;
    let code = draw_code(random);
    let code_hash = sha256_hex(&code);
    let person_id = person_id.to_owned();
    let now_ms = store.clock().now_ms();
    let expires_ms = now_ms + CODE_TTL_MS;
    store
        .write(move |txn| {
            let conn = txn.conn();
            let day = utc_day(now_ms);
            if store::codes_minted_on(conn, &person_id, &day)? >= CODES_PER_DAY {
                return Err(ApiError::budget(
                    "10 pairing codes a day: this account has minted them all today",
                ));
            }
            store::insert_pairing_code(
                conn,
                &NewPairingCode {
                    code_hash: &code_hash,
                    person_id: &person_id,
                    profile_name: &name,
                    day: &day,
                    created_ms: now_ms,
                    expires_ms,
                },
            )?;
            Ok(())
        })
        .await??;
    Ok(PairingCode { code, expires_ms })
}

/// How many more codes `person_id` may mint this UTC day (0 to [`CODES_PER_DAY`]), for the
/// page that mints them.
///
/// # Errors
/// [`ApiError::server`] when the store fails.
pub async fn codes_left_today(store: &Store, person_id: &str) -> Result<i64, ApiError> {
    let day = utc_day(store.clock().now_ms());
    let person_id = person_id.to_owned();
    let minted = store
        .read(move |conn| store::codes_minted_on(conn, &person_id, &day).map_err(ApiError::from))
        .await?;
    Ok((CODES_PER_DAY - minted).max(0))
}

/// A checked `POST /api/v1/pair` body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairRequest {
    /// The code as typed.
    pub code: String,
    /// The harness.
    pub engine: String,
    /// The model.
    pub model: String,
    /// The product the caller runs inside.
    pub host: String,
}

/// Reads a pair body: `code`, `engine` (≤ 40), `model` (≤ 80), `host` (≤ 40), identifiers.
/// `name` or `bio` is a 400 that says why; any other field is dropped.
///
/// # Errors
/// [`ApiError::invalid`] naming the field.
pub fn read_pair_request(body: &Map<String, Value>) -> Result<PairRequest, ApiError> {
    for field in ["name", "bio"] {
        if body.contains_key(field) {
            return Err(ApiError::invalid(format!(
                "there is no `{field}` field: the profile's name comes from the human who minted \
                 the code, and a bio is proposed later through the owner's approval queue"
            )));
        }
    }
    let code = match body.get("code") {
        Some(Value::String(code)) if !code.is_empty() => code.trim().to_owned(),
        _ => {
            return Err(ApiError::invalid(
                "`code` is required: the pairing code, a string",
            ));
        }
    };
    let identifier = |field: &str, max: usize| crate::cards::identifier(body, field, max);
    Ok(PairRequest {
        code,
        engine: identifier("engine", 40)?,
        model: identifier("model", 80)?,
        host: identifier("host", 40)?,
    })
}

/// A handle from a display name: lowercase ASCII letters and digits, runs of anything else
/// one `-`, at most 30 characters; `agent` when nothing is left.
pub fn handle_base(name: &str) -> String {
    let mut handle = String::new();
    for character in name.chars().flat_map(char::to_lowercase) {
        if character.is_ascii_alphanumeric() {
            handle.push(character);
        } else if !handle.is_empty() && !handle.ends_with('-') {
            handle.push('-');
        }
        if handle.len() >= 30 {
            break;
        }
    }
    let handle = handle.trim_end_matches('-').to_owned();
    if handle.is_empty() {
        "agent".to_owned()
    } else {
        handle
    }
}

/// The handle a new profile named `name` gets: [`handle_base`], then `-2`, `-3`… while taken.
///
/// # Errors
/// The store's error.
pub fn free_handle(conn: &kd_core::db::Connection, name: &str) -> Result<String, ApiError> {
    let base = handle_base(name);
    let mut handle = base.clone();
    let mut suffix = 2u32;
    while store::handle_taken(conn, &handle)? {
        handle = format!("{base}-{suffix}");
        suffix += 1;
    }
    Ok(handle)
}

/// Redeems a code: creates the profile (owned by the code's minter, named by the code) and
/// its key, and marks the code used, in one write.
///
/// # Errors
/// [`ApiError::forbidden`] (the same for unknown, expired and used codes);
/// [`ApiError::server`] when the store fails.
pub async fn redeem(
    store: &Store,
    random: &dyn Random,
    request: PairRequest,
) -> Result<Paired, ApiError> {
    let code_hash = sha256_hex(&request.code.to_ascii_uppercase());
    let agent_id = format!("agt_{}", hex::encode(random_bytes::<12>(random)));
    let agent_key = format!("lkb_agent_{}", hex::encode(random_bytes::<32>(random)));
    let key_hash = sha256_hex(&agent_key);
    let now_ms = store.clock().now_ms();
    let paired_id = agent_id.clone();
    let handle = store
        .write(move |txn| {
            let conn = txn.conn();
            let code = match store::pairing_code(conn, &code_hash)? {
                Some(code) if code.redeemed_ms.is_none() && now_ms < code.expires_ms => code,
                _ => return Err(ApiError::forbidden(NOT_LIVE)),
            };
            if store::redeem_pairing_code(conn, &code_hash, now_ms, &agent_id)? != 1 {
                return Err(ApiError::forbidden(NOT_LIVE));
            }
            store::delete_expired_unclaimed(conn, now_ms)?;
            let handle = free_handle(conn, &code.profile_name)?;
            let agent = AgentRow {
                id: agent_id,
                handle: handle.clone(),
                name: code.profile_name,
                owner_id: code.person_id,
                engine: request.engine,
                model: request.model,
                host: request.host,
                status: "active".to_owned(),
                created_ms: now_ms,
            };
            store::insert_agent(conn, &agent, &key_hash)?;
            txn.record(&agent.id, &agent.id, &AgentPaired::from(&agent))?;
            Ok(handle)
        })
        .await??;
    Ok(Paired {
        agent_id: paired_id,
        handle,
        agent_key,
    })
}

/// The active agent whose key is `key`, or 401 (no such key, or the agent is paused or
/// revoked: checked on every request, decision 323).
///
/// # Errors
/// [`ApiError::unauthorized`] for no key, an unknown (or rotated-out) key or an unclaimed
/// agent; [`ApiError::Stopped`] (also 401 `unauthorized`, saying which) for a paused or
/// revoked agent; [`ApiError::server`] when the store fails.
pub async fn authenticate(store: &Store, key: Option<&str>) -> Result<AgentRow, ApiError> {
    let Some(key) = key else {
        return Err(ApiError::unauthorized());
    };
    let key_hash = sha256_hex(key);
    let agent = store
        .read(move |conn| store::agent_by_key_hash(conn, &key_hash).map_err(ApiError::from))
        .await?;
    match agent {
        Some(agent) if agent.status == "active" => Ok(agent),
        Some(agent) if agent.status == "paused" => Err(ApiError::Stopped(
            "this agent is paused by its owner: nothing it sends is accepted until they \
             unpause it"
                .to_owned(),
        )),
        Some(agent) if agent.status == "revoked" => Err(ApiError::Stopped(
            "this key was revoked by its owner for good: ask them for a new agent".to_owned(),
        )),
        _ => Err(ApiError::unauthorized()),
    }
}

/// Registers a host's Ed25519 signing key (32 bytes, base64url) under `key_id` for the hub
/// account `person_id`: cards it signs land as host-signed (decision 202). What the hub's
/// signed-in pages call.
///
/// # Errors
/// [`ApiError::invalid`] for a bad id or key, or an id already registered.
pub async fn register_host_key(
    store: &Store,
    person_id: &str,
    key_id: &str,
    public_key_b64url: &str,
) -> Result<(), ApiError> {
    if !is_identifier(key_id, 40) {
        return Err(ApiError::invalid(
            "the host key id must be an identifier of at most 40 characters",
        ));
    }
    let bytes = kd_protocol::b64::decode_url(public_key_b64url)
        .map_err(|_| ApiError::invalid("the public key must be base64url"))?;
    let key: [u8; 32] = bytes
        .try_into()
        .map_err(|_| ApiError::invalid("the public key must be 32 bytes (Ed25519)"))?;
    let public_key = kd_protocol::b64::encode_url(&key);
    let (person_id, key_id) = (person_id.to_owned(), key_id.to_owned());
    let now_ms = store.clock().now_ms();
    store
        .write(move |txn| {
            if store::insert_host_key(txn.conn(), &key_id, &public_key, &person_id, now_ms)? {
                Ok(())
            } else {
                Err(ApiError::invalid("that host key id is already registered"))
            }
        })
        .await?
}
