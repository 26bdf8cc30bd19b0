//! Registration and key rotation: a one-time challenge (`register_challenge`), signed by the
//! agent's own Ed25519 key, registers it (`register_agent`) or replaces its key
//! (`rotate_agent_key`). Spec "register_agent", "rotate_agent_key", "Names".
//!
//! Events: `agent.registered`, `agent.key_rotated`.

use crate::identity::events;
use kd_core::clock::rfc3339_ms;
use kd_core::random::{random_bytes, random_id};
use kd_core::store::WriteTxn;
use kd_protocol::ids::AgentId;
use kd_protocol::keys::AgentPublicKey;
use serde::Serialize;
use serde_json::Value;

use super::IdentityError;
use super::{
    CHALLENGE_RECIPE, CHALLENGE_TTL_SECS, READ_ONLY_SCOPES, names, passport, require_agent, store,
};
use kd_kernel::Ctx;
use kd_kernel::error::{ErrorCode, ToolError};
use kd_kernel::input::{Alias, Text};
use kd_kernel::policy::{Billing, Connector, ReplyStanding, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Tool};
use schemars::JsonSchema;
use serde::Deserialize;

/// `register_challenge`.
pub static REGISTER_CHALLENGE: Tool = Tool {
    name: "register_challenge",
    title: "Get a registration challenge",
    description: "Get a one-time registration challenge. Sign the payload with your Ed25519 private key and pass the signature to register_agent or rotate_agent_key. No arguments.",
    access: Access::Read,
    hints: Hints {
        read_only: true,
        destructive: false,
        idempotent: false,
        open_world: false,
    },
    untrusted: &[],
    arguments: Arguments::Typed(kd_kernel::input!(RegisterChallenge)),
    // Read only for MCP, but a row per call: billed as a write (docs/decisions.md 173). About
    // one's own key: never on the connector (docs/decisions.md 348).
    policy: ToolPolicy::READ
        .on_connector(Connector::Never)
        .billed(Billing::Write),
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
    access: Access::Open,
    hints: Hints::WRITE,
    untrusted: &[],
    arguments: Arguments::Typed(kd_kernel::input!(RegisterAgent, &REGISTER_AGENT_ALIASES)),
    // The challenge signature proved the new agent's key: the reply shows its tier.
    policy: ToolPolicy::write(Connector::Never).replies_with(ReplyStanding::NewAgent),
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

/// `rotate_agent_key`.
pub static ROTATE_AGENT_KEY: Tool = Tool {
    name: "rotate_agent_key",
    title: "Rotate this agent's key",
    description: "Replace this agent's public key with one you hold. Sign the MCP request with the current key, and sign a fresh register_challenge with the new key. The server deletes any stored private key.",
    access: Access::Signed,
    hints: Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    },
    untrusted: &[],
    arguments: Arguments::Typed(
        kd_kernel::input!(RotateAgentKey).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    // With a leaked key burning the day's actions, the agent must still be able to rotate.
    policy: ToolPolicy::write(Connector::Never).exempt_from_quota(),
    handler: kd_kernel::typed!(ROTATE_AGENT_KEY, rotate_agent_key),
};

/// rotate_agent_key's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RotateAgentKey {
    /// New base64url Ed25519 public key.
    public_key: String,
    /// Id from register_challenge, signed by the new key.
    challenge_id: String,
    /// Base64url signature of that challenge payload by the new key.
    signature: String,
}

/// `register_challenge`'s `data`: a one-time challenge to sign (spec "register_challenge").
#[derive(Debug, Serialize)]
pub struct Challenge {
    /// `kdc_` and 24 hex characters.
    pub challenge_id: String,
    /// The text to sign: `kd-register-v1`, the challenge id and the expiry (Unix seconds),
    /// joined by LF.
    pub payload: String,
    /// Always `kd-register-v1`.
    pub recipe: &'static str,
    /// RFC 3339 (ms): the challenge works before this.
    pub expires_at: String,
    /// The same, Unix seconds (the payload's last line).
    pub expires_at_unix: i64,
    /// How to sign it.
    pub how_to_sign: &'static str,
}

/// `register_agent`'s `data`: the new agent and its passport (spec "register_agent").
#[derive(Debug, Serialize)]
pub struct Registered {
    /// The new agent's id (lowercase uuid).
    pub agent_id: String,
    /// Its `kd_` handle.
    pub handle: String,
    /// Its display name.
    pub name: String,
    /// The platform it runs on.
    pub platform: String,
    /// Always `active`.
    pub status: &'static str,
    /// The signed passport (`passport::Passport::to_json`).
    pub passport: Value,
    /// The read-only scopes of an unclaimed agent.
    pub scopes: [&'static str; 2],
    /// Always false: the agent brought its own key.
    pub key_rotation_required: bool,
    /// What to do next.
    pub next: &'static str,
}

/// `rotate_agent_key`'s `data`: the new key and its passport (spec "rotate_agent_key").
#[derive(Debug, Serialize)]
pub struct Rotated {
    /// The agent.
    pub agent_id: String,
    /// The new base64url public key.
    pub public_key: String,
    /// The new signed passport.
    pub passport: Value,
    /// The passport the old key had (now superseded).
    pub previous_credential_id: String,
    /// Always true: the hub keeps no private key.
    pub stored_private_key_deleted: bool,
    /// Always false.
    pub key_rotation_required: bool,
}

kd_kernel::output!(Challenge, Registered, Rotated);

/// `register_challenge`: a fresh one-time challenge, valid for 600 seconds.
///
/// # Errors
/// `internal` when the store fails.
async fn register_challenge(
    ctx: Ctx,
    _input: RegisterChallenge,
) -> Result<Challenge, IdentityError> {
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
    ctx.write(move |txn| -> Result<_, IdentityError> {
        store::insert_challenge(txn.conn(), &id, &text, issued_ms, expires_ms)?;
        super::prune::expired_challenges(txn.conn(), txn.now_ms())?;
        Ok(())
    })
    .await?;
    Ok(Challenge {
        challenge_id,
        payload,
        recipe: CHALLENGE_RECIPE,
        expires_at: rfc3339_ms(expires_ms),
        expires_at_unix: expires_s,
        how_to_sign: "Sign the UTF-8 bytes of payload with your Ed25519 private key; pass public_key, challenge_id and the base64url signature to register_agent (or rotate_agent_key). The challenge works once, before expires_at (the Unix second on the payload's last line).",
    })
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
        _ => return Err(IdentityError::Challenge.into()),
    };
    public_key
        .verify_strict(payload.as_bytes(), signature)
        .map_err(|_| IdentityError::ChallengeSignature)?;
    Ok(store::burn_challenge(
        txn.conn(),
        challenge_id,
        txn.now_ms(),
    )?)
}

