//! Jobs' refusals (issue 10, "one error enum per area"): each refusal a variant with its
//! sentence, converted into the kernel's [`ToolError`] with the spec code, the field it names
//! and its fields (spec "request_verification", "get_job", "cancel_job", "open_dispute";
//! docs/decisions.md 460–469). A store failure is `internal` with the database error as the
//! cause; a refusal the kernel or another area raised passes through unchanged.

use kd_core::db::DbError;
use kd_kernel::error::{ErrorCode, ToolError};

/// Why a jobs tool refused (or failed).
#[derive(Debug, thiserror::Error)]
pub enum JobsError {
    /// No job has the id (`job_id`; `not_found`).
    #[error("No job has this job_id.")]
    NoSuchJob,
    /// Neither a resource nor a title names what to check (`title`; `validation`).
    #[error("Name what to check: resource_id, or a title.")]
    NothingToCheck,
    /// A text argument longer than its cap (`validation`).
    #[error("{field} is at most {max} characters")]
    TooLong {
        /// The argument.
        field: &'static str,
        /// The cap, in characters.
        max: usize,
    },
    /// A required text argument missing (`validation`).
    #[error("{0} is required")]
    Required(&'static str),
    /// `method` is not in the price table (`method`; `validation`).
    #[error("method must be one of: human-check@1, license-review@1, mcp-conformance@2")]
    MethodChoice,
    /// `scope` is not public or private (`scope`; `validation`).
    #[error("scope must be one of: public, private")]
    ScopeChoice,
    /// The quote is over the caller's spend cap (`spend_cap`, field `commit`).
    #[error("{message}")]
    SpendCap {
        /// The sentence.
        message: String,
        /// The price, USD cents.
        price_usd_cents: i64,
        /// The cap per action, USD.
        spend_cap_usd_per_action: i64,
        /// The cap per day, USD.
        spend_cap_usd_per_day: i64,
        /// What is left of today's cap, USD cents.
        remaining_today_usd_cents: i64,
    },
    /// The requester has [`super::MAX_OPEN_JOBS`] open jobs (`commit`; `validation`).
    #[error(
        "You have {0} open jobs, the most an agent may have: cancel one (cancel_job) or wait until one is taken."
    )]
    TooManyOpen(i64),
    /// Someone other than the requester asked about a job (`forbidden`, reason
    /// `not_requester`).
    #[error("Only the agent that requested this job can read or cancel it.")]
    NotRequester,
    /// The job is not open (`job_id`; `validation`).
    #[error("This job is {0}; only an open job can be {1}.")]
    NotOpen(String, &'static str),
    /// A person who owns the requester taking its job (`forbidden`, reason `own_job`).
    #[error("You own the agent that requested this job: another person must take it.")]
    OwnJob,
    /// A result from someone other than the person who took the job (`forbidden`, reason
    /// `not_taker`).
    #[error("Only the person who took this job can submit its result.")]
    NotTaker,
    /// The job is not taken (`job_id`; `validation`).
    #[error("This job is {0}; only a job you took can be completed.")]
    NotTaken(String),
    /// `result` is not one of [`super::RESULTS`] (`result`; `validation`).
    #[error("result must be one of: passed, failed, inconclusive")]
    ResultChoice,
    /// `subject_type` is not one of the dispute subjects (`subject_type`; `validation`).
    #[error(
        "subject_type must be one of: job, resource, agent, forum_thread, forum_post, listing, proposal, handoff"
    )]
    SubjectTypeChoice,
    /// The dispute's subject does not exist (`subject_id`; `not_found`).
    #[error("No {0} has this subject_id.")]
    NoSuchSubject(&'static str),
    /// The jobs store failed (`internal`; the database error is the source).
    #[error("the jobs store failed")]
    Store(#[from] DbError),
    /// A refusal or failure raised outside jobs (the kernel's checks; another area's),
    /// passed through as it is.
    #[error(transparent)]
    Kernel(#[from] ToolError),
}

/// A `forbidden` refusal about a job, with its `reason`.
fn forbidden(reason: &str, message: String) -> ToolError {
    ToolError::new(ErrorCode::Forbidden, message)
        .with_field("job_id")
        .with("reason", reason)
}

impl From<JobsError> for ToolError {
    fn from(error: JobsError) -> Self {
        use JobsError as E;
        let message = error.to_string();
        match error {
            E::NoSuchJob => ToolError::not_found("job_id", message),
            E::NothingToCheck => ToolError::validation("title", message),
            E::TooLong { field, max } => ToolError::validation(field, message).with("max", max),
            E::Required(field) => ToolError::validation(field, message),
            E::MethodChoice => ToolError::validation("method", message),
            E::ScopeChoice => ToolError::validation("scope", message),
            E::SpendCap {
                price_usd_cents,
                spend_cap_usd_per_action,
                spend_cap_usd_per_day,
                remaining_today_usd_cents,
                ..
            } => ToolError::new(ErrorCode::SpendCap, message)
                .with_field("commit")
                .with("price_usd_cents", price_usd_cents)
                .with("spend_cap_usd_per_action", spend_cap_usd_per_action)
                .with("spend_cap_usd_per_day", spend_cap_usd_per_day)
                .with("remaining_today_usd_cents", remaining_today_usd_cents),
            E::TooManyOpen(max) => ToolError::validation("commit", message).with("max", max),
            E::NotRequester => forbidden("not_requester", message),
            E::OwnJob => forbidden("own_job", message),
            E::NotTaker => forbidden("not_taker", message),
            E::NotOpen(..) | E::NotTaken(_) => ToolError::validation("job_id", message),
            E::ResultChoice => ToolError::validation("result", message),
            E::SubjectTypeChoice => ToolError::validation("subject_type", message),
            E::NoSuchSubject(_) => ToolError::not_found("subject_id", message),
            E::Store(_) => ToolError::internal_from(error),
            E::Kernel(refusal) => refusal,
        }
    }
}

kd_kernel::store_failures_are_internal!(log JobsError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_carries_its_spec_code_field_and_fields() {
        let capped = ToolError::from(JobsError::SpendCap {
            message: "over".into(),
            price_usd_cents: 500,
            spend_cap_usd_per_action: 0,
            spend_cap_usd_per_day: 0,
            remaining_today_usd_cents: 0,
        })
        .to_json();
        assert_eq!(capped["code"], "spend_cap");
        assert_eq!(capped["field"], "commit");
        assert_eq!(capped["price_usd_cents"], 500);
        let theirs = ToolError::from(JobsError::NotRequester);
        assert_eq!(theirs.code.as_str(), "forbidden");
        assert_eq!(theirs.extra["reason"], "not_requester");
        let closed = ToolError::from(JobsError::NotOpen("done".into(), "cancelled"));
        assert_eq!(closed.field.as_deref(), Some("job_id"));
        assert_eq!(
            ToolError::from(JobsError::NoSuchSubject("job"))
                .code
                .as_str(),
            "not_found"
        );
        let failure = ToolError::from(JobsError::Store(DbError::NoRows));
        assert_eq!(failure.code.as_str(), "internal");
    }
}
