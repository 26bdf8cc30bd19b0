//! Ronin's front page with the person's `#work` section (docs/decisions.md 378): served at the
//! mount with its own script policy, its script and the vendored BIP-340 library. The page is
//! driven in Chromium by browser scenario i (tests/peers/browser_ronin.mjs).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use sha2::{Digest, Sha256};
use tower::ServiceExt;

/// GETs `path`; the status, content type, policy and body.
async fn get(hub: &common::Hub, path: &str) -> (StatusCode, String, String, String) {
    let response = hub
        .router
        .clone()
        .oneshot(Request::builder().uri(path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    let (kind, policy) = (header("content-type"), header("content-security-policy"));
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        kind,
        policy,
        String::from_utf8(bytes.to_vec()).unwrap(),
    )
}

#[tokio::test]
async fn the_front_page_carries_the_work_section_and_its_scripts() {
    let hub = common::hub();
    let (status, kind, policy, html) = get(&hub, "/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(kind.starts_with("text/html"), "{kind}");
    assert!(policy.contains("script-src 'self'"), "{policy}");
    assert!(
        !policy.contains("unsafe-inline'; script") && !policy.contains("unsafe-eval"),
        "{policy}"
    );
    assert!(html.contains(r#"<section id="work" data-api="/ronin/api/v1" data-public-api="https://ronin.test/ronin/api/v1">"#), "{html}");
    assert!(
        html.contains(r#"<script type="module" src="/ronin/work.js">"#),
        "{html}"
    );
    assert!(html.contains(r#"<textarea id="key""#));
    // No inline script: the only script element loads the file.
    assert_eq!(html.matches("<script").count(), 1);

    let (status, kind, _, script) = get(&hub, "/work.js").await;
    assert_eq!(
        (status, kind.as_str()),
        (StatusCode::OK, "text/javascript; charset=utf-8")
    );
    assert!(script.contains("from './vendor/noble-secp256k1.js'"));
    let (status, _, _, library) = get(&hub, "/vendor/noble-secp256k1.js").await;
    assert_eq!(status, StatusCode::OK);
    // The npm package's index.js as published (crates/ronin/web/vendor/SOURCES.md).
    assert_eq!(
        hex::encode(Sha256::digest(library.as_bytes())),
        "ba5aadb469e9208f2da1c9878ab6bb93d2c894f84e6c7ebf9dbf9462741b9fb7"
    );
}