/// The new key, the decoded challenge signature and the challenge id, in the order they are
/// checked: `public_key`, `signature`, `challenge_id`.
fn parse_new_key(
    public_key: &impl Text,
    signature: &impl Text,
    challenge_id: &impl Text,
) -> Result<(AgentPublicKey, Vec<u8>, String), IdentityError> {
    let key_text = public_key.required_text("public_key")?;
    let public_key = AgentPublicKey::parse_b64url(key_text)
        .map_err(|error| IdentityError::PublicKey(error.to_string()))?;
    let signature = kd_protocol::b64::decode_signature(signature.required_text("signature")?)
        .map_err(|_| IdentityError::SignatureEncoding)?;
    if signature.len() != kd_kernel::caller::SIGNATURE_BYTES {
        return Err(IdentityError::SignatureLength(signature.len()));
    }
    let challenge_id = challenge_id.required_text("challenge_id")?.to_owned();
    Ok((public_key, signature, challenge_id))
}

/// Refuses a name that clashes with another active agent's. `own` is the agent that may keep
/// its own name (rename), `key` the registering key (register: the same key's agent is "yours").
pub(super) fn check_free(
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
        return Err(IdentityError::NameYours {
            agent_id: agent_id.clone(),
        }
        .into());
    }
    if !clashes.is_empty() {
        let suggestion = names::suggestion(txn, index, name, platform)?;
        return Err(IdentityError::NameTaken { suggestion }.into());
    }
    Ok(())
}

/// `register_agent`: registers the caller's own key under a free name, against a signed
/// challenge, and issues its passport.
///
/// # Errors
/// The [`IdentityError`] refusals of the name, the platform, the key, the signature and the
/// challenge, before anything is written (a label refusal spends the challenge); `internal`.
async fn register_agent(ctx: Ctx, input: RegisterAgent) -> Result<Registered, IdentityError> {
    let name = names::check_name(input.name.required_text_of(&["name", "label"])?, "name")?;
    let platform = input
        .platform
        .required_text_of(&["platform", "client_name"])?
        .to_owned();
    if platform.chars().count() > 60 || platform.chars().any(char::is_control) {
        return Err(IdentityError::Platform);
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
        .write(move |txn| -> Result<_, ToolError> {
            take_challenge(txn, &challenge_id, &public_key, &signature)?;
            let key_text = public_key.to_b64url();
            check_free(txn, &name_index, &name, &platform, None, &key_text)?;
            let existing = store::agent_with_key(txn.conn(), &key_text, true)?;
            if let Some(existing) = existing {
                return Err(IdentityError::KeyYours { agent_id: existing }.into());
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
            Ok(Registered {
                agent_id: id,
                handle,
                name,
                platform,
                status: "active",
                passport: passport.to_json(&hub.passport_key),
                scopes: READ_ONLY_SCOPES,
                key_rotation_required: false,
                next: "Sign every write with this key (kd-mcp-v1; get_signing_payload shows the text). Ask your person for a connect code to link an owner.",
            })
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
    Ok(result?)
}

/// `rotate_agent_key`: the signing agent moves to a new key (proved by a challenge it signed)
/// and a new passport; the old one is superseded.
///
/// # Errors
/// The [`IdentityError`] refusals of the key, the signature and the challenge, before
/// anything is written; `internal`.
async fn rotate_agent_key(ctx: Ctx, input: RotateAgentKey) -> Result<Rotated, IdentityError> {
    let (public_key, signature, challenge_id) =
        parse_new_key(&input.public_key, &input.signature, &input.challenge_id)?;
    let hub = ctx.kernel.clone();
    let credential_id = random_id::<12>(hub.random.as_ref(), "kdp_");
    ctx.signed_write(move |txn, signed| -> Result<_, IdentityError> {
        let id = signed.agent_id.to_string();
        let agent = require_agent(txn.conn(), &id, "agent_id")?;
        let new_key = public_key.to_b64url();
        if new_key == agent.public_key {
            return Err(IdentityError::SameKey);
        }
        let taken = store::agent_with_key(txn.conn(), &new_key, false)?;
        if taken.is_some() {
            return Err(IdentityError::KeyTaken);
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
        Ok(Rotated {
            agent_id: id,
            public_key: new_key,
            passport: passport.to_json(&hub.passport_key),
            previous_credential_id: agent.credential_id,
            stored_private_key_deleted: true,
            key_rotation_required: false,
        })
    })
    .await
}
