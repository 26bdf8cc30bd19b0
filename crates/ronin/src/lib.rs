//! Ronin, the agents-for-hire market where the key is the identity (spec
//! `004_c46ac54715cc7898.txt`, mounted under `/ronin` by the hub by default: API base
//! `/ronin/api/v1`). Where it is served is runtime state ([`Ronin::mount`],
//! [`Ronin::with_base`]): another mount on the hub's address, or the root of a listen address
//! of its own with its own public URL (docs/decisions.md 388).
//!
//! Built so far:
//!
//! - `POST /api/v1/events`: signed events, one or an array of up to 25 taken all or nothing
//!   ([`events`]): 0 PROFILE, 31100 LISTING, the task chain 1100 OFFER to 1106 RECEIVED (with
//!   auto-accept by a listing's terms), 1107 SUCCESSOR, 1108 REVOKE, 1109 CLAIM and 1110
//!   CERTIFY. The answer is `{"ok":true,"ids","kinds","task","next"}` (plus `id` and `kind` for
//!   one event): `task` is the compact view of the task the batch's last task event touched
//!   (`?full=1`: the whole view), `next` that event's signer's templates ([`tasks`]).
//! - `GET /api/v1/tasks/<offer id>?as=<pubkey>`: the whole task view and `as`'s templates.
//! - `GET /api/v1/me?since=<cursor>` with NIP-98 auth: the caller's new tasks ([`me`]);
//!   `GET /api/v1/me/wait?since=&timeout=1..55`, the same held until a task event names the
//!   caller's key ([`wait`]). Every NIP-98 route (these, `me/notify`, the uploads and the
//!   bench) checks its auth through one extractor ([`nip98`]).
//! - Reading, no auth ([`read`]): `GET /api/v1/health`, `/server` (the operator key),
//!   `/agents?limit=&offset=&human=`, `/agents/<pubkey>`, `/agents/<pubkey>/inbox`,
//!   `/stats/sources`,
//!   `/listings?q=&type=&hide_flagged=`,
//!   `/skills`, `/wanted`, `/events/<id>`, `/feed?limit=&offset=`.
//! - The scanner's doors: `POST /api/v1/scan` with `{"text": "..."}`, `GET /api/v1/scan/rules`
//!   ([`kd_core::scanner`]).
//!
//! The routes are one table ([`doors::routes`]) with their OpenAPI description beside it
//! ([`doors::openapi`], part of the hub's `/functions/v1/public-api/openapi.json`).
//!
//! Refusals use Ronin's error shape (section 9): `{"ok":false,"error":"<prefix>: <message>"}`,
//! plus `index` for an event of a batch: `invalid` 400, `duplicate` 409, `restricted` 403,
//! `rate-limited` 429 ([`limits`]: 60 events a minute per key, 600 per address), `error` 404
//! or 500. Files ([`artifacts`]): `POST /api/v1/artifacts`, `GET /api/v1/artifacts/<sha256>`.
//! The skill index ([`index`]): `GET /api/v1/index?q=&level=&source=`, `/index/<hash>`,
//! `/index/stats`, over the bundled snapshot. A WANTED listing's `skill` and `inputs`
//! ([`attachments`]) are checked against the files and the index, and shown with `url` and
//! `scan` on listings and task views. `GET /` (the mount itself) is Ronin's front page with
//! the person's `#work` section, which signs templates in the browser ([`work_page`]). Trust
//! ([`trust`]) by section 8's formula on every agent view and list, the bench bonus included.
//! The bench ([`bench`], section 6e): `GET /api/v1/bench`, `POST /api/v1/bench/start` and
//! `/bench/<run_id>/submit` (NIP-98 with the `payload` tag), `GET /api/v1/bench/leaderboard`;
//! the agent view's `bench` is the lineage's best run in 90 days. The texts for agents and
//! hosts and the reference clients ([`clients`]): `GET /q`, `/q/curl`, `/AGENTS.md`,
//! `/cursor/ronin.mdc`, `/skills/ronin-worker/` (and `.../SKILL.md`), `/openclaw/SETUP.md`,
//! `/openclaw/HEARTBEAT.md`, `/.well-known/mcp/server-card.json`, `/ronin.mjs`, `/sign.mjs`,
//! `/ronin.py`, each the file in the crate's `clients/` folder with the hub's URL written in.
//! Signed callbacks ([`callbacks`]): a change that includes a task is queued in its
//! transaction for the lineage's PROFILE `callback` and POSTed by [`callbacks::run_deliverer`]
//! (which the hub starts) through [`kd_core::outbound`], signed by the operator key; three
//! tries. Mail ([`notify`]): `POST /api/v1/me/notify` puts an address on file, and each task
//! event naming the lineage queues one mail in the hub's outbox. Benchmarks of the events door
//! and of held `me/wait` are kd-bench's `ronin-ingest` and `ronin-wait` phases (`bench/`,
//! docs/performance.md). Every SQL statement of
//! Ronin's writes and reads is in `store.rs` and `store/` (task reads in `store/tasks.rs`,
//! the reading doors' in `store/reads.rs`).

