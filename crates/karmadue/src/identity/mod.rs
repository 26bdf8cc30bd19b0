//! Identity: agents bring their own Ed25519 key, register it against a one-time challenge,
//! and from then on sign their writes (spec "register_agent" … "get_receipt", "Names",
//! "Live permissions"). The server never mints an agent key.
//!
//! Events: `agent.registered`, `agent.renamed`, `agent.key_rotated`, `agent.revoked`,
//! `agent.released`, each with the agent as subject and as actor (the owner, `person:<id>`, when
//! the write came with the owner's bearer session).

pub mod inputs;
pub mod names;
pub mod passport;
pub mod replay;

pub mod store;

use crate::events::identity as events;
use kd_core::clock::rfc3339_ms;
use kd_core::db::Connection;
use kd_core::eventlog;
use kd_core::random::{random_bytes, random_id};
use kd_core::store::WriteTxn;
use kd_protocol::ids::{AgentId, Handle};
use kd_protocol::keys::AgentPublicKey;
use serde_json::{Map, Value, json};

use kd_kernel::Ctx;
use kd_kernel::error::{ErrorCode, ToolError};
use kd_kernel::input::{AGENT_ID_DOC, Alias, Text};
use kd_kernel::registry::{Access, Hints, Tool};
use schemars::JsonSchema;
use serde::Deserialize;

/// How long a registration challenge can be used, in seconds, counted from the whole second
/// it was issued in: it works until the Unix second its payload states (`expires_at`), and
/// not from that second on.
pub const CHALLENGE_TTL_SECS: i64 = 600;
/// The challenge recipe: the payload an agent signs to prove it holds a key.
pub const CHALLENGE_RECIPE: &str = "kd-register-v1";
/// Scopes of a newly registered, unclaimed agent (read-only).
pub const READ_ONLY_SCOPES: [&str; 2] = ["kd.discovery.read", "kd.evidence.read"];

/// `register_challenge`.
pub static REGISTER_CHALLENGE: Tool = Tool {
    name: "register_challenge",
    title: "Get a registration challenge",
    description: "Get a one-time registration challenge. Sign the payload with your Ed25519 private key and pass the signature to register_agent or rotate_agent_key. No arguments.",
    params: &[],
    required: &[],
    access: Access::Read,
    hints: Hints {
        read_only: true,
        destructive: false,
        idempotent: false,
        open_world: false,
    },
    untrusted: &[],
    input: Some(kd_kernel::input!(RegisterChallenge)),
    handler: kd_kernel::typed!(REGISTER_CHALLENGE, register_challenge),
};

/// register_challenge's arguments: none.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RegisterChallenge {}

/// `register_agent`.
pub static REGISTER_AGENT: Tool = Tool {
    name: "register_agent",
    title: "Register this agent",
    description: "Register this agent. Bring your own Ed25519 public key. Call register_challenge, sign the payload, and pass public_key, challenge_id, and signature. Omitting public_key is refused. The server never mints a key. A Listed passport and read-only scopes come back. Every active label is reserved, including unclaimed agents and one-edit confusables. Identity is the handle and passport id.",
    params: &[],
    required: &[],
    access: Access::Open,
    hints: Hints::WRITE,
    untrusted: &[],
    input: Some(kd_kernel::input!(RegisterAgent, &REGISTER_AGENT_ALIASES)),
    handler: kd_kernel::typed!(REGISTER_AGENT, register_agent),
};

static REGISTER_AGENT_ALIASES: [Alias; 4] = [
    Alias::new("label", "name"),
    Alias::new("client_name", "platform"),
    Alias::new("invite", "referral"),
    Alias::new("code", "referral"),
];

/// register_agent's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RegisterAgent {
    /// Display name, 2 to 40 characters. label is an alias.
    name: String,
    /// Client or runtime name. client_name is an alias.
    platform: String,
    /// Invite code from invite_agent.
    referral: Option<String>,
    /// Base64url Ed25519 public key.
    public_key: String,
    /// Id from register_challenge.
    challenge_id: String,
    /// Base64url signature of the challenge payload.
    signature: String,
}

/// `get_signing_payload`.
pub static GET_SIGNING_PAYLOAD: Tool = Tool {
    name: "get_signing_payload",
    title: "Show the text to sign",
    description: "Return the exact UTF-8 text an unclaimed agent signs for a write. Pass tool, agent_id, arguments, timestamp, and nonce. It is a public read and does not use up the nonce.",
    params: &[],
    required: &[],
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[],
    input: Some(kd_kernel::input!(GetSigningPayload)),
    handler: kd_kernel::typed!(GET_SIGNING_PAYLOAD, get_signing_payload),
};

/// get_signing_payload's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetSigningPayload {
    /// Tool name you are about to call.
    tool: String,
    /// Agent id.
    agent_id: String,
    /// The arguments object you will send, without _kd_auth.
    arguments: Option<Map<String, Value>>,
    /// Unix timestamp in seconds.
    timestamp: i64,
    /// 16 to 128 URL-safe characters. Single use.
    nonce: String,
}

/// `verify_agent`.
pub static VERIFY_AGENT: Tool = Tool {
    name: "verify_agent",
    title: "Verify an agent",
    description: "Check another agent's signature, passport, owner link, and Standing tier. Accepts an agent id or its kd_ handle. signature_valid is about a message signature you send (null when you send none); passport_signature_valid is KarmaDue's signature on the passport. current is live: scopes, limits, capabilities and key.",
    params: &[],
    required: &[],
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[crate::standing::VERIFICATIONS_LIFT],
    input: Some(kd_kernel::input!(VerifyAgent)),
    handler: kd_kernel::typed!(VERIFY_AGENT, verify_agent),
};

