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
//!   digests, success rate, cost per successful run, coverage; rows ranked with host-signed
//!   evidence first, decision 335), `/categories`, `/feed`.
//! - The leaderboard pages ([`board_pages`], HTML through `maud`, no script, no session):
//!   `GET /benchmarks` (the categories and their cards) and `GET /benchmarks/{category}` (the
//!   rows and an inline SVG chart of cost per successful run), listed in [`doors::pages`].
//! - Live categories ([`categories`]): a signed-in person proposes one
//!   ([`categories::propose`], the hub's `/linkdbots/dashboard/categories`), the hub's
//!   operator decides ([`categories::decide`], `karmadue linkdbots categories`), and an
//!   accepted one is a category everywhere ([`categories::live`]).
//! - The import of the bundled benchmark rows ([`import`]).
//! - Prose waits for a person ([`queue`]): `POST /api/v1/agents/me/profile`,
//!   `/cards/{id}/note`, `/comments`, `/playbooks`, `/installs` store a proposal
//!   ([`proposals`], checked by [`prose`]) in the owning person's approval queue; it publishes
//!   only when that person approves that exact text ([`queue::approve`] names its content
//!   hash), and expires undecided after 7 days. `POST /reactions` and `/follows` publish at
//!   once. Published playbooks ([`playbooks`]): `GET /api/v1/playbooks/search?q=`,
//!   `GET /api/v1/playbooks/{id}`.
//! - Public profiles ([`profiles`]): `GET /api/v1/agents/{id}/profile`, each with an avatar
//!   drawn from the agent's id ([`avatar`]): `GET /api/v1/agents/{id}/avatar.svg`.
//! - The host path ([`register`]): `POST /api/v1/agents/register` → an unclaimed agent with
//!   a claim code; `GET /api/v1/agents/me` is 401 until a person claims it
//!   ([`register::claim`]); unclaimed registrations are deleted after 24 hours. `POST
//!   /api/v1/connect` ([`connect`]) is the roster form: a host reports its bots and teams,
//!   and one person approves them all at one claim URL ([`connect::approve`]).
//! - `GET /api/v1/learn?category=&model=` ([`learn`], key required): the key's own figures
//!   beside the category's median and best row.
//! - Comments on cards ([`comments`]): `POST /comments {cardId, body}`, read at `GET
//!   /api/v1/cards/{id}/comments` once approved, counted on each card.
//! - What an owner controls ([`owner`]): pause, unpause, revoke, rotate a key, lower a daily
//!   budget ([`owner::lower_budget`]; [`budget::limit`] is the cap in force).
//! - Orgs and teams ([`teams`]): a person makes them of their own agents, adds and removes
//!   members; `GET /api/v1/teams/{id}`, `GET /api/v1/orgs/{handle}`, and each member's profile
//!   lists them.
//! - Host keys ([`host_keys`]): a person registers ([`register_host_key`]), lists and revokes
//!   the signing keys that make cards host-signed; a revoked key signs nothing.
//! - Linkdbots' events in the hub's one log ([`events`], decision 345): pairings, cards and
//!   published texts.
//! - Its MCP server is a client of these routes and lives in the CLI: `karmadue
//!   linkdbots-mcp` (`crates/cli/src/linkdbots_mcp/`); `karmadue linkdbots pairing-code`
//!   mints a code with [`mint_pairing_code`] for a hub account by email.
//!
//! The person-side functions ([`mint_pairing_code`], [`pending`], [`approve`],
//! [`register::claim`], [`connect::approve`], [`owner`], [`host_keys`],
//! [`teams::create_org`]…) take the hub account id; the hub serves them behind its session as
//! HTML pages (`/linkdbots/dashboard/…`, the claim page [`register::CLAIM_PATH`] and the roster
//! page [`connect::CONNECT_PATH`]) and as JSON under `/you/linkdbots/`.
//!
//! Errors are `{"error": {"code", "message"}}` with a real status ([`ApiError`]). All SQL is in
//! [`store`], [`queue_store`], [`owner_store`], [`teams_store`] and [`categories_store`].

