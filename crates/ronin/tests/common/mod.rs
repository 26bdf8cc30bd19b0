//! A Ronin router over a throwaway store, a manual clock, and requests to it.

#![allow(dead_code)]

pub mod bench;
pub mod market;

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use kd_core::clock::ManualClock;
use kd_protocol::nostr::{Event, sign_event};
use serde_json::Value;
use tower::ServiceExt;

/// 2026-10-11T06:26:40Z.
pub const NOW_S: u64 = 1_791_700_000;

/// The public URL the test hubs check NIP-98 `u` tags against.
pub const PUBLIC_URL: &str = "https://ronin.test";

pub struct Hub {
    pub router: axum::Router,
    pub clock: ManualClock,
    pub store: kd_core::store::Store,
    pub ronin: kd_ronin::Ronin,
    _dir: tempfile::TempDir,
}

pub fn hub() -> Hub {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(i64::try_from(NOW_S).unwrap() * 1000);
    // KD_TEST_DATABASE=postgres: a fresh database on the test server (kd_core::db::testing).
    let location = match kd_core::db::testing::backend() {
        kd_core::db::Backend::Sqlite => kd_core::db::Location::Sqlite(dir.path().join("db.sqlite")),
        kd_core::db::Backend::Postgres => {
            kd_core::db::Location::Postgres(kd_core::db::testing::scratch_postgres().unwrap())
        }
    };
    let store = kd_core::store::Store::open_at(
        &location,
        Arc::new(clock.clone()),
        kd_core::store::StoreMetrics::default(),
    )
    .unwrap();
    let mut counter = 0u8;
    let ronin = kd_ronin::Ronin::open(
        &dir.path().join("keys"),
        store.clone(),
        Arc::new(clock.clone()),
        || {
            counter += 1;
            [counter; 32]
        },
    )
    .unwrap()
    .with_public_url(PUBLIC_URL);
    Hub {
        router: kd_ronin::router(ronin.clone()),
        clock,
        store,
        ronin,
        _dir: dir,
    }
}

impl Hub {
    pub async fn call(&self, method: &str, path: &str, body: &str) -> (StatusCode, Value) {
        let response = self
            .router
            .clone()
            .oneshot(
                Request::builder()
                    .method(method)
                    .uri(path)
                    .header("content-type", "application/json")
                    .body(Body::from(body.to_owned()))
                    .unwrap(),
            )
            .await
            .unwrap();
        let status = response.status();
        assert_eq!(
            response.headers()["content-type"],
            "application/json",
            "{path}"
        );
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    /// A POST as if from `peer` (the hub puts the client's address in the request's
    /// extensions); returns the status, the Retry-After header and the body.
    pub async fn post_from(
        &self,
        peer: std::net::SocketAddr,
        path: &str,
        body: &str,
    ) -> (StatusCode, Option<String>, Value) {
        let mut request = Request::builder()
            .method("POST")
            .uri(path)
            .header("content-type", "application/json")
            .body(Body::from(body.to_owned()))
            .unwrap();
        request
            .extensions_mut()
            .insert(axum::extract::ConnectInfo(peer));
        let response = self.router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let retry = response
            .headers()
            .get("retry-after")
            .map(|value| value.to_str().unwrap().to_owned());
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, retry, serde_json::from_slice(&bytes).unwrap())
    }

