//! What others read about an agent's identity: the text a write signs
//! (`get_signing_payload`) and `verify_agent` with its live permissions (spec "verify_agent",
//! "Live permissions").

use kd_core::clock::rfc3339_ms;
use kd_protocol::ids::AgentId;
use serde_json::{Map, Value, json};

use super::scores::Scores;
use super::standing::AgentStanding;
use crate::identity::{AgentRow, IdentityError, READ_ONLY_SCOPES, passport, require_agent};
use kd_kernel::Ctx;
use kd_kernel::error::ToolError;
use kd_kernel::input::Text;
use kd_kernel::policy::{Connector, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `get_signing_payload`.
pub static GET_SIGNING_PAYLOAD: Tool = Tool {
    name: "get_signing_payload",
    title: "Show the text to sign",
    description: "Return the exact UTF-8 text an unclaimed agent signs for a write. Pass tool, agent_id, arguments, timestamp, and nonce. It is a public read and does not use up the nonce.",
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[],
    arguments: Arguments::Typed(kd_kernel::input!(GetSigningPayload)),
    // About one's own signing key, which a hosted agent does not have (docs/decisions.md 348).
    policy: ToolPolicy::READ.on_connector(Connector::Never),
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
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[super::standing::VERIFICATIONS_LIFT],
    arguments: Arguments::Typed(kd_kernel::input!(VerifyAgent)),
    policy: ToolPolicy::READ,
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

/// `get_signing_payload`'s `data`: the kd-mcp-v1 text to sign for a call (spec
/// "get_signing_payload", "Signing").
#[derive(Debug, Serialize)]
pub struct SigningPayload {
    /// Always `kd-mcp-v1`.
    pub recipe: &'static str,
    /// The text to sign (lines joined by LF).
    pub text: String,
    /// The same text, line by line.
    pub lines: Vec<String>,
    /// The arguments as canonical JSON text.
    pub canonical_arguments: String,
    /// Lowercase hex SHA-256 of the canonical arguments.
    pub arguments_hash: String,
    /// The headers to send with the call.
    pub headers: SigningHeaders,
}

/// The headers of a signed call.
#[derive(Debug, Serialize)]
pub struct SigningHeaders {
    /// The Unix seconds signed, as text.
    #[serde(rename = "x-kd-timestamp")]
    pub timestamp: String,
    /// The nonce signed.
    #[serde(rename = "x-kd-nonce")]
    pub nonce: String,
    /// What goes in the signature header.
    #[serde(rename = "x-kd-signature")]
    pub signature: &'static str,
}

kd_kernel::output!(SigningPayload);

/// `get_signing_payload`: the text an agent signs for a call, computed from its arguments.
///
/// # Errors
/// `validation` naming `tool`, `agent_id` (not a uuid) or `nonce` (not shaped).
async fn get_signing_payload(
    _ctx: Ctx,
    input: GetSigningPayload,
) -> Result<SigningPayload, IdentityError> {
    let tool = input.tool.required_text("tool")?;
    let agent_id = input.agent_id.required_text("agent_id")?;
    agent_id
        .parse::<AgentId>()
        .map_err(|_| IdentityError::AgentIdShape)?;
    let timestamp = input.timestamp;
    let nonce = kd_protocol::signing::Nonce::parse(input.nonce.required_text("nonce")?)
        .map_err(|_| IdentityError::NonceShape)?;
    let arguments = Value::Object(input.arguments.unwrap_or_default());
    let canonical = kd_protocol::canonical::canonical_value_text(&arguments);
    let hash = kd_protocol::canonical::arguments_hash(&canonical);
    let text = kd_protocol::signing::text_to_sign(tool, agent_id, timestamp, nonce.as_str(), &hash);
    Ok(SigningPayload {
        recipe: kd_protocol::signing::KD_MCP_V1,
        lines: text.split('\n').map(str::to_owned).collect(),
        text,
        canonical_arguments: canonical,
        arguments_hash: hash,
        headers: SigningHeaders {
            timestamp: timestamp.to_string(),
            nonce: nonce.as_str().to_owned(),
            signature: "base64url Ed25519 signature over the UTF-8 bytes of text",
        },
    })
}

/// verify_agent's `data` (spec "verify_agent").
#[derive(Debug, Serialize)]
pub struct VerifiedAgent {
    /// The agent's id.
    pub agent_id: String,
    /// Its `kd_` handle.
    pub handle: String,
    /// Its chosen display label.
    pub display_label: String,
    /// The platform it named.
    pub platform: String,
    /// active, revoked or released.
    pub status: String,
    /// Whether the message signature sent verifies; null when none was sent.
    pub signature_valid: Option<bool>,
    /// Its passport ([`passport::Passport::to_json`]), or null.
    pub passport: Option<Value>,
    /// Whether KarmaDue's signature on the passport verifies; null without a passport.
    pub passport_signature_valid: Option<bool>,
    /// Whether a person owns it.
    pub owner_linked: bool,
    /// `hosted_connector` for a connected app's hosted agent (absent for a self-keyed one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<&'static str>,
    /// Its tier's id; "revoked" for an agent that is not active.
    pub standing_tier: Value,
    /// Trust, 0–100.
    pub trust_score: u8,
    /// Technical, 0–100.
    pub technical_score: u8,
    /// "0-100".
    pub trust_scale: &'static str,
    /// Its live permissions ([`Current`]).
    pub current: Current,
    /// The help it gave as a reviewer; null for an agent that is not active.
    pub verifier_record: Option<Value>,
    /// Resolved asks about it; null for an agent that is not active.
    pub verifications: Option<Vec<Value>>,
    /// Whether the server holds its key (it should rotate to its own).
    pub key_rotation_required: bool,
    /// RFC 3339, milliseconds.
    pub registered_at: String,
}

/// An agent's live permissions (spec "Live permissions"): revoked agents read permissions
/// "none", scopes [], limits 0, no capabilities.
#[derive(Debug, Serialize)]
pub struct Current {
    /// "read", or "none" for an agent that is not active.
    pub permissions: &'static str,
    /// "signature", or "oauth" for a connected app's hosted agent.
    pub auth_method: &'static str,
    /// A hosted agent's live connection (absent for a self-keyed agent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection: Option<crate::connector::ConnectionView>,
    /// Active and linked to an owner.
    pub owner_linked: bool,
    /// Whether its owner paused it.
    pub paused: bool,
    /// The read-only scopes, or the owner's grant's.
    pub scopes: Vec<String>,
    /// Its limits ([`Limits`]).
    pub limits: Limits,
    /// Live capabilities (empty when not active).
    pub capabilities: Vec<Value>,
    /// Live stamps (empty when not active).
    pub stamps: Vec<Value>,
    /// Its current key.
    pub key: KeyView,
}

/// An agent's limits: the tier's per-minute limits and, for a linked agent, the owner's grant.
/// All whole numbers.
#[derive(Debug, Serialize)]
pub struct Limits {
    /// USD a day (0 unless granted).
    pub spend_usd_per_day: i64,
    /// USD per action (0 unless granted).
    pub spend_usd_per_action: i64,
    /// The tier's reads a minute (0 when not active).
    pub reads_per_minute: Value,
    /// The tier's writes a minute (0 when not active).
    pub writes_per_minute: Value,
    /// The grant's writes in a rolling 24 hours; absent without a grant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actions_per_day: Option<i64>,
}

/// An agent's current key.
#[derive(Debug, Serialize)]
pub struct KeyView {
    /// base64url Ed25519 public key.
    pub public_key: String,
    /// "Ed25519".
    pub alg: &'static str,
    /// "agent" (its own key), "server", or "none" (a hosted agent has no key).
    pub custody: &'static str,
}

kd_kernel::output!(VerifiedAgent);

/// Live permissions of an agent (spec "Live permissions").
/// A linked agent also shows what its owner granted (`actions_per_day`, the grant's scopes and
/// spend caps) and whether it is paused.
/// `standing` is the agent's live standing (`standing::agent_standing`): its tier's limits and
/// its capabilities with their expiry.
fn current(
    agent: &AgentRow,
    grant: Option<&crate::people::Grant>,
    standing: &AgentStanding,
    connection: Option<crate::connector::ConnectionView>,
) -> Current {
    let hosted = crate::identity::hosted::is_hosted(&agent.key_source);
    let active = agent.status == "active";
    let tier_limit = |name: &str| {
        if active {
            standing.tier[name].clone()
        } else {
            json!(0)
        }
    };
    let mut limits = Limits {
        spend_usd_per_day: 0,
        spend_usd_per_action: 0,
        reads_per_minute: tier_limit("reads_per_minute"),
        writes_per_minute: tier_limit("writes_per_minute"),
        actions_per_day: None,
    };
    let mut scopes: Vec<String> = if active {
        READ_ONLY_SCOPES
            .iter()
            .map(|scope| (*scope).to_owned())
            .collect()
    } else {
        Vec::new()
    };
    if let (true, Some(grant)) = (active, grant) {
        limits.spend_usd_per_day = grant.spend_usd_per_day;
        limits.spend_usd_per_action = grant.spend_usd_per_action;
        limits.actions_per_day = Some(grant.actions_per_day);
        scopes.clone_from(&grant.scopes);
    }
    Current {
        permissions: if active { "read" } else { "none" },
        auth_method: if hosted { "oauth" } else { "signature" },
        connection,
        owner_linked: active && grant.is_some(),
        paused: agent.paused_ms.is_some(),
        scopes,
        limits,
        capabilities: if active {
            standing.capabilities.clone()
        } else {
            Vec::new()
        },
        stamps: if active {
            standing.stamps.clone()
        } else {
            Vec::new()
        },
        key: KeyView {
            public_key: agent.public_key.clone(),
            alg: "Ed25519",
            custody: match agent.key_source.as_str() {
                "agent" => "agent",
                _ if hosted => "none",
                _ => "server",
            },
        },
    }
}

/// `verify_agent`: an agent's passport, standing, scores and live permissions, and whether a
/// message it signed verifies.
///
/// # Errors
/// `validation` naming `agent_id` (neither it nor `credential_id`) or `signature`;
/// `not_found` naming `agent_id` or `credential_id`; `internal` when the store fails.
async fn verify_agent(ctx: Ctx, input: VerifyAgent) -> Result<VerifiedAgent, IdentityError> {
    let agent_ref = input.agent_id.text().map(str::to_owned);
    let credential = input.credential_id.text().map(str::to_owned);
    let message = input.signature.map(Value::Object);
    if agent_ref.is_none() && credential.is_none() {
        return Err(IdentityError::AgentOrCredentialRequired);
    }
    let hub = std::sync::Arc::clone(&ctx.kernel);
    let now_ms = ctx.kernel.clock.now_ms();
    let (agent, passport, grant, standing, scores, connection) = ctx
        .read(move |conn| {
            let agent = match (&agent_ref, &credential) {
                (Some(reference), _) => require_agent(conn, reference, "agent_id")?,
                (None, Some(credential_id)) => {
                    let passport = passport::load(conn, credential_id)?
                        .ok_or(IdentityError::NoSuchPassport)?;
                    require_agent(conn, &passport.agent_id, "credential_id")?
                }
                (None, None) => {
                    return Err(IdentityError::AgentIdRequired.into());
                }
            };
            let passport = passport::load(conn, &agent.credential_id)?;
            let grant = crate::people::grant(conn, &agent.agent_id)?;
            let standing = super::standing::agent_standing(
                conn,
                &hub.config.access_tiers,
                &agent.agent_id,
                now_ms,
            )?;
            let scores = Scores::of(conn, &agent, now_ms)?;
            let connection = if crate::identity::hosted::is_hosted(&agent.key_source) {
                crate::connector::connection_of(conn, &agent.agent_id)?
            } else {
                None
            };
            Ok((agent, passport, grant, standing, scores, connection))
        })
        .await?;
    let signature_valid = match message {
        None => None,
        Some(object) => Some(message_signature_valid(&agent, &object)?),
    };
    let key = &ctx.kernel.passport_key;
    let active = agent.status == "active";
    Ok(VerifiedAgent {
        standing_tier: if active {
            standing.tier["tier"].clone()
        } else {
            json!("revoked")
        },
        current: current(&agent, grant.as_ref(), &standing, connection),
        verifier_record: standing.verifier_record,
        verifications: standing.verifications,
        signature_valid,
        passport: passport
            .as_ref()
            .map(|p| crate::identity::hosted::passport_json(p, key, &agent)),
        agent_type: crate::identity::hosted::is_hosted(&agent.key_source)
            .then_some(crate::identity::hosted::AGENT_TYPE),
        passport_signature_valid: passport.as_ref().map(|p| p.signature_valid(key)),
        owner_linked: agent.owner_id.is_some(),
        trust_score: scores.trust,
        technical_score: scores.technical,
        trust_scale: "0-100",
        key_rotation_required: agent.key_source == "server",
        registered_at: rfc3339_ms(agent.created_ms),
        agent_id: agent.agent_id,
        handle: agent.handle,
        display_label: agent.name,
        platform: agent.platform,
        status: agent.status,
    })
}

/// Checks `{key_id?, message, signature_b64}` against the agent's current key.
fn message_signature_valid(agent: &AgentRow, object: &Value) -> Result<bool, ToolError> {
    let message = object
        .get("message")
        .and_then(Value::as_str)
        .ok_or(IdentityError::SignatureMessage)?;
    let signature = object
        .get("signature_b64")
        .or_else(|| object.get("signature"))
        .and_then(Value::as_str)
        .ok_or(IdentityError::SignatureText)?;
    let Ok(bytes) = kd_protocol::b64::decode_signature(signature) else {
        return Ok(false);
    };
    if agent.public_key.is_empty() {
        // A hosted connector agent has no key: nothing it could sign verifies.
        return Ok(false);
    }
    let key = kd_kernel::caller::stored_key(&agent.public_key)?;
    Ok(key.verify_strict(message.as_bytes(), &bytes).is_ok())
}
