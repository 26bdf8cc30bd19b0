//! Peer signals (issue 32; spec "attest_peer", "submit_peer_review", "record_outcome";
//! DECISIONS 4; docs/decisions.md 470–479): what agents say about each other's work, and the
//! one rule by which it may move trust.
//!
//! - `attest_peer` (anyone may deliver it; the proof is the attester's detached Ed25519
//!   signature over the kd-attest-v1 text, [`rules::attestation_text`]): an attester states
//!   the outcome of a subject's work, with evidence.
//! - `submit_peer_review` (signed by the reviewer, kd-mcp-v1, or its owner's session): a score
//!   0–100 for the subject's checkable work.
//! - `record_outcome` (signed by the agent that did the work): what was promised, the
//!   evidence, and whether the recipient accepted it. The agent's own record: it is stored
//!   and shown, and never moves trust (the recipient's attestation does).
//!
//! Every signal is stored (`peer_signals`, event `signal.recorded`) with whether it counts,
//! decided when it is recorded ([`rules::judge`]): without evidence, between agents of one
//! owner, or from an author that has not passed admission it is stored, shown as not counted
//! and moves nothing. A counted signal is worth its author's standing weight (10 owner-linked
//! and admitted, 5 admitted) times its outcome or score; each author's best signal on a
//! subject counts once, peer signals together at most 20 trust (docs/scores.md).
//! None of these writes is offered to connected apps (`Connector::Never`).

mod error;
pub mod events;
mod output;
mod record;
pub mod replay;
pub mod rules;
pub mod store;

pub use error::SignalsError;
pub use output::{SignalAnswer, SignalView};
pub use rules::{SignalTrust, signal_trust};

use schemars::JsonSchema;
use serde::Deserialize;

use kd_kernel::policy::{Connector, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Lift, Tool};

/// Where the score formulas (and this area's rule) are published.
pub const SCORES_DOC: &str = "/functions/v1/docs/docs/scores.md";
/// Where the kd-attest-v1 recipe and its worked example are published.
pub const ATTEST_DOC: &str = "/functions/v1/docs/docs/attestations.md";
/// Longest `task_ref`, in characters.
pub const MAX_TASK_REF_CHARS: usize = 200;
/// Longest `note`, `promised` and `work_claim`, in characters.
pub const MAX_TEXT_CHARS: usize = 500;
/// Longest `skill`, in characters.
pub const MAX_SKILL_CHARS: usize = 60;

const SIGNAL_LIFT: Lift = Lift::rows(
    "signal",
    "signal_id",
    &[
        "task_ref",
        "note",
        "work_claim",
        "promised",
        "attestation_text",
    ],
);

/// `attest_peer`.
pub static ATTEST_PEER: Tool = Tool {
    name: "attest_peer",
    title: "Attest a peer's work",
    description: "Sign a peer attestation. It counts only with evidence, weighted by Standing. The attester signs the kd-attest-v1 text (seven lines: kd-attest-v1, attester:, subject:, task_ref:, outcome:, evidence_kind:, evidence_ref:; see /functions/v1/docs/docs/attestations.md) with its Ed25519 key and sends the detached signature (base64url). Without evidence, between agents of one owner, or from an attester that has not passed admission, the attestation is stored and moves nothing. One attestation per attester, subject and task_ref.",
    access: Access::Open,
    hints: Hints::WRITE,
    untrusted: &[SIGNAL_LIFT],
    arguments: Arguments::Typed(kd_kernel::input!(AttestPeer)),
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(ATTEST_PEER, record::attest_peer),
};

/// attest_peer's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AttestPeer {
    /// Agent signing the attestation.
    attester_agent_id: String,
    /// Agent being attested.
    subject_agent_id: String,
    /// What the work was (one line, up to 200 characters).
    task_ref: Option<String>,
    #[schemars(
        description = "delivered or another outcome: delivered, partial or failed (default delivered)."
    )]
    outcome: Option<String>,
    /// Short note, up to 500 characters. Treated as data; not part of the signed text.
    note: Option<String>,
    #[schemars(
        description = "none, principal_confirmation, or another evidence kind (lowercase letters, digits and _). none never counts."
    )]
    evidence_kind: Option<String>,
    /// Evidence pointer: an https link.
    evidence_ref: Option<String>,
    /// Detached signature.
    signature: Option<String>,
    /// Base64url detached signature.
    signature_b64: Option<String>,
}

/// `submit_peer_review`.
pub static SUBMIT_PEER_REVIEW: Tool = Tool {
    name: "submit_peer_review",
    title: "Review a peer's work",
    description: "Score another agent's checkable work. Same-owner reviews do not count. score is 0-100; a review counts toward the subject's trust only with evidence (evidence_kind other than none and an https evidence_ref) and from a reviewer that has passed admission; otherwise it is stored and moves nothing. One review per reviewer, subject and task_ref. Signed (kd-mcp-v1) or the owner's session.",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[SIGNAL_LIFT],
    arguments: Arguments::Typed(
        kd_kernel::input!(SubmitPeerReview).agent_id(kd_kernel::AgentIdParam::Optional),
    ),
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(SUBMIT_PEER_REVIEW, record::submit_peer_review),
};

/// submit_peer_review's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SubmitPeerReview {
    /// Agent whose work you are scoring.
    subject_agent_id: String,
    /// The work (one line, up to 200 characters).
    task_ref: Option<String>,
    /// The claim you checked, up to 500 characters.
    work_claim: Option<String>,
    /// Score for the checkable work, 0 to 100.
    score: f64,
    /// Evidence pointer: an https link.
    evidence_ref: Option<String>,
    /// Evidence type: none, principal_confirmation, or another kind (lowercase, digits, _).
    evidence_kind: Option<String>,
}

/// `record_outcome`.
pub static RECORD_OUTCOME: Tool = Tool {
    name: "record_outcome",
    title: "Record an outcome of your work",
    description: "Record what was promised, the evidence, and whether the recipient accepted it. This is your own record of your work: it is stored and shown, and never moves trust by itself (the recipient's attest_peer with evidence does). Not the same as report_outcome (a reliability report on a checked tool). Signed (kd-mcp-v1) or the owner's session.",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[SIGNAL_LIFT],
    arguments: Arguments::Typed(
        kd_kernel::input!(RecordOutcome).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(RECORD_OUTCOME, record::record_outcome),
};

/// record_outcome's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RecordOutcome {
    /// The other agent, when there is one.
    counterparty_agent_id: Option<String>,
    /// Skill this outcome is about (one line, up to 60 characters).
    skill: Option<String>,
    /// What was promised, up to 500 characters.
    promised: String,
    /// Evidence pointer: an https link.
    evidence_ref: String,
    /// Evidence type (lowercase, digits, _; default link).
    evidence_kind: Option<String>,
    /// Whether the recipient accepted the outcome.
    accepted: Option<bool>,
}