pub mod artifacts;
pub mod attachments;
pub mod bench;
pub mod callbacks;
pub mod clients;
pub mod doors;
pub mod error;
pub mod events;
pub mod index;
pub mod limits;
pub mod me;
pub mod nip98;
pub mod notify;
pub mod read;
mod store;
pub mod tasks;
pub mod trust;
pub mod wait;
pub mod work_page;

pub use error::{Refusal, RoninError};

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kd_core::clock::Clock;
use kd_core::store::Store;
use serde_json::{Value, json};

/// Where the hub mounts Ronin unless told otherwise (`karmadue serve --ronin-mount`).
pub const DEFAULT_MOUNT: &str = kd_core::config::DEFAULT_RONIN_MOUNT;

/// The most characters `POST /api/v1/scan` reads.
pub const SCAN_MAX_CHARS: usize = 100_000;

/// The name of the operator key's file in the hub's keys folder (DECISIONS 10).
pub const OPERATOR_KEY_FILE: &str = "ronin-operator";

/// What Ronin's handlers share: the hub's store and clock, and the operator key.
#[derive(Clone)]
pub struct Ronin {
    /// The hub's store (one store, one log: DECISIONS 1).
    pub store: Store,
    /// The hub's clock.
    pub clock: Arc<dyn Clock>,
    /// The operator's x-only secp256k1 public key, lowercase hex (`GET /api/v1/server`).
    pub operator_pubkey: String,
    /// Events a minute per key and per address ([`limits`]).
    pub limits: Arc<kd_core::limits::Limiter>,
    /// The hub's public URL (scheme, host, port; no trailing slash): the KarmaDue URLs the
    /// texts name (`{{HUB_URL}}`, [`clients`]), and Ronin's origin unless Ronin has a listen
    /// address of its own. Empty until [`Ronin::with_public_url`].
    pub public_url: String,
    /// Ronin's path on the listener that serves it: [`DEFAULT_MOUNT`] on the hub's address,
    /// `""` at the root of its own ([`Ronin::with_base`]).
    pub mount: String,
    /// The public URL of Ronin's own listen address (no trailing slash), when it has one.
    pub own_url: Option<String>,
    /// The open `me/wait` requests by key ([`wait`]).
    pub waiters: wait::Waiters,
    /// Where uploaded files are kept ([`artifacts`]): [`artifacts::DIR_NAME`] beside the keys
    /// folder, in the hub's data directory.
    pub artifacts_dir: std::path::PathBuf,
    /// The most bytes the files a key lineage stored may hold together
    /// ([`artifacts::LINEAGE_MAX_BYTES`]; tests lower it).
    pub artifacts_lineage_max: i64,
    /// The hub's random source: bench run ids and the seeds their tasks are drawn from
    /// ([`bench`]). The operating system's until [`Ronin::with_random`].
    pub random: Arc<dyn kd_core::random::Random>,
    /// The operator's secp256k1 secret: signs callbacks ([`callbacks`]). Never served.
    pub(crate) operator_secret: Arc<[u8; 32]>,
    /// Wakes the callback deliverer after a batch queued callbacks ([`callbacks`]).
    pub(crate) callback_wakeup: Arc<tokio::sync::Notify>,
}

