//! Passports: the hub's signed statement that an agent id holds a key (spec "register_agent",
//! "get_receipt"). A passport is signed by `kd-passport-1` over its `kd-passport-v1` text, six
//! lines joined by LF, no trailing LF, UTF-8:
//!
//! ```text
//! kd-passport-v1
//! <credential_id>      kdp_ and 24 hex characters
//! <agent_id>
//! <handle>
//! <public_key>         the agent's Ed25519 key, base64url
//! <issued_at>          Unix seconds
//! ```
//!
//! A connected app's hosted agent has no key; its passport is a `kd-connector-passport-v1`
//! text that states the grant in force when it was issued (permissions document, "Connector
//! permissions": "the signed connector passport is re-issued whenever the grant changes, so
//! the passport always lists the live permissions"; docs/decisions.md 405), nine lines:
//!
//! ```text
//! kd-connector-passport-v1
//! <credential_id>
//! <agent_id>
//! <handle>
//! <connection_id>      kdcn_ and 24 hex characters
//! <scopes>             the granted scopes, one space between, in the consent screen's order
//! <spend_usd_per_day>  always 0
//! <actions_per_day>
//! <issued_at>          Unix seconds
//! ```
//!
//! The state (listed, verified, revoked, superseded) is live, not signed, and the label shown
//! comes from it, so a Listed passport is never called Verified.

use kd_core::clock::rfc3339_ms;
use kd_core::db::Connection;
use kd_core::keys::ServerKey;
use serde_json::{Value, json};

use kd_kernel::error::ToolError;

/// The passport recipe name.
pub const RECIPE: &str = "kd-passport-v1";
/// The recipe of a hosted connector agent's passport.
pub const CONNECTOR_RECIPE: &str = "kd-connector-passport-v1";

/// The grant a connector passport states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrantLines<'a> {
    /// The connection (`kdcn_…`).
    pub connection_id: &'a str,
    /// The granted scopes, in the consent screen's order.
    pub scopes: &'a [&'a str],
    /// The actions a day.
    pub actions_per_day: i64,
}

/// The text a connector passport's signature covers (nine lines, see the module docs).
pub fn connector_text(
    credential_id: &str,
    agent_id: &str,
    handle: &str,
    grant: GrantLines<'_>,
    issued_unix: i64,
) -> String {
    format!(
        "{CONNECTOR_RECIPE}\n{credential_id}\n{agent_id}\n{handle}\n{}\n{}\n0\n{}\n{issued_unix}",
        grant.connection_id,
        grant.scopes.join(" "),
        grant.actions_per_day,
    )
}

/// Issues and stores a new Listed connector passport stating `grant`. Runs in the caller's
/// write transaction.
///
/// # Errors
/// `internal` when the store fails.
pub fn issue_connector(
    conn: &Connection,
    key: &ServerKey,
    credential_id: &str,
    agent_id: &str,
    handle: &str,
    grant: GrantLines<'_>,
    now_ms: i64,
) -> Result<Passport, ToolError> {
    let text = connector_text(
        credential_id,
        agent_id,
        handle,
        grant,
        now_ms.div_euclid(1000),
    );
    store_signed(conn, key, credential_id, agent_id, text, now_ms)
}

pub use super::store::Passport;

/// The text a passport's signature covers.
pub fn signed_text(
    credential_id: &str,
    agent_id: &str,
    handle: &str,
    public_key: &str,
    issued_unix: i64,
) -> String {
    format!("{RECIPE}\n{credential_id}\n{agent_id}\n{handle}\n{public_key}\n{issued_unix}")
}

/// Issues and stores a new Listed passport. Runs in the caller's write transaction.
///
/// # Errors
/// `internal` when the store fails.
pub fn issue(
    conn: &Connection,
    key: &ServerKey,
    credential_id: &str,
    agent_id: &str,
    handle: &str,
    public_key: &str,
    now_ms: i64,
) -> Result<Passport, ToolError> {
    let text = signed_text(
        credential_id,
        agent_id,
        handle,
        public_key,
        now_ms.div_euclid(1000),
    );
    store_signed(conn, key, credential_id, agent_id, text, now_ms)
}

