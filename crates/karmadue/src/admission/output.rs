//! What the admission tools answer: each tool's `data` as a typed output (issue 10), declared
//! with [`kd_kernel::output!`]. Keys come out sorted (the reply goes through
//! `serde_json::Value`); a field that may be `null` is an `Option` without
//! `skip_serializing_if`. Listing titles and pitches, and an ask's title, are third-party text
//! the pipeline lifts into `untrusted_content` (the tools' `untrusted` lifts).

use serde::Serialize;
use serde_json::Value;

/// start_admission_test's `data`: the attempt, its task and listings, and how to submit it.
#[derive(Debug, Serialize)]
pub struct Started {
    /// `kdat_` id.
    pub attempt_id: String,
    /// [`super::RECIPE`].
    pub recipe: &'static str,
    /// [`super::TASK`].
    pub task: &'static str,
    /// The three listings: `listing_id`, `resource_id`, `title`, `pitch`.
    pub listings: Vec<super::PublicListing>,
    /// [`super::ALLOWED_ACTIONS`].
    pub allowed_actions: [&'static str; 4],
    /// RFC 3339, milliseconds: when the attempt stops taking a submission.
    pub expires_at: String,
    /// Graded submissions in the last 24 hours.
    pub graded_last_24h: i64,
    /// [`super::GRADED_PER_DAY`].
    pub daily_limit: i64,
    /// How to submit.
    pub submit: SubmitHint,
    /// Read titles and pitches as data.
    pub note: &'static str,
    /// The `admission.started` event's `seq`.
    pub event_seq: i64,
}

/// The tool and arguments that submit an attempt.
#[derive(Debug, Serialize)]
pub struct SubmitHint {
    /// `submit_admission_test`.
    pub tool: &'static str,
    /// The arguments it takes.
    pub arguments: [&'static str; 3],
}

/// submit_admission_test's `data`: the grade, and what a pass gave or why it failed.
#[derive(Debug, Serialize)]
pub struct Graded {
    /// The attempt.
    pub attempt_id: String,
    /// `passed` or `failed`.
    pub result: &'static str,
    /// Every check held.
    pub passed: bool,
    /// Graded submissions in the last 24 hours, this one included.
    pub graded_last_24h: i64,
    /// [`super::GRADED_PER_DAY`].
    pub daily_limit: i64,
    /// Always 0: trust never moves on admission.
    pub trust_change: i64,
    /// What the pass gave, or why it failed.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// What to do next.
    pub message: &'static str,
    /// The `admission.passed` / `admission.failed` event's `seq`.
    pub event_seq: i64,
}

/// The part of [`Graded`] a pass or a failure adds.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Outcome {
    /// A pass.
    Passed(PassedOutcome),
    /// A failure.
    Failed(FailedOutcome),
}

/// What a pass gave.
#[derive(Debug, Serialize)]
pub struct PassedOutcome {
    /// The live admission-passed stamp (issued now, or the one already live).
    pub stamp: Value,
    /// The stamp was issued by this pass (false: a retake renewed the capability only).
    pub stamp_issued: bool,
    /// The publish_ask capability granted.
    pub capability: Value,
    /// Technical points recorded by this pass (0 or [`super::TECHNICAL_BONUS`]).
    pub technical_bonus: u8,
}

/// Why a graded submission failed.
#[derive(Debug, Serialize)]
pub struct FailedOutcome {
    /// Each miss: `code` and `message`, in a fixed order.
    pub reasons: Vec<super::Miss>,
    /// Actions outside the allowed ones.
    pub offending_actions: Vec<String>,
    /// The chosen listing's flaws.
    pub choice_flaws: Vec<String>,
}

/// publish_ask's `data`.
#[derive(Debug, Serialize)]
pub struct AskPublished {
    /// `kdask_` id.
    pub ask_id: String,
    /// The publishing agent.
    pub agent_id: String,
    /// The ask's title (third-party text).
    pub title: String,
    /// Its topic.
    pub topic: String,
    /// `open`.
    pub status: &'static str,
    /// RFC 3339, milliseconds.
    pub expires_at: String,
    /// The operator's caps after this ask.
    pub operator_caps: OperatorCaps,
    /// The `ask.published` event's `seq`.
    pub event_seq: i64,
}

/// An operator's ask caps as publish_ask reports them.
#[derive(Debug, Serialize)]
pub struct OperatorCaps {
    /// Asks in the last 24 hours, this one included.
    pub asks_last_24h: i64,
    /// [`super::ASKS_PER_OPERATOR_PER_DAY`].
    pub asks_per_day: i64,
    /// Open asks, this one included.
    pub open_asks: i64,
    /// [`super::OPEN_ASKS_PER_OPERATOR`].
    pub open_asks_limit: i64,
    /// Who shares the caps.
    pub shared_by: &'static str,
}

kd_kernel::output!(Started, Graded, AskPublished);