impl std::fmt::Debug for Ronin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ronin")
            .field("operator_pubkey", &self.operator_pubkey)
            .finish_non_exhaustive()
    }
}

impl Ronin {
    /// Ronin over the hub's store, with the operator key loaded from (or made in) `keys_dir`
    /// as `ronin-operator.key` (a secp256k1 secret, base64url, mode 0600), and uploaded files
    /// kept in `ronin-artifacts` beside `keys_dir` (the hub's data directory). `seed` draws a
    /// fresh secret; a draw that is not a valid secp256k1 secret is drawn again.
    ///
    /// # Errors
    /// [`kd_core::keys::KeyFileError`] when the key file cannot be read or made, or holds no
    /// valid secret.
    pub fn open(
        keys_dir: &std::path::Path,
        store: Store,
        clock: Arc<dyn Clock>,
        mut seed: impl FnMut() -> [u8; 32],
    ) -> Result<Self, kd_core::keys::KeyFileError> {
        let secret = kd_core::keys::load_or_create_seed(keys_dir, OPERATOR_KEY_FILE, || {
            loop {
                let candidate = seed();
                if kd_protocol::nostr::public_key_hex(&candidate).is_some() {
                    break candidate;
                }
            }
        })?;
        let operator_pubkey = kd_protocol::nostr::public_key_hex(&secret).ok_or_else(|| {
            kd_core::keys::KeyFileError::Malformed(
                keys_dir.join(format!("{OPERATOR_KEY_FILE}.key")),
            )
        })?;
        Ok(Self {
            clock,
            public_url: String::new(),
            mount: DEFAULT_MOUNT.to_owned(),
            own_url: None,
            waiters: wait::Waiters::default(),
            artifacts_dir: keys_dir
                .parent()
                .unwrap_or(keys_dir)
                .join(artifacts::DIR_NAME),
            artifacts_lineage_max: artifacts::LINEAGE_MAX_BYTES,
            random: Arc::new(kd_core::random::SystemRandom),
            operator_pubkey,
            operator_secret: Arc::new(secret),
            callback_wakeup: Arc::new(tokio::sync::Notify::new()),
            limits: Arc::new(kd_core::limits::Limiter::for_store(&store)),
            store,
        })
    }
}

impl Ronin {
    /// The same Ronin, checking NIP-98 URLs against `public_url` (the hub's, as the public
    /// sees it; never taken from a request's `Host`).
    #[must_use]
    pub fn with_public_url(mut self, public_url: impl Into<String>) -> Self {
        self.public_url = public_url.into().trim_end_matches('/').to_owned();
        self
    }

    /// The same Ronin served at `mount` (a path [`kd_core::config::check_ronin_mount`] accepts, or `""` for the root)
    /// of the listener whose public URL is `own_url` (`None`: the hub's address, so the hub's
    /// [`Ronin::public_url`]). Every absolute URL Ronin prints and every NIP-98 URL it checks
    /// starts with [`Ronin::base_url`] (docs/decisions.md 388).
    #[must_use]
    pub fn with_base(mut self, mount: impl Into<String>, own_url: Option<String>) -> Self {
        self.mount = mount.into();
        self.own_url = own_url.map(|url| url.trim_end_matches('/').to_owned());
        self
    }

    /// The public URL of the listener that serves Ronin (no trailing slash): its own when it
    /// has one, else the hub's.
    #[must_use]
    pub fn origin(&self) -> &str {
        self.own_url.as_deref().unwrap_or(&self.public_url)
    }

    /// Ronin's public base URL: [`Ronin::origin`] plus [`Ronin::mount`] (`{{RONIN_URL}}`; the
    /// API is this plus `/api/v1`), e.g. `https://hub.example/ronin`.
    #[must_use]
    pub fn base_url(&self) -> String {
        format!("{}{}", self.origin(), self.mount)
    }

    /// A route path of [`doors::routes`] as its listener serves it: under the mount (the
    /// front page, `/`, is the mount itself: `/ronin`), or as it is at the root.
    #[must_use]
    pub fn mounted(&self, path: &str) -> String {
        mounted_at(&self.mount, path)
    }

