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
//! The state (listed, verified, revoked, superseded) is live, not signed, and the label shown
//! comes from it, so a Listed passport is never called Verified.

use kd_core::clock::rfc3339_ms;
use kd_core::db::Connection;
use kd_core::keys::ServerKey;
use serde_json::{Value, json};

use kd_kernel::error::ToolError;

/// The passport recipe name.
pub const RECIPE: &str = "kd-passport-v1";

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
        lines.next() == Some(RECIPE)
            && lines.next() == Some(self.credential_id.as_str())
            && lines.next() == Some(self.agent_id.as_str())
            && key.verify_text(&self.signed_text, &self.signature)
    }

    /// The passport as shown to callers.
    pub fn to_json(&self, key: &ServerKey) -> Value {
        let fields: Vec<&str> = self.signed_text.split('\n').collect();
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
}