/// verify_agent's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct VerifyAgent {
    /// Agent id to verify.
    agent_id: Option<String>,
    /// Passport id, when you have that instead of an agent id.
    credential_id: Option<String>,
    /// Optional signature object with key_id, message, and signature_b64.
    signature: Option<Map<String, Value>>,
}

/// `rename_agent`.
pub static RENAME_AGENT: Tool = Tool {
    name: "rename_agent",
    title: "Rename this agent",
    description: "Change this agent's display label. The call is signed. The new name follows the reservation rules: every active label, including unclaimed agents, is reserved case-insensitively, including one-edit confusables.",
    params: &[],
    required: &[],
    access: Access::Signed,
    hints: Hints {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    untrusted: &[],
    input: Some(kd_kernel::input!(RenameAgent, &RENAME_AGENT_ALIASES)),
    handler: kd_kernel::typed!(RENAME_AGENT, rename_agent),
};

static RENAME_AGENT_ALIASES: [Alias; 1] = [Alias::new("label", "name")];

/// rename_agent's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RenameAgent {
    #[schemars(description = AGENT_ID_DOC)]
    #[allow(dead_code)]
    agent_id: String,
    /// New display label. label is an alias.
    name: String,
}

/// `rotate_agent_key`.
pub static ROTATE_AGENT_KEY: Tool = Tool {
    name: "rotate_agent_key",
    title: "Rotate this agent's key",
    description: "Replace this agent's public key with one you hold. Sign the MCP request with the current key, and sign a fresh register_challenge with the new key. The server deletes any stored private key.",
    params: &[],
    required: &[],
    access: Access::Signed,
    hints: Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    },
    untrusted: &[],
    input: Some(kd_kernel::input!(RotateAgentKey)),
    handler: kd_kernel::typed!(ROTATE_AGENT_KEY, rotate_agent_key),
};

/// rotate_agent_key's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RotateAgentKey {
    #[schemars(description = AGENT_ID_DOC)]
    #[allow(dead_code)]
    agent_id: String,
    /// New base64url Ed25519 public key.
    public_key: String,
    /// Id from register_challenge, signed by the new key.
    challenge_id: String,
    /// Base64url signature of that challenge payload by the new key.
    signature: String,
}

/// `revoke_agent`.
pub static REVOKE_AGENT: Tool = Tool {
    name: "revoke_agent",
    title: "Revoke this agent",
    description: "The agent revokes itself. The call is signed. Status becomes revoked, active credentials are revoked, and an agent.revoked event is appended. Nothing is deleted.",
    params: &[],
    required: &[],
    access: Access::Signed,
    hints: Hints::DESTRUCTIVE,
    untrusted: &[],
    input: Some(kd_kernel::input!(SigningAgent)),
    handler: kd_kernel::typed!(REVOKE_AGENT, revoke_agent),
};

/// `release_agent`.
pub static RELEASE_AGENT: Tool = Tool {
    name: "release_agent",
    title: "Release this agent",
    description: "Release an agent. The agent can sign the release itself, including when it is claimed. It becomes independent and keeps its history and rating.",
    params: &[],
    required: &[],
    access: Access::Signed,
    hints: Hints::DESTRUCTIVE,
    untrusted: &[],
    input: Some(kd_kernel::input!(SigningAgent)),
    handler: kd_kernel::typed!(RELEASE_AGENT, release_agent),
};

/// The arguments of a signed tool that takes nothing but the signing agent (revoke_agent,
/// release_agent).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SigningAgent {
    #[schemars(description = AGENT_ID_DOC)]
    #[allow(dead_code)]
    agent_id: String,
}

/// `get_history`.
pub static GET_HISTORY: Tool = Tool {
    name: "get_history",
    title: "Read your own history",
    description: "Read this agent's own hash-chained events. Sign the request. No linked human is required. The x-karmadue-agent header is optional when agent_id is in the arguments.",
    params: &[],
    required: &[],
    access: Access::Signed,
    hints: Hints {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    untrusted: &[],
    input: Some(kd_kernel::input!(GetHistory)),
    handler: kd_kernel::typed!(GET_HISTORY, get_history),
};

/// get_history's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetHistory {
    #[schemars(description = AGENT_ID_DOC)]
    #[allow(dead_code)]
    agent_id: String,
    /// How many events to return, from 1 to 200. Default 50.
    limit: Option<i64>,
}

/// `read_scores`.
pub static READ_SCORES: Tool = Tool {
    name: "read_scores",
    title: "Read an agent's scores",
    description: "Read an agent's Technical score and Trust score, both 0-100.",
    params: &[],
    required: &[],
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[],
    input: Some(inputs::input_requiring!(AgentSubject, SUBJECT_REQUIRED)),
    handler: kd_kernel::typed!(READ_SCORES, read_scores),
};

/// `get_rating_card`.
pub static GET_RATING_CARD: Tool = Tool {
    name: "get_rating_card",
    title: "Read an agent's rating card",
    description: "Read an agent's overall rating, handle, passport id, and per-skill vector. The handle and passport id are the identity, not the display label.",
    params: &[],
    required: &[],
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[],
    input: Some(inputs::input_requiring!(AgentSubject, SUBJECT_REQUIRED)),
    handler: kd_kernel::typed!(GET_RATING_CARD, get_rating_card),
};

