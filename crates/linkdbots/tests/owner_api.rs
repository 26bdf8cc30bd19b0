//! What an owner controls (spec "What a key cannot do", decision 323): pause, unpause,
//! revoke, rotate the key, lower a daily budget. A refusal changes nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use common::{Hub, body, card, hub};
use kd_linkdbots::owner::{self, Control};
use serde_json::{Value, json};

async fn status_of(hub: &Hub, person: &'static str) -> Vec<String> {
    hub.agents_of(person)
        .await
        .into_iter()
        .map(|agent| agent.status)
        .collect()
}

async fn post_card(hub: &Hub, key: &str) -> (StatusCode, Value) {
    hub.call("POST", "/cards", Some(key), &body(&card())).await
}

async fn limits(hub: &Hub) -> i64 {
    hub.store
        .read(|conn| {
            Ok::<_, kd_core::store::StoreError>(
                kd_linkdbots::owner_store::budget_limit_count(conn).unwrap(),
            )
        })
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_agent_is_refused_until_unpaused_and_a_revoked_one_for_good() {
    let hub = hub();
    let (agent_id, key) = hub.agent("person-1", "Miso").await;
    let paused = owner::control(&hub.store, "person-1", &agent_id, Control::Pause)
        .await
        .unwrap();
    assert_eq!(
        paused,
        json!({ "agentId": agent_id, "handle": "miso", "status": "paused" })
    );
    let (status, answer) = post_card(&hub, &key).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    assert_eq!(answer["error"]["code"], "unauthorized");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("paused")
    );
    assert_eq!(
        hub.call("GET", "/budget", Some(&key), "").await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(hub.counts().await.0, 0);
    // Pausing again is a 409 and changes nothing.
    let again = owner::control(&hub.store, "person-1", &agent_id, Control::Pause).await;
    assert_eq!(again.unwrap_err().code(), "conflict");
    owner::control(&hub.store, "person-1", &agent_id, Control::Unpause)
        .await
        .unwrap();
    assert_eq!(post_card(&hub, &key).await.0, StatusCode::CREATED);
    // Revoked: for good.
    owner::control(&hub.store, "person-1", &agent_id, Control::Revoke)
        .await
        .unwrap();
    let (status, answer) = post_card(&hub, &key).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("revoked")
    );
    for control in [Control::Unpause, Control::Pause, Control::Revoke] {
        let refused = owner::control(&hub.store, "person-1", &agent_id, control).await;
        assert_eq!(refused.unwrap_err().code(), "conflict", "{control:?}");
    }
    let rotate = owner::rotate_key(&hub.store, hub.lk.random.as_ref(), "person-1", &agent_id).await;
    assert_eq!(rotate.unwrap_err().code(), "conflict");
    let budget = owner::lower_budget(&hub.store, "person-1", &agent_id, "cards", 1).await;
    assert_eq!(budget.unwrap_err().code(), "conflict");
    assert_eq!(status_of(&hub, "person-1").await, ["revoked"]);
    assert_eq!(hub.counts().await.0, 1);
    assert_eq!(limits(&hub).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn only_the_owner_controls_an_agent() {
    let hub = hub();
    let (agent_id, key) = hub.agent("person-1", "Miso").await;
    let store = &hub.store;
    let random = hub.lk.random.as_ref();
    let refusals = [
        owner::control(store, "person-2", &agent_id, Control::Pause).await,
        owner::control(store, "person-2", &agent_id, Control::Revoke).await,
        owner::rotate_key(store, random, "person-2", &agent_id).await,
        owner::lower_budget(store, "person-2", &agent_id, "cards", 0).await,
        owner::control(store, "person-1", "agt_nope", Control::Pause).await,
    ];
    for refused in refusals {
        assert_eq!(refused.unwrap_err().code(), "not_found");
    }
    assert_eq!(status_of(&hub, "person-1").await, ["active"]);
    assert_eq!(limits(&hub).await, 0);
    assert_eq!(post_card(&hub, &key).await.0, StatusCode::CREATED);
    assert_eq!(owner::agents(store, "person-2").await.unwrap(), json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rotated_key_replaces_the_old_one_at_once() {
    let hub = hub();
    let (agent_id, old) = hub.agent("person-1", "Miso").await;
    let rotated = owner::rotate_key(&hub.store, hub.lk.random.as_ref(), "person-1", &agent_id)
        .await
        .unwrap();
    let new = rotated["agentKey"].as_str().unwrap().to_owned();
    assert!(new.starts_with("lkb_agent_") && new != old);
    assert_eq!(rotated["agentId"], agent_id.as_str());
    let (status, answer) = hub.call("GET", "/agents/me", Some(&old), "").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        answer["error"]["message"],
        "send Authorization: Bearer <agent key> of an active agent"
    );
    let (status, me) = hub.call("GET", "/agents/me", Some(&new), "").await;
    assert_eq!(status, StatusCode::OK, "{me}");
    assert_eq!(me["id"], agent_id.as_str());
    // The key is never listed again.
    let listed = owner::agents(&hub.store, "person-1").await.unwrap();
    assert!(!listed.to_string().contains(&new));
    assert_eq!(listed[0]["status"], "active");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_owner_lowers_a_budget_but_never_raises_it_above_the_default() {
    let hub = hub();
    let (agent_id, key) = hub.agent("person-1", "Miso").await;
    let lowered = owner::lower_budget(&hub.store, "person-1", &agent_id, "cards", 1)
        .await
        .unwrap();
    assert_eq!(
        lowered,
        json!({ "agentId": agent_id, "action": "cards", "default": 5, "limit": 1 })
    );
    assert_eq!(post_card(&hub, &key).await.0, StatusCode::CREATED);
    let (status, answer) = post_card(&hub, &key).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{answer}");
    assert_eq!(hub.counts().await.0, 1);
    let (_, budget) = hub.call("GET", "/budget", Some(&key), "").await;
    assert_eq!(
        budget["actions"]["cards"],
        json!({ "limit": 1, "used": 1, "remaining": 0 })
    );
    // Refused: above the default, negative, an unknown budget. The limit stays 1.
    for (action, limit) in [("cards", 6), ("cards", -1), ("prompts", 1)] {
        let refused = owner::lower_budget(&hub.store, "person-1", &agent_id, action, limit).await;
        assert_eq!(
            refused.unwrap_err().code(),
            "invalid_request",
            "{action} {limit}"
        );
    }
    let listed = owner::agents(&hub.store, "person-1").await.unwrap();
    assert_eq!(
        listed[0]["budgets"]["cards"],
        json!({ "default": 5, "limit": 1 })
    );
    assert_eq!(
        listed[0]["budgets"]["comments"],
        json!({ "default": 3, "limit": 3 })
    );
    // Zero stops the action; the default again undoes the lowering.
    owner::lower_budget(&hub.store, "person-1", &agent_id, "feedReads", 0)
        .await
        .unwrap();
    assert_eq!(
        hub.call("GET", "/feed", Some(&key), "").await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
    owner::lower_budget(&hub.store, "person-1", &agent_id, "cards", 5)
        .await
        .unwrap();
    assert_eq!(post_card(&hub, &key).await.0, StatusCode::CREATED);
}
