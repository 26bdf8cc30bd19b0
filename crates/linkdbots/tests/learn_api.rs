//! `GET /learn?category=&model=` (spec "Reading", decision 321): the key's own figures beside
//! the category's median and its best row, computed as the leaderboard computes them.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use common::{Hub, body, card, hub};
use serde_json::json;

/// Files five successful cards at `cost_usd` each, run on `model`, with the agent's key.
async fn five_cards(hub: &Hub, key: &str, model: &str, cost_usd: f64) {
    for _ in 0..5 {
        let mut sent = card();
        sent["model"] = json!(model);
        sent["costUsd"] = json!(cost_usd);
        let (status, filed) = hub.call("POST", "/cards", Some(key), &body(&sent)).await;
        assert_eq!(status, StatusCode::CREATED, "{filed}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_reads_its_own_figures_beside_the_median_and_the_best_run() {
    let hub = hub();
    let (_, mine) = hub.agent("person-1", "Miso").await;
    let (_, cheaper) = hub.agent("person-2", "Thrift").await;
    five_cards(&hub, &mine, "opus-4.6", 1.0).await;
    five_cards(&hub, &cheaper, "haiku-4", 0.5).await;
    let (status, learned) = hub
        .call("GET", "/learn?category=code.review", Some(&mine), "")
        .await;
    assert_eq!(status, StatusCode::OK, "{learned}");
    assert_eq!(learned["category"], "code.review");
    assert_eq!(learned["model"], json!(null));
    assert_eq!(learned["you"]["cards"], 5);
    assert_eq!(learned["you"]["costPerSuccessUsd"], 1.0);
    assert_eq!(learned["you"]["coverage"], "outcome known on 5 of 5 cards");
    assert_eq!(learned["categorySummary"]["cards"], 10);
    assert_eq!(learned["best"]["model"], "haiku-4");
    assert_eq!(learned["best"]["costPerSuccessUsd"], 0.5);
    assert_eq!(
        learned["compare"]["costUsd"],
        json!({ "you": 1.0, "median": 0.75, "best": 0.5, "youVsMedian": 1.0 / 0.75 })
    );
    assert_eq!(
        learned["compare"]["successRate"],
        json!({ "you": 1.0, "median": 1.0, "best": 1.0, "youVsMedian": 1.0 })
    );
    // The model filter applies on every side: only its own model's cards are left.
    let (_, opus) = hub
        .call(
            "GET",
            "/learn?category=code.review&model=opus-4.6",
            Some(&mine),
            "",
        )
        .await;
    assert_eq!(opus["model"], "opus-4.6");
    assert_eq!(opus["categorySummary"]["cards"], 5);
    assert_eq!(opus["best"]["model"], "opus-4.6");
    assert_eq!(opus["compare"]["costUsd"]["youVsMedian"], 1.0);
    // The other agent, in a category where neither filed: nothing known, nothing derived.
    let (_, empty) = hub
        .call("GET", "/learn?category=qa", Some(&cheaper), "")
        .await;
    assert_eq!(empty["you"]["cards"], 0);
    assert_eq!(empty["best"], json!(null));
    assert_eq!(empty["compare"]["costUsd"]["you"], json!(null));
    // Reading it spends no budget.
    let (_, budget) = hub.call("GET", "/budget", Some(&mine), "").await;
    assert_eq!(budget["actions"]["feedReads"]["used"], 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn learn_needs_a_key_and_a_known_category() {
    let hub = hub();
    let (_, key) = hub.agent("person-1", "Miso").await;
    let (status, answer) = hub
        .call("GET", "/learn?category=code.review", None, "")
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    assert_eq!(answer["error"]["code"], "unauthorized");
    // 401 comes before the query is read.
    let (status, _) = hub
        .call("GET", "/learn?category=nope", Some("lkb_agent_x"), "")
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    for query in [
        "",
        "?category=nope",
        "?model=opus-4.6",
        "?category=code.review&model=has%20space",
        "?category=code.review&prompt=x",
    ] {
        let (status, answer) = hub
            .call("GET", &format!("/learn{query}"), Some(&key), "")
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {answer}");
        assert_eq!(answer["error"]["code"], "invalid_request");
    }
}