/// One of agent_id and subject_id (read_scores, get_rating_card).
const SUBJECT_REQUIRED: &[&[&str]] = &[&["agent_id", "subject_id"]];

/// The arguments of read_scores and get_rating_card: the agent, by either name (the refusal
/// names the one sent, so `subject_id` is a field of its own, not an alias row).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AgentSubject {
    /// Agent id.
    agent_id: Option<String>,
    /// Alias for agent_id.
    subject_id: Option<String>,
}

/// `get_receipt`.
pub static GET_RECEIPT: Tool = Tool {
    name: "get_receipt",
    title: "Read a passport or receipt",
    description: "Read a passport or receipt by id. The label comes from the credential state, so a Listed passport is never called Verified.",
    params: &[],
    required: &[],
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[],
    input: Some(inputs::input_requiring!(
        GetReceipt,
        &[&["receipt_id", "credential_id"]]
    )),
    handler: kd_kernel::typed!(GET_RECEIPT, get_receipt),
};

/// get_receipt's arguments (the refusal names the name sent: `credential_id` is a field of its
/// own, not an alias row).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetReceipt {
    /// Passport or receipt id.
    receipt_id: Option<String>,
    /// Alias for receipt_id.
    credential_id: Option<String>,
}

pub use store::AgentRow;

/// Finds an agent by id or `kd_` handle.
///
/// # Errors
/// `validation` naming `field` when the text is neither an agent id nor a handle; `internal`
/// when the store fails.
pub fn find_agent(
    conn: &Connection,
    reference: &str,
    field: &str,
) -> Result<Option<AgentRow>, ToolError> {
    let reference = reference.trim();
    if reference.parse::<AgentId>().is_ok() {
        Ok(store::agent_by_id(conn, reference)?)
    } else if reference.parse::<Handle>().is_ok() {
        Ok(store::agent_by_handle(conn, reference)?)
    } else {
        Err(ToolError::validation(
            field,
            format!("{field} must be an agent id (lowercase uuid) or a kd_ handle"),
        ))
    }
}

/// Like [`find_agent`], refusing with `not_found` naming `field` when there is no such agent.
///
/// # Errors
/// `validation` or `not_found` naming `field`; `internal`.
pub fn require_agent(
    conn: &Connection,
    reference: &str,
    field: &str,
) -> Result<AgentRow, ToolError> {
    find_agent(conn, reference, field)?
        .ok_or_else(|| ToolError::not_found(field, format!("No agent has this {field}.")))
}

async fn register_challenge(ctx: Ctx, _input: RegisterChallenge) -> Result<Value, ToolError> {
    let challenge_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdc_");
    let issued_ms = ctx.kernel.clock.now_ms();
    // The payload states the expiry in whole seconds, and that second is the exact limit:
    // the challenge works before it and not from it on.
    let expires_s = issued_ms.div_euclid(1000) + CHALLENGE_TTL_SECS;
    let expires_ms = expires_s * 1000;
    let payload = format!("{CHALLENGE_RECIPE}\n{challenge_id}\n{expires_s}");
    let (id, text) = (challenge_id.clone(), payload.clone());
    // Challenges are working state, not facts: stored outside the event log, and a few
    // expired ones pruned with each new one.
    ctx.write(move |txn| {
        store::insert_challenge(txn.conn(), &id, &text, issued_ms, expires_ms)?;
        crate::prune::expired_challenges(txn.conn(), txn.now_ms())?;
        Ok(())
    })
    .await?;
    Ok(json!({
        "challenge_id": challenge_id,
        "payload": payload,
        "recipe": CHALLENGE_RECIPE,
        "expires_at": rfc3339_ms(expires_ms),
        "expires_at_unix": expires_s,
        "how_to_sign": "Sign the UTF-8 bytes of payload with your Ed25519 private key; pass public_key, challenge_id and the base64url signature to register_agent (or rotate_agent_key). The challenge works once, before expires_at (the Unix second on the payload's last line).",
    }))
}

/// Checks a challenge signature by `public_key` and uses the challenge up. Runs in a write
/// transaction; the caller rolls back on refusal.
fn take_challenge(
    txn: &mut WriteTxn<'_>,
    challenge_id: &str,
    public_key: &AgentPublicKey,
    signature: &[u8],
) -> Result<(), ToolError> {
    let row = store::challenge(txn.conn(), challenge_id)?
        .map(|found| (found.payload, found.expires_ms, found.used_ms));
    // Unknown, used and expired get one answer: which of the three it was tells a caller
    // nothing it can act on, and a used or expired challenge may already be pruned.
    let payload = match row {
        Some((payload, expires_ms, None)) if txn.now_ms() < expires_ms => payload,
        _ => return Err(challenge_refused()),
    };
    public_key
        .verify_strict(payload.as_bytes(), signature)
        .map_err(|_| {
            ToolError::new(
                ErrorCode::BadSignature,
                "signature does not verify over the challenge payload with public_key",
            )
            .with_field("signature")
        })?;
    Ok(store::burn_challenge(
        txn.conn(),
        challenge_id,
        txn.now_ms(),
    )?)
}

/// The one refusal of a challenge that is unknown, used or expired.
fn challenge_refused() -> ToolError {
    ToolError::validation(
        "challenge_id",
        "This challenge_id is unknown, used or expired. Call register_challenge for a fresh one: it works once, until the Unix second stated on the payload's last line.",
    )
}

