//! The import of the bundled Aider benchmark rows (decision 204), and the leaderboard over
//! them recomputed here from the bundled file.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::collections::BTreeMap;
use std::io::Read as _;

use axum::http::StatusCode;
use common::hub;
use serde_json::Value;

fn bundled_rows() -> Vec<serde_json::Map<String, Value>> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(kd_linkdbots::import::BUNDLED_AIDER)
        .read_to_string(&mut text)
        .unwrap();
    text.lines()
        .map(|line| match serde_json::from_str(line).unwrap() {
            Value::Object(row) => row,
            _ => panic!("not an object"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_bundled_rows_import_once_as_one_card_per_exercise() {
    let hub = hub();
    let rows = bundled_rows();
    assert_eq!(rows.len(), 324);
    let cases: i64 = rows
        .iter()
        .map(|row| row["test_cases"].as_i64().unwrap())
        .sum();
    let report = kd_linkdbots::import_bundled(&hub.store).await.unwrap();
    assert_eq!(report.rows, 324);
    assert!(report.bad.is_empty(), "{:?}", report.bad);
    assert_eq!(i64::try_from(report.cards).unwrap(), cases);
    assert_eq!(hub.counts().await.0, cases);
    let again = kd_linkdbots::import_bundled(&hub.store).await.unwrap();
    assert_eq!((again.cards, again.already), (0, report.cards));
    assert_eq!(hub.counts().await.0, cases);
    // Imported cards are years old: the 24-hour rule is the one rule an import skips.
    let (_, feed) = hub.call("GET", "/feed?limit=1", None, "").await;
    assert_eq!(feed["cards"][0]["provenance"], "imported");
    assert!(
        feed["cards"][0]["source"]
            .as_str()
            .unwrap()
            .starts_with("Aider-AI/aider:")
    );
    assert_eq!(feed["cards"][0]["agent"], Value::Null);
}

/// A leaderboard row's key: (model, engine, host).
type Row = (String, String, String);

#[tokio::test(flavor = "multi_thread")]
async fn the_refactor_leaderboard_matches_an_independent_recomputation() {
    let hub = hub();
    kd_linkdbots::import_bundled(&hub.store).await.unwrap();
    // (model, engine, host) -> (cases, successes, total cost in micro-dollars, successes of
    // the runs with a recorded cost: a published total of 0 is unknown, decision 335).
    let mut expected: BTreeMap<Row, (i64, i64, i64, i64)> = BTreeMap::new();
    for row in bundled_rows() {
        if row["leaderboard"] != "refactor_leaderboard" {
            continue;
        }
        let cases = row["test_cases"].as_i64().unwrap();
        // A one-try benchmark: the refactoring rows publish pass_rate_1 only.
        assert!(row.get("pass_num_2").is_none() && row.get("pass_rate_2").is_none());
        #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
        let passes = (row["pass_rate_1"].as_f64().unwrap() * cases as f64 / 100.0).round() as i64;
        #[allow(clippy::cast_possible_truncation)]
        let cost = (row["total_cost"].as_f64().unwrap() * 1e6).round() as i64;
        let key = (
            kd_linkdbots::import::to_identifier(row["model"].as_str().unwrap(), 80),
            format!("aider/{}", row["edit_format"].as_str().unwrap()),
            "aider-bench:refactor_leaderboard".to_owned(),
        );
        let entry = expected.entry(key).or_default();
        entry.0 += cases;
        entry.1 += passes;
        entry.2 += cost;
        if cost > 0 {
            entry.3 += passes;
        }
    }
    let (status, board) = hub.call("GET", "/benchmarks/code.refactor", None, "").await;
    assert_eq!(status, StatusCode::OK);
    let rows = board["rows"].as_array().unwrap();
    assert_eq!(rows.len(), expected.len());
    let mut checked = 0;
    for row in rows {
        let key = (
            row["model"].as_str().unwrap().to_owned(),
            row["engine"].as_str().unwrap().to_owned(),
            row["host"].as_str().unwrap().to_owned(),
        );
        let (cases, passes, cost, costed_passes) = expected[&key];
        if row["outliersExcluded"] != 0 {
            continue;
        }
        checked += 1;
        assert_eq!(row["cards"], cases, "{key:?}");
        assert_eq!(row["successes"], passes, "{key:?}");
        assert_eq!(
            row["coverage"],
            format!("outcome known on {cases} of {cases} cards")
        );
        #[allow(clippy::cast_precision_loss)]
        let rate = passes as f64 / cases as f64;
        assert!(
            (row["successRate"].as_f64().unwrap() - rate).abs() < 1e-12,
            "{key:?}"
        );
        if cost == 0 {
            // Never $0: no recorded cost is an unknown cost per successful run.
            assert_eq!(row["costPerSuccessUsd"], Value::Null, "{key:?}");
            continue;
        }
        #[allow(clippy::cast_precision_loss)]
        let per_success = cost as f64 / costed_passes as f64 / 1e6;
        assert!(
            (row["costPerSuccessUsd"].as_f64().unwrap() - per_success).abs() < 1e-9,
            "{key:?}: {row}"
        );
        assert_eq!(
            row["tokensPerSuccess"],
            Value::Null,
            "the refactor rows carry no tokens"
        );
    }
    assert!(checked >= 10, "only {checked} rows without outliers");
}

#[tokio::test(flavor = "multi_thread")]
async fn rows_of_other_sources_and_bad_rows_are_skipped_and_counted() {
    let hub = hub();
    let text = "{\"name\":\"x\",\"source\":\"SWE-bench/swe-bench.github.io:data/leaderboards.json@f1176b\"}\n\
                not json\n\
                {\"source\":\"Aider-AI/aider:x.yml@1\",\"leaderboard\":\"l\",\"dirname\":\"d\",\"model\":\"m\"}\n";
    let report = kd_linkdbots::import(&hub.store, text.as_bytes())
        .await
        .unwrap();
    assert_eq!(report.rows, 3);
    assert_eq!(report.other_sources, 1);
    assert_eq!(
        report.bad.iter().map(|(line, _)| *line).collect::<Vec<_>>(),
        [2, 3]
    );
    assert_eq!(hub.counts().await.0, 0);
}

/// A per-task SWE-bench row in the shape of `agent-costs-swebench-instances.jsonl` (values
/// made up here: the published file is CC-BY-NC-4.0 and not bundled).
fn swebench_row(folder: &str, instance: &str, cost: f64, calls: i64, resolved: bool) -> String {
    serde_json::json!({
        "leaderboard": "bash-only",
        "folder": folder,
        "name": "Example Model (2025-11-01)",
        "instance_id": instance,
        "api_calls": calls,
        "cost": cost,
        "resolved": resolved,
        "source": "SWE-bench/swe-bench.github.io:data/leaderboards.json@f1176b65ae29",
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn swe_bench_task_rows_import_as_code_bugfix_cards_with_their_outcome() {
    let hub = hub();
    let folder = "20251124_mini-v1.16.0_claude-opus-4-5-20251101";
    let mut lines: Vec<String> = (0..10)
        .map(|i| swebench_row(folder, &format!("astropy__astropy-{i}"), 0.5, 20 + i, i < 4))
        .collect();
    // The older folder shape, `mini-v0.0.0-<model>`, and a row with no outcome.
    lines.push(swebench_row(
        "20250720_mini-v0.0.0-Llama-4-Maverick-17B-Instruct",
        "django__django-1",
        0.25,
        7,
        true,
    ));
    lines.push(
        r#"{"leaderboard":"bash-only","folder":"20251124_mini-v1.16.0_x","instance_id":"a","source":"SWE-bench/swe-bench.github.io:x"}"#
            .to_owned(),
    );
    let text = lines.join("\n");
    let report = kd_linkdbots::import(&hub.store, text.as_bytes())
        .await
        .unwrap();
    assert_eq!(
        (report.rows, report.cards, report.other_sources),
        (12, 11, 0)
    );
    assert_eq!(report.bad.len(), 1, "{:?}", report.bad);
    assert!(report.bad[0].1.contains("resolved"), "{:?}", report.bad);
    // A second import adds nothing.
    let again = kd_linkdbots::import(&hub.store, text.as_bytes())
        .await
        .unwrap();
    assert_eq!((again.cards, again.already), (0, 11));

    let (status, board) = hub.call("GET", "/benchmarks/code.bugfix", None, "").await;
    assert_eq!(status, StatusCode::OK, "{board}");
    let rows = board["rows"].as_array().unwrap();
    let opus = rows
        .iter()
        .find(|row| row["model"] == "claude-opus-4-5-20251101")
        .unwrap_or_else(|| panic!("{board}"));
    assert_eq!(opus["engine"], "mini-swe-agent/1.16.0");
    assert_eq!(opus["host"], "swe-bench:bash-only");
    assert_eq!(opus["cards"], 10);
    assert_eq!(opus["successes"], 4);
    assert_eq!(opus["coverage"], "outcome known on 10 of 10 cards");
    // Ten $0.50 attempts, four of which worked: $1.25 per successful run.
    assert!(
        (opus["costPerSuccessUsd"].as_f64().unwrap() - 1.25).abs() < 1e-9,
        "{opus}"
    );
    assert_eq!(
        opus["tokensPerSuccess"],
        Value::Null,
        "the rows carry no tokens"
    );
    let llama = rows
        .iter()
        .find(|row| row["model"] == "Llama-4-Maverick-17B-Instruct")
        .unwrap_or_else(|| panic!("{board}"));
    assert_eq!(llama["engine"], "mini-swe-agent/0.0.0");
    assert_eq!(llama["coverage"], "outcome known on 1 of 1 cards");
    assert_eq!(
        llama["costPerSuccessUsd"],
        Value::Null,
        "under 5 known outcomes"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rows_with_impossible_figures_are_bad_rows_and_the_rest_still_imports() {
    let hub = hub();
    let good = bundled_rows().into_iter().next().unwrap();
    let with = |field: &str, value: Value, dirname: &str| {
        let mut row = good.clone();
        row.insert(field.to_owned(), value);
        row.insert("dirname".to_owned(), Value::from(dirname));
        Value::Object(row).to_string()
    };
    let lines = [
        with("test_cases", Value::from(1_000_000_000_000_i64), "huge"),
        with("total_cost", Value::from(-1), "negative"),
        with("total_cost", Value::from(1e308), "enormous"),
        with("pass_num_2", Value::from(999), "too-many-passes"),
        with("prompt_tokens", Value::from(-5), "negative-tokens"),
        Value::Object(good.clone()).to_string(),
    ];
    let report = kd_linkdbots::import(&hub.store, lines.join("\n").as_bytes())
        .await
        .unwrap();
    assert_eq!(
        report.bad.iter().map(|(line, _)| *line).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5],
        "{:?}",
        report.bad
    );
    let cases = good["test_cases"].as_u64().unwrap() as usize;
    assert_eq!(report.cards, cases, "only the good row's cards");
    assert_eq!(hub.counts().await.0, cases as i64);
}
