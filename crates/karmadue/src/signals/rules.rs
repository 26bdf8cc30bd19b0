//! What a peer signal is worth (docs/scores.md "Peer signals"; DECISIONS 4): the kd-attest-v1
//! text an attester signs, the evidence and independence rules, the weight of the author's
//! standing, and the trust the counted signals give their subject.

use kd_core::db::{Connection, DbError};
use kd_kernel::tiers::AgentFacts;

use super::SignalsError;

/// The attestation recipe.
pub const ATTEST_RECIPE: &str = "kd-attest-v1";
/// An attestation's outcomes and the share of the author's weight each is worth, in percent.
pub const OUTCOMES: [(&str, i64); 3] = [("delivered", 100), ("partial", 50), ("failed", 0)];
/// The outcome an attestation states when none is sent.
pub const DEFAULT_OUTCOME: &str = "delivered";
/// The evidence kind that means "no evidence": such a signal is stored and never counts.
pub const NO_EVIDENCE: &str = "none";
/// Weight of an author with a live admission-passed stamp whose owner link is approved.
pub const WEIGHT_OWNER_LINKED_ADMITTED: i64 = 10;
/// Weight of an author with a live admission-passed stamp and no owner link.
pub const WEIGHT_ADMITTED: i64 = 5;
/// Weight of a registered author that has not passed admission: its signals do not count.
pub const WEIGHT_REGISTERED: i64 = 0;
/// Most trust peer signals give one subject together.
pub const MAX_SIGNAL_TRUST: i64 = 20;
/// Longest evidence kind, in characters (`[a-z0-9_]`).
pub const MAX_EVIDENCE_KIND_CHARS: usize = 40;

/// Why a stored signal does not count.
pub mod reason {
    /// No evidence: `evidence_kind` none, or no `evidence_ref`.
    pub const NO_EVIDENCE: &str = "no_evidence";
    /// The author and the subject share an owner.
    pub const SAME_OWNER: &str = "same_owner";
    /// The author had not passed admission when it sent the signal (weight 0).
    pub const NOT_ADMITTED: &str = "author_not_admitted";
    /// record_outcome: the agent's own record of its work.
    pub const SELF_REPORTED: &str = "self_reported";
}

/// The kd-attest-v1 text: seven lines joined by LF, no trailing LF, UTF-8 — the recipe name,
/// then `attester:`, `subject:` (agent ids), `task_ref:`, `outcome:`, `evidence_kind:` and
/// `evidence_ref:` (each value as sent, trimmed; "" when not sent).
pub fn attestation_text(
    attester: &str,
    subject: &str,
    task_ref: &str,
    outcome: &str,
    evidence_kind: &str,
    evidence_ref: &str,
) -> String {
    format!(
        "{ATTEST_RECIPE}\nattester:{attester}\nsubject:{subject}\ntask_ref:{task_ref}\noutcome:{outcome}\nevidence_kind:{evidence_kind}\nevidence_ref:{evidence_ref}"
    )
}

/// The weight of an author's standing: [`WEIGHT_OWNER_LINKED_ADMITTED`], [`WEIGHT_ADMITTED`]
/// or [`WEIGHT_REGISTERED`].
pub fn weight(facts: &AgentFacts) -> i64 {
    match (facts.admitted(), facts.owner_linked()) {
        (true, true) => WEIGHT_OWNER_LINKED_ADMITTED,
        (true, false) => WEIGHT_ADMITTED,
        _ => WEIGHT_REGISTERED,
    }
}

/// Whether a signal counts and what it is worth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// Whether it moves the subject's trust.
    pub counted: bool,
    /// Why not ([`reason`]).
    pub reason: Option<&'static str>,
    /// The author's weight.
    pub weight: i64,
    /// Trust points: `weight × worth_percent / 100`, rounded down; 0 when not counted.
    pub points: i64,
}

/// The rule, in order: no evidence, a shared owner, then an author of weight 0 do not count;
/// otherwise the signal counts for `weight × worth_percent / 100` points.
pub fn judge(evidence: bool, same_owner: bool, weight: i64, worth_percent: i64) -> Verdict {
    let reason = if !evidence {
        Some(reason::NO_EVIDENCE)
    } else if same_owner {
        Some(reason::SAME_OWNER)
    } else if weight <= 0 {
        Some(reason::NOT_ADMITTED)
    } else {
        None
    };
    Verdict {
        counted: reason.is_none(),
        reason,
        weight,
        points: if reason.is_none() {
            weight * worth_percent.clamp(0, 100) / 100
        } else {
            0
        },
    }
}

/// Whether two agents share an owner (two agents without an owner do not).
pub fn same_owner(author: Option<&str>, subject: Option<&str>) -> bool {
    matches!((author, subject), (Some(a), Some(b)) if a == b)
}

/// A checked evidence kind: `none` when not sent.
///
/// # Errors
/// `validation` naming `evidence_kind`.
pub fn evidence_kind(sent: Option<&str>) -> Result<String, SignalsError> {
    let kind = sent.unwrap_or(NO_EVIDENCE);
    let shaped = !kind.is_empty()
        && kind.len() <= MAX_EVIDENCE_KIND_CHARS
        && kind
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if shaped {
        Ok(kind.to_owned())
    } else {
        Err(SignalsError::EvidenceKindShape)
    }
}

/// What peer signals give a subject's trust (read_scores' basis; `views::scores`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SignalTrust {
    /// Distinct authors with a counted signal.
    pub authors: i64,
    /// Trust points: each author's best counted signal once, together at most
    /// [`MAX_SIGNAL_TRUST`].
    pub points: i64,
    /// Signals stored that do not count.
    pub not_counted: i64,
}

/// The trust peer signals give `subject_id`.
///
/// # Errors
/// When the store fails.
pub fn signal_trust(conn: &Connection, subject_id: &str) -> Result<SignalTrust, DbError> {
    let best = super::store::counted_points(conn, subject_id)?;
    Ok(SignalTrust {
        authors: i64::try_from(best.len()).unwrap_or(i64::MAX),
        points: best.iter().sum::<i64>().min(MAX_SIGNAL_TRUST),
        not_counted: super::store::uncounted(conn, subject_id)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_then_owner_then_standing_decide() {
        assert_eq!(
            judge(false, false, 10, 100).reason,
            Some(reason::NO_EVIDENCE)
        );
        assert_eq!(judge(true, true, 10, 100).reason, Some(reason::SAME_OWNER));
        assert_eq!(
            judge(true, false, 0, 100).reason,
            Some(reason::NOT_ADMITTED)
        );
        assert_eq!(judge(true, false, 10, 100).points, 10);
        assert_eq!(judge(true, false, 5, 50).points, 2);
        assert_eq!(judge(true, true, 10, 100).points, 0);
        assert!(!same_owner(None, None));
        assert!(same_owner(Some("p"), Some("p")));
    }

    #[test]
    fn the_text_is_seven_lines() {
        let text = attestation_text("a", "s", "t", "delivered", "none", "");
        assert_eq!(text.lines().count(), 7);
        assert!(text.starts_with("kd-attest-v1\nattester:a\n"));
        assert!(text.ends_with("\nevidence_ref:"));
    }
}
