//! Trust (section 8) as `GET /api/v1/agents/<pubkey>` and the agent lists show it, moved by
//! real signed events: a 5-star rating, a mismatched settlement, a referral, and time. The
//! expected scores are the spec's formula worked by hand in each comment.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use serde_json::{Value, json};

use common::market::{ALICE, BOB, CAROL, accepted, market, offer, only_template, task_as};
use common::{Hub, NOW_S, key, sign_template, signed};

async fn trust(hub: &Hub, secret: &[u8; 32]) -> Value {
    let (status, body) = hub
        .call("GET", &format!("/api/v1/agents/{}", key(secret)), "")
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["agent"]["trust"].clone()
}

/// Bob hires Alice, completes with the template's 5 stars, pays 2.5 and Alice acknowledges
/// `received` USDC.
async fn rated_task(hub: &Hub, received: &str) {
    let (alice, bob) = (key(&ALICE), key(&BOB));
    let offered = offer(&BOB, &alice, "summaries", 2.5);
    accepted(hub, &offered).await;
    let view = task_as(hub, &offered.id, &alice).await;
    let body = accepted(
        hub,
        &sign_template(&ALICE, NOW_S + 1, &only_template(&view, 1101)),
    )
    .await;
    accepted(
        hub,
        &sign_template(&ALICE, NOW_S + 2, &only_template(&body, 1102)),
    )
    .await;
    let view = task_as(hub, &offered.id, &bob).await;
    let body = accepted(
        hub,
        &sign_template(&BOB, NOW_S + 3, &only_template(&view, 1103)),
    )
    .await;
    let next = body["next"].as_array().unwrap().clone();
    let rating = sign_template(&BOB, NOW_S + 4, &next[0]);
    assert_eq!(rating.tag_value("rating"), Some("5"));
    accepted(hub, &rating).await;
    let paid = sign_template(&BOB, NOW_S + 5, &next[1]);
    accepted(hub, &paid).await;
    let received = signed(
        &ALICE,
        NOW_S + 6,
        1106,
        &[
            &["e", &paid.id],
            &["p", &bob],
            &["amount", received],
            &["currency", "USDC"],
        ],
        json!(""),
    );
    accepted(hub, &received).await;
}

#[tokio::test]
async fn ratings_mismatches_referrals_and_time_move_trust_by_the_formula() {
    let hub = common::hub();
    market(&hub, None).await;
    // Carol exists, and Alice's newer profile names Carol as her referrer.
    let carol = signed(&CAROL, NOW_S, 0, &[], json!({ "name": "Carol" }));
    accepted(&hub, &carol).await;
    let referred = signed(
        &ALICE,
        NOW_S + 1,
        0,
        &[&["referred_by", &key(&CAROL)]],
        json!({ "name": "Alice" }),
    );
    accepted(&hub, &referred).await;
    // A new agent is 3.00.
    let fresh = trust(&hub, &ALICE).await;
    assert_eq!(
        fresh,
        json!({"score": 3.0, "ratings": 0, "mismatches": 0, "referral": 0.0, "bench": 0.0})
    );

    rated_task(&hub, "2.0").await;
    // Alice: (5 + 9) / (1 + 3) - 0.25 = 3.25; Bob, who rated and paid, only the mismatch:
    // 3.00 - 0.25 = 2.75; Carol: one task Alice completed, +0.05 = 3.05.
    let alice = trust(&hub, &ALICE).await;
    assert_eq!(
        (alice["score"].as_f64(), alice["ratings"].as_u64()),
        (Some(3.25), Some(1))
    );
    assert_eq!(alice["mismatches"], 1);
    assert_eq!(trust(&hub, &BOB).await["score"], 2.75);
    let carol = trust(&hub, &CAROL).await;
    assert_eq!(
        (carol["score"].as_f64(), carol["referral"].as_f64()),
        (Some(3.05), Some(0.05))
    );

    // 90 days on the rating weighs half: (0.5 * 5 + 9) / (0.5 + 3) - 0.25 = 3.0357… → 3.04.
    hub.clock.advance_ms(90 * 86_400_000);
    assert_eq!(trust(&hub, &ALICE).await["score"], 3.04);

    // The lists show the same score.
    let (status, list) = hub.call("GET", "/api/v1/agents", "").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let listed = list["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|agent| agent["pubkey"] == key(&ALICE))
        .unwrap()
        .clone();
    assert_eq!(listed["trust"], json!({"score": 3.04, "ratings": 1}));
}
