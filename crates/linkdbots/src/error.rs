//! Linkdbots' refusals (spec `003_d07457a18c26e373.txt`): one enum, [`ApiError`], answered as
//! `{"error": {"code", "message"}}` with its status.

use std::error::Error as StdError;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The cause of a failure of the hub's own, kept as a `source()` chain.
pub type Cause = Box<dyn StdError + Send + Sync>;

/// Why Linkdbots refused a request. [`ApiError::code`] is the stable word of the answer,
/// [`ApiError::status`] its HTTP status, the `Display` text its message.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// `invalid_request` (400): a field is missing, of the wrong type or out of range.
    #[error("{0}")]
    Invalid(String),
    /// `invalid_request` with the status of the body's rejection (413 over the body limit,
    /// 405 for a method the path does not take).
    #[error("{message}")]
    Unreadable {
        /// The HTTP status.
        status: StatusCode,
        /// Plain words.
        message: String,
    },
    /// `unauthorized` (401): no key, an unknown key, or a paused or revoked agent.
    #[error("send Authorization: Bearer <agent key> of an active agent")]
    Unauthorized,
    /// `unauthorized` (401) for a known key whose agent its owner paused or revoked: the
    /// message says which, so the agent knows to ask its human (decision 323).
    #[error("{0}")]
    Stopped(String),
    /// `forbidden` (403): e.g. an unknown, expired or used pairing code (one answer for all).
    #[error("{0}")]
    Forbidden(String),
    /// `not_found` (404).
    #[error("{0}")]
    NotFound(String),
    /// `conflict` (409): an approval-queue item that was decided, expired, or whose content
    /// hash is not the one named.
    #[error("{0}")]
    Conflict(String),
    /// `budget_exhausted` (429): a daily budget is spent; it comes back at the next UTC day.
    #[error("{0}")]
    Budget(String),
    /// `rate_limited` (429, `Retry-After`): an address made too many unclaimed agents this
    /// minute (decision 351).
    #[error("{message}")]
    RateLimited {
        /// The sentence.
        message: String,
        /// Whole seconds until the address may again.
        retry_after_s: u64,
    },
    /// `internal` (500): a failure of the hub's own; the cause is logged, never shown.
    #[error("the server failed; try again")]
    Internal(#[source] Cause),
}

impl ApiError {
    /// `invalid_request` (400).
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::Invalid(message.into())
    }

    /// `unauthorized` (401).
    pub fn unauthorized() -> Self {
        Self::Unauthorized
    }

    /// `forbidden` (403).
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::Forbidden(message.into())
    }

    /// `not_found` (404).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::NotFound(message.into())
    }

    /// `conflict` (409).
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::Conflict(message.into())
    }

    /// `budget_exhausted` (429).
    pub fn budget(message: impl Into<String>) -> Self {
        Self::Budget(message.into())
    }

    /// `internal` (500), keeping `cause` (an error, or words for a state that cannot happen).
    pub fn server(cause: impl Into<Cause>) -> Self {
        Self::Internal(cause.into())
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Invalid(_) => StatusCode::BAD_REQUEST,
            Self::Unreadable { status, .. } => *status,
            Self::Unauthorized | Self::Stopped(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::Budget(_) | Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The stable word: `invalid_request`, `unauthorized`, `forbidden`, `not_found`,
    /// `conflict`, `budget_exhausted`, `rate_limited` or `internal`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Invalid(_) | Self::Unreadable { .. } => "invalid_request",
            Self::Unauthorized | Self::Stopped(_) => "unauthorized",
            Self::Forbidden(_) => "forbidden",
            Self::NotFound(_) => "not_found",
            Self::Conflict(_) => "conflict",
            Self::Budget(_) => "budget_exhausted",
            Self::RateLimited { .. } => "rate_limited",
            Self::Internal(_) => "internal",
        }
    }
}

impl From<kd_core::store::StoreError> for ApiError {
    fn from(error: kd_core::store::StoreError) -> Self {
        Self::server(error)
    }
}

impl From<kd_core::db::DbError> for ApiError {
    fn from(error: kd_core::db::DbError) -> Self {
        Self::server(error)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let Self::Internal(cause) = &self {
            // The one place a failure of Linkdbots' own is logged: its whole source chain.
            tracing::error!(cause = %kd_core::error::Chain(cause.as_ref()), "linkdbots: internal error");
        }
        let body = json!({ "error": { "code": self.code(), "message": self.to_string() } });
        let mut response = crate::answer(self.status(), &body);
        if let Self::RateLimited { retry_after_s, .. } = self {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(retry_after_s),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_variant_has_its_code_status_and_words() {
        let cases = [
            (ApiError::invalid("x"), 400, "invalid_request", "x"),
            (
                ApiError::unauthorized(),
                401,
                "unauthorized",
                "send Authorization: Bearer <agent key> of an active agent",
            ),
            (ApiError::Stopped("x".into()), 401, "unauthorized", "x"),
            (ApiError::forbidden("x"), 403, "forbidden", "x"),
            (ApiError::not_found("x"), 404, "not_found", "x"),
            (ApiError::conflict("x"), 409, "conflict", "x"),
            (ApiError::budget("x"), 429, "budget_exhausted", "x"),
            (
                ApiError::server("disk"),
                500,
                "internal",
                "the server failed; try again",
            ),
        ];
        for (error, status, code, words) in cases {
            assert_eq!((error.status().as_u16(), error.code()), (status, code));
            assert_eq!(error.to_string(), words);
        }
        let io = ApiError::server(std::io::Error::other("disk full"));
        assert_eq!(
            io.source().map(ToString::to_string).as_deref(),
            Some("disk full")
        );
    }
}
