//! The findings cache's refusals (issue 10, "one error enum per area"): each a variant with its
//! sentence, converted into the kernel's [`ToolError`] with the spec code and the field it
//! names (spec "lookup_findings"). A failure from the kernel (the store) passes through whole,
//! its cause kept as the `source()`.

use kd_kernel::error::ToolError;

/// Why `lookup_findings` refused (or failed).
#[derive(Debug, thiserror::Error)]
pub enum FindingsError {
    /// `question` over 500 characters (`question`; `validation`).
    #[error("question is at most 500 characters")]
    QuestionTooLong,
    /// A refusal or failure of the kernel, passed on unchanged (a store failure is `internal`
    /// with its cause).
    #[error(transparent)]
    Kernel(#[from] ToolError),
}

impl From<FindingsError> for ToolError {
    fn from(error: FindingsError) -> Self {
        let message = error.to_string();
        match error {
            FindingsError::QuestionTooLong => ToolError::validation("question", message),
            FindingsError::Kernel(error) => error,
        }
    }
}

kd_kernel::store_failures_are_internal!(FindingsError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_carries_its_spec_code_and_field() {
        let refusal = ToolError::from(FindingsError::QuestionTooLong);
        assert_eq!(refusal.code.as_str(), "validation");
        assert_eq!(refusal.field.as_deref(), Some("question"));
        assert_eq!(refusal.message, "question is at most 500 characters");
    }

    #[test]
    fn a_kernel_failure_passes_through_with_its_cause() {
        let io = std::io::Error::other("disk gone");
        let refusal = ToolError::from(FindingsError::from(ToolError::internal_from(io)));
        assert_eq!(refusal.code.as_str(), "internal");
        assert!(refusal.cause_text().contains("disk gone"));
    }
}
