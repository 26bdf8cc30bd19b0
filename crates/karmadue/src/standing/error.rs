//! Standing's refusals (issue 10, "one error enum per area"): each a variant with its
//! sentence, converted into the kernel's [`ToolError`] with the spec code, the field it names
//! and its spec fields (spec "Connector limits", "Live permissions", `get_standing`). A refusal
//! or failure from the kernel or another area (a store failure, an unknown agent) passes
//! through whole, its cause kept as the `source()`.

use kd_kernel::error::{ErrorCode, ToolError};
use serde_json::Value;

use super::quota::Quota;

/// Why a standing check or `get_standing` refused (or failed).
#[derive(Debug, thiserror::Error)]
pub enum StandingError {
    /// get_standing without a subject and without a signed agent (`subject_id`;
    /// `validation`).
    #[error("subject_id is required (or sign the read as the agent with x-karmadue-agent)")]
    SubjectRequired,
    /// get_standing named a person (`kdh_`) (the name sent; `validation`).
    #[error("Standing is for agents, operators and providers, never a person.")]
    PersonNotAgent(&'static str),
    /// A gated tool called without its stamp or capability (`stamp_required` with
    /// `missing_stamp`, `required_tier` and `how_to_get`). Nothing is recorded.
    #[error(
        "{tool} needs the {missing_stamp} {} ({required_tier} tier). Nothing was recorded.",
        if .missing_stamp == super::stamps::PUBLISH_ASK { "capability" } else { "stamp" }
    )]
    StampRequired {
        /// The tool called.
        tool: String,
        /// The stamp (or capability) it needs.
        missing_stamp: String,
        /// The tier that stamp brings.
        required_tier: String,
        /// The exact steps, in order.
        how_to_get: Vec<String>,
    },
    /// The owner's daily actions are used up (`rate_limited` with `retry_after_s` and
    /// `quota`).
    #[error(
        "This agent used its {} actions of the last 24 hours (its owner's limit). Try again in {retry_after_s} seconds, or ask your person to raise the limit.",
        .quota.actions_per_day
    )]
    QuotaSpent {
        /// The agent's quota now.
        quota: Quota,
        /// Seconds until one action frees up (at least 1).
        retry_after_s: i64,
    },
    /// A refusal or failure of the kernel or another area, passed on unchanged (a store
    /// failure is `internal` with its cause).
    #[error(transparent)]
    Kernel(#[from] ToolError),
}

impl From<StandingError> for ToolError {
    fn from(error: StandingError) -> Self {
        use StandingError as E;
        let message = error.to_string();
        match error {
            E::SubjectRequired => ToolError::validation("subject_id", message),
            E::PersonNotAgent(field) => ToolError::validation(field, message),
            E::StampRequired {
                missing_stamp,
                required_tier,
                how_to_get,
                ..
            } => ToolError::new(ErrorCode::StampRequired, message)
                .with("missing_stamp", missing_stamp)
                .with("required_tier", required_tier)
                .with(
                    "how_to_get",
                    Value::from(how_to_get.into_iter().map(Value::from).collect::<Vec<_>>()),
                ),
            E::QuotaSpent {
                quota,
                retry_after_s,
            } => ToolError::new(ErrorCode::RateLimited, message)
                .with("retry_after_s", retry_after_s)
                .with("quota", quota.to_json()),
            E::Kernel(error) => error,
        }
    }
}

kd_kernel::store_failures_are_internal!(StandingError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_carries_its_spec_code_and_field() {
        let refusal = ToolError::from(StandingError::PersonNotAgent("agent_id"));
        assert_eq!(refusal.code.as_str(), "validation");
        assert_eq!(refusal.field.as_deref(), Some("agent_id"));
        let gated = ToolError::from(StandingError::StampRequired {
            tool: "publish_ask".into(),
            missing_stamp: super::super::stamps::PUBLISH_ASK.into(),
            required_tier: "admitted".into(),
            how_to_get: vec!["pass admission".into()],
        });
        assert_eq!(gated.code.as_str(), "stamp_required");
        assert!(gated.message.contains("capability (admitted tier)"));
        assert_eq!(gated.to_json()["how_to_get"][0], "pass admission");
        let spent = ToolError::from(StandingError::QuotaSpent {
            quota: Quota {
                actions_per_day: 2,
                used_last_24h: 2,
                oldest_ms: None,
            },
            retry_after_s: 7,
        });
        assert_eq!(spent.code.as_str(), "rate_limited");
        assert!(spent.message.starts_with("This agent used its 2 actions"));
        assert_eq!(spent.to_json()["quota"]["remaining"], 0);
    }

    #[test]
    fn a_kernel_failure_passes_through_with_its_cause() {
        let io = std::io::Error::other("disk gone");
        let refusal = ToolError::from(StandingError::from(ToolError::internal_from(io)));
        assert_eq!(refusal.code.as_str(), "internal");
        assert!(refusal.cause_text().contains("disk gone"));
    }
}