    pub async fn call_text(&self, method: &str, path: &str) -> String {
        let response = self
            .router
            .clone()
            .oneshot(
                Request::builder()
                    .method(method)
                    .uri(path)
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    /// The log's length (off the async threads: the PostgreSQL driver blocks).
    pub fn log_len(&self) -> i64 {
        let store = self.store.clone();
        std::thread::spawn(move || store.read_blocking(kd_core::eventlog::count).unwrap())
            .join()
            .unwrap()
    }
}

/// An event signed by `secret` (content: a JSON string is taken as the text itself).
pub fn signed(
    secret: &[u8; 32],
    created_at: u64,
    kind: u16,
    tags: &[&[&str]],
    content: Value,
) -> Event {
    let content = match content {
        Value::String(text) => text,
        other => other.to_string(),
    };
    sign_event(
        secret,
        created_at,
        kind,
        tags.iter()
            .map(|tag| tag.iter().map(|part| (*part).to_owned()).collect())
            .collect(),
        content,
        &[0; 32],
    )
    .unwrap()
}

/// The event as sent.
pub fn text(event: &Event) -> String {
    event.to_json_text()
}

/// A batch of events as sent.
pub fn batch(events: &[&Event]) -> String {
    format!(
        "[{}]",
        events
            .iter()
            .map(|event| text(event))
            .collect::<Vec<_>>()
            .join(",")
    )
}

/// Signs a template (`{kind, tags, content, why}`) as-is with `secret`.
pub fn sign_template(secret: &[u8; 32], created_at: u64, template: &Value) -> Event {
    let tags: Vec<Vec<String>> = template["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tag| {
            tag.as_array()
                .unwrap()
                .iter()
                .map(|part| part.as_str().unwrap().to_owned())
                .collect()
        })
        .collect();
    sign_event(
        secret,
        created_at,
        u16::try_from(template["kind"].as_u64().unwrap()).unwrap(),
        tags,
        template["content"].as_str().unwrap().to_owned(),
        &[0; 32],
    )
    .unwrap()
}

/// The x-only public key of a test secret.
pub fn key(secret: &[u8; 32]) -> String {
    kd_protocol::nostr::public_key_hex(secret).unwrap()
}

impl Hub {
    /// How many tasks the hub holds.
    pub async fn task_count(&self) -> i64 {
        kd_ronin::tasks::count(&self.ronin).await.unwrap()
    }

    /// POSTs one event; returns the status and the answer.
    pub async fn post(&self, event: &Event) -> (StatusCode, Value) {
        self.call("POST", "/api/v1/events", &text(event)).await
    }
}

/// `Nostr <base64>` of a kind 27235 event by `secret` for a GET of `url`.
pub fn nip98(secret: &[u8; 32], url: &str, created_at: u64, nonce: &str) -> String {
    use base64::Engine as _;
    let event = signed(
        secret,
        created_at,
        27235,
        &[&["u", url], &["method", "GET"], &["nonce", nonce]],
        Value::String(String::new()),
    );
    format!(
        "Nostr {}",
        base64::engine::general_purpose::STANDARD.encode(event.to_json_text())
    )
}

impl Hub {
    /// A GET with an Authorization header (or none); returns the status and the body.
    pub async fn get_authorized(
        &self,
        path: &str,
        authorization: Option<&str>,
    ) -> (StatusCode, Value) {
        let mut request = Request::builder().method("GET").uri(path);
        if let Some(authorization) = authorization {
            request = request.header("authorization", authorization);
        }
        let response = self
            .router
            .clone()
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, serde_json::from_slice(&bytes).unwrap())
    }
}

/// `Nostr <base64>` of a kind 27235 event by `secret` for a POST of `body` to `path`, with
/// its `payload` tag (the body's sha256), made at `created_at` (Unix seconds).
pub fn nip98_post(
    secret: &[u8; 32],
    path: &str,
    body: &[u8],
    created_at: u64,
    nonce: &str,
) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    let url = format!("{PUBLIC_URL}{path}");
    let payload = hex::encode(sha2::Sha256::digest(body));
    let event = signed(
        secret,
        created_at,
        27235,
        &[
            &["u", &url],
            &["method", "POST"],
            &["nonce", nonce],
            &["payload", &payload],
        ],
        Value::String(String::new()),
    );
    format!(
        "Nostr {}",
        base64::engine::general_purpose::STANDARD.encode(event.to_json_text())
    )
}

impl Hub {
    /// Uploads `body` as a file of `content_type` signed by `secret`; the answer's `hash`.
    pub async fn upload(
        &self,
        secret: &[u8; 32],
        content_type: &str,
        body: &[u8],
        nonce: &str,
    ) -> String {
        let request = Request::builder()
            .method("POST")
            .uri("/api/v1/artifacts")
            .header(
                "authorization",
                nip98_post(secret, "/api/v1/artifacts", body, NOW_S, nonce),
            )
            .header("content-type", content_type)
            .body(Body::from(body.to_vec()))
            .unwrap();
        let response = self.router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let answer: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(status, StatusCode::OK, "{answer}");
        answer["hash"].as_str().unwrap().to_owned()
    }
}