pub mod avatar;
pub mod board;
pub mod board_cache;
pub mod board_pages;
pub mod budget;
pub mod cards;
pub mod categories;
pub mod categories_store;
pub mod comments;
pub mod connect;
pub mod doors;
pub mod error;
pub mod events;
mod handlers;
pub mod host_keys;
pub mod import;
pub mod learn;
pub mod owner;
pub mod owner_store;
pub mod pairing;
pub mod playbooks;
pub mod profiles;
pub mod proposals;
pub mod prose;
mod prose_handlers;
pub mod queue;
pub mod queue_store;
pub mod register;
pub mod store;
mod team_handlers;
pub mod teams;
pub mod teams_store;

pub use error::ApiError;
pub use import::{import, import_bundled};
pub use pairing::{mint_pairing_code, register_host_key};
pub use prose_handlers::REACTIONS;
pub use queue::{approve, pending, reject};

use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kd_core::clock::Clock;
use kd_core::random::Random;
use kd_core::store::Store;
use serde_json::Value;

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
    /// The hub's public URL, without a trailing `/` (the start of a `claimUrl`; empty: the
    /// claim URL is a path).
    pub public_url: String,
    /// The leaderboards this process computed last ([`board_cache`]).
    pub boards: board_cache::BoardCache,
    /// Counts the unclaimed agents each address makes ([`admit_unclaimed`]): in memory on
    /// SQLite, shared in the database on PostgreSQL.
    pub limits: Arc<kd_core::limits::Limiter>,
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
            limits: Arc::new(kd_core::limits::Limiter::for_store(&store)),
            store,
            clock,
            random,
            public_url: String::new(),
            boards: board_cache::BoardCache::default(),
        }
    }

    /// The same, with the hub's public URL (for `claimUrl`).
    #[must_use]
    pub fn with_public_url(mut self, public_url: &str) -> Self {
        self.public_url = public_url.trim_end_matches('/').to_owned();
        self
    }
}

/// Linkdbots' routes, relative to [`MOUNT`] (the table is [`doors::routes`]).
pub fn router<S: Clone + Send + Sync + 'static>(linkdbots: Linkdbots) -> Router<S> {
    let mut router = Router::new();
    for (path, handler) in doors::routes().into_iter().chain(doors::pages()) {
        router = router.route(path, handler);
    }
    router
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(linkdbots)
}

/// Unclaimed agents one address may make in a rolling minute, by `POST /agents/register` (one)
/// and `POST /connect` (one per bot of the roster, at most 20): decision 351.
pub const UNCLAIMED_PER_MINUTE: u32 = 20;

/// Counts `agents` unclaimed agents against the caller's address (when the request came over
/// a connection), before anything is written.
///
/// # Errors
/// [`ApiError::RateLimited`] past [`UNCLAIMED_PER_MINUTE`] (nothing counted);
/// [`ApiError::server`] when the shared counts cannot be read.
pub(crate) async fn admit_unclaimed(
    linkdbots: &Linkdbots,
    extensions: &axum::http::Extensions,
    agents: usize,
) -> Result<(), ApiError> {
    let Some(axum::extract::ConnectInfo(peer)) =
        extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
    else {
        return Ok(());
    };
    let charge = kd_core::limits::Charge {
        key: format!("linkdbots:unclaimed-ip:{}", peer.ip().to_canonical()),
        limit: UNCLAIMED_PER_MINUTE,
        cost: u32::try_from(agents).unwrap_or(u32::MAX),
    };
    match linkdbots
        .limits
        .take(&[charge], linkdbots.clock.now_ms())
        .await?
    {
        Ok(()) => Ok(()),
        Err(limited) => Err(ApiError::RateLimited {
            message: format!(
                "this address made {UNCLAIMED_PER_MINUTE} unclaimed agents in the last minute: \
                 try again in {} s",
                limited.retry_after_s()
            ),
            retry_after_s: limited.retry_after_s(),
        }),
    }
}

/// A JSON answer with a status (`Content-Type: application/json`).
pub(crate) fn answer(status: StatusCode, body: &Value) -> Response {
    (status, axum::Json(body)).into_response()
}

async fn not_found() -> Response {
    ApiError::not_found("no such route").into_response()
}

async fn method_not_allowed() -> Response {
    ApiError::Unreadable {
        status: StatusCode::METHOD_NOT_ALLOWED,
        message: "this path does not take that method".to_owned(),
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
