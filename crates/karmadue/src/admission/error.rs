//! The admission area's refusals (issue 10, "one error enum per area"): each a variant with its
//! sentence, converted into the kernel's [`ToolError`] with the spec code and the field it
//! names (spec "start_admission_test", "submit_admission_test", "publish_ask", "Errors"). A
//! store failure is kept whole as the cause of `internal`; a refusal the kernel or another area
//! raised (signature and argument checks, `stamp_required`, a grading refusal) passes through
//! unchanged.

use kd_core::db::DbError;
use kd_kernel::error::{ErrorCode, ToolError};

use super::grading::NOT_GRADED;
use super::{
    ASKS_PER_OPERATOR_PER_DAY, GRADED_PER_DAY, MAX_ASK_TITLE_CHARS, MAX_TOPIC_CHARS,
    OPEN_ASKS_PER_OPERATOR, STARTS_PER_DAY,
};

/// Why an admission tool refused (or failed).
#[derive(Debug, thiserror::Error)]
pub enum AdmissionError {
    /// The test signed with an owner's session, not the agent's key (`forbidden`).
    #[error(
        "The admission test is taken by the agent itself: sign the call with its key (kd-mcp-v1), not with an owner's session."
    )]
    OwnerSession,
    /// [`STARTS_PER_DAY`] starts in the last 24 hours (`rate_limited`, `retry_after_s`).
    #[error(
        "This agent started {STARTS_PER_DAY} admission attempts in the last 24 hours. Try again later."
    )]
    StartsSpent {
        /// Seconds until the oldest start leaves the window.
        retry_after_s: i64,
    },
    /// A start left the window between the read and the write (`rate_limited`, 1 second).
    #[error("An admission start left the 24-hour window just now. Try again.")]
    StartWindowMoved,
    /// [`GRADED_PER_DAY`] graded submissions in the last 24 hours (`rate_limited`,
    /// `retry_after_s`).
    #[error(
        "This agent made {GRADED_PER_DAY} graded admission submissions in the last 24 hours. Try again later; the attempt stays open until it expires."
    )]
    GradedSpent {
        /// Seconds until the oldest graded submission leaves the window.
        retry_after_s: i64,
    },
    /// No attempt of the caller's has the id (`attempt_id`; `not_found`).
    #[error("No attempt of yours has this attempt_id. Start one with start_admission_test.")]
    NoAttempt,
    /// The attempt was graded already (`attempt_id`; `not_found`, `attempt_status: graded`).
    #[error(
        "This attempt was already graded; an attempt is graded once. Start a new one with start_admission_test."
    )]
    AttemptGraded,
    /// The attempt's hour is over (`attempt_id`; `not_found`, `attempt_status: expired`).
    #[error(
        "This attempt expired (attempts last 1 hour). Start a new one with start_admission_test."
    )]
    AttemptExpired,
    /// `choice` names none of the attempt's listings (`choice`; `validation`; not graded).
    #[error(
        "choice must be one of this attempt's listing ids (or their resource ids). {NOT_GRADED}"
    )]
    ChoiceNotListed,
    /// publish_ask's title is too long or has a control character (`title`; `validation`).
    #[error("title is at most {MAX_ASK_TITLE_CHARS} characters, without control characters")]
    AskTitle,
    /// publish_ask's topic is not 1 to 40 of `a-z0-9-_` (`topic`; `validation`).
    #[error(
        "topic must be 1 to {MAX_TOPIC_CHARS} characters of a-z, 0-9, - and _ (for example general)"
    )]
    AskTopic,
    /// The operator has [`OPEN_ASKS_PER_OPERATOR`] open asks (`rate_limited`, `cap:
    /// open_asks`).
    #[error(
        "This operator's agents have {OPEN_ASKS_PER_OPERATOR} open asks (the listing cap is shared by the operator). Try again when one closes."
    )]
    OpenAsksFull {
        /// Seconds until the first open ask expires.
        retry_after_s: i64,
    },
    /// The operator published [`ASKS_PER_OPERATOR_PER_DAY`] asks in 24 hours (`rate_limited`,
    /// `cap: asks_per_day`).
    #[error(
        "This operator's agents published {ASKS_PER_OPERATOR_PER_DAY} asks in the last 24 hours (the daily cap is shared by the operator). Try again later."
    )]
    AsksPerDayFull {
        /// Seconds until the oldest ask of the day leaves the window.
        retry_after_s: i64,
    },
    /// An attempt's scenario could not be written or read back as JSON (`internal`).
    #[error("an admission scenario could not be written or read as JSON")]
    Scenario(#[source] serde_json::Error),
    /// The admission store failed (`internal`; the database error is the source).
    #[error("the admission store failed")]
    Store(#[from] DbError),
    /// A refusal or failure raised outside the area (the kernel's argument and signature
    /// checks, `stamp_required`, the grader's refusals, another area's store), passed through.
    #[error(transparent)]
    Kernel(#[from] ToolError),
}

impl From<AdmissionError> for ToolError {
    fn from(error: AdmissionError) -> Self {
        use AdmissionError as E;
        let message = error.to_string();
        let limited = |retry_after_s: i64| {
            ToolError::new(ErrorCode::RateLimited, message.clone())
                .with("retry_after_s", retry_after_s)
        };
        match error {
            E::OwnerSession => ToolError::new(ErrorCode::Forbidden, message),
            E::StartsSpent { retry_after_s } | E::GradedSpent { retry_after_s } => {
                limited(retry_after_s)
            }
            E::StartWindowMoved => limited(1),
            E::OpenAsksFull { retry_after_s } => limited(retry_after_s).with("cap", "open_asks"),
            E::AsksPerDayFull { retry_after_s } => {
                limited(retry_after_s).with("cap", "asks_per_day")
            }
            E::NoAttempt => ToolError::not_found("attempt_id", message),
            E::AttemptGraded => {
                ToolError::not_found("attempt_id", message).with("attempt_status", "graded")
            }
            E::AttemptExpired => {
                ToolError::not_found("attempt_id", message).with("attempt_status", "expired")
            }
            E::ChoiceNotListed => ToolError::validation("choice", message),
            E::AskTitle => ToolError::validation("title", message),
            E::AskTopic => ToolError::validation("topic", message),
            E::Scenario(_) | E::Store(_) => ToolError::internal_from(error),
            E::Kernel(refusal) => refusal,
        }
    }
}

kd_kernel::store_failures_are_internal!(log AdmissionError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_carries_its_spec_code_field_and_extras() {
        let cases: [(AdmissionError, &str, Option<&str>); 5] = [
            (AdmissionError::OwnerSession, "forbidden", None),
            (AdmissionError::NoAttempt, "not_found", Some("attempt_id")),
            (
                AdmissionError::ChoiceNotListed,
                "validation",
                Some("choice"),
            ),
            (AdmissionError::AskTopic, "validation", Some("topic")),
            (AdmissionError::StartWindowMoved, "rate_limited", None),
        ];
        for (error, code, field) in cases {
            let refusal = ToolError::from(error);
            assert_eq!(refusal.code.as_str(), code);
            assert_eq!(refusal.field.as_deref(), field);
        }
        let full = ToolError::from(AdmissionError::OpenAsksFull { retry_after_s: 7 }).to_json();
        assert_eq!(full["cap"], "open_asks");
        assert_eq!(full["retry_after_s"], 7);
        let graded = ToolError::from(AdmissionError::AttemptGraded).to_json();
        assert_eq!(graded["attempt_status"], "graded");
        assert_eq!(
            ToolError::from(AdmissionError::AskTitle).message,
            "title is at most 200 characters, without control characters"
        );
    }

    #[test]
    fn an_internal_failure_keeps_its_cause_and_a_kernel_refusal_passes_through() {
        let store = ToolError::from(AdmissionError::Store(DbError::NoRows));
        assert_eq!(store.code.as_str(), "internal");
        let cause = std::error::Error::source(&store).expect("the admission error is the cause");
        assert!(
            cause.source().is_some(),
            "the database error stays its source"
        );
        let kernel = ToolError::validation("answer", "not graded");
        let back = ToolError::from(AdmissionError::from(kernel));
        assert_eq!(back.field.as_deref(), Some("answer"));
        assert_eq!(back.message, "not graded");
    }
}
