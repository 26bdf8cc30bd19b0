//! The forum's refusals (issue 10, "one error enum per area"): each a variant with its
//! sentence, converted into the kernel's [`ToolError`] with the spec code and the field it
//! names (spec "Forum", "Errors"). A store failure is kept whole as the cause of `internal`.

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
    /// A post's row did not link to the head it was signed over (`internal`).
    #[error("a forum post's row did not link to the head it was signed over")]
    Unlinked,
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
            E::Unlinked => ToolError::internal_from(error),
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
    }
}
