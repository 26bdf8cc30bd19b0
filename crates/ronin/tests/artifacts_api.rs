//! Delivering a file (Ronin section 6b): `POST /api/v1/artifacts` with NIP-98 and its
//! `payload` tag, 10 MB a file and a lineage's quota, duplicates free; `GET
//! /api/v1/artifacts/<sha256>` immutable and cacheable; the task view's `artifact`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use kd_protocol::nostr::sign_schnorr;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tower::ServiceExt;

use common::market::{ALICE, BOB, CAROL, accepted, market, offer, task_as};
use common::{Hub, NOW_S, PUBLIC_URL, key, sign_template, signed};

const PATH: &str = "/api/v1/artifacts";

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// `Nostr <base64>` of a kind 27235 event by `secret` with the given tags after `u`.
fn auth(secret: &[u8; 32], method: &str, payload: Option<&str>, nonce: &str) -> String {
    use base64::Engine as _;
    let url = format!("{PUBLIC_URL}{PATH}");
    let (u, method, nonce) = (["u", url.as_str()], ["method", method], ["nonce", nonce]);
    let mut tags: Vec<&[&str]> = vec![&u, &method, &nonce];
    let payload_tag;
    if let Some(payload) = payload {
        payload_tag = ["payload", payload];
        tags.push(&payload_tag);
    }
    let event = signed(secret, NOW_S, 27235, &tags, Value::String(String::new()));
    format!(
        "Nostr {}",
        base64::engine::general_purpose::STANDARD.encode(event.to_json_text())
    )
}

/// POSTs `body` with `authorization` and `content_type`; the status and the answer.
async fn post(
    hub: &Hub,
    authorization: &str,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> (StatusCode, Value) {
    let mut request = Request::builder()
        .method("POST")
        .uri(PATH)
        .header("authorization", authorization);
    if let Some(content_type) = content_type {
        request = request.header("content-type", content_type);
    }
    let response = hub
        .router
        .clone()
        .oneshot(request.body(Body::from(body)).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap())
}

/// Uploads `body` signed by `secret` with the right payload tag.
async fn upload(hub: &Hub, secret: &[u8; 32], body: &[u8], nonce: &str) -> (StatusCode, Value) {
    let header = auth(secret, "POST", Some(&sha(body)), nonce);
    post(hub, &header, Some("text/plain"), body.to_vec()).await
}

/// GETs a file; the status, the headers and the bytes.
async fn fetch(
    hub: &Hub,
    hash: &str,
    if_none_match: Option<&str>,
) -> (StatusCode, HeaderMap, Vec<u8>) {
    let mut request = Request::builder().uri(format!("{PATH}/{hash}"));
    if let Some(tag) = if_none_match {
        request = request.header("if-none-match", tag);
    }
    let response = hub
        .router
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, headers, bytes.to_vec())
}

/// The files on disk under the hub's artifacts folder.
fn files_on_disk(hub: &Hub) -> usize {
    let Ok(folders) = std::fs::read_dir(&hub.ronin.artifacts_dir) else {
        return 0;
    };
    folders
        .map(|folder| std::fs::read_dir(folder.unwrap().path()).unwrap().count())
        .sum()
}

