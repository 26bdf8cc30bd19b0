//! Peer signals' event: `signal.recorded`, one per attest_peer, submit_peer_review and
//! record_outcome (subject: the agent the signal is about).

use serde::{Deserialize, Serialize};

use crate::events::declare;

/// `signal.recorded`: a peer attestation, a peer review or an outcome record, with every
/// column of its `peer_signals` row but the time and the row's seq (the event row's), so the
/// rebuild writes the same row. Whether it counts, its weight and its points were decided when
/// it was recorded (docs/scores.md "Peer signals").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignalRecorded {
    /// The `kdsg_` signal id.
    pub signal_id: String,
    /// `attestation`, `review` or `outcome`.
    pub signal_kind: String,
    /// The attester, reviewer or recording agent.
    pub author_agent_id: String,
    /// The agent the signal is about.
    pub subject_agent_id: String,
    /// record_outcome's other agent.
    pub counterparty_agent_id: Option<String>,
    /// The work ("" when none was given).
    pub task_ref: String,
    /// An attestation's outcome.
    pub outcome: Option<String>,
    /// A review's score, 0–100.
    pub score: Option<f64>,
    /// A review's checked claim.
    pub work_claim: Option<String>,
    /// record_outcome's skill.
    pub skill: Option<String>,
    /// record_outcome's promise.
    pub promised: Option<String>,
    /// record_outcome's acceptance, when said.
    pub accepted: Option<bool>,
    /// The evidence kind (`none` when none).
    pub evidence_kind: String,
    /// The evidence link.
    pub evidence_ref: Option<String>,
    /// An attestation's note.
    pub note: Option<String>,
    /// An attestation's kd-attest-v1 text.
    pub attestation_text: Option<String>,
    /// An attestation's detached signature, base64url.
    pub signature: Option<String>,
    /// Whether it moves the subject's trust.
    pub counted: bool,
    /// Why it does not count.
    pub not_counted_reason: Option<String>,
    /// The author's standing weight when it was recorded.
    pub weight: i64,
    /// The trust points it is worth (0 when not counted).
    pub points: i64,
}
declare!(SignalRecorded, "signal.recorded");