/// The new key, the decoded challenge signature and the challenge id, in the order they are
/// checked: `public_key`, `signature`, `challenge_id`.
fn parse_new_key(
    public_key: &impl Text,
    signature: &impl Text,
    challenge_id: &impl Text,
) -> Result<(AgentPublicKey, Vec<u8>, String), ToolError> {
    let key_text = public_key.required_text("public_key")?;
    let public_key = AgentPublicKey::parse_b64url(key_text)
        .map_err(|error| ToolError::validation("public_key", format!("public_key: {error}")))?;
    let signature = kd_protocol::b64::decode_signature(signature.required_text("signature")?)
        .map_err(|_| {
            ToolError::validation("signature", "signature must be base64url of 64 bytes")
        })?;
    if signature.len() != kd_kernel::caller::SIGNATURE_BYTES {
        return Err(ToolError::new(
            ErrorCode::BadSignature,
            format!(
                "signature decodes to {} bytes; an Ed25519 signature is {} bytes (86 base64url characters)",
                signature.len(),
                kd_kernel::caller::SIGNATURE_BYTES
            ),
        )
        .with_field("signature"));
    }
    let challenge_id = challenge_id.required_text("challenge_id")?.to_owned();
    Ok((public_key, signature, challenge_id))
}

/// Refuses a name that clashes with another active agent's. `own` is the agent that may keep
/// its own name (rename), `key` the registering key (register: the same key's agent is "yours").
fn check_free(
    txn: &WriteTxn<'_>,
    index: &names::NameIndex,
    name: &str,
    platform: &str,
    own_agent: Option<&str>,
    own_key: &str,
) -> Result<(), ToolError> {
    let conn = txn.conn();
    let mut clashes = names::clashes(txn, index, name)?;
    if let Some(own) = own_agent {
        // Renaming to a lookalike of your own name is fine; to the same name is a no-op.
        let current = store::name_key(conn, own)?;
        if current.as_deref() != Some(names::fold(name).as_str()) {
            clashes.retain(|(agent_id, _)| agent_id != own);
        }
    }
    if let Some((agent_id, _)) = clashes
        .iter()
        .find(|(agent_id, key)| Some(agent_id.as_str()) == own_agent || key == own_key)
    {
        return Err(ToolError::new(
            ErrorCode::LabelYours,
            "You already have an agent with this name.",
        )
        .with_field("name")
        .with("agent_id", agent_id.clone()));
    }
    if !clashes.is_empty() {
        let mut error = ToolError::new(
            ErrorCode::LabelReserved,
            "label taken: exact or lookalike of an existing agent name",
        )
        .with_field("name")
        .with("how_to_fix", "Pick another name (error.suggestion is free) and call register_challenge again before retrying.");
        if let Some(suggestion) = names::suggestion(txn, index, name, platform)? {
            error = error.with("suggestion", suggestion);
        }
        return Err(error);
    }
    Ok(())
}

async fn register_agent(ctx: Ctx, input: RegisterAgent) -> Result<Value, ToolError> {
    let name = names::check_name(input.name.required_text_of(&["name", "label"])?, "name")?;
    let platform = input
        .platform
        .required_text_of(&["platform", "client_name"])?
        .to_owned();
    if platform.chars().count() > 60 || platform.chars().any(char::is_control) {
        return Err(ToolError::validation(
            "platform",
            "platform must be at most 60 characters, no control characters",
        ));
    }
    let referral = input.referral.text().map(str::to_owned);
    let (public_key, signature, challenge_id) =
        parse_new_key(&input.public_key, &input.signature, &input.challenge_id)?;
    let hub = ctx.kernel.clone();
    let name_index = std::sync::Arc::clone(ctx.area::<std::sync::Arc<names::NameIndex>>()?);
    let agent_id = AgentId::from_random_bytes(random_bytes::<16>(hub.random.as_ref()));
    let credential_id = random_id::<12>(hub.random.as_ref(), "kdp_");
    let burn_id = challenge_id.clone();
    let result = ctx
        .write(move |txn| {
            take_challenge(txn, &challenge_id, &public_key, &signature)?;
            let key_text = public_key.to_b64url();
            check_free(txn, &name_index, &name, &platform, None, &key_text)?;
            let existing = store::agent_with_key(txn.conn(), &key_text, true)?;
            if let Some(existing) = existing {
                return Err(ToolError::validation(
                    "public_key",
                    "This key already belongs to one of your agents; use rename_agent to change its name.",
                )
                .with("agent_id", existing));
            }
            let id = agent_id.to_string();
            let handle = agent_id.handle().to_string();
            let now = txn.now_ms();
            store::insert_agent(txn.conn(), &store::NewAgent {
                agent_id: &id, handle: &handle, name: &name, name_key: &names::fold(&name),
                platform: &platform, public_key: &key_text, referral: referral.as_deref(),
                credential_id: &credential_id, now_ms: now,
            })?;
            names::reserve(txn, &name_index, &id, &name)?;
            let passport =
                passport::issue(txn.conn(), &hub.passport_key, &credential_id, &id, &handle, &key_text, now)?;
            txn.record(id.clone(), id.clone(), &events::AgentRegistered {
                agent_id: id.clone(), handle: handle.clone(), name: name.clone(), platform: platform.clone(),
                public_key: key_text.clone(), credential_id: credential_id.clone(), referral: referral.clone(),
            })?;
            Ok(json!({
                "agent_id": id,
                "handle": handle,
                "name": name,
                "platform": platform,
                "status": "active",
                "passport": passport.to_json(&hub.passport_key),
                "scopes": READ_ONLY_SCOPES,
                "key_rotation_required": false,
                "next": "Sign every write with this key (kd-mcp-v1; get_signing_payload shows the text). Ask your person for a connect code to link an owner.",
            }))
        })
        .await;
    if let Err(error) = &result
        && matches!(error.code, ErrorCode::LabelReserved | ErrorCode::LabelYours)
    {
        // After a label refusal the challenge is spent: a new one is needed.
        let now = ctx.kernel.clock.now_ms();
        ctx.write(move |txn| -> Result<(), ToolError> {
            Ok(store::burn_challenge(txn.conn(), &burn_id, now)?)
        })
        .await?;
    }
    result
}

