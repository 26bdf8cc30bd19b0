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
use kd_core::db::{Connection, OptionalExtension, params};
use kd_core::keys::ServerKey;
use serde_json::{Value, json};

use kd_kernel::error::ToolError;

/// The passport recipe name.
pub const RECIPE: &str = "kd-passport-v1";

/// A stored passport.
#[derive(Debug, Clone)]
pub struct Passport {
    /// `kdp_…`.
    pub credential_id: String,
    /// The agent it names.
    pub agent_id: String,
    /// listed | verified | revoked | superseded.
    pub state: String,
    /// The signed text.
    pub signed_text: String,
    /// base64url Ed25519 signature by kd-passport-1.
    pub signature: String,
    /// Unix milliseconds.
    pub issued_ms: i64,
}

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
    conn.prepare_cached(
        "INSERT INTO passports (credential_id, agent_id, state, signed_text, signature, issued_ms)
         VALUES (?1, ?2, 'listed', ?3, ?4, ?5)",
    )?
    .execute(params![credential_id, agent_id, text, signature, now_ms])?;
    Ok(Passport {
        credential_id: credential_id.to_owned(),
        agent_id: agent_id.to_owned(),
        state: "listed".into(),
        signed_text: text,
        signature,
        issued_ms: now_ms,
    })
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
    conn.prepare_cached(
        "UPDATE passports SET state = ?2, revoked_ms = ?3 WHERE credential_id = ?1",
    )?
    .execute(params![credential_id, state, now_ms])?;
    Ok(())
}

/// Reads a passport by its id.
///
/// # Errors
/// `internal` when the store fails.
pub fn load(conn: &Connection, credential_id: &str) -> Result<Option<Passport>, ToolError> {
    Ok(conn
        .prepare_cached(
            "SELECT credential_id, agent_id, state, signed_text, signature, issued_ms
             FROM passports WHERE credential_id = ?1",
        )?
        .query_row([credential_id], |row| {
            Ok(Passport {
                credential_id: row.get(0)?,
                agent_id: row.get(1)?,
                state: row.get(2)?,
                signed_text: row.get(3)?,
                signature: row.get(4)?,
                issued_ms: row.get(5)?,
            })
        })
        .optional()?)
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
