//! `GET /api/v1/agents?human=1` (the keys the operator certified, section 8 "People") and
//! `GET /api/v1/agents/<pubkey>/inbox` (every offer ever addressed to the lineage, section 10).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use kd_protocol::nostr::sign_schnorr;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use common::market::{ALICE, BOB, CAROL, accepted, listing, market, offer, offer_on, profile};
use common::{Hub, NOW_S, key, signed};

/// Alice's next key.
const ALICE_NEW: [u8; 32] = [0x12; 32];

/// The hub's test operator key (its seed draw is [1; 32]).
const OPERATOR: [u8; 32] = [1; 32];

fn certify(of: &str, human: bool, at: u64) -> kd_protocol::nostr::Event {
    signed(
        &OPERATOR,
        at,
        1110,
        &[&["p", of]],
        json!({ "human": human }),
    )
}

async fn listed(hub: &Hub, path: &str) -> Vec<String> {
    let (status, body) = hub.call("GET", path, "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|agent| agent["pubkey"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn human_1_lists_only_the_keys_the_operator_certifies() {
    let hub = common::hub();
    market(&hub, None).await;
    let (alice, bob, carol) = (key(&ALICE), key(&BOB), key(&CAROL));
    // Carol only says she is a person: self-declared is not vouched.
    let carol_profile = signed(
        &CAROL,
        NOW_S,
        0,
        &[],
        json!({"name": "Carol", "human": true}),
    );
    accepted(&hub, &carol_profile).await;
    assert_eq!(
        listed(&hub, "/api/v1/agents?human=1").await,
        Vec::<String>::new()
    );

    accepted(&hub, &certify(&alice, true, NOW_S + 1)).await;
    accepted(&hub, &certify(&bob, true, NOW_S + 1)).await;
    // Latest wins: the operator withdraws Bob.
    accepted(&hub, &certify(&bob, false, NOW_S + 2)).await;
    assert_eq!(
        listed(&hub, "/api/v1/agents?human=1").await,
        [alice.as_str()]
    );
    assert_eq!(
        listed(&hub, "/api/v1/agents?human=true").await,
        [alice.as_str()]
    );
    let (_, body) = hub.call("GET", "/api/v1/agents?human=1", "").await;
    assert_eq!(body["agents"][0]["certified"], true);
    assert_eq!(
        body["agents"][0]["human"], false,
        "Alice's profile declares nothing"
    );

    // Without the filter every agent, each with its own `certified`.
    let (_, body) = hub.call("GET", "/api/v1/agents?human=0", "").await;
    let certified: Vec<(String, Value)> = body["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|agent| {
            (
                agent["pubkey"].as_str().unwrap().to_owned(),
                agent["certified"].clone(),
            )
        })
        .collect();
    assert_eq!(certified.len(), 3, "{body}");
    for (pubkey, flag) in certified {
        assert_eq!(flag, json!(pubkey == alice), "{pubkey}");
    }
    assert!(listed(&hub, "/api/v1/agents").await.contains(&carol));

    let log = hub.log_len();
    let (status, body) = hub.call("GET", "/api/v1/agents?human=yes", "").await;
    assert_eq!(
        (status, body["error"].as_str().unwrap()),
        (StatusCode::BAD_REQUEST, "invalid: human must be 1 or 0")
    );
    assert_eq!(hub.log_len(), log);
}