    /// The same Ronin, drawing from `random` (the hub's source; a seeded one in tests).
    #[must_use]
    pub fn with_random(mut self, random: Arc<dyn kd_core::random::Random>) -> Self {
        self.random = random;
        self
    }
}

/// `path` (a route of [`doors::routes`]) under `mount` (`""`: the root, where `path` stays
/// as it is); the front page `/` is the mount itself.
#[must_use]
pub fn mounted_at(mount: &str, path: &str) -> String {
    match (mount, path) {
        ("", _) => path.to_owned(),
        (_, "/") => mount.to_owned(),
        _ => format!("{mount}{path}"),
    }
}

/// Ronin's routes, relative to [`Ronin::mount`] (the table is [`doors::routes`]).
pub fn router<S: Clone + Send + Sync + 'static>(ronin: Ronin) -> Router<S> {
    doors::routes()
        .into_iter()
        .fold(Router::new(), |router, (path, handler)| {
            router.route(path, handler)
        })
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(ronin)
}

/// A JSON answer with a status.
pub(crate) fn answer(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

pub(crate) async fn health() -> Response {
    answer(StatusCode::OK, &json!({ "ok": true }))
}

async fn not_found() -> Response {
    Refusal::not_found().into_response()
}

async fn method_not_allowed() -> Response {
    Refusal::unreadable(
        StatusCode::METHOD_NOT_ALLOWED,
        "this path does not take that method",
    )
    .into_response()
}

/// The body, or Ronin's refusal when it is over the hub's body limit (413) or unreadable.
pub(crate) fn body_or_refusal(body: Result<Bytes, BytesRejection>) -> Result<Bytes, Refusal> {
    // In Ronin's words, never the framework's.
    body.map_err(|rejection| {
        let status = rejection.status();
        let why = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "it is larger than this hub takes"
        } else {
            "it was cut off or could not be received"
        };
        Refusal::unreadable(status, format!("the body cannot be read: {why}"))
    })
}

/// `POST /api/v1/events` ([`events`]).
pub(crate) async fn post_events(
    State(ronin): State<Ronin>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
    extensions: axum::http::Extensions,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    // `?full=1`: the whole task view instead of the compact one.
    let full = query
        .as_deref()
        .unwrap_or_default()
        .split('&')
        .any(|pair| matches!(pair, "full=1" | "full=true"));
    let body = match body_or_refusal(body) {
        Ok(body) => body,
        Err(refusal) => return refusal.into_response(),
    };
    let (values, single) = match events::read_body(&body) {
        Ok(read) => read,
        Err(refusal) => return refusal.into_response(),
    };
    let now_s = ronin.clock.now_unix();
    let mut batch = Vec::with_capacity(values.len());
    for (index, text) in values.iter().enumerate() {
        match events::check(text, now_s) {
            Ok(checked) => batch.push(checked),
            // `index` names the failing event of a batch; one event needs no index.
            Err(refusal) if single => return refusal.into_response(),
            Err(refusal) => return refusal.at(index).into_response(),
        }
    }
    if let Err(response) = charge_limits(&ronin, &batch, &extensions).await {
        return response;
    }
    match events::store(&ronin, batch, full)
        .await
        .map_err(|refusal| if single { refusal.alone() } else { refusal })
    {
        Ok(accepted) => {
            // After the commit: the waiters of the tasks' keys read the store again.
            ronin
                .waiters
                .wake(accepted.touched.iter().map(String::as_str));
            if accepted.callbacks > 0 {
                ronin.callback_wakeup.notify_one();
            }
            let mut body = json!({
                "ok": true,
                "ids": accepted.ids,
                "kinds": accepted.kinds,
                "task": accepted.task,
                "next": accepted.next,
            });
            if single {
                body["id"] = body["ids"][0].clone();
                body["kind"] = body["kinds"][0].clone();
            }
            answer(StatusCode::OK, &body)
        }
        Err(refusal) => refusal.into_response(),
    }
}

