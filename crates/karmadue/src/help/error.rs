//! Help's refusals (issue 10, "one error enum per area"): watchlists and verification help,
//! each refusal a variant with its sentence, converted into the kernel's [`ToolError`] with the
//! spec code, the field it names and its spec fields (permissions document "Verification
//! help", "What your passport unlocks"; spec "Errors"). A help store failure is `internal`
//! with the database error as the cause; a refusal the kernel or another area raised
//! (argument, signature and quota checks, target parsing) passes through unchanged.

use kd_core::db::DbError;
use kd_kernel::error::{ErrorCode, ToolError};

use super::verification::MAX_EVIDENCE_CHARS;

/// Why a help tool refused (or failed).
#[derive(Debug, thiserror::Error)]
pub enum HelpError {
    /// No ask has the id (`ask_id`; `not_found`).
    #[error("No verification ask has this ask_id.")]
    NoSuchAsk,
    /// No agent has the subject id (`subject_agent_id`; `not_found`).
    #[error("No agent has this subject_agent_id.")]
    NoSuchSubject,
    /// No agent has the reviewer id (`reviewer`; `not_found`).
    #[error("No agent has this reviewer id.")]
    NoSuchReviewer,
    /// A text argument longer than its cap (the name sent; `validation`).
    #[error("{field} is at most {max} characters")]
    TooLong {
        /// The argument, as sent.
        field: String,
        /// The cap, in characters.
        max: usize,
    },
    /// An evidence link that is not an https URL on one line (the name sent; `validation`).
    #[error(
        "{0} must be an https URL on one line (ASCII, no quotes, spaces or angle brackets), up to {MAX_EVIDENCE_CHARS} characters"
    )]
    EvidenceShape(String),
    /// `stamp` is not a reviewable stamp (`stamp`; `validation`).
    #[error("stamp must be one of: human-reviewed, peer-reviewed")]
    StampChoice,
    /// `deadline` is not RFC 3339 (`deadline`; `validation`).
    #[error("deadline must be an RFC 3339 time such as 2026-10-20T12:00:00Z")]
    DeadlineShape,
    /// `deadline` is past or more than 30 days ahead (`deadline`; `validation`).
    #[error(
        "deadline must be in the future and at most 30 days ahead (now {now}, latest {latest})"
    )]
    DeadlineRange {
        /// RFC 3339, now.
        now: String,
        /// RFC 3339, the latest deadline allowed.
        latest: String,
    },
    /// The requester posted its asks for the day (`rate_limited` with `retry_after_s`).
    #[error(
        "An agent can post {max} verification asks a day. Try again in {retry_after_s} seconds."
    )]
    AsksSpent {
        /// Asks a day.
        max: i64,
        /// Seconds until the oldest of the day's asks leaves the window.
        retry_after_s: i64,
    },
    /// The subject agent is revoked (`subject_agent_id`; `validation`).
    #[error("The subject agent is revoked: its passport can no longer be reviewed.")]
    SubjectRevoked,
    /// The passport named is not the subject's current one (the name sent; `validation`).
    #[error(
        "{field} is not the subject's current passport: ask about its current version, {current} (verify_agent shows it as passport_id)."
    )]
    NotCurrentPassport {
        /// `passport_id` or `credential_id`.
        field: &'static str,
        /// The current passport id.
        current: String,
    },
    /// The requester already has an unresolved ask for the stamp on the passport (`stamp`;
    /// `validation` with `ask_id`).
    #[error("You already have an unresolved ask for this stamp on this passport: {0}.")]
    AlreadyAsked(String),
    /// list_verification_asks' `limit` outside 1..=50 (`limit`; `validation`).
    #[error("limit must be from 1 to 50")]
    LimitRange,
    /// list_verification_asks' `offset` outside 0..=10000 (`offset`; `validation`).
    #[error("offset must be from 0 to 10000")]
    OffsetRange,
    /// The caller already holds the ask, until the time given (`ask_id`; `validation`).
    #[error("You already hold this ask until {0}. Submit your result with submit_verification.")]
    AlreadyHeld(String),
    /// Another reviewer holds the ask, until the time given (`ask_id`; `validation`).
    #[error(
        "Another reviewer holds this ask until {0}; it reopens then if they have not submitted."
    )]
    HeldByAnother(String),
    /// The ask's deadline passed (`ask_id`; `validation`).
    #[error("This ask's deadline has passed; it can no longer be taken.")]
    AskExpired,
    /// The ask is in another state than open (`ask_id`; `validation`).
    #[error("This ask is {0}; only open asks can be taken.")]
    AskNotOpen(&'static str),
    /// The reviewer already submitted (`ask_id`; `validation`).
    #[error("You already submitted a result for this ask; the requester resolves it.")]
    AlreadySubmitted,
    /// The reviewer's hold ended, at the time given (`ask_id`; `validation`).
    #[error("Your 72-hour hold ended at {0}; the ask reopened. Take it again if it is still open.")]
    HoldEnded(String),
    /// The ask has no submitted result to resolve (`ask_id`; `validation`).
    #[error("This ask is {0}; only a submitted result can be resolved.")]
    NotSubmitted(&'static str),
    /// `result` is not met or unmet (`result`; `validation`).
    #[error("result must be one of: met, unmet")]
    ResultChoice,
    /// `decision` is not accept or dispute (`decision`; `validation`).
    #[error("decision must be one of: accept, dispute")]
    DecisionChoice,
    /// The requester disputed this reviewer's earlier result (`forbidden`, reason
    /// `disputed_before`).
    #[error(
        "The requester disputed your earlier result on this ask; another reviewer must take it."
    )]
    DisputedBefore,
    /// A submission from someone not holding the ask (`forbidden`, reason `not_reviewer`).
    #[error(
        "Only the reviewer holding this ask can submit a result: take it with accept_verification_ask first."
    )]
    NotReviewer,
    /// A resolution from someone other than the requester (`forbidden`, reason
    /// `not_requester`).
    #[error("Only the agent that posted this ask can resolve it.")]
    NotRequester,
    /// The requester taking its own ask (`forbidden`, reason `own_ask`).
    #[error("You posted this ask: another reviewer must take it.")]
    OwnAsk,
    /// The subject taking an ask about itself (`forbidden`, reason `own_passport`).
    #[error("This ask is about your own passport: another reviewer must take it.")]
    OwnPassport,
    /// A reviewer sharing an owner with the requester or the subject (`forbidden`, reason
    /// `shares_owner`).
    #[error(
        "You share an owner with the requester or the subject of this ask, so you cannot review it or have its stamp issued. Nothing was recorded."
    )]
    SharesOwner,
    /// An agent taking a human-reviewed ask (`forbidden`, reason `needs_person`).
    #[error(
        "A human-reviewed ask is taken by a signed-in person (the app's /verify-help page), not by an agent."
    )]
    NeedsPerson,
    /// A person taking a peer-reviewed ask (`forbidden`, reason `needs_agent`).
    #[error(
        "A peer-reviewed ask is taken by a registered agent of another owner (accept_verification_ask)."
    )]
    NeedsAgent,
    /// `tools` holds more targets than the tool takes (`tools`; `validation` with `max`).
    #[error("tools holds at most {max} targets; this call sent {sent}. Nothing was stored.")]
    TooManyTools {
        /// Most targets.
        max: usize,
        /// Targets sent.
        sent: usize,
    },
    /// quick_watch without a target (`tools`; `validation`).
    #[error("tools needs at least one target")]
    NoTools,
    /// A target that is not a string (`tools[i]`; `validation`).
    #[error("{0} must be a string such as kd:res:github:owner/repo or npm:<package>")]
    ToolNotText(String),
    /// Two targets naming one record (`tools[i]`; `validation`).
    #[error(
        "tools[{index}] names the same record as tools[{first}] ({resource_id}). List each tool once. Nothing was stored."
    )]
    SameRecord {
        /// The later target's index.
        index: usize,
        /// The earlier target's index.
        first: usize,
        /// The record both name.
        resource_id: String,
    },
    /// A submitted ask without a reviewer (`internal`).
    #[error("a submitted ask without a reviewer")]
    Unreviewed,
    /// The help store failed (`internal`; the database error is the source).
    #[error("the help store failed")]
    Store(#[from] DbError),
    /// A refusal or failure raised outside help (the kernel's argument, signature and quota
    /// checks; another area's check), passed through as it is.
    #[error(transparent)]
    Kernel(#[from] ToolError),
}

/// A `forbidden` refusal about an ask, with its `reason`.
fn forbidden(reason: &str, message: String) -> ToolError {
    ToolError::new(ErrorCode::Forbidden, message)
        .with_field("ask_id")
        .with("reason", reason)
}

impl From<HelpError> for ToolError {
    fn from(error: HelpError) -> Self {
        use HelpError as E;
        let message = error.to_string();
        match error {
            E::NoSuchAsk => ToolError::not_found("ask_id", message),
            E::NoSuchSubject => ToolError::not_found("subject_agent_id", message),
            E::NoSuchReviewer => ToolError::not_found("reviewer", message),
            E::TooLong { field, .. } | E::EvidenceShape(field) | E::ToolNotText(field) => {
                ToolError::validation(field, message)
            }
            E::StampChoice => ToolError::validation("stamp", message),
            E::DeadlineShape | E::DeadlineRange { .. } => {
                ToolError::validation("deadline", message)
            }
            E::AsksSpent { retry_after_s, .. } => {
                ToolError::new(ErrorCode::RateLimited, message).with("retry_after_s", retry_after_s)
            }
            E::SubjectRevoked => ToolError::validation("subject_agent_id", message),
            E::NotCurrentPassport { field, .. } => ToolError::validation(field, message),
            E::AlreadyAsked(ask_id) => {
                ToolError::validation("stamp", message).with("ask_id", ask_id)
            }
            E::LimitRange => ToolError::validation("limit", message),
            E::OffsetRange => ToolError::validation("offset", message),
            E::AlreadyHeld(_)
            | E::HeldByAnother(_)
            | E::AskExpired
            | E::AskNotOpen(_)
            | E::AlreadySubmitted
            | E::HoldEnded(_)
            | E::NotSubmitted(_) => ToolError::validation("ask_id", message),
            E::ResultChoice => ToolError::validation("result", message),
            E::DecisionChoice => ToolError::validation("decision", message),
            E::TooManyTools { max, .. } => ToolError::validation("tools", message).with("max", max),
            E::NoTools => ToolError::validation("tools", message),
            E::SameRecord { index, .. } => {
                ToolError::validation(format!("tools[{index}]"), message)
            }
            E::Unreviewed | E::Store(_) => ToolError::internal_from(error),
            E::Kernel(refusal) => refusal,
            E::DisputedBefore => forbidden("disputed_before", message),
            E::NotReviewer => forbidden("not_reviewer", message),
            E::NotRequester => forbidden("not_requester", message),
            E::OwnAsk => forbidden("own_ask", message),
            E::OwnPassport => forbidden("own_passport", message),
            E::SharesOwner => forbidden("shares_owner", message),
            E::NeedsPerson => forbidden("needs_person", message),
            E::NeedsAgent => forbidden("needs_agent", message),
        }
    }
}

kd_kernel::store_failures_are_internal!(log HelpError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_carries_its_spec_code_field_and_fields() {
        let shared = ToolError::from(HelpError::SharesOwner);
        assert_eq!(shared.code.as_str(), "forbidden");
        assert_eq!(shared.field.as_deref(), Some("ask_id"));
        assert_eq!(shared.extra["reason"], "shares_owner");
        let asked = ToolError::from(HelpError::AlreadyAsked("kdva_1".into())).to_json();
        assert_eq!(asked["field"], "stamp");
        assert_eq!(asked["ask_id"], "kdva_1");
        let spent = ToolError::from(HelpError::AsksSpent {
            max: 5,
            retry_after_s: 9,
        });
        assert_eq!(spent.code.as_str(), "rate_limited");
        assert_eq!(
            spent.message,
            "An agent can post 5 verification asks a day. Try again in 9 seconds."
        );
        let many = ToolError::from(HelpError::TooManyTools { max: 10, sent: 11 }).to_json();
        assert_eq!(many["max"], 10);
        let same = ToolError::from(HelpError::SameRecord {
            index: 2,
            first: 0,
            resource_id: "kd:res:npm:a".into(),
        });
        assert_eq!(same.field.as_deref(), Some("tools[2]"));
    }

    #[test]
    fn a_store_failure_keeps_its_cause() {
        let failure = ToolError::from(HelpError::Store(DbError::NoRows));
        assert_eq!(failure.code.as_str(), "internal");
        let cause = std::error::Error::source(&failure).expect("the help error is the cause");
        assert!(
            cause.source().is_some(),
            "the database error stays its source"
        );
        assert!(
            ToolError::from(HelpError::Unreviewed)
                .cause_text()
                .contains("without a reviewer")
        );
    }
}
