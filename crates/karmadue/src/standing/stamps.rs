//! Stamps on passports and the capabilities they grant (permissions document "What your
//! passport unlocks", "Admission, trust and capability", "Verification help").
//!
//! A stamp is a recorded fact about an agent (`stamp.issued`): `admission-passed` (issued by the
//! hub for 90 days when the admission test is passed), `human-reviewed` and `peer-reviewed`
//! (issued through verification help, naming the reviewer). A capability is a permission with
//! an expiry (`capability.granted`): `publish_ask` for 30 days, renewed by retaking the test.
//! Both tables are projections of those events.

use crate::standing::events;
use kd_core::db::Connection;
use kd_core::store::WriteTxn;
use serde_json::{Value, json};

use kd_kernel::error::ToolError;

/// The stamp the admission test issues.
pub const ADMISSION_PASSED: &str = "admission-passed";
/// A person reviewed the agent (verification help).
pub const HUMAN_REVIEWED: &str = "human-reviewed";
/// Another agent reviewed it (verification help).
pub const PEER_REVIEWED: &str = "peer-reviewed";
/// The capability the admission test grants.
pub const PUBLISH_ASK: &str = "publish_ask";

/// One day, in milliseconds.
pub const DAY_MS: i64 = 86_400_000;

/// A stamp as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// `kdst_` + 24 hex.
    pub stamp_id: String,
    /// Whose passport carries it.
    pub agent_id: String,
    /// [`ADMISSION_PASSED`], [`HUMAN_REVIEWED`] or [`PEER_REVIEWED`].
    pub stamp: String,
    /// Unix ms.
    pub issued_ms: i64,
    /// Unix ms; None: it does not expire.
    pub expires_ms: Option<i64>,
    /// `hub`, `person:<id>` or an agent id.
    pub issuer: String,
    /// The passport (credential id) it was issued on, when it names one.
    pub credential_id: Option<String>,
    /// Anything else the issuer recorded (a JSON object).
    pub detail: Value,
    /// The `stamp.issued` event.
    pub event_seq: i64,
}

impl Stamp {
    /// The public shape: `{stamp_id, stamp, issued_at, expires_at, issuer, credential_id,
    /// detail, event_seq}` with RFC 3339 times.
    pub fn to_json(&self) -> Value {
        json!({
            "stamp_id": self.stamp_id,
            "stamp": self.stamp,
            "issued_at": kd_core::clock::rfc3339_ms(self.issued_ms),
            "expires_at": self.expires_ms.map(kd_core::clock::rfc3339_ms),
            "issuer": self.issuer,
            "credential_id": self.credential_id,
            "detail": self.detail,
            "event_seq": self.event_seq,
        })
    }
}

/// What [`issue`] records.
#[derive(Debug, Clone)]
pub struct NewStamp {
    /// `kdst_` + 24 hex, made by the caller from the hub's randomness.
    pub stamp_id: String,
    /// Whose passport carries it.
    pub agent_id: String,
    /// The stamp name.
    pub stamp: &'static str,
    /// Unix ms; None: does not expire.
    pub expires_ms: Option<i64>,
    /// `hub`, `person:<id>` or an agent id.
    pub issuer: String,
    /// The passport it names, if any.
    pub credential_id: Option<String>,
    /// A JSON object.
    pub detail: Value,
}

/// Issues a stamp inside the write transaction: appends `stamp.issued` (actor = `actor`,
/// subject = the agent) and stores the projection row.
///
/// # Errors
/// `internal` when the store fails.
pub fn issue(txn: &mut WriteTxn<'_>, actor: &str, stamp: NewStamp) -> Result<Stamp, ToolError> {
    let now = txn.now_ms();
    let row = txn.record(
        actor,
        stamp.agent_id.clone(),
        &events::StampIssued {
            stamp_id: stamp.stamp_id.clone(),
            agent_id: stamp.agent_id.clone(),
            stamp: stamp.stamp.to_owned(),
            expires_ms: stamp.expires_ms,
            issuer: stamp.issuer.clone(),
            credential_id: stamp.credential_id.clone(),
            detail: stamp.detail.clone(),
        },
    )?;
    let stored = Stamp {
        stamp_id: stamp.stamp_id,
        agent_id: stamp.agent_id,
        stamp: stamp.stamp.to_owned(),
        issued_ms: now,
        expires_ms: stamp.expires_ms,
        issuer: stamp.issuer,
        credential_id: stamp.credential_id,
        detail: stamp.detail,
        event_seq: row.seq,
    };
    super::store::insert_stamp(txn.conn(), &stored)?;
    Ok(stored)
}

/// The agent's stamps that are live at `now_ms` (not expired), oldest first.
///
/// # Errors
/// `internal` when the store fails.
pub fn live(conn: &Connection, agent_id: &str, now_ms: i64) -> Result<Vec<Stamp>, ToolError> {
    Ok(super::store::live_stamps(conn, agent_id, now_ms)?)
}

/// A capability an agent holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capability {
    /// Its name ([`PUBLISH_ASK`]).
    pub capability: String,
    /// Unix ms of the latest grant.
    pub granted_ms: i64,
    /// Unix ms.
    pub expires_ms: i64,
    /// What granted it.
    pub source: String,
}

impl Capability {
    /// `{capability, granted_at, expires_at, source}`.
    pub fn to_json(&self) -> Value {
        json!({
            "capability": self.capability,
            "granted_at": kd_core::clock::rfc3339_ms(self.granted_ms),
            "expires_at": kd_core::clock::rfc3339_ms(self.expires_ms),
            "source": self.source,
        })
    }
}

/// Grants (or renews) `capability` until `expires_ms`: appends `capability.granted` and
/// upserts the projection row.
///
/// # Errors
/// `internal` when the store fails.
pub fn grant_capability(
    txn: &mut WriteTxn<'_>,
    actor: &str,
    agent_id: &str,
    capability: &'static str,
    expires_ms: i64,
    source: &str,
) -> Result<Capability, ToolError> {
    let now = txn.now_ms();
    txn.record(
        actor,
        agent_id,
        &events::CapabilityGranted {
            agent_id: agent_id.to_owned(),
            capability: capability.to_owned(),
            expires_ms,
            source: source.to_owned(),
        },
    )?;
    let granted = Capability {
        capability: capability.to_owned(),
        granted_ms: now,
        expires_ms,
        source: source.to_owned(),
    };
    super::store::upsert_capability(txn.conn(), agent_id, &granted)?;
    Ok(granted)
}

/// The agent's capabilities that are live at `now_ms`.
///
/// # Errors
/// `internal` when the store fails.
pub fn live_capabilities(
    conn: &Connection,
    agent_id: &str,
    now_ms: i64,
) -> Result<Vec<Capability>, ToolError> {
    Ok(super::store::live_capabilities(conn, agent_id, now_ms)?)
}

/// Whether the agent holds `capability` at `now_ms`.
///
/// # Errors
/// `internal` when the store fails.
pub fn has_capability(
    conn: &Connection,
    agent_id: &str,
    capability: &str,
    now_ms: i64,
) -> Result<bool, ToolError> {
    Ok(super::store::has_capability(
        conn, agent_id, capability, now_ms,
    )?)
}