/// Charges the write limits for the events that reached the writer's door: each key its own
/// events, the address all of them (when the hub knows the address). `Err` is the answer.
async fn charge_limits(
    ronin: &Ronin,
    batch: &[events::Checked],
    extensions: &axum::http::Extensions,
) -> Result<(), Response> {
    charge_writes(
        ronin,
        &batch
            .iter()
            .map(events::Checked::pubkey)
            .collect::<Vec<_>>(),
        extensions,
    )
    .await
}

/// Charges one write per entry of `signers` (a key may repeat) to each signer and to the
/// caller's address (section 9: 60 a minute per key, 600 per address). `Err` is the answer,
/// `rate-limited:` with `Retry-After`.
pub(crate) async fn charge_writes(
    ronin: &Ronin,
    signers: &[&str],
    extensions: &axum::http::Extensions,
) -> Result<(), Response> {
    let batch = signers;
    let mut charges: Vec<kd_core::limits::Charge> = Vec::new();
    for signer in signers {
        let key = format!("key:{signer}");
        match charges.iter_mut().find(|charge| charge.key == key) {
            Some(charge) => charge.cost += 1,
            None => charges.push(kd_core::limits::Charge::one(key, limits::PER_KEY)),
        }
    }
    if let Some(axum::extract::ConnectInfo(peer)) =
        extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
    {
        charges.push(kd_core::limits::Charge {
            key: format!("ip:{}", peer.ip()),
            cost: u32::try_from(batch.len()).unwrap_or(u32::MAX),
            limit: limits::PER_ADDRESS,
        });
    }
    let taken = match ronin.limits.take(&charges, ronin.clock.now_ms()).await {
        Ok(taken) => taken,
        Err(error) => {
            let refusal =
                Refusal::internal("the hub could not count this request; try again", error);
            return Err(refusal.into_response());
        }
    };
    if let Err(limited) = taken {
        let key = charges[limited.charge].key.clone();
        let retry_after_s = limited.retry_after_s();
        let whose = if key.starts_with("ip:") {
            format!(
                "over {} writes a minute from your address",
                limits::PER_ADDRESS
            )
        } else {
            format!("over {} writes a minute from your key", limits::PER_KEY)
        };
        let mut response =
            Refusal::rate_limited(format!("{whose}; retry in {retry_after_s} s")).into_response();
        if let Ok(value) = HeaderValue::from_str(&retry_after_s.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        return Err(response);
    }
    Ok(())
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ScanRequest {
    text: String,
}

/// `POST /api/v1/scan`: scans `text` (at most [`SCAN_MAX_CHARS`] characters). Anything but a
/// JSON object with one string field `text` is `invalid` (400).
pub(crate) async fn scan_text(body: Result<Bytes, BytesRejection>) -> Response {
    let body = match body_or_refusal(body) {
        Ok(body) => body,
        Err(refusal) => return refusal.into_response(),
    };
    // An object only: serde would also read a struct from an array of its field values.
    let request: Result<ScanRequest, String> = match serde_json::from_slice::<Value>(&body) {
        Ok(object @ Value::Object(_)) => {
            serde_json::from_value(object).map_err(|error| error.to_string())
        }
        Ok(_) => Err("not a JSON object".to_owned()),
        Err(error) => Err(error.to_string()),
    };
    let request = match request {
        Ok(request) => request,
        Err(error) => {
            return Refusal::invalid(format!("the body must be {{\"text\": \"...\"}} ({error})"))
                .into_response();
        }
    };
    if request.text.chars().count() > SCAN_MAX_CHARS {
        return Refusal::invalid("text is longer than 100000 characters").into_response();
    }
    let scanner = kd_core::scanner::Scanner::shipped();
    answer(
        StatusCode::OK,
        &json!({
            "ok": true,
            "scan": scanner.scan(&request.text),
            "rules_version": scanner.version(),
        }),
    )
}

/// `GET /api/v1/scan/rules`: the rules as shipped, with the level labels.
pub(crate) async fn scan_rules() -> Response {
    let mut document = kd_core::scanner::rules_document();
    document["ok"] = json!(true);
    answer(StatusCode::OK, &document)
}
