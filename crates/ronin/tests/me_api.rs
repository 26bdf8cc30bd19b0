//! `GET /api/v1/me?since=` (Ronin "The key is the cookie"): NIP-98 auth on the exact URL,
//! each auth event once, the caller's new tasks with role and templates, and a cursor.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use serde_json::json;

use common::market::{ALICE, BOB, accepted, market, offer};
use common::{NOW_S, PUBLIC_URL, key, nip98, sign_template};

/// `me` refuses an auth event for another URL, one more than 60 s old, a missing header
/// (401 each), and a `since` that is no cursor (400).
async fn assert_me_refuses_bad_auth_and_a_bad_cursor(hub: &common::Hub, path: &str, since: &str) {
    // The URL must be exact (query included), the time within 60 s, the header present.
    for (header, error) in [
        (
            nip98(&ALICE, &format!("{PUBLIC_URL}{path}"), NOW_S, "n-3"),
            "unauthorized: the auth event's u tag must be exactly the absolute URL called, query included",
        ),
        (
            nip98(&ALICE, &format!("{PUBLIC_URL}{since}"), NOW_S - 61, "n-4"),
            "unauthorized: the auth event's created_at must be within 60 s of server time",
        ),
    ] {
        let (status, body) = hub.get_authorized(since, Some(&header)).await;
        assert_eq!(
            (status, body["error"].as_str().unwrap()),
            (StatusCode::UNAUTHORIZED, error)
        );
    }
    let (status, _) = hub.get_authorized(since, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let bad = format!("{path}?since=yesterday");
    let header = nip98(&ALICE, &format!("{PUBLIC_URL}{bad}"), NOW_S, "n-5");
    assert_eq!(
        hub.get_authorized(&bad, Some(&header)).await.0,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn me_answers_a_key_s_new_tasks_once_per_auth_event() {
    let hub = common::hub();
    market(&hub, None).await;
    let (alice, bob) = (key(&ALICE), key(&BOB));
    let offered = offer(&BOB, &alice, "summaries", 2.0);
    accepted(&hub, &offered).await;

    let path = "/api/v1/me";
    let header = nip98(&ALICE, &format!("{PUBLIC_URL}{path}"), NOW_S - 30, "n-1");
    let (status, body) = hub.get_authorized(path, Some(&header)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let tasks = body["new"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{body}");
    assert_eq!(tasks[0]["task"], offered.id.as_str());
    assert_eq!(tasks[0]["role"], "agent");
    assert_eq!(tasks[0]["counterparty"], bob.as_str());
    assert_eq!(tasks[0]["status"], "offered");
    assert_eq!(tasks[0]["accepted_by_terms"], false);
    assert_eq!(body["new"]["other_events"], 0);
    assert_eq!(body["next"][0]["kind"], 1101);
    let cursor = body["cursor"].as_str().unwrap().to_owned();

    // Each auth event works once.
    let (status, again) = hub.get_authorized(path, Some(&header)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        again["error"],
        "unauthorized: this auth event was used already"
    );

    // Nothing new since the cursor: the cursor alone.
    let since = format!("{path}?since={cursor}");
    let header = nip98(&ALICE, &format!("{PUBLIC_URL}{since}"), NOW_S, "n-2");
    let (status, body) = hub.get_authorized(&since, Some(&header)).await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, json!({ "cursor": cursor }))
    );

    assert_me_refuses_bad_auth_and_a_bad_cursor(&hub, path, &since).await;

    // Alice accepts on the template; Bob's me shows the change, with his role.
    let view = hub
        .call(
            "GET",
            &format!("/api/v1/tasks/{}?as={alice}", offered.id),
            "",
        )
        .await
        .1;
    let accept = sign_template(&ALICE, NOW_S + 1, &view["next"][0]);
    accepted(&hub, &accept).await;
    let header = nip98(&BOB, &format!("{PUBLIC_URL}{since}"), NOW_S, "n-6");
    let (status, body) = hub.get_authorized(&since, Some(&header)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let tasks = body["new"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{body}");
    assert_eq!(
        (tasks[0]["role"].as_str(), tasks[0]["status"].as_str()),
        (Some("buyer"), Some("accepted"))
    );
    assert_eq!(
        tasks[0]["next"],
        json!([]),
        "the buyer waits for the delivery"
    );
    assert_ne!(body["cursor"], cursor.as_str());
}

/// Issue 35: an auth event dated a full window ahead is still valid 120.6 s after it was
/// first used (the server's second rounds down), so its id is kept past that: the replay at
/// +120.6 s is refused, and the id is forgotten only once the event has expired too.
#[tokio::test]
async fn an_auth_event_replayed_at_the_last_valid_instant_is_still_refused() {
    let hub = common::hub();
    let path = "/api/v1/me";
    let url = format!("{PUBLIC_URL}{path}");
    let header = nip98(&ALICE, &url, NOW_S + 60, "n-edge");
    let (status, body) = hub.get_authorized(path, Some(&header)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    hub.clock.advance_ms(120_600);
    let (status, again) = hub.get_authorized(path, Some(&header)).await;
    assert_eq!(
        (status, again["error"].as_str().unwrap()),
        (
            StatusCode::UNAUTHORIZED,
            "unauthorized: this auth event was used already"
        )
    );
    // A second later the event itself has expired: refused for its time, not replayed.
    hub.clock.advance_ms(1_000);
    let (status, late) = hub.get_authorized(path, Some(&header)).await;
    assert_eq!(
        (status, late["error"].as_str().unwrap()),
        (
            StatusCode::UNAUTHORIZED,
            "unauthorized: the auth event's created_at must be within 60 s of server time"
        )
    );
    // Another auth taken now drops ids older than the keep time; the edge event's id is
    // forgotten only after it could no longer be accepted anyway.
    let fresh = nip98(&ALICE, &url, NOW_S + 122, "n-fresh");
    assert_eq!(
        hub.get_authorized(path, Some(&fresh)).await.0,
        StatusCode::OK
    );
}