async fn get_signing_payload(_ctx: Ctx, input: GetSigningPayload) -> Result<Value, ToolError> {
    let tool = input.tool.required_text("tool")?;
    let agent_id = input.agent_id.required_text("agent_id")?;
    agent_id.parse::<AgentId>().map_err(|_| {
        ToolError::validation("agent_id", "agent_id must be a lowercase uuid with dashes")
    })?;
    let timestamp = input.timestamp;
    let nonce =
        kd_protocol::signing::Nonce::parse(input.nonce.required_text("nonce")?).map_err(|_| {
            ToolError::validation(
                "nonce",
                "nonce must be 16 to 128 characters from A-Z a-z 0-9 _ -",
            )
        })?;
    let arguments = Value::Object(input.arguments.unwrap_or_default());
    let canonical = kd_protocol::canonical::canonical_value_text(&arguments);
    let hash = kd_protocol::canonical::arguments_hash(&canonical);
    let text = kd_protocol::signing::text_to_sign(tool, agent_id, timestamp, nonce.as_str(), &hash);
    Ok(json!({
        "recipe": kd_protocol::signing::KD_MCP_V1,
        "text": text,
        "lines": text.split('\n').collect::<Vec<_>>(),
        "canonical_arguments": canonical,
        "arguments_hash": hash,
        "headers": {
            "x-kd-timestamp": timestamp.to_string(),
            "x-kd-nonce": nonce.as_str(),
            "x-kd-signature": "base64url Ed25519 signature over the UTF-8 bytes of text",
        },
    }))
}

/// Live permissions of an agent (spec "Live permissions"): revoked agents read permissions
/// "none", scopes [], limits 0, no capabilities.
/// A linked agent also shows what its owner granted (`actions_per_day`, the grant's scopes and
/// spend caps) and whether it is paused.
/// `standing` is the agent's live standing (`standing::agent_standing`): its tier's limits and
/// its capabilities with their expiry.
fn current(agent: &AgentRow, grant: Option<&crate::people::Grant>, standing: &Value) -> Value {
    let active = agent.status == "active";
    let tier = &standing["tier"];
    let mut limits = json!({
        "spend_usd_per_day": 0,
        "spend_usd_per_action": 0,
        "reads_per_minute": if active { tier["reads_per_minute"].clone() } else { json!(0) },
        "writes_per_minute": if active { tier["writes_per_minute"].clone() } else { json!(0) },
    });
    let mut scopes: Vec<String> = if active {
        READ_ONLY_SCOPES
            .iter()
            .map(|scope| (*scope).to_owned())
            .collect()
    } else {
        Vec::new()
    };
    if let (true, Some(grant)) = (active, grant) {
        limits["spend_usd_per_day"] = json!(grant.spend_usd_per_day);
        limits["spend_usd_per_action"] = json!(grant.spend_usd_per_action);
        limits["actions_per_day"] = json!(grant.actions_per_day);
        scopes.clone_from(&grant.scopes);
    }
    json!({
        "permissions": if active { "read" } else { "none" },
        "auth_method": "signature",
        "owner_linked": active && grant.is_some(),
        "paused": agent.paused_ms.is_some(),
        "scopes": scopes,
        "limits": limits,
        "capabilities": if active { standing["capabilities"].clone() } else { json!([]) },
        "stamps": if active { standing["stamps"].clone() } else { json!([]) },
        "key": {
            "public_key": agent.public_key,
            "alg": "Ed25519",
            "custody": if agent.key_source == "agent" { "agent" } else { "server" },
        },
    })
}

async fn verify_agent(ctx: Ctx, input: VerifyAgent) -> Result<Value, ToolError> {
    let agent_ref = input.agent_id.text().map(str::to_owned);
    let credential = input.credential_id.text().map(str::to_owned);
    let message = input.signature.map(Value::Object);
    if agent_ref.is_none() && credential.is_none() {
        return Err(ToolError::validation(
            "agent_id",
            "agent_id (or credential_id) is required",
        ));
    }
    let hub = std::sync::Arc::clone(&ctx.kernel);
    let now_ms = ctx.kernel.clock.now_ms();
    let (agent, passport, grant, standing, scores) = ctx
        .read(move |conn| {
            let agent = match (&agent_ref, &credential) {
                (Some(reference), _) => require_agent(conn, reference, "agent_id")?,
                (None, Some(credential_id)) => {
                    let passport = passport::load(conn, credential_id)?.ok_or_else(|| {
                        ToolError::not_found("credential_id", "No passport has this credential_id.")
                    })?;
                    require_agent(conn, &passport.agent_id, "credential_id")?
                }
                (None, None) => {
                    return Err(ToolError::validation("agent_id", "agent_id is required"));
                }
            };
            let passport = passport::load(conn, &agent.credential_id)?;
            let grant = crate::people::grant(conn, &agent.agent_id)?;
            let standing = crate::standing::agent_standing(
                conn,
                &hub.config.access_tiers,
                &agent.agent_id,
                now_ms,
            )?;
            let scores = Scores::of(conn, &agent, now_ms)?;
            Ok((agent, passport, grant, standing, scores))
        })
        .await?;
    let signature_valid = match message {
        None => Value::Null,
        Some(object) => Value::Bool(message_signature_valid(&agent, &object)?),
    };
    let key = &ctx.kernel.passport_key;
    Ok(json!({
        "agent_id": agent.agent_id,
        "handle": agent.handle,
        "display_label": agent.name,
        "platform": agent.platform,
        "status": agent.status,
        "signature_valid": signature_valid,
        "passport": passport.as_ref().map(|p| p.to_json(key)),
        "passport_signature_valid": passport.as_ref().map(|p| p.signature_valid(key)),
        "owner_linked": agent.owner_id.is_some(),
        "standing_tier": if agent.status == "active" { standing["tier"]["tier"].clone() } else { json!("revoked") },
        "trust_score": scores.trust,
        "technical_score": scores.technical,
        "trust_scale": "0-100",
        "current": current(&agent, grant.as_ref(), &standing),
        "verifier_record": standing["verifier_record"].clone(),
        "verifications": standing["verifications"].clone(),
        "key_rotation_required": agent.key_source != "agent",
        "registered_at": rfc3339_ms(agent.created_ms),
    }))
}

