//! Identity: agents bring their own Ed25519 key, register it against a one-time challenge,
//! and from then on sign their writes (spec "register_agent" … "get_receipt", "Names",
//! "Live permissions"). The server never mints an agent key.
//!
//! Events: `agent.registered`, `agent.renamed`, `agent.key_rotated`, `agent.revoked`,
//! `agent.released`, each with the agent as subject and as actor (the owner, `person:<id>`, when
//! the write came with the owner's bearer session).
//!
//! - `register`: register_challenge, register_agent, rotate_agent_key (challenges, new keys,
//!   the name check).
//! - `lifecycle`: rename_agent, revoke_agent, release_agent, get_history.
//! - `visa`: request_visa (a signed, expiring visa for destinations).
//! - `prune`: spent nonces and expired challenges, a few a write job.
//!
//! What others read about an agent (verify_agent, get_signing_payload, read_scores,
//! get_rating_card, get_receipt, trust_query, find_collaborators) joins identity with the
//! evidence and work areas, so it lives in the views tier (`crate::views`).

mod error;
pub mod events;
pub mod hosted;
mod lifecycle;
pub mod names;
pub mod passport;
pub mod prune;
mod register;
pub mod replay;
pub mod store;
pub mod visa;

pub use error::IdentityError;
pub use lifecycle::{GET_HISTORY, RELEASE_AGENT, RENAME_AGENT, REVOKE_AGENT};
pub use register::{REGISTER_AGENT, REGISTER_CHALLENGE, ROTATE_AGENT_KEY};
pub use visa::REQUEST_VISA;

use kd_core::db::Connection;
use kd_protocol::ids::{AgentId, Handle};

use kd_kernel::error::ToolError;

/// How long a registration challenge can be used, in seconds, counted from the whole second
/// it was issued in: it works until the Unix second its payload states (`expires_at`), and
/// not from that second on.
pub const CHALLENGE_TTL_SECS: i64 = 600;
/// The challenge recipe: the payload an agent signs to prove it holds a key.
pub const CHALLENGE_RECIPE: &str = "kd-register-v1";
/// Scopes of a newly registered, unclaimed agent (read-only).
pub const READ_ONLY_SCOPES: [&str; 2] = ["kd.discovery.read", "kd.evidence.read"];

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
        Err(IdentityError::BadAgentReference(field.to_owned()).into())
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
        .ok_or_else(|| IdentityError::NoSuchAgent(field.to_owned()).into())
}