#[tokio::test]
async fn an_upload_is_kept_by_its_hash_and_served_immutable_and_a_duplicate_is_free() {
    let hub = common::hub();
    let log = hub.log_len();
    let body = b"# Summary\n\nFive bullets.\n".to_vec();
    let hash = sha(&body);
    let (status, answer) = upload(&hub, &ALICE, &body, "n-1").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["ok"], true);
    assert_eq!(answer["hash"], hash.as_str());
    assert_eq!(answer["url"], format!("/ronin/api/v1/artifacts/{hash}"));
    assert_eq!(answer["bytes"], body.len());
    assert_eq!(answer["type"], "text/plain");
    assert_eq!(answer["scan"]["level"], "clean");
    // Content-addressed on disk: <dir>/<first two hex>/<sha256>.
    let on_disk = hub.ronin.artifacts_dir.join(&hash[..2]).join(&hash);
    assert_eq!(std::fs::read(&on_disk).unwrap(), body);
    #[cfg(unix)]
    {
        // Owner-only, the file and its folders (issue 35).
        use std::os::unix::fs::PermissionsExt;
        let mode =
            |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&on_disk), 0o600);
        assert_eq!(mode(on_disk.parent().unwrap()), 0o700);
        assert_eq!(mode(&hub.ronin.artifacts_dir), 0o700);
    }
    assert_eq!(hub.log_len(), log, "an upload is not an event");

    let (status, headers, bytes) = fetch(&hub, &hash, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(bytes, body);
    // Served as data whatever it was declared as; the declared type is the answer's `type`.
    assert_eq!(headers["content-type"], "application/octet-stream");
    assert_eq!(
        headers["content-disposition"],
        format!("attachment; filename=\"{hash}\"").as_str()
    );
    assert_eq!(headers["etag"], format!("\"{hash}\"").as_str());
    assert_eq!(
        headers["cache-control"],
        "public, max-age=31536000, immutable"
    );
    assert_eq!(headers["x-content-type-options"], "nosniff");
    let (status, headers, bytes) = fetch(&hub, &hash, Some(&format!("\"{hash}\""))).await;
    assert_eq!((status, bytes.len()), (StatusCode::NOT_MODIFIED, 0));
    assert_eq!(headers["etag"], format!("\"{hash}\"").as_str());

    // The same bytes again, by another key: the same answer, nothing more on disk.
    let (status, again) = upload(&hub, &BOB, &body, "n-2").await;
    assert_eq!((status, &again), (StatusCode::OK, &answer));
    assert_eq!(files_on_disk(&hub), 1);

    // Binary bytes are kept as sent and graded `unscanned`; an encrypted ZIP is `high`.
    let binary = vec![0xff, 0x00, 0xfe, 0x01];
    let header = auth(&ALICE, "POST", Some(&sha(&binary)), "n-3");
    let (status, answer) = post(&hub, &header, None, binary.clone()).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["type"], "application/octet-stream");
    assert_eq!(answer["scan"]["level"], "unscanned");
    let mut zip = b"PK\x03\x04\x14\x00\x01\x00".to_vec();
    zip.extend_from_slice(&[0xff; 40]);
    let header = auth(&ALICE, "POST", Some(&sha(&zip)), "n-4");
    let (_, answer) = post(&hub, &header, Some("application/zip"), zip).await;
    assert_eq!(answer["scan"]["level"], "high", "{answer}");
    assert_eq!(
        answer["scan"]["reasons"][0]["rule"],
        "password_archive.encrypted_zip"
    );

    // Unknown and malformed hashes.
    for name in [
        sha(b"never uploaded"),
        "abc".to_owned(),
        hash.to_uppercase(),
    ] {
        let (status, _, bytes) = fetch(&hub, &name, None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{name}");
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(body["error"], "error: not found");
    }
}

/// POSTs and asserts the refusal, and that nothing was written: no log row, no file.
/// Issue 35: a file declared as a script or a page is still served as bytes to save, so it
/// never runs or renders on the hub's origin beside a page that holds a pasted key.
#[tokio::test]
async fn a_file_declared_as_a_script_or_a_page_is_served_as_an_attachment() {
    let hub = common::hub();
    for (nonce, declared, body) in [
        (
            "n-js-1",
            "application/javascript",
            &b"fetch('/steal?k='+localStorage.key)"[..],
        ),
        ("n-html-1", "text/html", &b"<script>alert(1)</script>"[..]),
        (
            "n-svg-1",
            "image/svg+xml",
            &b"<svg onload=alert(1)></svg>"[..],
        ),
    ] {
        let header = auth(&ALICE, "POST", Some(&sha(body)), nonce);
        let (status, answer) = post(&hub, &header, Some(declared), body.to_vec()).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert_eq!(
            answer["type"], declared,
            "the declared type is kept for the task view"
        );
        let hash = sha(body);
        let (status, headers, bytes) = fetch(&hub, &hash, None).await;
        assert_eq!((status, bytes.as_slice()), (StatusCode::OK, body));
        assert_eq!(
            headers["content-type"], "application/octet-stream",
            "{declared}"
        );
        assert_eq!(
            headers["content-disposition"],
            format!("attachment; filename=\"{hash}\"").as_str()
        );
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert_eq!(
            headers["content-security-policy"],
            "default-src 'none'; sandbox"
        );
    }
}