/// Checks `{key_id?, message, signature_b64}` against the agent's current key.
fn message_signature_valid(agent: &AgentRow, object: &Value) -> Result<bool, ToolError> {
    let message = object
        .get("message")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::validation("signature", "signature.message must be a string"))?;
    let signature = object
        .get("signature_b64")
        .or_else(|| object.get("signature"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ToolError::validation("signature", "signature.signature_b64 must be a string")
        })?;
    let Ok(bytes) = kd_protocol::b64::decode_signature(signature) else {
        return Ok(false);
    };
    let key = kd_kernel::caller::stored_key(&agent.public_key)?;
    Ok(key.verify_strict(message.as_bytes(), &bytes).is_ok())
}

async fn rename_agent(ctx: Ctx, input: RenameAgent) -> Result<Value, ToolError> {
    let name = names::check_name(input.name.required_text_of(&["name", "label"])?, "name")?;
    let name_index = std::sync::Arc::clone(ctx.area::<std::sync::Arc<names::NameIndex>>()?);
    ctx.signed_write(move |txn, signed| {
        let id = signed.agent_id.to_string();
        let agent = require_agent(txn.conn(), &id, "agent_id")?;
        check_free(txn, &name_index, &name, &agent.platform, Some(&id), "")?;
        store::rename(txn.conn(), &id, &name, &names::fold(&name), txn.now_ms())?;
        names::reserve(txn, &name_index, &id, &name)?;
        let event = txn.record(signed.actor(), id.clone(), &events::AgentRenamed { from: agent.name.clone(), to: name.clone() })?;
        Ok(json!({ "agent_id": id, "handle": agent.handle, "name": name, "previous_name": agent.name, "event_seq": event.seq }))
    })
    .await
}

async fn rotate_agent_key(ctx: Ctx, input: RotateAgentKey) -> Result<Value, ToolError> {
    let (public_key, signature, challenge_id) =
        parse_new_key(&input.public_key, &input.signature, &input.challenge_id)?;
    let hub = ctx.kernel.clone();
    let credential_id = random_id::<12>(hub.random.as_ref(), "kdp_");
    ctx.signed_write(move |txn, signed| {
        let id = signed.agent_id.to_string();
        let agent = require_agent(txn.conn(), &id, "agent_id")?;
        let new_key = public_key.to_b64url();
        if new_key == agent.public_key {
            return Err(ToolError::validation(
                "public_key",
                "public_key is already this agent's key",
            ));
        }
        let taken = store::agent_with_key(txn.conn(), &new_key, false)?;
        if taken.is_some() {
            return Err(ToolError::validation(
                "public_key",
                "This key is already registered to an agent.",
            ));
        }
        take_challenge(txn, &challenge_id, &public_key, &signature)?;
        let now = txn.now_ms();
        passport::end(txn.conn(), &agent.credential_id, "superseded", now)?;
        let passport = passport::issue(
            txn.conn(),
            &hub.passport_key,
            &credential_id,
            &id,
            &agent.handle,
            &new_key,
            now,
        )?;
        store::set_key(txn.conn(), &id, &new_key, &credential_id, now)?;
        txn.record(
            signed.actor(),
            id.clone(),
            &events::AgentKeyRotated {
                previous_public_key: agent.public_key.clone(),
                public_key: new_key.clone(),
                previous_credential_id: agent.credential_id.clone(),
                credential_id: credential_id.clone(),
            },
        )?;
        Ok(json!({
            "agent_id": id,
            "public_key": new_key,
            "passport": passport.to_json(&hub.passport_key),
            "previous_credential_id": agent.credential_id,
            "stored_private_key_deleted": true,
            "key_rotation_required": false,
        }))
    })
    .await
}

