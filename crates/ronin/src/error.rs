//! Ronin's refusals (spec `004_c46ac54715cc7898.txt`, section 9): one enum, [`RoninError`],
//! whose variants are the spec's prefixes, and [`Refusal`], the error as answered:
//! `{"ok":false,"error":"<prefix>: <message>"}` plus `index` for an event of a batch.

use std::error::Error as StdError;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The cause of a failure of the hub's own, kept as a `source()` chain.
pub type Cause = Box<dyn StdError + Send + Sync>;

/// Why Ronin refused a request: the variant is the prefix of the answer's `error` and decides
/// the HTTP status; the message is plain words for the caller.
#[derive(Debug, thiserror::Error)]
pub enum RoninError {
    /// `invalid:` (400): the request or event breaks a rule of the spec.
    #[error("invalid: {0}")]
    Invalid(String),
    /// `invalid:` with the status of the body's rejection (413 over the body limit, 405 for a
    /// method the path does not take, 400 for an unreadable body).
    #[error("invalid: {message}")]
    Unreadable {
        /// The HTTP status.
        status: StatusCode,
        /// Plain words.
        message: String,
    },
    /// `unauthorized:` (401): NIP-98 auth missing or wrong.
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    /// `duplicate:` (409): the hub has this event, or its "one X per Y" slot is taken.
    #[error("duplicate: {0}")]
    Duplicate(String),
    /// `restricted:` (403): the signer may not write this (revoked or retired key, operator only).
    #[error("restricted: {0}")]
    Restricted(String),
    /// `rate-limited:` (429): over the per-key or per-address write limit.
    #[error("rate-limited: {0}")]
    RateLimited(String),
    /// `error: not found` (404).
    #[error("error: not found")]
    NotFound,
    /// `error:` (500): a failure of the hub's own; the cause is logged, never shown.
    #[error("error: {message}")]
    Internal {
        /// What the caller is told.
        message: &'static str,
        /// What failed.
        #[source]
        cause: Cause,
    },
}

impl RoninError {
    /// The HTTP status of the refusal.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Invalid(_) => StatusCode::BAD_REQUEST,
            Self::Unreadable { status, .. } => *status,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Duplicate(_) => StatusCode::CONFLICT,
            Self::Restricted(_) => StatusCode::FORBIDDEN,
            Self::RateLimited(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Internal { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// A refusal as Ronin answers it: the error, and the failing event's position in a batch.
#[derive(Debug)]
pub struct Refusal {
    /// What was refused, and why.
    pub error: RoninError,
    /// The failing event's position in a batch (`None` for one event or a plain request).
    pub index: Option<usize>,
}

impl From<RoninError> for Refusal {
    fn from(error: RoninError) -> Self {
        Self { error, index: None }
    }
}

impl Refusal {
    /// `invalid:` (400).
    pub fn invalid(message: impl Into<String>) -> Self {
        RoninError::Invalid(message.into()).into()
    }

    /// `invalid:` with another status (a body's rejection, a method the path does not take).
    pub fn unreadable(status: StatusCode, message: impl Into<String>) -> Self {
        RoninError::Unreadable {
            status,
            message: message.into(),
        }
        .into()
    }

    /// `unauthorized:` (401).
    pub fn unauthorized(message: impl Into<String>) -> Self {
        RoninError::Unauthorized(message.into()).into()
    }

    /// `duplicate:` (409).
    pub fn duplicate(message: impl Into<String>) -> Self {
        RoninError::Duplicate(message.into()).into()
    }

    /// `restricted:` (403).
    pub fn restricted(message: impl Into<String>) -> Self {
        RoninError::Restricted(message.into()).into()
    }

    /// `rate-limited:` (429).
    pub fn rate_limited(message: impl Into<String>) -> Self {
        RoninError::RateLimited(message.into()).into()
    }

    /// `error: not found` (404).
    pub fn not_found() -> Self {
        RoninError::NotFound.into()
    }

    /// `error: the server failed; try again` (500), keeping `cause` (an error, or words for
    /// a state that cannot happen) as the source.
    pub fn server(cause: impl Into<Cause>) -> Self {
        Self::internal("the server failed; try again", cause)
    }

    /// `error: <message>` (500), keeping `cause` as the source.
    pub fn internal(message: &'static str, cause: impl Into<Cause>) -> Self {
        RoninError::Internal {
            message,
            cause: cause.into(),
        }
        .into()
    }

    /// The same refusal, naming the failing event of a batch.
    #[must_use]
    pub fn at(mut self, index: usize) -> Self {
        self.index = Some(index);
        self
    }

    /// The same refusal without a batch position (the answer to a single event).
    #[must_use]
    pub fn alone(mut self) -> Self {
        self.index = None;
        self
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        if let RoninError::Internal { cause, .. } = &self.error {
            // The one place a failure of Ronin's own is logged: its whole source chain.
            tracing::error!(cause = %kd_core::error::Chain(cause.as_ref()), "ronin: internal error");
        }
        let mut body = json!({ "ok": false, "error": self.error.to_string() });
        if let Some(index) = self.index {
            body["index"] = json!(index);
        }
        crate::answer(self.error.status(), &body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_prefix_has_its_status_and_words() {
        let cases = [
            (Refusal::invalid("x"), 400, "invalid: x"),
            (
                Refusal::unreadable(StatusCode::PAYLOAD_TOO_LARGE, "big"),
                413,
                "invalid: big",
            ),
            (Refusal::unauthorized("x"), 401, "unauthorized: x"),
            (Refusal::duplicate("x"), 409, "duplicate: x"),
            (Refusal::restricted("x"), 403, "restricted: x"),
            (Refusal::rate_limited("x"), 429, "rate-limited: x"),
            (Refusal::not_found(), 404, "error: not found"),
            (
                Refusal::server("disk"),
                500,
                "error: the server failed; try again",
            ),
        ];
        for (refusal, status, words) in cases {
            assert_eq!(refusal.error.status().as_u16(), status, "{words}");
            assert_eq!(refusal.error.to_string(), words);
        }
    }

    #[test]
    fn a_server_failure_keeps_its_cause_as_the_source() {
        let io = std::io::Error::other("disk full");
        let refusal = Refusal::server(io);
        let source = refusal.error.source().map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("disk full"));
    }
}
