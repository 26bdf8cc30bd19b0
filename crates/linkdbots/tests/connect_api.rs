//! `POST /connect` (spec "The host path: `register` → `claim`, and `connect`", decision
//! 325): a host reports its bots and teams, gets one claim URL, and a signed-in person
//! approves the whole roster in one pass. Unapproved after 24 hours, it is deleted.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use common::{Hub, hub};
use kd_linkdbots::connect;
use serde_json::{Value, json};

fn roster() -> Value {
    json!({
        "host": "openmausbot",
        "agents": [
            { "name": "Miso", "bio": "Reviews diffs.", "engine": "claude-code", "model": "opus-4.6" },
            { "name": "Dashi", "engine": "codex", "model": "gpt-5" },
        ],
        "teams": [{ "name": "Kitchen", "members": ["miso", "Dashi"] }],
    })
}

async fn report(hub: &Hub, sent: &Value) -> Value {
    let (status, answer) = hub.call("POST", "/connect", None, &sent.to_string()).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    answer
}

fn keys(answer: &Value) -> Vec<String> {
    answer["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|agent| agent["pendingAgentKey"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_approves_a_whole_roster_in_one_pass() {
    let hub = hub();
    let answer = report(&hub, &roster()).await;
    let code = answer["claimCode"].as_str().unwrap().to_owned();
    assert_eq!(
        answer["claimUrl"],
        format!("/linkdbots/connect?code={code}").as_str()
    );
    assert_eq!(answer["expiresAt"], "2026-10-12T06:26:40.000Z");
    assert_eq!(
        answer["teams"],
        json!([{ "name": "Kitchen", "members": ["miso", "dashi"] }])
    );
    let ids: Vec<String> = answer["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|agent| agent["agentId"].as_str().unwrap().to_owned())
        .collect();
    // Unclaimed: the keys answer 401 and nothing is public.
    for key in keys(&answer) {
        assert_eq!(
            hub.call("GET", "/agents/me", Some(&key), "").await.0,
            StatusCode::UNAUTHORIZED
        );
    }
    let profile = format!("/agents/{}/profile", ids[0]);
    assert_eq!(
        hub.call("GET", &profile, None, "").await.0,
        StatusCode::NOT_FOUND
    );
    // The page shows what the host supplied.
    let preview = connect::preview(&hub.store, &code).await.unwrap();
    assert_eq!(preview["host"], "openmausbot");
    assert_eq!(preview["agents"][0]["name"], "Miso");
    assert_eq!(preview["agents"][0]["bio"], "Reviews diffs.");
    assert_eq!(preview["agents"][1]["bio"], json!(null));
    assert_eq!(preview["teams"][0]["members"], json!(["miso", "dashi"]));
    let approved = connect::approve(&hub.store, hub.lk.random.as_ref(), "person-1", &code)
        .await
        .unwrap();
    assert_eq!(approved["agents"][1]["status"], "active");
    let team_id = approved["teams"][0]["id"].as_str().unwrap().to_owned();
    for (key, id) in keys(&answer).iter().zip(&ids) {
        let (status, me) = hub.call("GET", "/agents/me", Some(key), "").await;
        assert_eq!(status, StatusCode::OK, "{me}");
        assert_eq!(&me["id"], id.as_str());
        assert_eq!(me["teams"][0]["id"], team_id.as_str());
    }
    let (_, miso) = hub.call("GET", &profile, None, "").await;
    assert_eq!(miso["bio"], "Reviews diffs.");
    assert_eq!(miso["host"], "openmausbot");
    let (_, team) = hub
        .call("GET", &format!("/teams/{team_id}"), None, "")
        .await;
    assert_eq!(team["members"].as_array().unwrap().len(), 2);
    assert_eq!(hub.agents_of("person-1").await.len(), 2);
    // Used: the code is gone, for everyone.
    for person in ["person-1", "person-2"] {
        let again = connect::approve(&hub.store, hub.lk.random.as_ref(), person, &code).await;
        assert_eq!(again.unwrap_err().code(), "not_found");
    }
    assert_eq!(
        connect::preview(&hub.store, &code)
            .await
            .unwrap_err()
            .code(),
        "not_found"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_roster_stores_nothing() {
    let hub = hub();
    let with = |field: &str, value: Value| {
        let mut sent = roster();
        sent[field] = value;
        sent
    };
    let bot = |name: &str| json!({ "name": name, "engine": "e", "model": "m" });
    let many: Vec<Value> = (0..21).map(|at| bot(&format!("bot {at}"))).collect();
    let refusals = [
        with("prompt", json!("x")),
        with("host", json!("has space")),
        with("agents", json!([])),
        with("agents", json!(many)),
        with("agents", json!([bot("Miso"), bot("miso")])),
        with(
            "agents",
            json!([{ "name": "Miso", "engine": "e", "model": "m", "key": "k" }]),
        ),
        with(
            "agents",
            json!([{ "name": "Miso", "engine": "e e", "model": "m" }]),
        ),
        with(
            "agents",
            json!([{ "name": "Miso", "bio": "a\nb", "engine": "e", "model": "m" }]),
        ),
        // A bio is absent or text: null and a number are refused (schemathesis found null).
        with(
            "agents",
            json!([{ "name": "Miso", "bio": null, "engine": "e", "model": "m" }]),
        ),
        with(
            "agents",
            json!([{ "name": "Miso", "bio": 7, "engine": "e", "model": "m" }]),
        ),
        with("teams", json!([{ "name": "T", "members": ["nobody"] }])),
        with(
            "teams",
            json!([{ "name": "T", "members": ["Miso", "miso"] }]),
        ),
        with("teams", json!([{ "name": "T", "members": [] }])),
    ];
    for sent in &refusals {
        let (status, answer) = hub.call("POST", "/connect", None, &sent.to_string()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{sent}: {answer}");
        assert_eq!(answer["error"]["code"], "invalid_request");
    }
    assert_eq!(hub.counts().await, (0, 0));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unapproved_roster_expires_after_24_hours_and_its_handles_are_freed() {
    let hub = hub();
    let answer = report(&hub, &roster()).await;
    let code = answer["claimCode"].as_str().unwrap().to_owned();
    assert_eq!(hub.counts().await.1, 2);
    hub.clock.advance_ms(24 * 60 * 60 * 1000);
    assert_eq!(
        connect::preview(&hub.store, &code)
            .await
            .unwrap_err()
            .code(),
        "not_found"
    );
    let late = connect::approve(&hub.store, hub.lk.random.as_ref(), "person-1", &code).await;
    assert_eq!(late.unwrap_err().code(), "not_found");
    assert!(hub.agents_of("person-1").await.is_empty());
    // The next roster deletes the expired one's agents: the handles are free again.
    let again = report(&hub, &roster()).await;
    assert_eq!(again["agents"][0]["handle"], "miso");
    assert_eq!(hub.counts().await.1, 2);
}
