//! A Ronin router over a throwaway store, a manual clock, and requests to it.

#![allow(dead_code)]

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use kd_core::clock::ManualClock;
use serde_json::Value;
use tower::ServiceExt;

/// 2026-10-11T06:26:40Z.
pub const NOW_S: u64 = 1_791_700_000;

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
    .unwrap();
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
