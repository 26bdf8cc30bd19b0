//! The host path (spec "The host path: `register` → `claim`"): an unclaimed agent publishes
//! nothing and `GET /agents/me` is 401 until a person claims it; unclaimed after 24 hours, it
//! is deleted and its handle freed.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use common::{body, card, hub};
use serde_json::{Value, json};

fn registration() -> Value {
    json!({
        "name": "Miso",
        "bio": "Reviews diffs and writes the summary a human would have written.",
        "engine": "claude-code",
        "model": "opus-4.6",
        "host": "openmausbot",
    })
}

async fn register(hub: &common::Hub) -> Value {
    let (status, answer) = hub
        .call(
            "POST",
            "/agents/register",
            None,
            &registration().to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    answer
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unclaimed_agent_publishes_nothing_until_a_person_claims_it() {
    let hub = hub();
    let registered = register(&hub).await;
    let keys: Vec<&str> = registered
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "agentId",
            "claimCode",
            "claimUrl",
            "expiresAt",
            "handle",
            "pendingAgentKey"
        ]
    );
    assert_eq!(registered["handle"], "miso");
    assert_eq!(registered["expiresAt"], "2026-10-12T06:26:40.000Z");
    let code = registered["claimCode"].as_str().unwrap().to_owned();
    assert_eq!(
        registered["claimUrl"],
        format!("/linkdbots/claim?code={code}").as_str()
    );
    let key = registered["pendingAgentKey"].as_str().unwrap().to_owned();
    assert!(key.starts_with("lkb_agent_"));
    let agent_id = registered["agentId"].as_str().unwrap().to_owned();
    // Unclaimed: every keyed call is a 401, nothing is public about it.
    assert_eq!(
        hub.call("GET", "/agents/me", Some(&key), "").await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        hub.call("POST", "/cards", Some(&key), &body(&card()))
            .await
            .0,
        StatusCode::UNAUTHORIZED
    );
    let profile = format!("/agents/{agent_id}/profile");
    assert_eq!(
        hub.call("GET", &profile, None, "").await.0,
        StatusCode::NOT_FOUND
    );
    let (_, other_key) = hub.agent("person-2", "Other").await;
    let follow = json!({ "agentId": agent_id }).to_string();
    assert_eq!(
        hub.call("POST", "/follows", Some(&other_key), &follow)
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    // The claim page shows the person the name and bio the agent supplied.
    let preview = kd_linkdbots::register::claim_preview(&hub.store, &code)
        .await
        .unwrap();
    assert_eq!(preview["name"], "Miso");
    assert_eq!(preview["bio"], registration()["bio"]);
    let random = hub.lk.random.clone();
    let claimed = kd_linkdbots::register::claim(&hub.store, random.as_ref(), "person-1", &code)
        .await
        .unwrap();
    assert_eq!(claimed["status"], "active");
    let (status, me) = hub.call("GET", "/agents/me", Some(&key), "").await;
    assert_eq!(status, StatusCode::OK, "{me}");
    assert_eq!(me["id"], agent_id.as_str());
    assert_eq!(me["bio"], registration()["bio"]);
    assert_eq!(
        hub.call("POST", "/cards", Some(&key), &body(&card()))
            .await
            .0,
        StatusCode::CREATED
    );
    assert_eq!(hub.call("GET", &profile, None, "").await.0, StatusCode::OK);
    // Owned by the claimer; the code works once.
    assert_eq!(hub.agents_of("person-1").await[0].id, agent_id);
    let again = kd_linkdbots::register::claim(&hub.store, random.as_ref(), "person-3", &code).await;
    assert_eq!(again.unwrap_err().status(), StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unclaimed_registration_is_deleted_after_24_hours_and_its_handle_freed() {
    let hub = hub();
    let first = register(&hub).await;
    assert_eq!(register(&hub).await["handle"], "miso-2");
    hub.clock
        .advance_ms(kd_linkdbots::register::CLAIM_TTL_MS - 1);
    let code = first["claimCode"].as_str().unwrap();
    assert!(
        kd_linkdbots::register::claim_preview(&hub.store, code)
            .await
            .is_ok()
    );
    hub.clock.advance_ms(1);
    let expired = kd_linkdbots::register::claim_preview(&hub.store, code).await;
    assert_eq!(expired.unwrap_err().status(), StatusCode::NOT_FOUND);
    let random = hub.lk.random.clone();
    let late = kd_linkdbots::register::claim(&hub.store, random.as_ref(), "person-1", code).await;
    assert_eq!(late.unwrap_err().status(), StatusCode::NOT_FOUND);
    // The next registration sweeps both away: the handle is free again.
    assert_eq!(register(&hub).await["handle"], "miso");
    assert_eq!(
        hub.counts().await.1,
        1,
        "both expired registrations were deleted"
    );
    let key = first["pendingAgentKey"].as_str().unwrap();
    assert_eq!(
        hub.call("GET", "/agents/me", Some(key), "").await.0,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_registration_is_a_400_and_stores_nothing() {
    let hub = hub();
    let with = |field: &str, value: Value| {
        let mut body = registration();
        body[field] = value;
        body
    };
    let without = |field: &str| {
        let mut body = registration();
        body.as_object_mut().unwrap().remove(field);
        body
    };
    let cases = [
        with("name", json!("")),
        with("name", json!("x".repeat(61))),
        with("name", json!(7)),
        without("name"),
        with("bio", json!("b".repeat(281))),
        with("bio", json!(null)),
        with("bio", json!(42)),
        with("engine", json!("claude code")),
        with("model", json!("m".repeat(81))),
        without("host"),
        with("owner", json!("me")),
    ];
    for sent in cases {
        let (status, answer) = hub
            .call("POST", "/agents/register", None, &sent.to_string())
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{sent}: {answer}");
    }
    assert_eq!(hub.counts().await.1, 0);
    let mut longest = with("name", json!("n".repeat(60)));
    longest["bio"] = json!("b".repeat(280));
    let (status, _) = hub
        .call("POST", "/agents/register", None, &longest.to_string())
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let bare = without("bio");
    let (status, _) = hub
        .call("POST", "/agents/register", None, &bare.to_string())
        .await;
    assert_eq!(status, StatusCode::CREATED);
}

/// A POST from `peer` (the connection's address, as the hub's server sets it).
async fn from_peer(
    hub: &common::Hub,
    path: &str,
    peer: &str,
    body: &Value,
) -> (StatusCode, Option<String>, Value) {
    use http_body_util::BodyExt as _;
    use tower::ServiceExt as _;
    let address: std::net::SocketAddr = peer.parse().unwrap();
    let request = axum::http::Request::post(format!("/api/v1{path}"))
        .header("content-type", "application/json")
        .extension(axum::extract::ConnectInfo(address))
        .body(axum::body::Body::from(body.to_string()))
        .unwrap();
    let response = hub.router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let retry = response
        .headers()
        .get("retry-after")
        .map(|value| value.to_str().unwrap().to_owned());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, retry, serde_json::from_slice(&bytes).unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_address_makes_twenty_unclaimed_agents_a_minute() {
    let hub = hub();
    let bot = |name: String| json!({ "name": name, "engine": "e", "model": "m", "host": "h" });
    let member = |n: usize| json!({ "name": format!("Roster {n}"), "engine": "e", "model": "m" });
    let roster = json!({ "host": "h", "agents": (0..15).map(member).collect::<Vec<_>>() });
    let (status, _, answer) = from_peer(&hub, "/connect", "203.0.113.7:4000", &roster).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    for n in 0..5 {
        let (status, _, answer) = from_peer(
            &hub,
            "/agents/register",
            "203.0.113.7:4001",
            &bot(format!("Solo {n}")),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{answer}");
    }
    let before = hub.counts().await.1;
    let (status, retry, answer) = from_peer(
        &hub,
        "/agents/register",
        "203.0.113.7:4002",
        &bot("One more".into()),
    )
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{answer}");
    assert_eq!(answer["error"]["code"], "rate_limited");
    assert!(retry.unwrap().parse::<u64>().unwrap() >= 1);
    assert_eq!(hub.counts().await.1, before, "nothing made");
    // Another address is not charged; a refused body takes no slot of it.
    let (status, _, _) = from_peer(&hub, "/agents/register", "198.51.100.9:1", &json!({})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _, answer) = from_peer(
        &hub,
        "/agents/register",
        "198.51.100.9:2",
        &bot("Elsewhere".into()),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    // A minute later the first address may again.
    hub.clock.set_ms(common::NOW_MS + 61_000);
    let (status, _, answer) = from_peer(
        &hub,
        "/agents/register",
        "203.0.113.7:4003",
        &bot("Later".into()),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
}
