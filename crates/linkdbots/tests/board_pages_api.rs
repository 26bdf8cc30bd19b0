//! The ranking that prefers host-signed evidence (decision 335), the leaderboard pages with
//! their SVG chart (decision 336) and the agents' avatars (decision 339).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use common::{OWNER_FOR_PAGES as OWNER, hub, made, put};
use kd_linkdbots::store::CardRow;
use serde_json::Value;

/// `n` cards of `model`, every other one a success, at `usd` each, with `provenance`.
fn row_of(model: &str, usd: f64, n: usize, provenance: &str, from: usize) -> Vec<CardRow> {
    (from..from + n)
        .map(|at| {
            let mut card = made(
                at,
                model,
                usd,
                100,
                Some(if at % 2 == 0 { "success" } else { "failure" }),
            );
            card.provenance = provenance.to_owned();
            card
        })
        .collect()
}

async fn board(hub: &common::Hub) -> Value {
    let (status, board) = hub.call("GET", "/benchmarks/code.review", None, "").await;
    assert_eq!(status, StatusCode::OK, "{board}");
    board
}

fn models(board: &Value) -> Vec<&str> {
    board["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["model"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_signed_row_outranks_an_equal_or_cheaper_self_reported_row() {
    let hub = hub();
    let mut cards = row_of("signed", 1.0, 10, "host-signed", 0);
    cards.extend(row_of("equal", 1.0, 10, "self-reported", 100));
    cards.extend(row_of("cheaper", 0.9, 10, "self-reported", 200));
    cards.extend(row_of("imported", 0.5, 10, "imported", 300));
    // Four signed outcomes are too few; five among eleven known are not half.
    cards.extend(row_of("few-signed", 0.8, 4, "host-signed", 400));
    cards.extend(row_of("few-signed", 0.8, 2, "self-reported", 404));
    cards.extend(row_of("minority", 0.7, 5, "host-signed", 500));
    cards.extend(row_of("minority", 0.7, 6, "self-reported", 505));
    put(&hub, cards).await;
    let board = board(&hub).await;
    assert_eq!(
        models(&board),
        [
            "signed",
            "imported",
            "minority",
            "few-signed",
            "cheaper",
            "equal"
        ]
    );
    let rows = board["rows"].as_array().unwrap();
    let signed = &rows[0];
    assert_eq!(signed["costPerSuccessUsd"], 2.0);
    assert_eq!(signed["evidence"], "host-signed");
    assert_eq!(
        (signed["tier"].clone(), signed["rank"].clone()),
        (1.into(), 1.into())
    );
    assert_eq!(signed["provenance"]["hostSigned"], 10);
    assert_eq!(signed["provenance"]["hostSignedOutcomes"], 10);
    let minority = &rows[2];
    assert_eq!(minority["evidence"], "unsigned");
    assert_eq!(minority["provenance"]["hostSigned"], 5);
    assert_eq!(minority["provenance"]["selfReported"], 6);
    assert_eq!(minority["tier"], 2);
    assert_eq!(rows[5]["rank"], 6);
    // The boundary: five signed among ten known outcomes is host-signed evidence.
    assert_eq!(kd_linkdbots::board::evidence(5, 10), "host-signed");
    assert_eq!(kd_linkdbots::board::evidence(5, 11), "unsigned");
    assert_eq!(kd_linkdbots::board::evidence(4, 4), "unsigned");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_row_without_a_cost_per_success_ranks_last_whatever_signed_it() {
    let hub = hub();
    let mut never = row_of("never", 1.0, 6, "host-signed", 0);
    for card in &mut never {
        card.outcome = Some("failure".to_owned());
    }
    put(&hub, never).await;
    put(&hub, row_of("works", 3.0, 6, "self-reported", 100)).await;
    let board = board(&hub).await;
    assert_eq!(models(&board), ["works", "never"]);
    assert_eq!(board["rows"][1]["tier"], 3);
}

fn bars(page: &str) -> usize {
    page.matches("<rect class=\"bar\"").count()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_category_page_prints_every_figure_with_its_rate_and_coverage_and_charts_the_costs() {
    let hub = hub();
    let mut cards = row_of("m-cheap", 1.0, 10, "host-signed", 0);
    cards.extend(row_of("m-dear", 4.0, 8, "self-reported", 100));
    // Never succeeded: 0% and unknown, never $0.
    let mut never = row_of("m-never", 0.5, 6, "self-reported", 200);
    for card in &mut never {
        card.outcome = Some("failure".to_owned());
    }
    cards.extend(never);
    // Three known outcomes: withheld.
    cards.extend(row_of("m-thin", 1.0, 3, "self-reported", 300));
    put(&hub, cards).await;
    let (status, kind, page) = hub.get_text("/benchmarks/code.review").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(kind, "text/html; charset=utf-8");
    assert!(!page.contains("<script"), "{page}");
    assert_eq!(bars(&page), 2, "{page}");
    assert!(page.contains("<svg class=\"chart\""), "{page}");
    // The chart's figure line and the table keep cost, rate and coverage together.
    assert!(
        page.contains("$2.00 per successful run · 50% success · outcome known on 10 of 10 cards"),
        "{page}"
    );
    assert!(page.contains("<td class=\"rate\">50%</td><td class=\"coverage\">outcome known on 10 of 10 cards</td><td class=\"cost\">$2.00</td><td class=\"tokens\">200</td>"), "{page}");
    assert!(page.contains("<td class=\"rate\">0%</td><td class=\"coverage\">outcome known on 6 of 6 cards</td><td class=\"cost\">unknown</td><td class=\"tokens\">unknown</td>"), "{page}");
    assert!(page.contains("<td class=\"rate\">withheld (under 5 known outcomes)</td><td class=\"coverage\">outcome known on 3 of 3 cards</td><td class=\"cost\">withheld (under 5 known outcomes)</td>"), "{page}");
    assert!(!page.contains("$0.00"), "{page}");
    assert!(
        page.contains("10 host-signed, 0 self-reported, 0 imported"),
        "{page}"
    );
    // The first bar is the top-ranked row's.
    let first = page.find("m-cheap · claude-code").unwrap();
    assert!(first < page.find("m-dear · claude-code").unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_index_lists_the_categories_with_their_cards_and_an_unknown_one_is_a_404_page() {
    let hub = hub();
    put(&hub, row_of("m", 1.0, 7, "self-reported", 0)).await;
    let (status, kind, page) = hub.get_text("/benchmarks").await;
    assert_eq!(
        (status, kind.as_str()),
        (StatusCode::OK, "text/html; charset=utf-8")
    );
    assert!(
        page.contains("<td><a href=\"/linkdbots/benchmarks/code.review\">code.review</a></td><td>Review a code change and report findings</td><td>7</td>"),
        "{page}"
    );
    assert!(page.contains("<a href=\"/linkdbots/benchmarks/other\">other</a>"));
    let (status, _, page) = hub.get_text("/benchmarks/code.nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(page.contains("<h1>Not found</h1>"), "{page}");
    // An empty category has a page, without a chart.
    let (status, _, page) = hub.get_text("/benchmarks/qa").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(bars(&page), 0);
    assert!(page.contains("No cards in this category yet."));
}

#[tokio::test(flavor = "multi_thread")]
async fn every_profile_has_an_avatar_drawn_from_its_id() {
    let hub = hub();
    let (agent_id, _) = hub.agent(OWNER, "Drawn").await;
    let (status, profile) = hub
        .call("GET", &format!("/agents/{agent_id}/profile"), None, "")
        .await;
    assert_eq!(status, StatusCode::OK);
    let avatar = format!("/linkdbots/api/v1/agents/{agent_id}/avatar.svg");
    assert_eq!(profile["avatar"], avatar.as_str());
    let (status, kind, svg) = hub.get_text(avatar.trim_start_matches("/linkdbots")).await;
    assert_eq!((status, kind.as_str()), (StatusCode::OK, "image/svg+xml"));
    assert_eq!(svg, kd_linkdbots::avatar::svg(&agent_id));
    let (status, kind, _) = hub.get_text("/api/v1/agents/agt_nobody/avatar.svg").await;
    assert_eq!(
        (status, kind.as_str()),
        (StatusCode::NOT_FOUND, "application/json")
    );
}
