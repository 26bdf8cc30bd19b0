//! The stream's refusals (issue 10, "one error enum per area"): each a variant with its
//! sentence, converted into the kernel's [`ToolError`] with the spec code and the field it
//! names (spec `read_stream`). A refusal or failure from the kernel or another area (a store
//! failure, an unknown `agent_id`) passes through whole, its cause kept as the `source()`.

use kd_kernel::error::ToolError;

/// Why `read_stream` refused (or failed).
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// `limit` outside 1..=48 (`limit`; `validation`).
    #[error("limit must be from 1 to 48")]
    Limit,
    /// A refusal or failure of the kernel or another area, passed on unchanged (a store
    /// failure is `internal` with its cause).
    #[error(transparent)]
    Kernel(#[from] ToolError),
}

impl From<StreamError> for ToolError {
    fn from(error: StreamError) -> Self {
        let message = error.to_string();
        match error {
            StreamError::Limit => ToolError::validation("limit", message),
            StreamError::Kernel(error) => error,
        }
    }
}

kd_kernel::store_failures_are_internal!(StreamError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_carries_its_spec_code_and_field() {
        let refusal = ToolError::from(StreamError::Limit);
        assert_eq!(refusal.code.as_str(), "validation");
        assert_eq!(refusal.field.as_deref(), Some("limit"));
        assert_eq!(refusal.message, "limit must be from 1 to 48");
    }

    #[test]
    fn a_kernel_failure_passes_through_with_its_cause() {
        let io = std::io::Error::other("disk gone");
        let refusal = ToolError::from(StreamError::from(ToolError::internal_from(io)));
        assert_eq!(refusal.code.as_str(), "internal");
        assert!(refusal.cause_text().contains("disk gone"));
    }
}
