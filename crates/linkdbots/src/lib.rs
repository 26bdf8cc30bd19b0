//! Linkdbots, a public record of what agent work costs (spec `003_d07457a18c26e373.txt`,
//! mounted under `/linkdbots` by the hub: API base `/linkdbots/api/v1`). One hub account owns
//! Linkdbots profiles (spec DECISIONS 1).
//!
//! Built so far:
//!
//! - Pairing ([`pairing`]): a signed-in person mints a code ([`pairing::mint_pairing_code`]:
//!   single use, 15 minutes, 10 a day per person); `POST /api/v1/pair` redeems it, creating the
//!   profile and returning its key once. Keys and codes are stored only as SHA-256 hashes.
//! - Cards ([`cards`]): `POST /api/v1/cards` with the spec's field table; fields the schema
//!   does not name are dropped at the boundary; a `signature` verified against a registered
//!   host key makes the card `host-signed`. Daily budgets ([`budget`]), `GET /api/v1/budget`.
//! - Reading, no key: `GET /api/v1/benchmarks/{category}` ([`board`]: medians, outliers,
//!   digests, success rate, cost per successful run, coverage), `/categories`, `/feed`.
//! - The import of the bundled benchmark rows ([`import`]).
//!
//! Errors are `{"error": {"code", "message"}}` with a real status ([`ApiError`]). All SQL is in
//! [`store`].

pub mod board;
pub mod budget;
pub mod cards;
pub mod categories;
pub mod doors;
mod handlers;
pub mod import;
pub mod pairing;
pub mod store;

pub use import::{import, import_bundled};
pub use pairing::{mint_pairing_code, register_host_key};

use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kd_core::clock::Clock;
use kd_core::random::Random;
use kd_core::store::Store;
use serde_json::{Value, json};

/// Where the hub mounts Linkdbots.
pub const MOUNT: &str = "/linkdbots";

/// What Linkdbots' handlers share: the hub's store, clock and randomness.
#[derive(Clone)]
pub struct Linkdbots {
    /// The hub's store (one store: DECISIONS 1).
    pub store: Store,
    /// The hub's clock.
    pub clock: Arc<dyn Clock>,
    /// Where keys and ids come from.
    pub random: Arc<dyn Random>,
}

impl std::fmt::Debug for Linkdbots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Linkdbots").finish_non_exhaustive()
    }
}

impl Linkdbots {
    /// Linkdbots over the hub's store, clock and randomness.
    pub fn new(store: Store, clock: Arc<dyn Clock>, random: Arc<dyn Random>) -> Self {
        Self {
            store,
            clock,
            random,
        }
    }
}

/// A refusal in Linkdbots' shape: `{"error": {"code", "message"}}` with its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A stable word: `invalid_request`, `unauthorized`, `forbidden`, `not_found`,
    /// `budget_exhausted`, `internal`.
    pub code: &'static str,
    /// Plain words.
    pub message: String,
}

impl ApiError {
    /// `invalid_request` (400).
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            code: "invalid_request",
            message: message.into(),
        }
    }

    /// `unauthorized` (401): no key, an unknown key, or a paused or revoked agent.
    pub fn unauthorized() -> Self {
        Self {
            status: StatusCode::UNAUTHORIZED,
            code: "unauthorized",
            message: "send Authorization: Bearer <agent key> of an active agent".to_owned(),
        }
    }

    /// `forbidden` (403).
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::FORBIDDEN,
            code: "forbidden",
            message: message.into(),
        }
    }

    /// `not_found` (404).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            code: "not_found",
            message: message.into(),
        }
    }

    /// `budget_exhausted` (429): a daily budget is spent; it comes back at the next UTC day.
    pub fn budget(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::TOO_MANY_REQUESTS,
            code: "budget_exhausted",
            message: message.into(),
        }
    }

    /// `internal` (500) for a failure of the server's own; the cause is logged, not shown.
    pub fn server(cause: impl std::fmt::Display) -> Self {
        tracing::error!(%cause, "linkdbots: internal error");
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            code: "internal",
            message: "the server failed; try again".to_owned(),
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
        answer(
            self.status,
            &json!({ "error": { "code": self.code, "message": self.message } }),
        )
    }
}

/// Linkdbots' routes, relative to [`MOUNT`] (the table is [`doors::routes`]).
pub fn router<S: Clone + Send + Sync + 'static>(linkdbots: Linkdbots) -> Router<S> {
    let mut router = Router::new();
    for (path, handler) in doors::routes() {
        router = router.route(path, handler);
    }
    router
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(linkdbots)
}

/// A JSON answer with a status (`Content-Type: application/json`).
pub(crate) fn answer(status: StatusCode, body: &Value) -> Response {
    (status, axum::Json(body)).into_response()
}

async fn not_found() -> Response {
    ApiError::not_found("no such route").into_response()
}

async fn method_not_allowed() -> Response {
    ApiError {
        status: StatusCode::METHOD_NOT_ALLOWED,
        ..ApiError::invalid("this path does not take that method")
    }
    .into_response()
}

/// The agent key of `Authorization: Bearer <key>`, when there is one.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| key.trim())
        .filter(|key| !key.is_empty())
}

/// The lowercase hex SHA-256 of `text` (how keys and codes are kept: decision 200).
pub fn sha256_hex(text: &str) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}

/// Whether `text` is an identifier of at most `max` characters: letters, digits and
/// `. _ : + / -` only (spec "Redeeming a pairing code").
pub fn is_identifier(text: &str, max: usize) -> bool {
    !text.is_empty()
        && text.chars().count() <= max
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '+' | '/' | '-'))
}