async fn refused(hub: &Hub, header: &str, body: Vec<u8>, status: StatusCode, error: &str) {
    let (log, files) = (hub.log_len(), files_on_disk(hub));
    let hash = sha(&body);
    let (got, answer) = post(hub, header, Some("text/plain"), body).await;
    assert_eq!(
        (got, answer["error"].as_str().unwrap()),
        (status, error),
        "{answer}"
    );
    assert_eq!(answer["ok"], false);
    assert_eq!((hub.log_len(), files_on_disk(hub)), (log, files), "{error}");
    assert_eq!(
        fetch(hub, &hash, None).await.0,
        StatusCode::NOT_FOUND,
        "{error}"
    );
}

#[tokio::test]
async fn refusals_write_nothing() {
    let hub = common::hub();
    let body = b"the work".to_vec();
    let payload =
        "unauthorized: the auth event's payload tag must be the sha256 hex of the request body";
    refused(
        &hub,
        &auth(&ALICE, "POST", None, "a"),
        body.clone(),
        StatusCode::UNAUTHORIZED,
        payload,
    )
    .await;
    let other = auth(&ALICE, "POST", Some(&sha(b"another body")), "b");
    refused(
        &hub,
        &other,
        body.clone(),
        StatusCode::UNAUTHORIZED,
        payload,
    )
    .await;
    refused(
        &hub,
        &auth(&ALICE, "GET", Some(&sha(&body)), "c"),
        body.clone(),
        StatusCode::UNAUTHORIZED,
        "unauthorized: the auth event's method tag must be the request method",
    )
    .await;
    refused(
        &hub,
        "Bearer x",
        body.clone(),
        StatusCode::UNAUTHORIZED,
        "unauthorized: Authorization must be \"Nostr <base64 of a signed kind 27235 event>\"",
    )
    .await;
    refused(
        &hub,
        &auth(&ALICE, "POST", Some(&sha(b"")), "d"),
        Vec::new(),
        StatusCode::BAD_REQUEST,
        "invalid: the body is empty: upload the file's bytes",
    )
    .await;
    // Over 10 MB: refused whatever the header says.
    let big = vec![b'x'; 10 * 1024 * 1024 + 1];
    let header = auth(&ALICE, "POST", Some(&sha(&big)), "e");
    refused(
        &hub,
        &header,
        big,
        StatusCode::PAYLOAD_TOO_LARGE,
        "invalid: a file is at most 10 MB (10485760 bytes)",
    )
    .await;
    // A revoked key writes nothing.
    accepted(&hub, &signed(&CAROL, NOW_S, 1108, &[], json!("lost"))).await;
    refused(
        &hub,
        &auth(&CAROL, "POST", Some(&sha(&body)), "f"),
        body.clone(),
        StatusCode::FORBIDDEN,
        "restricted: this key is revoked",
    )
    .await;
    // Each auth event works once.
    let header = auth(&ALICE, "POST", Some(&sha(&body)), "g");
    assert_eq!(
        post(&hub, &header, Some("text/plain"), body.clone())
            .await
            .0,
        StatusCode::OK
    );
    let (status, answer) = post(&hub, &header, Some("text/plain"), body).await;
    assert_eq!(
        (status, answer["error"].as_str().unwrap()),
        (
            StatusCode::UNAUTHORIZED,
            "unauthorized: this auth event was used already"
        )
    );
}

/// `signer`'s BIP-340 signature over sha256 of `over`'s key bytes, hex.
fn proof(signer: &[u8; 32], over: &str) -> String {
    let digest = Sha256::digest(hex::decode(over).unwrap());
    hex::encode(sign_schnorr(signer, &digest, &[0; 32]).unwrap())
}

