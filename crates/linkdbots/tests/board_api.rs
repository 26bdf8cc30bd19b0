//! The leaderboard formulas (spec "`outcome`, and what a successful run costs") on hand-made
//! cards: success rate, cost and tokens per successful run, coverage, the minimum of 5 known
//! outcomes, zero successes, outliers (decision 203) and digests.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use common::{hub, made, put};
use kd_linkdbots::store::CardRow;
use serde_json::{Value, json};

async fn fetch_board(hub: &common::Hub) -> Value {
    let (status, board) = hub.call("GET", "/benchmarks/code.review", None, "").await;
    assert_eq!(status, StatusCode::OK, "{board}");
    board
}

fn row<'a>(board: &'a Value, model: &str) -> &'a Value {
    board["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["model"] == model)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn failures_are_charged_to_the_successes() {
    let hub = hub();
    // Ten $1 runs of 100 tokens, five of which worked: $2 and 200 tokens per successful run.
    let cards = (0..10)
        .map(|n| {
            made(
                n,
                "m1",
                1.0,
                100,
                Some(if n % 2 == 0 { "success" } else { "failure" }),
            )
        })
        .collect();
    put(&hub, cards).await;
    let board = fetch_board(&hub).await;
    let m1 = row(&board, "m1");
    assert_eq!(m1["successRate"], 0.5);
    assert_eq!(m1["costPerSuccessUsd"], 2.0);
    assert_eq!(m1["tokensPerSuccess"], 200.0);
    assert_eq!(m1["coverage"], "outcome known on 10 of 10 cards");
    assert_eq!(m1["derived"], true);
    assert_eq!(m1["medians"]["costUsd"], 1.0);
    assert_eq!(m1["medians"]["turns"], 3.0);
    assert_eq!(m1["medians"]["toolCalls"], Value::Null);
    assert_eq!(board["summary"]["costPerSuccessUsd"], 2.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn under_five_known_outcomes_the_coverage_is_published_and_the_figures_withheld() {
    let hub = hub();
    let mut cards: Vec<CardRow> = (0..4)
        .map(|n| made(n, "m1", 1.0, 10, Some("success")))
        .collect();
    cards.extend((4..7).map(|n| made(n, "m1", 1.0, 10, None)));
    put(&hub, cards).await;
    let m1 = row(&fetch_board(&hub).await, "m1").clone();
    assert_eq!(m1["coverage"], "outcome known on 4 of 7 cards");
    assert_eq!(m1["derived"], false);
    assert_eq!(m1["successRate"], Value::Null);
    assert_eq!(m1["costPerSuccessUsd"], Value::Null);
    assert_eq!(m1["tokensPerSuccess"], Value::Null);
    // Unknown outcomes are on neither side: a fifth known outcome derives over 5, not 8
    // (and at $1.50 it is under the row's outlier fence of twice the median).
    put(&hub, vec![made(7, "m1", 1.5, 10, Some("failure"))]).await;
    let m1 = row(&fetch_board(&hub).await, "m1").clone();
    assert_eq!(m1["coverage"], "outcome known on 5 of 8 cards");
    assert_eq!(m1["successRate"], 0.8);
    assert_eq!(m1["costPerSuccessUsd"], 5.5 / 4.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_group_that_never_succeeded_has_a_zero_rate_and_an_unknown_cost() {
    let hub = hub();
    put(
        &hub,
        (0..6)
            .map(|n| made(n, "m1", 0.0, 0, Some("failure")))
            .collect(),
    )
    .await;
    let m1 = row(&fetch_board(&hub).await, "m1").clone();
    assert_eq!(m1["successRate"], 0.0);
    assert_eq!(m1["costPerSuccessUsd"], Value::Null);
    assert_eq!(m1["tokensPerSuccess"], Value::Null);
    assert_eq!(m1["derived"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn outliers_and_digests_count_in_no_median_and_no_fraction() {
    let hub = hub();
    let mut cards: Vec<CardRow> = (0..9)
        .map(|n| made(n, "m1", 1.0, 100, Some("success")))
        .collect();
    // A $100 run is an outlier of its row (fence max(Q3 + 3 IQR, 2 × median) = $2).
    cards.push(made(9, "m1", 100.0, 100, Some("failure")));
    // So is a run of 10,000 tokens.
    cards.push(made(10, "m1", 1.0, 10_000, Some("failure")));
    // A digest: on the record, in no figure.
    let mut digest = made(11, "m1", 500.0, 50_000, None);
    digest.is_digest = true;
    cards.push(digest);
    put(&hub, cards).await;
    let board = fetch_board(&hub).await;
    assert_eq!(board["window"]["cards"], 12);
    assert_eq!(board["window"]["digestsExcluded"], 1);
    assert_eq!(board["window"]["outliersExcluded"], 2);
    let m1 = row(&board, "m1");
    assert_eq!(m1["cards"], 9);
    assert_eq!(m1["outliersExcluded"], 2);
    assert_eq!(m1["successRate"], 1.0);
    assert_eq!(m1["costPerSuccessUsd"], 1.0);
    assert_eq!(m1["medians"]["tokensIn"], 100.0);
    assert_eq!(
        board["summary"]["coverage"],
        "outcome known on 9 of 9 cards"
    );
    // A row too small for the outlier test keeps its expensive card.
    let hub = common::hub();
    let mut small: Vec<CardRow> = (0..6)
        .map(|n| made(n, "m2", 1.0, 1, Some("success")))
        .collect();
    small.push(made(6, "m2", 100.0, 1, Some("failure")));
    put(&hub, small).await;
    let m2 = row(&fetch_board(&hub).await, "m2").clone();
    assert_eq!(m2["outliersExcluded"], 0);
    assert_eq!(m2["costPerSuccessUsd"], 106.0 / 6.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn rows_rank_the_cheapest_successful_run_first_and_categories_are_listed() {
    let hub = hub();
    let mut cards: Vec<CardRow> = (0..5)
        .map(|n| made(n, "dear", 4.0, 1, Some("success")))
        .collect();
    cards.extend((0..5).map(|n| made(n, "cheap", 1.0, 1, Some("success"))));
    cards.extend((0..2).map(|n| made(n, "thin", 0.01, 1, Some("success"))));
    put(&hub, cards).await;
    let board = fetch_board(&hub).await;
    let models: Vec<&str> = board["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["model"].as_str().unwrap())
        .collect();
    assert_eq!(models, ["cheap", "dear", "thin"]);
    let (status, missing) = hub.call("GET", "/benchmarks/code.nothing", None, "").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(missing["error"]["code"], "not_found");
    let (_, list) = hub.call("GET", "/categories", None, "").await;
    let list = list["categories"].as_array().unwrap();
    assert_eq!(list.len(), 73);
    assert_eq!(
        list[0],
        json!({ "category": "code.review", "description": "Review a code change and report findings" })
    );
    assert_eq!(list[72]["category"], "other");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_leaderboard_is_computed_again_only_when_its_category_gets_a_card() {
    let hub = hub();
    let cards = (0..6)
        .map(|n| made(n, "m1", 1.0, 100, Some("success")))
        .collect();
    put(&hub, cards).await;
    assert_eq!(row(&fetch_board(&hub).await, "m1")["cards"], 6);
    // A row slipped into the table without counting it (no store function does this): the
    // process still answers the leaderboard it computed, which shows the cache is used.
    hub.store
        .write(|txn| {
            txn.conn().execute(
                "INSERT INTO linkdbots_cards (id, category, tokens_in, tokens_out, model, engine,
                   host, occurred_ms, is_digest, playbook_refs, provenance, created_ms)
                 VALUES ('crd_uncounted', 'code.review', 1, 1, 'm1', 'claude-code',
                   'openmausbot', ?1, 0, '[]', 'self-reported', ?1)",
                kd_core::params![common::NOW_MS],
            )
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row(&fetch_board(&hub).await, "m1")["cards"], 6);
    // A card written by the store (the API, an import, another process) counts: recomputed.
    put(&hub, vec![made(9, "m1", 1.0, 100, Some("failure"))]).await;
    assert_eq!(row(&fetch_board(&hub).await, "m1")["cards"], 8);
    // Another category's card leaves this one's version alone.
    let mut other = made(10, "m1", 1.0, 100, Some("success"));
    other.category = "qa".to_owned();
    put(&hub, vec![other]).await;
    let version = hub
        .store
        .read(|conn| {
            kd_linkdbots::store::board_version(conn, "code.review")
                .map_err(kd_linkdbots::ApiError::from)
        })
        .await
        .unwrap();
    assert_eq!(version, 7);
}