async fn revoke_agent(ctx: Ctx, _input: SigningAgent) -> Result<Value, ToolError> {
    let name_index = std::sync::Arc::clone(ctx.area::<std::sync::Arc<names::NameIndex>>()?);
    ctx.signed_write(move |txn, signed| {
        let id = signed.agent_id.to_string();
        let agent = require_agent(txn.conn(), &id, "agent_id")?;
        let now = txn.now_ms();
        store::revoke(txn.conn(), &id, now)?;
        passport::end(txn.conn(), &agent.credential_id, "revoked", now)?;
        // Its name is free at once: the name index confirms every candidate against an
        // active row (names::clashes); this only counts the entries as stale.
        names::release(txn, &name_index)?;
        let event = txn.record(
            signed.actor(),
            id.clone(),
            &events::AgentRevoked {
                credential_id: agent.credential_id.clone(),
            },
        )?;
        Ok(json!({
            "agent_id": id,
            "status": "revoked",
            "revoked_credentials": [agent.credential_id],
            "name_released": true,
            "event_seq": event.seq,
        }))
    })
    .await
}

async fn release_agent(ctx: Ctx, _input: SigningAgent) -> Result<Value, ToolError> {
    ctx.signed_write(move |txn, signed| {
        let id = signed.agent_id.to_string();
        let agent = require_agent(txn.conn(), &id, "agent_id")?;
        let Some(owner) = agent.owner_id else {
            return Ok(json!({
                "agent_id": id,
                "released": false,
                "independent": true,
                "message": "This agent has no owner; it is already independent.",
            }));
        };
        store::clear_owner(txn.conn(), &id, txn.now_ms())?;
        let by = match signed.proof {
            kd_kernel::Proof::Signature { .. } => "agent",
            kd_kernel::Proof::OwnerSession { .. } => "owner",
        };
        crate::people::store::delete_owner_grants(txn.conn(), &id)?;
        let event = txn.record(
            signed.actor(),
            id.clone(),
            &events::AgentReleased {
                previous_owner: owner,
                by: by.to_owned(),
            },
        )?;
        Ok(json!({ "agent_id": id, "released": true, "independent": true, "event_seq": event.seq }))
    })
    .await
}

async fn get_history(ctx: Ctx, input: GetHistory) -> Result<Value, ToolError> {
    let limit = input.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) {
        return Err(ToolError::validation(
            "limit",
            "limit must be from 1 to 200",
        ));
    }
    ctx.signed_write(move |txn, signed| {
        let id = signed.agent_id.to_string();
        let rows = eventlog::rows_for(txn.conn(), &id, limit)?;
        let events: Vec<Value> = rows
            .into_iter()
            .map(|row| {
                json!({
                    "seq": row.seq,
                    "kind": row.kind,
                    "actor": row.actor,
                    "subject": row.subject,
                    "payload": serde_json::from_str::<Value>(&row.payload).unwrap_or(Value::Null),
                    "created_at": rfc3339_ms(row.created_ms),
                    "prev_hash": row.prev_hash,
                    "row_hash": row.row_hash,
                })
            })
            .collect();
        Ok(json!({ "agent_id": id, "events": events, "count": events.len(), "order": "newest first" }))
    })
    .await
}

/// The agent read_scores and get_rating_card answer for, and the name it came by:
/// `agent_id` when that has text, else `subject_id` (required then).
fn subject(input: &AgentSubject) -> Result<(String, &'static str), ToolError> {
    match input.agent_id.text() {
        Some(reference) => Ok((reference.to_owned(), "agent_id")),
        None => Ok((
            input.subject_id.required_text("subject_id")?.to_owned(),
            "subject_id",
        )),
    }
}

async fn read_scores(ctx: Ctx, input: AgentSubject) -> Result<Value, ToolError> {
    let (reference, field) = subject(&input)?;
    let now_ms = ctx.kernel.clock.now_ms();
    let (agent, scores) = ctx
        .read(move |conn| {
            let agent = require_agent(conn, &reference, field)?;
            let scores = Scores::of(conn, &agent, now_ms)?;
            Ok((agent, scores))
        })
        .await?;
    Ok(json!({
        "agent_id": agent.agent_id,
        "handle": agent.handle,
        "trust_score": scores.trust,
        "technical_score": scores.technical,
        "trust_scale": "0-100",
        "technical_scale": "0-100",
        "basis": scores.basis(),
        "formula": "/functions/v1/docs/docs/scores.md",
    }))
}

async fn get_rating_card(ctx: Ctx, input: AgentSubject) -> Result<Value, ToolError> {
    let (reference, field) = subject(&input)?;
    let now_ms = ctx.kernel.clock.now_ms();
    let (agent, scores, skills) = ctx
        .read(move |conn| {
            let agent = require_agent(conn, &reference, field)?;
            let scores = Scores::of(conn, &agent, now_ms)?;
            let skills = crate::forum::skills(conn, &agent.agent_id)?;
            Ok((agent, scores, skills))
        })
        .await?;
    Ok(json!({
        "agent_id": agent.agent_id,
        "handle": agent.handle,
        "passport_id": agent.credential_id,
        "display_label": agent.name,
        "identity_note": "Identity is the handle and passport id, never the display label.",
        "overall": scores.overall(),
        "overall_scale": "0-99",
        "trust_score": scores.trust,
        "technical_score": scores.technical,
        "skills": skills,
        "formula": "/functions/v1/docs/docs/scores.md",
    }))
}

/// The published score formulas (DECISIONS 4; docs page `scores.md`). Inputs that later areas
/// provide (outcomes, reviews, admission) are zero until those areas record them.
#[derive(Debug, Clone, Copy)]
pub struct Scores {
    /// 0–100; only outcomes and independent human or peer review move it.
    pub trust: u8,
    /// 0–100; admission adds 2 once, accepted work adds more.
    pub technical: u8,
    /// Distinct people with a live human-reviewed stamp on the agent.
    pub human_reviews: i64,
    /// Distinct established agents with a live peer-reviewed stamp on the agent.
    pub peer_reviews: i64,
}

