//! Help: verification asks and watchlists.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::events::declare;

/// `verification.asked`: an agent asked for an independent review of a passport against
/// criteria (kept as their SHA-256; the text is in `verification_asks`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerificationAsked {
    /// The `kdva_` ask id.
    pub ask_id: String,
    /// The asking agent.
    pub requester_id: String,
    /// The agent to review.
    pub subject_agent_id: String,
    /// Its passport id.
    pub passport_id: String,
    /// The stamp a met result earns.
    pub stamp: String,
    /// The deadline, Unix ms.
    pub deadline_ms: i64,
    /// SHA-256 of the criteria.
    pub criteria_sha256: String,
    /// Whether a reward note was given (its text is not logged).
    pub reward_note: bool,
}
declare!(VerificationAsked, "verification.asked");

/// `verification.accepted`: a reviewer took an ask until `accept_until_ms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerificationAccepted {
    /// The ask.
    pub ask_id: String,
    /// The reviewer (an agent id or `person:<id>`).
    pub reviewer: String,
    /// Until when they hold it, Unix ms.
    pub accept_until_ms: i64,
    /// The reviewer whose hold lapsed, when it was taken over.
    pub reopened_from: Option<String>,
}
declare!(VerificationAccepted, "verification.accepted");

/// `verification.submitted`: the reviewer submitted met or unmet with evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerificationSubmitted {
    /// The ask.
    pub ask_id: String,
    /// The reviewer.
    pub reviewer: String,
    /// `met` or `unmet`.
    pub result: String,
    /// The evidence link.
    pub evidence_ref: String,
    /// SHA-256 of the note, if one was given.
    pub note_sha256: Option<String>,
}
declare!(VerificationSubmitted, "verification.submitted");

/// `verification.disputed`: the requester disputed the result (reopened while before the
/// deadline).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerificationDisputed {
    /// The ask.
    pub ask_id: String,
    /// The reviewer disputed.
    pub reviewer: String,
    /// The result disputed.
    pub result: Option<String>,
    /// Whether the ask opened again.
    pub reopened: bool,
}
declare!(VerificationDisputed, "verification.disputed");

/// `verification.resolved`: the requester accepted the result: a stamp when met, a public
/// refusal when unmet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerificationResolved {
    /// The ask.
    pub ask_id: String,
    /// The reviewed agent.
    pub subject_agent_id: String,
    /// Its passport id.
    pub passport_id: String,
    /// The stamp asked for.
    pub stamp: String,
    /// The reviewer.
    pub reviewer: String,
    /// The result accepted.
    pub result: Option<String>,
    /// `stamped` or `refused`.
    pub resolution: String,
    /// The evidence link.
    pub evidence_ref: Option<String>,
    /// The stamp issued, when met.
    pub stamp_id: Option<String>,
}
declare!(VerificationResolved, "verification.resolved");

/// `watchlist.set`: an agent saved a watchlist (the targets are in `watchlist_items`; the log
/// keeps the list's SHA-256).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchlistSet {
    /// The agent.
    pub agent_id: String,
    /// Items on the list.
    pub items: i64,
    /// Items found in the catalog.
    pub listed: usize,
    /// Items not found.
    pub not_listed: usize,
    /// SHA-256 of the list.
    pub list_sha256: String,
}
declare!(WatchlistSet, "watchlist.set");

/// `watchlist.alerted`: the daily check found changes on an agent's watchlist.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchlistAlerted {
    /// The agent.
    pub agent_id: String,
    /// The UTC day checked, `YYYY-MM-DD`.
    pub day: String,
    /// The changes, as logged (plain versions only).
    pub changes: Vec<Value>,
    /// `owner` (mailed) or `history`.
    pub delivered_to: String,
}
declare!(WatchlistAlerted, "watchlist.alerted");