#[tokio::test]
async fn a_lineage_s_files_share_one_quota_and_a_duplicate_costs_nothing() {
    let mut hub = common::hub();
    hub.ronin.artifacts_lineage_max = 100;
    hub.router = kd_ronin::router(hub.ronin.clone());
    let first = vec![b'a'; 60];
    assert_eq!(upload(&hub, &ALICE, &first, "q-1").await.0, StatusCode::OK);
    // Alice rotates: her new key shares the old key's quota.
    const ALICE_NEW: [u8; 32] = [0x12; 32];
    accepted(
        &hub,
        &signed(&ALICE, NOW_S, 0, &[], json!({"name": "Alice"})),
    )
    .await;
    let rotate = signed(
        &ALICE,
        NOW_S + 1,
        1107,
        &[
            &["p", &key(&ALICE_NEW)],
            &["proof", &proof(&ALICE_NEW, &key(&ALICE))],
        ],
        json!(""),
    );
    accepted(&hub, &rotate).await;
    let second = vec![b'b'; 41];
    refused(
        &hub,
        &auth(&ALICE_NEW, "POST", Some(&sha(&second)), "q-2"),
        second,
        StatusCode::PAYLOAD_TOO_LARGE,
        "invalid: a key's lineage stores at most 100 bytes of files; it holds 60",
    )
    .await;
    // Exactly to the quota, then a file the hub holds already: free.
    assert_eq!(
        upload(&hub, &ALICE_NEW, &[b'c'; 40], "q-3").await.0,
        StatusCode::OK
    );
    let (status, answer) = upload(&hub, &ALICE_NEW, &first, "q-4").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    // Another lineage has its own quota; the retired key writes no more.
    assert_eq!(
        upload(&hub, &BOB, &[b'd'; 100], "q-5").await.0,
        StatusCode::OK
    );
    refused(
        &hub,
        &auth(&ALICE, "POST", Some(&sha(b"old")), "q-6"),
        b"old".to_vec(),
        StatusCode::FORBIDDEN,
        "restricted: this key is retired: its successor writes now",
    )
    .await;
}

#[tokio::test]
async fn a_task_view_shows_the_file_a_deliver_names() {
    let hub = common::hub();
    market(&hub, None).await;
    let (alice, bob) = (key(&ALICE), key(&BOB));
    let offered = offer(&BOB, &alice, "summaries", 2.0);
    accepted(&hub, &offered).await;
    let view = task_as(&hub, &offered.id, &alice).await;
    let accept = sign_template(&ALICE, NOW_S + 1, &view["next"][0]);
    accepted(&hub, &accept).await;

    let body = b"- one\n- two\n- three\n- four\n- five\n".to_vec();
    let (_, uploaded) = upload(&hub, &ALICE, &body, "d-1").await;
    let deliver = signed(
        &ALICE,
        NOW_S + 2,
        1102,
        &[&["e", &accept.id], &["p", &bob]],
        json!({"note": "done", "hash": uploaded["hash"], "url": uploaded["url"]}),
    );
    let (status, answer) = hub
        .call("POST", "/api/v1/events?full=1", &common::text(&deliver))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let expected = json!({
        "hash": uploaded["hash"],
        "url": uploaded["url"],
        "bytes": body.len(),
        "type": "text/plain",
        "scan": uploaded["scan"],
    });
    assert_eq!(answer["task"]["artifact"], expected);
    let view = task_as(&hub, &offered.id, &bob).await;
    assert_eq!(view["task"]["artifact"], expected);
    assert_eq!(view["task"]["scan"]["artifact"]["level"], "clean");
    assert_eq!(view["task"]["scan"]["level"], "clean");

    // A DELIVER naming a hash this hub does not hold shows no artifact.
    let other = offer(&BOB, &alice, "summaries", 3.0);
    accepted(&hub, &other).await;
    let view = task_as(&hub, &other.id, &alice).await;
    let accept = sign_template(&ALICE, NOW_S + 1, &view["next"][0]);
    accepted(&hub, &accept).await;
    let deliver = signed(
        &ALICE,
        NOW_S + 2,
        1102,
        &[&["e", &accept.id], &["p", &bob]],
        json!({"hash": sha(b"elsewhere"), "url": "https://example.com/x"}),
    );
    accepted(&hub, &deliver).await;
    let view = task_as(&hub, &other.id, &bob).await;
    assert_eq!(view["task"]["artifact"], Value::Null);
}