/// Trust points per live human-reviewed stamp.
pub const TRUST_PER_HUMAN_REVIEW: i64 = 20;
/// Trust points per distinct established peer reviewer.
pub const TRUST_PER_PEER_REVIEW: i64 = 10;
/// Most trust peer reviews can give together.
pub const MAX_PEER_TRUST: i64 = 30;
/// Most trust human reviews can give together.
pub const MAX_HUMAN_TRUST: i64 = 60;
/// A reviewer (an agent, or a person's account) counts only if it was registered this long
/// before it stamped: 7 days, the age below which an agent is a newcomer (DECISIONS 3).
pub const PEER_REVIEWER_MIN_AGE_MS: i64 = 7 * 86_400_000;

impl Scores {
    /// The scores of `agent` from what the hub has recorded about it. Technical is the
    /// admission bonus (`admission::technical_bonus`: 2, once per agent and once per owner).
    /// Trust is independent review only (verification help): [`TRUST_PER_HUMAN_REVIEW`] for
    /// each distinct person, signed up at least [`PEER_REVIEWER_MIN_AGE_MS`] before stamping,
    /// whose human-reviewed stamp on the agent is live (at most [`MAX_HUMAN_TRUST`]), and
    /// [`TRUST_PER_PEER_REVIEW`] for each distinct reviewing agent that was at least
    /// [`PEER_REVIEWER_MIN_AGE_MS`] old when it stamped, peer reviews together at most
    /// [`MAX_PEER_TRUST`]; capped at 100. One reviewer counts once however often it stamps, and
    /// throwaway agents count for nothing, so trust cannot be farmed with fresh keys.
    /// Admission never moves it.
    ///
    /// # Errors
    /// `internal` when the store fails.
    pub fn of(conn: &Connection, agent: &AgentRow, now_ms: i64) -> Result<Self, ToolError> {
        let technical = crate::admission::technical_bonus(conn, &agent.agent_id)?;
        let (human, peer) = crate::standing::store::independent_reviews(
            conn,
            &agent.agent_id,
            now_ms,
            PEER_REVIEWER_MIN_AGE_MS,
        )?;
        let trust = (human * TRUST_PER_HUMAN_REVIEW).min(MAX_HUMAN_TRUST)
            + (peer * TRUST_PER_PEER_REVIEW).min(MAX_PEER_TRUST);
        Ok(Self {
            trust: u8::try_from(trust.clamp(0, 100)).unwrap_or(100),
            technical: technical.min(100),
            human_reviews: human,
            peer_reviews: peer,
        })
    }

    /// The passport score (OVR), 0–99: the rounded mean of trust and technical, capped at 99.
    pub fn overall(&self) -> u8 {
        let mean = (u16::from(self.trust) + u16::from(self.technical)).div_ceil(2);
        u8::try_from(mean.min(99)).unwrap_or(99)
    }

    fn basis(&self) -> Value {
        // The admission bonus is technical's only recorded input so far (see `Scores::of`).
        json!({
            "outcome_reviews": 0,
            "independent_reviews": self.human_reviews + self.peer_reviews,
            "human_reviews": self.human_reviews,
            "peer_reviews": self.peer_reviews,
            "admission_bonus": self.technical.min(crate::admission::TECHNICAL_BONUS),
            "note": "New agents start at 0. Trust moves only with outcomes and independent human or peer review: 20 for each person and 10 for each agent whose review stamp is live, counting only reviewers registered 7 days or more before they stamped, human reviews at most 60 and peer reviews at most 30 together; a reviewer counts once. Passing the admission test adds 2 to technical, once per agent and once per owner, and never moves trust.",
        })
    }
}

async fn get_receipt(ctx: Ctx, input: GetReceipt) -> Result<Value, ToolError> {
    let (id, field) = match input.receipt_id.text() {
        Some(id) => (id.to_owned(), "receipt_id"),
        None => (
            input
                .credential_id
                .required_text("credential_id")?
                .to_owned(),
            "credential_id",
        ),
    };
    let missing =
        move || ToolError::not_found(field, format!("No passport or receipt has this {field}."));
    let key = ctx.kernel.passport_key.clone();
    if id.starts_with("kdr_") {
        // A pre-flight receipt (kd-receipt-v1).
        let receipt = ctx
            .read(move |conn| crate::preflight::Receipt::load(conn, &id))
            .await?
            .ok_or_else(missing)?;
        let mut shown = receipt.to_json(&key);
        shown["kind"] = json!("receipt");
        shown["label"] =
            json!("Pre-flight receipt (a record that a check was made, not a verification)");
        shown["signature_valid"] = Value::Bool(receipt.verifies(&key));
        return Ok(shown);
    }
    let passport = ctx
        .read(move |conn| passport::load(conn, &id))
        .await?
        .ok_or_else(missing)?;
    let mut shown = passport.to_json(&key);
    shown["signature_valid"] = Value::Bool(passport.signature_valid(&key));
    Ok(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overall_is_the_capped_mean() {
        assert_eq!(
            Scores {
                trust: 0,
                technical: 0,
                human_reviews: 0,
                peer_reviews: 0,
            }
            .overall(),
            0
        );
        assert_eq!(
            Scores {
                trust: 100,
                technical: 100,
                human_reviews: 0,
                peer_reviews: 0,
            }
            .overall(),
            99
        );
        assert_eq!(
            Scores {
                trust: 3,
                technical: 0,
                human_reviews: 0,
                peer_reviews: 0,
            }
            .overall(),
            2
        );
    }
}
