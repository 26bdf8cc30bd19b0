//! The catalog's refusals (issue 10, "one error enum per area"): each a variant with its
//! sentence, converted into the kernel's [`ToolError`] with the spec code and the field it
//! names (spec "get_resource", "get_claims", "discover_resources", "register_resource",
//! "report_content", "Errors"). A search index failure is `internal` with the index's error as
//! the cause; a refusal the kernel or another area raised (argument, signature and quota checks,
//! store failures) passes through unchanged.

use kd_kernel::error::{ErrorCode, ToolError};

/// Why a catalog tool refused (or failed).
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// `resource_id` is not a `kd:res:` id (`resource_id`; `validation`).
    #[error("resource_id must be a KarmaDue id such as kd:res:github:owner/repo")]
    ResourceIdShape,
    /// Only a demo record has the id and demo records were not asked for (`resource_id`;
    /// `not_found` with `demo_available` true).
    #[error(
        "Only a demo example has this id. Pass include_demo true to inspect it; demo examples are never evidence."
    )]
    DemoOnly,
    /// No record has the id (the field: `resource_id`, or report_content's
    /// `target.resource_id`; `not_found`).
    #[error("No resource has this id.")]
    NoSuchResource(&'static str),
    /// discover_resources' need is longer than the cap (`need`; `validation`).
    #[error(
        "need is at most {max} characters; this one has {chars}. Say what you need in a sentence."
    )]
    NeedTooLong {
        /// The cap, in characters.
        max: usize,
        /// The need's length.
        chars: usize,
    },
    /// A paging number out of its range (`limit` or `offset`; `validation`).
    #[error("{name} must be an integer from {low} to {high}")]
    OutOfRange {
        /// The argument.
        name: &'static str,
        /// Smallest allowed.
        low: usize,
        /// Largest allowed.
        high: usize,
    },
    /// register_resource's locator is a KarmaDue id (`locator`; `validation`).
    #[error("locator is where the resource lives (a URL or npm:<package>), not a KarmaDue id")]
    LocatorIsId,
    /// A text argument too long or with control characters (the argument; `validation`).
    #[error("{name} is at most {max} characters without control characters")]
    TextBounds {
        /// The argument.
        name: &'static str,
        /// The cap, in characters.
        max: usize,
    },
    /// register_resource without a one-line title (`title`; `validation`).
    #[error("title is required: one line, up to 200 characters")]
    TitleRequired,
    /// register_resource's `type` is not a short code (`type`; `validation`).
    #[error(
        "type is a short code such as mcp_server, package, repo, skill or api (lowercase, digits, _)"
    )]
    TypeShape,
    /// report_content without a target (`target`; `validation`).
    #[error("target is required: an object with resource_id or listing_id")]
    TargetRequired,
    /// report_content's target has another key (`target.<key>`; `validation`).
    #[error("target takes resource_id or listing_id")]
    TargetKey(String),
    /// report_content's target.resource_id is not a `kd:res:` id (`target.resource_id`;
    /// `validation`).
    #[error("target.resource_id must be a KarmaDue id such as kd:res:github:owner/repo")]
    TargetResourceId,
    /// report_content without a reason (`reason`; `validation`).
    #[error("reason is required: why you are reporting it, up to 200 characters")]
    ReasonRequired,
    /// The reporter filed its hourly share of content reports (`rate_limited` with
    /// `retry_after_s` and `limit`).
    #[error("Too many content reports: the limit is 10 an hour per reporter.")]
    ReportsSpent {
        /// Seconds until a report slot frees (at least 1).
        retry_after_s: i64,
    },
    /// The search index failed (`internal`; the index's error is the source).
    #[error("the catalog's search index failed")]
    Search(#[source] tantivy::TantivyError),
    /// A refusal or failure raised outside the catalog (the kernel's argument, signature and
    /// quota checks; the store; another area's check), passed through as it is.
    #[error(transparent)]
    Kernel(#[from] ToolError),
}

impl From<CatalogError> for ToolError {
    fn from(error: CatalogError) -> Self {
        use CatalogError as E;
        let message = error.to_string();
        match error {
            E::ResourceIdShape => ToolError::validation("resource_id", message),
            E::DemoOnly => {
                ToolError::not_found("resource_id", message).with("demo_available", true)
            }
            E::NoSuchResource(field) => ToolError::not_found(field, message),
            E::NeedTooLong { .. } => ToolError::validation("need", message),
            E::OutOfRange { name, .. } | E::TextBounds { name, .. } => {
                ToolError::validation(name, message)
            }
            E::LocatorIsId => ToolError::validation("locator", message),
            E::TitleRequired => ToolError::validation("title", message),
            E::TypeShape => ToolError::validation("type", message),
            E::TargetRequired => ToolError::validation("target", message),
            E::TargetKey(key) => ToolError::validation(format!("target.{key}"), message),
            E::TargetResourceId => ToolError::validation("target.resource_id", message),
            E::ReasonRequired => ToolError::validation("reason", message),
            E::ReportsSpent { retry_after_s } => ToolError::new(ErrorCode::RateLimited, message)
                .with("retry_after_s", retry_after_s)
                .with(
                    "limit",
                    "10 content reports an hour per agent (or per address when unsigned)",
                ),
            E::Search(_) => ToolError::internal_from(error),
            E::Kernel(refusal) => refusal,
        }
    }
}

kd_kernel::store_failures_are_internal!(CatalogError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_carries_its_spec_code_field_and_sentence() {
        let demo = ToolError::from(CatalogError::DemoOnly);
        assert_eq!(demo.code.as_str(), "not_found");
        assert_eq!(demo.field.as_deref(), Some("resource_id"));
        assert_eq!(demo.to_json()["demo_available"], true);
        let key = ToolError::from(CatalogError::TargetKey("x".into()));
        assert_eq!(key.field.as_deref(), Some("target.x"));
        let range = ToolError::from(CatalogError::OutOfRange {
            name: "limit",
            low: 1,
            high: 50,
        });
        assert_eq!(range.message, "limit must be an integer from 1 to 50");
        let spent = ToolError::from(CatalogError::ReportsSpent { retry_after_s: 7 }).to_json();
        assert_eq!(spent["code"], "rate_limited");
        assert_eq!(spent["retry_after_s"], 7);
    }

    #[test]
    fn an_index_failure_keeps_its_cause() {
        let failure = ToolError::from(CatalogError::Search(tantivy::TantivyError::InternalError(
            "broken segment".into(),
        )));
        assert_eq!(failure.code.as_str(), "internal");
        assert!(failure.cause_text().contains("broken segment"));
        let cause = std::error::Error::source(&failure).expect("the catalog error is the cause");
        assert!(cause.source().is_some(), "the index error stays its source");
    }
}
