//! `GET /api/v1/me/wait?since=&timeout=` (Ronin "Waiting costs nothing"): answers at once
//! when something is new, else wakes on the first task event for the caller's key, else
//! answers `{"cursor"}` at the timeout; the spec's 1-55 s bounds.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use serde_json::{Value, json};

use common::market::{ALICE, BOB, CAROL, accepted, market, offer};
use common::{Hub, NOW_S, PUBLIC_URL, key, nip98};

/// `GET path` authorized by `secret` for exactly that URL.
async fn get_as(hub: &Hub, secret: &[u8; 32], path: &str, nonce: &str) -> (StatusCode, Value) {
    let header = nip98(secret, &format!("{PUBLIC_URL}{path}"), NOW_S, nonce);
    hub.get_authorized(path, Some(&header)).await
}

/// The caller's cursor now (`me` with nothing new).
async fn cursor_now(hub: &Hub, secret: &[u8; 32], nonce: &str) -> String {
    let (status, body) = get_as(hub, secret, "/api/v1/me", nonce).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["cursor"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_is_woken_by_an_offer_to_its_key_and_another_key_s_is_not() {
    let hub = common::hub();
    market(&hub, None).await;
    let alice = key(&ALICE);
    let (alice_since, carol_since) = (
        cursor_now(&hub, &ALICE, "c-a").await,
        cursor_now(&hub, &CAROL, "c-c").await,
    );
    let offered = offer(&BOB, &alice, "summaries", 2.0);
    let started = Instant::now();
    let alice_path = format!("/api/v1/me/wait?since={alice_since}&timeout=30");
    let carol_path = format!("/api/v1/me/wait?since={carol_since}&timeout=2");
    let (alice_answer, carol_answer, ()) = tokio::join!(
        async {
            let answer = get_as(&hub, &ALICE, &alice_path, "w-a").await;
            (answer, started.elapsed())
        },
        async {
            let answer = get_as(&hub, &CAROL, &carol_path, "w-c").await;
            (answer, started.elapsed())
        },
        async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            accepted(&hub, &offered).await;
        },
    );
    // Alice is woken by the OFFER naming her, well before her 30 s.
    let ((status, body), waited) = alice_answer;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(waited < Duration::from_secs(10), "{waited:?}");
    assert!(waited >= Duration::from_millis(300), "{waited:?}");
    let tasks = body["new"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{body}");
    assert_eq!(tasks[0]["task"], offered.id.as_str());
    assert_eq!(tasks[0]["role"], "agent");
    assert_eq!(body["next"][0]["kind"], 1101);
    assert_ne!(body["cursor"], alice_since.as_str());
    // Carol's wait is not woken by it: her timeout answers the cursor alone.
    let ((status, body), waited) = carol_answer;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body.as_object().unwrap().len(), 1, "{body}");
    assert!(body["cursor"].is_string(), "{body}");
    assert!(waited >= Duration::from_secs(2), "{waited:?}");
    // The waiters left the index with their requests.
    assert_eq!(hub.ronin.waiters.keys_waited_on(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_answers_at_once_when_a_task_is_there_and_the_cursor_alone_at_the_timeout() {
    let hub = common::hub();
    market(&hub, None).await;
    let offered = offer(&BOB, &key(&ALICE), "summaries", 2.0);
    accepted(&hub, &offered).await;

    // A task after `since` (none: from the start): the answer is `me`'s, at once.
    let started = Instant::now();
    let (status, body) = get_as(&hub, &ALICE, "/api/v1/me/wait?timeout=55", "w-1").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(body["new"]["tasks"][0]["task"], offered.id.as_str());
    let cursor = body["cursor"].as_str().unwrap().to_owned();

    // Nothing after the cursor: `{"cursor"}` at the 1 s timeout, the same cursor.
    let started = Instant::now();
    let path = format!("/api/v1/me/wait?since={cursor}&timeout=1");
    let (status, body) = get_as(&hub, &ALICE, &path, "w-2").await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, json!({ "cursor": cursor }))
    );
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(hub.ronin.waiters.keys_waited_on(), 0);
}

#[tokio::test]
async fn a_wait_refuses_a_timeout_out_of_bounds_and_bad_auth_and_writes_nothing() {
    let hub = common::hub();
    market(&hub, None).await;
    let log = hub.log_len();
    for timeout in ["0", "56", "-1", "2.5", "soon", ""] {
        let path = format!("/api/v1/me/wait?timeout={timeout}");
        let header = nip98(&ALICE, &format!("{PUBLIC_URL}{path}"), NOW_S, "t");
        let (status, body) = hub.get_authorized(&path, Some(&header)).await;
        assert_eq!(
            (status, body["error"].as_str().unwrap()),
            (
                StatusCode::BAD_REQUEST,
                "invalid: timeout must be a whole number of seconds from 1 to 55"
            ),
            "{timeout}"
        );
        // Refused before anything is written or awaited.
        assert_eq!(hub.log_len(), log);
    }
    // The same auth event as `me`'s: the URL must be exactly this one.
    let header = nip98(&ALICE, &format!("{PUBLIC_URL}/api/v1/me"), NOW_S, "u");
    let (status, body) = hub
        .get_authorized("/api/v1/me/wait?timeout=1", Some(&header))
        .await;
    assert_eq!(
        (status, body["error"].as_str().unwrap()),
        (
            StatusCode::UNAUTHORIZED,
            "unauthorized: the auth event's u tag must be exactly the absolute URL called, query included"
        )
    );
    assert_eq!(
        hub.get_authorized("/api/v1/me/wait", None).await.0,
        StatusCode::UNAUTHORIZED
    );
    // Each auth event works once, as for `me`.
    let path = "/api/v1/me/wait?timeout=1";
    let header = nip98(&ALICE, &format!("{PUBLIC_URL}{path}"), NOW_S, "once");
    assert_eq!(
        hub.get_authorized(path, Some(&header)).await.0,
        StatusCode::OK
    );
    let (status, body) = hub.get_authorized(path, Some(&header)).await;
    assert_eq!(
        (status, body["error"].as_str().unwrap()),
        (
            StatusCode::UNAUTHORIZED,
            "unauthorized: this auth event was used already"
        )
    );
    assert_eq!(hub.log_len(), log);
    assert_eq!(hub.ronin.waiters.keys_waited_on(), 0);
}

/// A held wait keeps no part of its request (decision 393): its URI and `Authorization`
/// share one buffer, as hyper's request head shares the connection's read buffer; once the
/// waiter is parked nothing else holds that buffer, and the wait still wakes with its task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_wait_keeps_no_part_of_its_request_and_still_wakes_with_its_task() {
    use axum::body::{Body, Bytes};
    use axum::http::{HeaderValue, Request, Uri, header::AUTHORIZATION};
    use tower::ServiceExt as _;

    let hub = common::hub();
    market(&hub, None).await;
    let since = cursor_now(&hub, &ALICE, "c-held").await;
    let path = format!("/api/v1/me/wait?since={since}&timeout=30");
    let header = nip98(&ALICE, &format!("{PUBLIC_URL}{path}"), NOW_S, "w-held");
    let head = Bytes::from(format!("{path}{header}"));
    let uri = Uri::from_maybe_shared(head.slice(..path.len())).unwrap();
    let value = HeaderValue::from_maybe_shared(head.slice(path.len()..)).unwrap();
    let mut request = Request::get(uri).body(Body::empty()).unwrap();
    request.headers_mut().insert(AUTHORIZATION, value);
    assert!(!head.is_unique());
    let held = tokio::spawn(hub.router.clone().oneshot(request));
    let parked = Instant::now();
    while hub.ronin.waiters.keys_waited_on() == 0 {
        assert!(parked.elapsed() < Duration::from_secs(10), "never parked");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        head.is_unique(),
        "the held wait keeps a part of its request"
    );
    assert!(!held.is_finished());

    let offered = offer(&BOB, &key(&ALICE), "summaries", 2.0);
    accepted(&hub, &offered).await;
    let response = tokio::time::timeout(Duration::from_secs(10), held)
        .await
        .expect("woken well before its timeout")
        .unwrap()
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        body["new"]["tasks"][0]["task"],
        offered.id.as_str(),
        "{body}"
    );
    assert_eq!(hub.ronin.waiters.keys_waited_on(), 0);
}