async fn inbox(hub: &Hub, path: &str) -> Value {
    let (status, body) = hub.call("GET", path, "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

fn tasks(body: &Value) -> Vec<&str> {
    body["offers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|offer| offer["task"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn the_inbox_holds_every_offer_addressed_to_the_lineage_newest_first() {
    let hub = common::hub();
    market(&hub, None).await;
    let (alice, bob) = (key(&ALICE), key(&BOB));
    accepted(&hub, &profile(&CAROL, "Carol")).await;
    let first = offer(&BOB, &alice, "summaries", 2.0);
    let second = offer(&CAROL, &alice, "summaries", 3.5);
    accepted(&hub, &first).await;
    accepted(&hub, &second).await;
    // A wanted listing of Bob's: Alice's offer on it is addressed to Bob.
    let wanted = listing(
        &BOB,
        "need-a-logo",
        json!({"title": "A logo", "type": "wanted"}),
    );
    accepted(&hub, &wanted).await;
    let answer = offer_on(
        &ALICE,
        &bob,
        "need-a-logo",
        &bob,
        json!({"scope": "I draw it.", "price": 5, "currency": "USDC"}),
    );
    accepted(&hub, &answer).await;

    let body = inbox(&hub, &format!("/api/v1/agents/{alice}/inbox")).await;
    assert_eq!(
        tasks(&body),
        [second.id.as_str(), first.id.as_str()],
        "{body}"
    );
    assert_eq!(body["total"], 2);
    assert_eq!(body["pubkey"], alice.as_str());
    let newest = &body["offers"][0];
    assert_eq!(newest["from"], key(&CAROL).as_str());
    assert_eq!(newest["to"], alice.as_str());
    assert_eq!(newest["status"], "offered");
    assert_eq!(newest["type"], "service");
    assert_eq!(newest["price"], 3.5);
    assert_eq!(newest["currency"], "USDC");
    assert_eq!(newest["scope"], "Summarise this PDF in five bullets.");
    assert_eq!(newest["scan"]["level"], "clean");
    assert_eq!(newest["created_at"], NOW_S);
    assert_eq!(newest["address"], format!("31100:{alice}:summaries"));

    let body = inbox(&hub, &format!("/api/v1/agents/{bob}/inbox")).await;
    assert_eq!(tasks(&body), [answer.id.as_str()]);
    assert_eq!(body["offers"][0]["type"], "wanted");

    // Paging.
    let body = inbox(
        &hub,
        &format!("/api/v1/agents/{alice}/inbox?limit=1&offset=1"),
    )
    .await;
    assert_eq!(tasks(&body), [first.id.as_str()]);
    assert_eq!(body["total"], 2);

    // A key never seen, and a bad page.
    let stranger = key(&[0x55; 32]);
    let (status, body) = hub
        .call("GET", &format!("/api/v1/agents/{stranger}/inbox"), "")
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("error: not found"))
    );
    let (status, _) = hub
        .call("GET", &format!("/api/v1/agents/{alice}/inbox?limit=0"), "")
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn stats_sources_counts_agents_per_door() {
    let hub = common::hub();
    let (status, body) = hub.call("GET", "/api/v1/stats/sources", "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({
            "ok": true,
            "sources": {"web": 0, "curl": 0, "client": 0, "worker": 0, "mcp": 0, "plugin": 0},
            "none": 0,
            "total": 0,
        })
    );
    let with_source = |secret: &[u8; 32], source: &str, at: u64| {
        signed(
            secret,
            at,
            0,
            &[&["source", source]],
            json!({"name": "Agent"}),
        )
    };
    accepted(&hub, &with_source(&ALICE, "curl", NOW_S)).await;
    accepted(&hub, &with_source(&BOB, "curl", NOW_S)).await;
    accepted(&hub, &with_source(&CAROL, "mcp", NOW_S)).await;
    accepted(&hub, &profile(&[0x44; 32], "No door")).await;
    // Latest wins: Carol's newer profile names another door; she counts once.
    accepted(&hub, &with_source(&CAROL, "client", NOW_S + 1)).await;
    let (_, body) = hub.call("GET", "/api/v1/stats/sources", "").await;
    assert_eq!(
        (&body["sources"], &body["none"], &body["total"]),
        (
            &json!({"web": 0, "curl": 2, "client": 1, "worker": 0, "mcp": 0, "plugin": 0}),
            &json!(1),
            &json!(4)
        )
    );
}

#[tokio::test]
async fn the_inbox_of_either_key_of_a_rotated_lineage_is_the_lineage_s() {
    let hub = common::hub();
    market(&hub, None).await;
    let alice = key(&ALICE);
    let first = offer(&BOB, &alice, "summaries", 2.0);
    accepted(&hub, &first).await;

    // Alice rotates: either key's inbox is the lineage's, newest first, under the head key.
    let alice_new = key(&ALICE_NEW);
    let digest = Sha256::digest(hex::decode(&alice).unwrap());
    let proof = hex::encode(sign_schnorr(&ALICE_NEW, &digest, &[0; 32]).unwrap());
    let rotate = signed(
        &ALICE,
        NOW_S + 1,
        1107,
        &[&["p", &alice_new], &["proof", &proof]],
        json!(""),
    );
    accepted(&hub, &rotate).await;
    let third = offer_on(
        &BOB,
        &alice,
        "summaries",
        &alice_new,
        json!({"scope": "Another one.", "price": 1, "currency": "USDC"}),
    );
    accepted(&hub, &third).await;
    for asked in [&alice, &alice_new] {
        let body = inbox(&hub, &format!("/api/v1/agents/{asked}/inbox")).await;
        assert_eq!(
            tasks(&body),
            [third.id.as_str(), first.id.as_str()],
            "{body}"
        );
        assert_eq!(body["pubkey"], alice_new.as_str());
        assert_eq!(body["keys"], json!([alice_new, alice]));
    }
}
