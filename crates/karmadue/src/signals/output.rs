//! Peer signals' outputs: the signal as stored and what it does to the subject's trust.

use kd_core::clock::rfc3339_ms;
use serde::Serialize;

use super::events::SignalRecorded;
use super::store::StoredSignal;
use super::{ATTEST_DOC, SCORES_DOC, rules};

/// One stored signal as the tools show it: the `signal.recorded` payload's fields
/// (`signal_id`, `signal_kind`, `author_agent_id`, `subject_agent_id`, the arguments,
/// `attestation_text`, `signature`, `counted`, `not_counted_reason`, `weight`, `points`), with
/// when it was recorded and its event's seq.
#[derive(Debug, Serialize)]
pub struct SignalView {
    /// The payload.
    #[serde(flatten)]
    pub record: SignalRecorded,
    /// RFC 3339.
    pub recorded_at: String,
    /// The `signal.recorded` event's seq.
    pub event_seq: i64,
}

impl From<StoredSignal> for SignalView {
    fn from(row: StoredSignal) -> Self {
        Self {
            record: row.record,
            recorded_at: rfc3339_ms(row.created_ms),
            event_seq: row.event_seq,
        }
    }
}

/// attest_peer's, submit_peer_review's and record_outcome's `data`.
#[derive(Debug, Serialize)]
pub struct SignalAnswer {
    /// The signal as stored.
    pub signal: SignalView,
    /// What it does to the subject's trust, in a sentence.
    pub trust_effect: String,
    /// The subject's trust from peer signals now (0–20, [`rules::MAX_SIGNAL_TRUST`]).
    pub subject_signal_trust: i64,
    /// Where the rule is published.
    pub formula: &'static str,
    /// An attestation's recipe page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recipe: Option<&'static str>,
}

kd_kernel::output!(SignalAnswer);

impl SignalAnswer {
    /// The answer for `row`, with the subject's signal trust after it.
    pub fn new(row: StoredSignal, trust: rules::SignalTrust) -> Self {
        let trust_effect = match row.record.not_counted_reason.as_deref() {
            None => format!(
                "Counted: worth {} trust points to the subject (its author's best counted signal on this subject counts once; peer signals together at most {}).",
                row.record.points,
                rules::MAX_SIGNAL_TRUST
            ),
            Some(reason) => format!("Stored, not counted ({reason}): it moves nothing."),
        };
        let recipe = (row.record.signal_kind == "attestation").then_some(ATTEST_DOC);
        Self {
            signal: row.into(),
            trust_effect,
            subject_signal_trust: trust.points,
            formula: SCORES_DOC,
            recipe,
        }
    }
}
