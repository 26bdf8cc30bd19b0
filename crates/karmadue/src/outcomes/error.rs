//! Outcome reports' refusals (issue 10, "one error enum per area"): each a variant with its
//! sentence, converted into the kernel's [`ToolError`] with the spec code, the field it names
//! and its spec fields (spec "report_outcome", "Errors"). A refusal or failure from the kernel
//! or another area (a store failure, a missing argument) passes through whole, its cause kept
//! as the `source()`.

use kd_kernel::error::{ErrorCode, ToolError};

/// Why `report_outcome` refused (or failed).
#[derive(Debug, thiserror::Error)]
pub enum OutcomeError {
    /// `reason_code` not `[a-z0-9_]{1,40}` (`reason_code`; `validation`).
    #[error("reason_code is up to 40 characters of lowercase letters, digits and _")]
    ReasonCode,
    /// `note` over 500 characters (`note`; `validation`).
    #[error("note is at most 500 characters")]
    NoteTooLong,
    /// `version_used` over 100 characters or not one line (`version_used`; `validation`).
    #[error("version_used is at most 100 characters on one line")]
    VersionUsed,
    /// `receipt_id` is not shaped like one (`receipt_id`; `receipt_invalid`).
    #[error("receipt_id is not a receipt id: it looks like kdr_ and 24 hex characters.")]
    NotAReceiptId,
    /// No receipt has the id (`receipt_id`; `receipt_not_found`).
    #[error(
        "No receipt has this receipt_id. Use the receipt_id from check_before_acting's data.receipt."
    )]
    ReceiptNotFound,
    /// The receipt's signature no longer verifies (`receipt_id`; `receipt_invalid`).
    #[error("This receipt's signature no longer verifies; it cannot be reported on.")]
    ReceiptUnverified,
    /// The receipt names another agent (`receipt_id`; `receipt_mismatch`).
    #[error("This receipt was issued to another agent. Only the agent it names may report on it.")]
    AnotherAgentsReceipt,
    /// The receipt names no agent: the check was anonymous (`receipt_id`; `receipt_mismatch`).
    #[error(
        "This receipt names no agent (the check was anonymous). Sign check_before_acting with x-karmadue-agent to get a receipt you can report on."
    )]
    AnonymousReceipt,
    /// The receipt already has its report, named (`receipt_id`; `already_reported` with
    /// `report_id`).
    #[error("This receipt already has its one report.")]
    AlreadyReported {
        /// The report it has.
        report_id: String,
    },
    /// The receipt is more than 14 days old (`receipt_id`; `receipt_expired` with
    /// `expired_at`, RFC 3339).
    #[error(
        "This receipt is more than 14 days old. Check again with check_before_acting for a new one."
    )]
    ReceiptExpired {
        /// When it expired, RFC 3339 (ms).
        expired_at: String,
    },
    /// The reporter is not a registered agent (`agent_id`; `not_found`).
    #[error("No agent has this agent_id.")]
    UnknownAgent,
    /// Too many reports in a window (`rate_limited` with `retry_after_s`, at least 1, and
    /// `limit`, the limit in words).
    #[error(
        "Too many outcome reports: the limit is {limit}. Try again in {retry_after_s} seconds."
    )]
    TooMany {
        /// The limit in words (`10 reports a minute per agent`, ...).
        limit: &'static str,
        /// Whole seconds until one more fits (the message shows it as computed).
        retry_after_s: i64,
    },
    /// A refusal or failure of the kernel or another area, passed on unchanged (a store
    /// failure is `internal` with its cause).
    #[error(transparent)]
    Kernel(#[from] ToolError),
}

impl From<OutcomeError> for ToolError {
    fn from(error: OutcomeError) -> Self {
        use OutcomeError as E;
        let message = error.to_string();
        let receipt =
            |code: ErrorCode| ToolError::new(code, message.clone()).with_field("receipt_id");
        match error {
            E::ReasonCode => ToolError::validation("reason_code", message),
            E::NoteTooLong => ToolError::validation("note", message),
            E::VersionUsed => ToolError::validation("version_used", message),
            E::NotAReceiptId | E::ReceiptUnverified => receipt(ErrorCode::ReceiptInvalid),
            E::ReceiptNotFound => receipt(ErrorCode::ReceiptNotFound),
            E::AnotherAgentsReceipt | E::AnonymousReceipt => receipt(ErrorCode::ReceiptMismatch),
            E::AlreadyReported { report_id } => {
                receipt(ErrorCode::AlreadyReported).with("report_id", report_id)
            }
            E::ReceiptExpired { expired_at } => {
                receipt(ErrorCode::ReceiptExpired).with("expired_at", expired_at)
            }
            E::UnknownAgent => ToolError::not_found("agent_id", message),
            E::TooMany {
                limit,
                retry_after_s,
            } => ToolError::new(ErrorCode::RateLimited, message)
                .with("retry_after_s", retry_after_s.max(1))
                .with("limit", limit),
            E::Kernel(error) => error,
        }
    }
}

kd_kernel::store_failures_are_internal!(OutcomeError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_carries_its_spec_code_and_field() {
        let cases: [(OutcomeError, &str, Option<&str>); 5] = [
            (OutcomeError::NoteTooLong, "validation", Some("note")),
            (
                OutcomeError::NotAReceiptId,
                "receipt_invalid",
                Some("receipt_id"),
            ),
            (
                OutcomeError::AnonymousReceipt,
                "receipt_mismatch",
                Some("receipt_id"),
            ),
            (OutcomeError::UnknownAgent, "not_found", Some("agent_id")),
            (
                OutcomeError::TooMany {
                    limit: "10 reports a minute per agent",
                    retry_after_s: 0,
                },
                "rate_limited",
                None,
            ),
        ];
        for (error, code, field) in cases {
            let refusal = ToolError::from(error);
            assert_eq!(refusal.code.as_str(), code);
            assert_eq!(refusal.field.as_deref(), field);
        }
        let spent = ToolError::from(OutcomeError::TooMany {
            limit: "10 reports a minute per agent",
            retry_after_s: 0,
        });
        assert!(spent.message.ends_with("Try again in 0 seconds."));
        assert_eq!(spent.to_json()["retry_after_s"], 1);
        let again = ToolError::from(OutcomeError::AlreadyReported {
            report_id: "kdo_1".into(),
        });
        assert_eq!(again.to_json()["report_id"], "kdo_1");
    }

    #[test]
    fn a_kernel_failure_passes_through_with_its_cause() {
        let io = std::io::Error::other("disk gone");
        let refusal = ToolError::from(OutcomeError::from(ToolError::internal_from(io)));
        assert_eq!(refusal.code.as_str(), "internal");
        assert!(refusal.cause_text().contains("disk gone"));
    }
}
