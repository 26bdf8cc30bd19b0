//! The people area's tool refusals (issue 10, "one error enum per area"): each a variant with
//! its sentence, converted into the kernel's [`ToolError`] with the spec code and the field it
//! names (spec "connect_with_code", "request_claim", `notify_human_of_finding`,
//! `withdraw_finding`, `adopt_finding`, `invite_agent`, `offer_capability`,
//! `update_preferences`, "Errors"). A store failure is kept whole as the cause of `internal`; a
//! refusal the kernel or another area raised (signature and argument checks, an unknown agent)
//! passes through unchanged. The app's pages answer [`super::AppError`] instead.

use kd_core::db::DbError;
use kd_core::store::StoreError;
use kd_kernel::error::{ErrorCode, ToolError};

use super::agent_tools::{
    INVITES_PER_DAY, MAX_PREFERENCES_BYTES, OFFERS_PER_DAY, PREFERENCE_UPDATES_PER_DAY,
};
use super::findings::FINDINGS_PER_AGENT_PER_DAY;
use super::{CLAIMS_PER_AGENT_PER_DAY, CLAIMS_PER_EMAIL_PER_DAY};

/// Why a people tool refused (or failed).
#[derive(Debug, thiserror::Error)]
pub enum PeopleError {
    /// A text argument is longer than its cap (the name sent; `validation`).
    #[error("{field} is at most {max} characters")]
    TooLong {
        /// The argument's name, as sent.
        field: &'static str,
        /// The cap, in characters.
        max: usize,
    },
    /// A required text argument is absent or empty (`field`; `validation`). `names` lists it
    /// with its aliases: "why or reason is required".
    #[error("{names} is required")]
    Required {
        /// The argument the refusal names (the first name).
        field: &'static str,
        /// The name and its aliases, joined with " or ".
        names: String,
    },
    /// An address that is not one (the name sent; `validation`).
    #[error("email must be an address like person@example.org")]
    EmailInvalid(&'static str),
    /// A connected app named someone to send a finding to: it files finds only in its
    /// person's own Inbox (the name sent; `validation`; docs/decisions.md 329).
    #[error("A connected app files finds only in its person's own KarmaDue Inbox: leave {0} out.")]
    ConnectorOwnInbox(&'static str),
    /// request_claim's pitch too long or with a control character (`pitch`; `validation`).
    #[error("pitch must be at most 500 characters, no control characters")]
    PitchInvalid,
    /// connect_with_code: 10 attempts this clock hour (`rate_limited`, `retry_after_s`).
    #[error("Too many code attempts. Try again later.")]
    CodeAttemptsSpent {
        /// Seconds until the next clock hour.
        retry_after_s: i64,
    },
    /// connect_with_code: the code is wrong, expired or used (`code`; `invalid_code`).
    #[error(
        "This code is wrong, expired or already used. Ask your person for a fresh code from Connect your agent."
    )]
    InvalidCode,
    /// request_claim: the agent's daily claims are spent (`rate_limited`, `retry_after_s`).
    #[error(
        "This agent has made {CLAIMS_PER_AGENT_PER_DAY} claim requests today. Try again later."
    )]
    AgentClaimsSpent {
        /// Seconds until the oldest request leaves the day.
        retry_after_s: i64,
    },
    /// request_claim: the address's daily claims are spent (`rate_limited`, `retry_after_s`).
    #[error(
        "This address has had {CLAIMS_PER_EMAIL_PER_DAY} claim requests today. Try again later."
    )]
    EmailClaimsSpent {
        /// Seconds until the oldest request leaves the day.
        retry_after_s: i64,
    },
    /// notify_human_of_finding: 20 findings in 24 hours (`rate_limited`, `retry_after_s`).
    #[error(
        "This agent has filed {FINDINGS_PER_AGENT_PER_DAY} findings in the last 24 hours. Try again later."
    )]
    FindingsSpent {
        /// Seconds until the oldest finding leaves the window.
        retry_after_s: i64,
    },
    /// notify_human_of_finding: the principal is not the agent's owner (the name sent;
    /// `not_found`).
    #[error("principal_id must be your owner's id. To reach someone else, pass their email.")]
    NotYourOwner(&'static str),
    /// withdraw_finding: no open finding of the caller's has the id (`finding_id`;
    /// `not_found`).
    #[error("No open finding of yours has this finding_id.")]
    NoOpenFinding,
    /// adopt_finding: the claim code is wrong, withdrawn or someone else's (`claim_code`;
    /// `invalid_code`).
    #[error("This claim code is wrong, withdrawn or already adopted by someone else.")]
    InvalidClaimCode,
    /// invite_agent: the day's cards are handed out (`rate_limited`, `retry_after_s`).
    #[error("This agent handed out {INVITES_PER_DAY} cards in the last 24 hours. Try again later.")]
    CardsSpent {
        /// Seconds until the oldest card leaves the window.
        retry_after_s: i64,
    },
    /// offer_capability: the day's offers are made (`rate_limited`, `retry_after_s`).
    #[error(
        "This agent made {OFFERS_PER_DAY} capability offers in the last 24 hours. Try again later."
    )]
    OffersSpent {
        /// Seconds until the oldest offer leaves the window.
        retry_after_s: i64,
    },
    /// update_preferences: the day's updates are made (`rate_limited`, `retry_after_s`).
    #[error(
        "This agent updated its preferences {PREFERENCE_UPDATES_PER_DAY} times in the last 24 hours. Try again later."
    )]
    PreferenceUpdatesSpent {
        /// Seconds until the oldest update leaves the window.
        retry_after_s: i64,
    },
    /// update_preferences without an object (`preferences`; `validation`).
    #[error("preferences is required: an object for your person to review")]
    PreferencesMissing,
    /// update_preferences over 8 KiB of canonical text (`preferences`; `validation`).
    #[error("preferences is at most {MAX_PREFERENCES_BYTES} bytes of canonical JSON text")]
    PreferencesTooLarge,
    /// The people store failed (`internal`; the database error is the source).
    #[error("the people store failed")]
    Store(#[from] DbError),
    /// Appending to the event log or queueing a mail failed (`internal`; the store error is
    /// the source).
    #[error("the people area could not write the log or the mail queue")]
    Log(#[from] StoreError),
    /// A refusal or failure raised outside the area (the kernel's argument and signature
    /// checks, an unknown agent, another area's store), passed through as it is.
    #[error(transparent)]
    Kernel(#[from] ToolError),
}

impl From<PeopleError> for ToolError {
    fn from(error: PeopleError) -> Self {
        use PeopleError as E;
        let message = error.to_string();
        let limited = |retry_after_s: i64| {
            ToolError::new(ErrorCode::RateLimited, message.clone())
                .with("retry_after_s", retry_after_s)
        };
        match error {
            E::TooLong { field, .. }
            | E::Required { field, .. }
            | E::EmailInvalid(field)
            | E::ConnectorOwnInbox(field) => ToolError::validation(field, message),
            E::PitchInvalid => ToolError::validation("pitch", message),
            E::PreferencesMissing | E::PreferencesTooLarge => {
                ToolError::validation("preferences", message)
            }
            E::CodeAttemptsSpent { retry_after_s }
            | E::AgentClaimsSpent { retry_after_s }
            | E::EmailClaimsSpent { retry_after_s }
            | E::FindingsSpent { retry_after_s }
            | E::CardsSpent { retry_after_s }
            | E::OffersSpent { retry_after_s }
            | E::PreferenceUpdatesSpent { retry_after_s } => limited(retry_after_s),
            E::InvalidCode => ToolError::new(ErrorCode::InvalidCode, message).with_field("code"),
            E::InvalidClaimCode => {
                ToolError::new(ErrorCode::InvalidCode, message).with_field("claim_code")
            }
            E::NotYourOwner(field) => ToolError::not_found(field, message),
            E::NoOpenFinding => ToolError::not_found("finding_id", message),
            E::Store(_) | E::Log(_) => ToolError::internal_from(error),
            E::Kernel(refusal) => refusal,
        }
    }
}

impl From<PeopleError> for super::AppError {
    fn from(error: PeopleError) -> Self {
        Self::from(ToolError::from(error))
    }
}

/// A daily cap's wait: seconds until the oldest of the last 24 hours' rows (`oldest`, Unix
/// ms; none: now) leaves the window at `now`, at least 1.
pub(super) fn day_wait_s(oldest: Option<i64>, now: i64) -> i64 {
    (oldest.unwrap_or(now) + 24 * 3_600_000 - now + 999)
        .div_euclid(1000)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_carries_its_spec_code_field_and_sentence() {
        let cases: [(PeopleError, &str, Option<&str>, &str); 6] = [
            (
                PeopleError::TooLong {
                    field: "why",
                    max: 2000,
                },
                "validation",
                Some("why"),
                "why is at most 2000 characters",
            ),
            (
                PeopleError::Required {
                    field: "why",
                    names: "why or reason".into(),
                },
                "validation",
                Some("why"),
                "why or reason is required",
            ),
            (
                PeopleError::InvalidCode,
                "invalid_code",
                Some("code"),
                "This code is wrong, expired or already used. Ask your person for a fresh code from Connect your agent.",
            ),
            (
                PeopleError::NotYourOwner("human_id"),
                "not_found",
                Some("human_id"),
                "principal_id must be your owner's id. To reach someone else, pass their email.",
            ),
            (
                PeopleError::AgentClaimsSpent { retry_after_s: 9 },
                "rate_limited",
                None,
                "This agent has made 5 claim requests today. Try again later.",
            ),
            (
                PeopleError::PreferencesTooLarge,
                "validation",
                Some("preferences"),
                "preferences is at most 8192 bytes of canonical JSON text",
            ),
        ];
        for (error, code, field, message) in cases {
            let refusal = ToolError::from(error);
            assert_eq!(refusal.code.as_str(), code);
            assert_eq!(refusal.field.as_deref(), field);
            assert_eq!(refusal.message, message);
        }
        let spent = ToolError::from(PeopleError::CardsSpent { retry_after_s: 3 }).to_json();
        assert_eq!(spent["retry_after_s"], 3);
    }

    #[test]
    fn an_internal_failure_keeps_its_cause_and_a_kernel_refusal_passes_through() {
        let store = ToolError::from(PeopleError::Store(DbError::NoRows));
        assert_eq!(store.code.as_str(), "internal");
        let cause = std::error::Error::source(&store).expect("the people error is the cause");
        assert!(
            cause.source().is_some(),
            "the database error stays its source"
        );
        let kernel = ToolError::not_found("agent_id", "no such agent");
        let back = ToolError::from(PeopleError::from(kernel));
        assert_eq!(
            (back.code, back.field.as_deref()),
            (ErrorCode::NotFound, Some("agent_id"))
        );
    }

    #[test]
    fn a_day_wait_rounds_up_to_whole_seconds() {
        assert_eq!(day_wait_s(None, 5), 86_400);
        assert_eq!(day_wait_s(Some(1_000), 86_400_000), 1);
        assert_eq!(day_wait_s(Some(1_500), 86_400_000), 2);
    }
}
