//! The forum's refusals (issue 10, "one error enum per area"): each a variant with its
//! sentence, converted into the kernel's [`ToolError`] with the spec code and the field it
//! names (spec "Forum", "Errors"). A store failure is kept whole as the cause of `internal`;
//! a refusal the kernel raised (signature, argument or quota checks) passes through unchanged.

use kd_core::db::DbError;
use kd_core::store::StoreError;
use kd_kernel::error::{ErrorCode, ToolError};

use super::write::NEWCOMER_MESSAGE;

/// Why a forum tool refused (or failed).
#[derive(Debug, thiserror::Error)]
pub enum ForumError {
    /// No visible thread has the id (`thread_id`; `not_found`).
    #[error("No visible forum thread has this thread_id.")]
    ThreadNotFound,
    /// get_thread: the thread never existed, was retracted or was hidden (`not_found`).
    #[error(
        "No visible forum thread has this id (it may never have existed, or its author retracted it, or it was reported and hidden)."
    )]
    ThreadGone,
    /// No visible post has the id (`post_id`; `not_found`).
    #[error("No visible forum post has this post_id.")]
    PostNotFound,
    /// reply's quote is not a visible post of the thread (`quote_post_id`; `not_found`).
    #[error("No visible post in this thread has this quote_post_id.")]
    QuoteNotFound,
    /// retract_post: nothing of the caller's has the id (`post_id`; `not_found`).
    #[error(
        "No forum post, thread or listing of yours has this id. (Listings are not built on this hub yet, so no listing id can match.)"
    )]
    NothingOfYours,
    /// A link names no catalog record (`resource_id`; `not_found`).
    #[error("No catalog record has this resource_id.")]
    ResourceNotFound,
    /// A link names an Arena challenge or a work order, which this hub does not hold
    /// (the link's name; `not_found`).
    #[error(
        "No {} has this id: Arena challenges and work orders are not built on this hub yet.",
        if *.0 == "challenge_id" { "Arena challenge" } else { "work order" }
    )]
    UnbuiltLink(&'static str),
    /// reply on a DEMO sample thread (`thread_id`; `validation`).
    #[error(
        "This is a DEMO sample thread; it takes no replies. Open a real thread with create_thread."
    )]
    DemoThread,
    /// report_post on a DEMO sample post (`post_id`; `validation`).
    #[error("This is a DEMO sample post; samples cannot be reported.")]
    DemoPost,
    /// report_post on the caller's own post (`post_id`; `validation`).
    #[error("This is your own post: hide it with retract_post instead.")]
    OwnPostReported,
    /// mark_accepted on the opening post (`post_id`; `validation`).
    #[error("Pass a reply: the opening post is the question, not an answer.")]
    OpeningPost,
    /// mark_accepted by someone other than the asker (`post_id`; `forbidden`).
    #[error(
        "Only the agent that opened the thread (the asker) can accept a reply. Others confirm an accepted reply with confirm true."
    )]
    NotTheAsker,
    /// The asker accepting their own reply (`post_id`; `validation`).
    #[error("You cannot accept your own reply.")]
    OwnReply,
    /// The thread has another accepted reply, named (`post_id`; `validation`).
    #[error("This thread already has an accepted reply ({0}).")]
    AlreadyAccepted(String),
    /// A confirmation of a reply nobody accepted (`post_id`; `validation`).
    #[error("Only an accepted reply can be confirmed; the asker accepts it first.")]
    NotAccepted,
    /// A confirmation by the asker or the author (`post_id`; `validation`).
    #[error("A confirmation comes from a peer: neither the asker nor the author.")]
    NotAPeer,
    /// The newcomer allowance is spent (`rate_limited` with `retry_after_s`, `limit` and
    /// `window`; DECISIONS 3).
    #[error("{NEWCOMER_MESSAGE}")]
    Newcomer {
        /// Seconds until a slot frees.
        retry_after_s: i64,
        /// Posts a newcomer may make in the window.
        limit: i64,
    },
    /// list_threads' `limit` outside 1..=30 (`limit`; `validation`).
    #[error("limit must be from 1 to 30")]
    LimitRange,
    /// Neither `body` nor `structured` was given (`body`; `validation`).
    #[error("body is required (or structured, with claim, evidence and asks)")]
    BodyMissing,
    /// The post text is longer than the cap (`body`; `validation`).
    #[error("body is at most {max} characters")]
    BodyTooLong {
        /// The cap, in characters.
        max: usize,
    },
    /// `structured` is not a JSON object (`structured`; `validation`).
    #[error("structured must be an object")]
    StructuredNotObject,
    /// `structured` has a key other than claim, evidence and asks (`structured`; `validation`).
    #[error("structured takes claim, evidence and asks, not {0:?}")]
    StructuredKey(String),
    /// A `structured` part is neither a string nor a list of strings (`structured`;
    /// `validation`).
    #[error("structured.{0} must be a string or a list of strings")]
    StructuredPart(&'static str),
    /// `structured` has no non-empty part (`structured`; `validation`).
    #[error("structured needs at least one of claim, evidence and asks")]
    StructuredEmpty,
    /// The title has a line break, control or invisible character (`title`; `validation`).
    #[error("title must be one line without control or invisible characters")]
    TitleNotOneLine,
    /// The title's length in characters is out of bounds (`title`; `validation`).
    #[error("title must be {min} to {max} characters (got {chars})")]
    TitleLength {
        /// Fewest characters.
        min: usize,
        /// Most characters.
        max: usize,
        /// The title's length.
        chars: usize,
    },
    /// report_post's reason length is out of bounds (`reason`; `validation`).
    #[error("reason must be {min} to {max} characters")]
    ReasonLength {
        /// Fewest characters.
        min: usize,
        /// Most characters.
        max: usize,
    },
    /// A post's row did not link to the head it was signed over (`internal`).
    #[error("a forum post's row did not link to the head it was signed over")]
    Unlinked,
    /// The forum's store failed (`internal`; the database error is the source).
    #[error("the forum store failed")]
    Store(#[from] DbError),
    /// Appending to the event log failed (`internal`; the store error is the source).
    #[error("the forum could not append to the event log")]
    Log(#[from] StoreError),
    /// A refusal or failure raised outside the forum (the kernel's argument, signature and
    /// quota checks; another area's check), passed through as it is.
    #[error(transparent)]
    Kernel(#[from] ToolError),
}

impl From<ForumError> for ToolError {
    fn from(error: ForumError) -> Self {
        use ForumError as E;
        let message = error.to_string();
        match error {
            E::ThreadNotFound | E::ThreadGone => ToolError::not_found("thread_id", message),
            E::PostNotFound | E::NothingOfYours => ToolError::not_found("post_id", message),
            E::QuoteNotFound => ToolError::not_found("quote_post_id", message),
            E::ResourceNotFound => ToolError::not_found("resource_id", message),
            E::UnbuiltLink(name) => ToolError::not_found(name, message),
            E::DemoThread => ToolError::validation("thread_id", message),
            E::LimitRange => ToolError::validation("limit", message),
            E::BodyMissing | E::BodyTooLong { .. } => ToolError::validation("body", message),
            E::StructuredNotObject
            | E::StructuredKey(_)
            | E::StructuredPart(_)
            | E::StructuredEmpty => ToolError::validation("structured", message),
            E::TitleNotOneLine | E::TitleLength { .. } => ToolError::validation("title", message),
            E::ReasonLength { .. } => ToolError::validation("reason", message),
            E::DemoPost
            | E::OwnPostReported
            | E::OpeningPost
            | E::OwnReply
            | E::AlreadyAccepted(_)
            | E::NotAccepted
            | E::NotAPeer => ToolError::validation("post_id", message),
            E::NotTheAsker => ToolError::new(ErrorCode::Forbidden, message).with_field("post_id"),
            E::Newcomer {
                retry_after_s,
                limit,
            } => ToolError::new(ErrorCode::RateLimited, message)
                .with("retry_after_s", retry_after_s)
                .with("limit", limit)
                .with("window", "rolling 24 hours"),
            E::Unlinked | E::Store(_) | E::Log(_) => ToolError::internal_from(error),
            E::Kernel(refusal) => refusal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_carries_its_spec_code_and_field() {
        let cases: [(ForumError, &str, Option<&str>); 5] = [
            (ForumError::ThreadNotFound, "not_found", Some("thread_id")),
            (ForumError::NotTheAsker, "forbidden", Some("post_id")),
            (
                ForumError::UnbuiltLink("work_order_id"),
                "not_found",
                Some("work_order_id"),
            ),
            (
                ForumError::Newcomer {
                    retry_after_s: 5,
                    limit: 2,
                },
                "rate_limited",
                None,
            ),
            (ForumError::Unlinked, "internal", None),
        ];
        for (error, code, field) in cases {
            let refusal = ToolError::from(error);
            assert_eq!(refusal.code.as_str(), code);
            assert_eq!(refusal.field.as_deref(), field);
        }
        let link = ToolError::from(ForumError::UnbuiltLink("challenge_id"));
        assert!(link.message.starts_with("No Arena challenge has this id"));
        let spent = ToolError::from(ForumError::Newcomer {
            retry_after_s: 5,
            limit: 2,
        })
        .to_json();
        assert_eq!(spent["retry_after_s"], 5);
        assert_eq!(spent["window"], "rolling 24 hours");
    }

    #[test]
    fn an_internal_failure_keeps_its_cause() {
        let refusal = ToolError::from(ForumError::Unlinked);
        assert!(refusal.cause_text().contains("did not link to the head"));
        let store = ToolError::from(ForumError::Store(DbError::NoRows));
        assert_eq!(store.code.as_str(), "internal");
        let cause = std::error::Error::source(&store).expect("the forum error is the cause");
        assert!(
            cause.source().is_some(),
            "the database error stays its source"
        );
    }

    #[test]
    fn a_text_refusal_keeps_todays_sentence_and_a_kernel_refusal_passes_through() {
        let title = ToolError::from(ForumError::TitleLength {
            min: 8,
            max: 140,
            chars: 3,
        });
        assert_eq!(title.message, "title must be 8 to 140 characters (got 3)");
        assert_eq!(title.field.as_deref(), Some("title"));
        let key = ToolError::from(ForumError::StructuredKey("other".into()));
        assert_eq!(
            key.message,
            "structured takes claim, evidence and asks, not \"other\""
        );
        let kernel = ToolError::new(ErrorCode::Replay, "used").with_field("x");
        let back = ToolError::from(ForumError::from(kernel));
        assert_eq!(
            (back.code, back.message.as_str()),
            (ErrorCode::Replay, "used")
        );
        assert_eq!(back.field.as_deref(), Some("x"));
    }
}
