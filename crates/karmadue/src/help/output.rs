//! What help's tools answer: each tool's `data` as a typed output (issue 10), declared with
//! [`kd_kernel::output!`]. Keys come out sorted (the reply goes through `serde_json::Value`);
//! a field that may be `null` is an `Option` without `skip_serializing_if`, so it prints
//! `null`. An ask stays its JSON row ([`super::verification::Ask::to_json`]), a stamp its
//! standing row, a verifier record help's record: data passed through unchanged.

use serde::Serialize;
use serde_json::Value;

/// post_verification_ask's `data`.
#[derive(Debug, Serialize)]
pub struct AskPosted {
    /// The ask as posted.
    pub ask: Value,
    /// The event's sequence number.
    pub event_seq: i64,
    /// What happens next, in a sentence.
    pub message: &'static str,
}

/// list_verification_asks' `data`.
#[derive(Debug, Serialize)]
pub struct AskList {
    /// This page of asks.
    pub asks: Vec<Value>,
    /// The status listed (`open` by default).
    pub status: String,
    /// Every matching ask.
    pub total: i64,
    /// Asks skipped.
    pub offset: i64,
    /// The page size.
    pub limit: i64,
    /// The offset of the next page; null on the last.
    pub next_offset: Option<i64>,
    /// How long a reviewer holds an ask, in hours.
    pub accept_window_hours: i64,
    /// `off`.
    pub payouts: &'static str,
    /// The reviewer's record, when a reviewer was named (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verifier_record: Option<Value>,
}

/// accept_verification_ask's `data` (and a signed-in person's take).
#[derive(Debug, Serialize)]
pub struct AskAccepted {
    /// The ask, now held.
    pub ask: Value,
    /// RFC 3339, milliseconds: when the hold ends.
    pub must_submit_by: String,
    /// The event's sequence number.
    pub event_seq: i64,
    /// What to do next, in a sentence.
    pub message: &'static str,
}

/// submit_verification's `data` (and a signed-in person's submission).
#[derive(Debug, Serialize)]
pub struct ResultSubmitted {
    /// The ask, now submitted.
    pub ask: Value,
    /// The event's sequence number.
    pub event_seq: i64,
    /// What happens next, in a sentence.
    pub message: &'static str,
}

/// resolve_verification's `data`: a decided result (a stamp when met, a public refusal when
/// unmet) or a dispute.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Resolved {
    /// The requester accepted the result.
    Decided(Box<Decided>),
    /// The requester disputed the result.
    Disputed {
        /// The ask, reopened or closed.
        ask: Value,
        /// `disputed`.
        resolution: &'static str,
        /// Whether the ask is open again (its deadline has not passed).
        reopened: bool,
        /// The event's sequence number.
        event_seq: i64,
        /// What happened, in a sentence.
        message: &'static str,
    },
}

/// resolve_verification's `data` when the requester accepted the result.
#[derive(Debug, Serialize)]
pub struct Decided {
    /// The ask, now resolved.
    pub ask: Value,
    /// `stamped` or `refused`.
    pub resolution: &'static str,
    /// The stamp issued; null when refused.
    pub stamp: Option<Value>,
    /// The public refusal; null when stamped.
    pub refusal: Option<Refusal>,
    /// The reviewer's record, now credited.
    pub verifier_record: Value,
    /// The event's sequence number.
    pub event_seq: i64,
}

/// A public refusal: the reviewer found the criteria unmet.
#[derive(Debug, Serialize)]
pub struct Refusal {
    /// The ask.
    pub ask_id: String,
    /// The agent reviewed.
    pub subject_agent_id: String,
    /// The passport reviewed.
    pub passport_id: String,
    /// The stamp sought.
    pub stamp: String,
    /// The reviewer (agent id or `person:<id>`).
    pub reviewer: String,
    /// The reviewer's evidence link.
    pub evidence_ref: Option<String>,
    /// Always true: refusals are public.
    pub public: bool,
    /// The refusal in a sentence.
    pub line: String,
}

/// quick_watch's `data`.
#[derive(Debug, Serialize)]
pub struct QuickWatched {
    /// One item a target, in order.
    pub items: Vec<WatchItem>,
    /// Targets checked.
    pub count: usize,
    /// Targets with a real record.
    pub listed: usize,
    /// Targets without one.
    pub not_listed: usize,
    /// RFC 3339, milliseconds.
    pub checked_at: String,
    /// Always false: quick_watch stores nothing.
    pub stored: bool,
    /// What the answer is and is not, in a sentence.
    pub note: &'static str,
}

/// One quick_watch target: its real record's state, or that none matches.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum WatchItem {
    /// A real record matches.
    Listed(Box<ListedItem>),
    /// No real record matches.
    NotListed {
        /// The target's position.
        index: usize,
        /// The target as sent, trimmed.
        target: String,
        /// `not_listed`.
        status: &'static str,
        /// Always null.
        resource_id: Option<String>,
        /// Whether only a demo record matches.
        demo_available: bool,
        /// What to try instead, in a sentence.
        message: &'static str,
    },
}

/// A quick_watch target with a real record.
#[derive(Debug, Serialize)]
pub struct ListedItem {
    /// The target's position.
    pub index: usize,
    /// The target as sent, trimmed.
    pub target: String,
    /// `listed`.
    pub status: &'static str,
    /// The record.
    pub resource_id: String,
    /// How the target matched it.
    pub matched_by: &'static str,
    /// Its title (third-party text).
    pub title: String,
    /// Archived upstream.
    pub archived_upstream: bool,
    /// Flagged risky.
    pub risky: bool,
    /// Its version, or null.
    pub version: Option<String>,
    /// RFC 3339, milliseconds, or null.
    pub released_at: Option<String>,
    /// Where the release date came from.
    pub released_at_source: String,
    /// Outcome reports on it, all time.
    pub outcome_reports: OutcomeCounts,
    /// Agents' reliability reports, or null.
    pub reliability_reports: Option<Value>,
}

/// Outcome reports on a record, all time.
#[derive(Debug, Serialize)]
pub struct OutcomeCounts {
    /// All reports.
    pub reports: i64,
    /// `broke` reports.
    pub broke: i64,
}

/// set_watchlist's `data`.
#[derive(Debug, Serialize)]
pub struct WatchlistSaved {
    /// The agent whose list it is.
    pub agent_id: String,
    /// One item a target, in order.
    pub items: Vec<SavedItem>,
    /// Targets saved.
    pub count: usize,
    /// Targets with a real record.
    pub listed: usize,
    /// Targets without one.
    pub not_listed: usize,
    /// Most targets a list holds.
    pub max: usize,
    /// When the list is checked.
    pub checked: &'static str,
    /// `owner` (mailed) or `history`.
    pub alerts_to: &'static str,
    /// Where alerts go, in a sentence.
    pub alerts_note: &'static str,
    /// The event's sequence number.
    pub event_seq: i64,
}

/// One saved watchlist target.
#[derive(Debug, Serialize)]
pub struct SavedItem {
    /// The target's position.
    pub index: usize,
    /// The target as sent, trimmed.
    pub target: String,
    /// `listed` or `not_listed`.
    pub status: &'static str,
    /// The record, or null.
    pub resource_id: Option<String>,
}

kd_kernel::output!(
    AskPosted,
    AskList,
    AskAccepted,
    ResultSubmitted,
    Resolved,
    QuickWatched,
    WatchlistSaved
);