/// Signs `text` and stores it as a Listed passport.
fn store_signed(
    conn: &Connection,
    key: &ServerKey,
    credential_id: &str,
    agent_id: &str,
    text: String,
    now_ms: i64,
) -> Result<Passport, ToolError> {
    let signature = key.sign_text(&text);
    let passport = Passport {
        credential_id: credential_id.to_owned(),
        agent_id: agent_id.to_owned(),
        state: "listed".into(),
        signed_text: text,
        signature,
        issued_ms: now_ms,
    };
    super::store::insert_passport(conn, &passport)?;
    Ok(passport)
}

/// Marks a passport `revoked` or `superseded`.
///
/// # Errors
/// `internal` when the store fails.
pub fn end(
    conn: &Connection,
    credential_id: &str,
    state: &str,
    now_ms: i64,
) -> Result<(), ToolError> {
    super::store::end_passport(conn, credential_id, state, now_ms)?;
    Ok(())
}

/// Reads a passport by its id.
///
/// # Errors
/// `internal` when the store fails.
pub fn load(conn: &Connection, credential_id: &str) -> Result<Option<Passport>, ToolError> {
    Ok(super::store::passport(conn, credential_id)?)
}

/// The plain label of a state.
pub fn label(state: &str) -> &'static str {
    match state {
        "verified" => "Verified",
        "revoked" => "Revoked",
        "superseded" => "Superseded (the agent rotated its key)",
        _ => "Listed",
    }
}

impl Passport {
    /// True when the signature verifies with `key` over the stored text, and the text is a
    /// kd-passport-v1 text for this credential and agent.
    pub fn signature_valid(&self, key: &ServerKey) -> bool {
        let mut lines = self.signed_text.split('\n');
        matches!(lines.next(), Some(RECIPE | CONNECTOR_RECIPE))
            && lines.next() == Some(self.credential_id.as_str())
            && lines.next() == Some(self.agent_id.as_str())
            && key.verify_text(&self.signed_text, &self.signature)
    }

    /// The passport as shown to callers.
    pub fn to_json(&self, key: &ServerKey) -> Value {
        let fields: Vec<&str> = self.signed_text.split('\n').collect();
        if fields.first() == Some(&CONNECTOR_RECIPE) {
            return self.connector_json(key, &fields);
        }
        json!({
            "credential_id": self.credential_id,
            "kind": "passport",
            "agent_id": self.agent_id,
            "handle": fields.get(3),
            "public_key": fields.get(4),
            "state": self.state,
            "label": label(&self.state),
            "verified": self.state == "verified",
            "issued_at": rfc3339_ms(self.issued_ms),
            "recipe": RECIPE,
            "signed_text": self.signed_text,
            "signature": self.signature,
            "key_id": key.key_id(),
            "alg": "EdDSA",
            "jwks": "/.well-known/jwks.json",
        })
    }

    /// A connector passport as shown to callers: no key, and the grant it states as
    /// `permissions` (`connection_id`, `scopes`, `spend_usd_per_day`, `actions_per_day`).
    fn connector_json(&self, key: &ServerKey, fields: &[&str]) -> Value {
        let line = |at: usize| fields.get(at).copied().unwrap_or_default();
        let label = match self.state.as_str() {
            "superseded" => "Superseded (the connection's permissions changed)",
            state => label(state),
        };
        json!({
            "credential_id": self.credential_id,
            "kind": "passport",
            "agent_id": self.agent_id,
            "handle": line(3),
            "public_key": null,
            "permissions": {
                "connection_id": line(4),
                "scopes": line(5).split_whitespace().collect::<Vec<_>>(),
                "spend_usd_per_day": line(6).parse::<i64>().unwrap_or_default(),
                "actions_per_day": line(7).parse::<i64>().unwrap_or_default(),
            },
            "state": self.state,
            "label": label,
            "verified": self.state == "verified",
            "issued_at": rfc3339_ms(self.issued_ms),
            "recipe": CONNECTOR_RECIPE,
            "signed_text": self.signed_text,
            "signature": self.signature,
            "key_id": key.key_id(),
            "alg": "EdDSA",
            "jwks": "/.well-known/jwks.json",
        })
    }
}
