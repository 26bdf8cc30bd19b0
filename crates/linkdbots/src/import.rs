//! The import of published benchmark rows as cards with provenance `imported` (decision 204).
//!
//! Today's format is the Aider benchmark rows of `agent-costs.jsonl` (a `source` starting
//! `Aider-AI/aider:`; bundled as `data/linkdbots/aider-costs.jsonl.gz`, Apache-2.0, see
//! `data/SOURCES.md`). Each row is one benchmark run of `test_cases` exercises; it becomes one
//! card per exercise, so that outcomes are per task as the schema means them:
//!
//! - `pass_num_2` cards are successes (or `round(pass_rate_2 × test_cases / 100)` when the row
//!   has no `pass_num_2`; a benchmark of one try has only `pass_num_1` / `pass_rate_1`, taken
//!   the same way), the rest failures;
//! - the run's `total_cost` (and `prompt_tokens` / `completion_tokens` when the row has them) is
//!   split evenly over its cards in whole micro-dollars (tokens), the remainder going one unit
//!   each to the first cards, so every sum over a run is the published figure exactly; a row
//!   without the figure gives cards without it (unknown, not zero), and so does a `total_cost`
//!   of 0, which the Aider rows publish where the cost was not recorded (decision 335);
//! - `wallMs` is `seconds_per_case × 1000`; `occurredAt` the row's `date` at 00:00 UTC (the
//!   24-hour rule is the one rule an import skips);
//! - category `code.refactor` for the refactoring benchmark, `code.feature` for the others;
//!   `model` the row's model, `engine` `aider/<edit_format>`, `host` `aider-bench:<leaderboard>`,
//!   each reduced to the identifier alphabet (another character becomes `-`) and length.
//!
//! The per-task SWE-bench rows (`agent-costs-swebench-instances.jsonl`: a `source` starting
//! `SWE-bench/swe-bench.github.io:` and an `instance_id`; CC-BY-NC-4.0, so never bundled: the
//! operator supplies the file) are one card each ([`swebench_card`], decision 344): category
//! `code.bugfix`, `outcome` from `resolved`, `costUsd` from `cost`, `turns` from `api_calls`,
//! the model, engine and day read from the run's `folder`.
//!
//! Rows of another source (the per-run SWE-bench leaderboard rows, which have no per-task
//! outcome) are skipped and counted. An import is idempotent: each card's `source_item`
//! (`<leaderboard>/<dirname>#<case>`, `swe-bench:<folder>/<instance_id>`) is unique, and a card
//! already there is skipped.

use std::io::BufRead;

use kd_core::store::Store;
use serde_json::{Map, Value};

use crate::cards::refs_json;
use crate::events::CardFiled;
use crate::store::{self, CardRow};
use crate::{ApiError, sha256_hex};

/// The bundled Aider rows, gzip of JSON Lines.
pub const BUNDLED_AIDER: &[u8] = include_bytes!("../../../data/linkdbots/aider-costs.jsonl.gz");

/// The actor of an imported card's `linkdbots.card_filed` event (decision 345).
pub const IMPORT_ACTOR: &str = "import";

/// The most test cases one Aider row may expand to (the largest published run has 225):
/// decision 350.
pub const MAX_CASES: i64 = 10_000;

/// The most a run may cost, in dollars (decision 350).
const MAX_RUN_USD: f64 = 1_000_000.0;

/// The cards written per store write.
const CHUNK: usize = 2_000;

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Rows read.
    pub rows: usize,
    /// Cards written.
    pub cards: usize,
    /// Cards already there (a second import).
    pub already: usize,
    /// Rows of a source this import does not read.
    pub other_sources: usize,
    /// Rows that could not be read: (line number, why).
    pub bad: Vec<(usize, String)>,
}

/// `text` in the identifier alphabet, at most `max` characters (decision 204).
pub fn to_identifier(text: &str, max: usize) -> String {
    let mapped: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '+' | '/' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(max)
        .collect();
    if mapped.is_empty() {
        "unknown".to_owned()
    } else {
        mapped
    }
}

/// `total` split over `n` parts: part `i`'s share.
fn share(total: i64, n: i64, i: i64) -> i64 {
    total / n + i64::from(i < total % n)
}

fn figure(row: &Map<String, Value>, field: &str) -> Option<f64> {
    row.get(field).and_then(Value::as_f64)
}

/// The run's successes: its last try's (`pass_num_2`, else `pass_rate_2 × test_cases / 100`
/// rounded); a benchmark of one try publishes only `pass_num_1` / `pass_rate_1`.
#[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
fn passes(row: &Map<String, Value>, cases: i64) -> Option<i64> {
    ["2", "1"].iter().find_map(|tries| {
        row.get(&format!("pass_num_{tries}"))
            .and_then(Value::as_i64)
            .or_else(|| {
                figure(row, &format!("pass_rate_{tries}"))
                    .map(|rate| (rate * cases as f64 / 100.0).round() as i64)
            })
    })
}

fn day_ms(date: &str) -> Option<i64> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    let day = time::Date::parse(date.get(..10)?, &format).ok()?;
    Some(day.midnight().assume_utc().unix_timestamp() * 1000)
}

/// The cards of one Aider row.
///
/// # Errors
/// Why the row cannot be read.
#[allow(clippy::cast_possible_truncation)]
pub fn aider_cards(row: &Map<String, Value>, now_ms: i64) -> Result<Vec<CardRow>, String> {
    let text = |field: &str| row.get(field).and_then(Value::as_str);
    let (Some(source), Some(leaderboard), Some(dirname), Some(model)) = (
        text("source"),
        text("leaderboard"),
        text("dirname"),
        text("model"),
    ) else {
        return Err("source, leaderboard, dirname and model are required".to_owned());
    };
    let cases = row
        .get("test_cases")
        .and_then(Value::as_i64)
        .filter(|n| (1..=MAX_CASES).contains(n))
        .ok_or("test_cases must be an integer from 1 to 10,000")?;
    let passes =
        passes(row, cases).ok_or("no pass_num_2, pass_rate_2, pass_num_1 or pass_rate_1")?;
    if !(0..=cases).contains(&passes) {
        return Err(format!("{passes} passes of {cases} test cases"));
    }
    let occurred_ms = day_ms(text("date").unwrap_or_default()).ok_or("no date")?;
    // A published total of 0 is a cost nobody recorded (decision 335), not a free run.
    let cost = match figure(row, "total_cost") {
        Some(usd) if !(0.0..=MAX_RUN_USD).contains(&usd) => {
            return Err(format!(
                "total_cost {usd} is not from 0 to 1,000,000 dollars"
            ));
        }
        Some(usd) if usd > 0.0 => Some((usd * 1_000_000.0).round() as i64),
        _ => None,
    };
    let count = |field: &str| match row.get(field).map(Value::as_i64) {
        Some(Some(n)) if n < 0 => Err(format!("{field} is negative")),
        Some(Some(n)) => Ok(Some(n)),
        _ => Ok(None),
    };
    let (prompt, completion) = (count("prompt_tokens")?, count("completion_tokens")?);
    let wall = figure(row, "seconds_per_case")
        .filter(|s| *s >= 0.0)
        .map(|s| (s * 1000.0).round() as i64);
    let category = if leaderboard == "refactor_leaderboard" {
        "code.refactor"
    } else {
        "code.feature"
    };
    let engine = to_identifier(
        &format!("aider/{}", text("edit_format").unwrap_or("unknown")),
        40,
    );
    let host = to_identifier(&format!("aider-bench:{leaderboard}"), 40);
    let model = to_identifier(model, 80);
    Ok((0..cases)
        .map(|case| {
            let item = format!("{leaderboard}/{dirname}#{case}");
            CardRow {
                id: format!("crd_{}", &sha256_hex(&item)[..24]),
                agent_id: None,
                category: category.to_owned(),
                tokens_in: prompt.map(|total| share(total, cases, case)),
                tokens_out: completion.map(|total| share(total, cases, case)),
                cost_micros: cost.map(|total| share(total, cases, case)),
                turns: None,
                tool_calls: None,
                wall_ms: wall,
                model: model.clone(),
                engine: engine.clone(),
                host: host.clone(),
                occurred_ms,
                outcome: Some(if case < passes { "success" } else { "failure" }.to_owned()),
                is_digest: false,
                playbook_refs: refs_json(&[]),
                provenance: "imported".to_owned(),
                host_key_id: None,
                source: Some(source.to_owned()),
                source_item: Some(item),
                created_ms: now_ms,
            }
        })
        .collect())
}

/// How the SWE-bench rows' `source` starts.
pub const SWEBENCH_SOURCE: &str = "SWE-bench/swe-bench.github.io:";

/// A SWE-bench run's folder, `YYYYMMDD_mini-vX.Y.Z_<model>` (or `…-v0.0.0-<model>`): its day
/// (ms), the mini-swe-agent version and the model.
fn swebench_folder(folder: &str) -> Option<(i64, &str, &str)> {
    let (day, rest) = folder.split_once('_')?;
    let date = format!("{}-{}-{}", day.get(..4)?, day.get(4..6)?, day.get(6..8)?);
    let rest = rest.strip_prefix("mini-v")?;
    let cut = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (version, model) = rest.split_at(cut);
    let model = model.strip_prefix(['_', '-'])?;
    (!version.is_empty() && !model.is_empty()).then_some((day_ms(&date)?, version, model))
}

/// The card of one per-task SWE-bench row (decision 344): `code.bugfix`; `outcome` success
/// when `resolved`, else failure; `costUsd` the row's `cost`; `turns` its `api_calls` (one
/// model call per step of mini-swe-agent); tokens, tool calls and wall time unknown; `model`
/// from the folder (the row's `name` when the folder has another shape), `engine`
/// `mini-swe-agent/<version>`, `host` `swe-bench:<leaderboard>`, `occurredAt` the folder's
/// day at 00:00 UTC.
///
/// # Errors
/// Why the row cannot be read.
#[allow(clippy::cast_possible_truncation)]
pub fn swebench_card(row: &Map<String, Value>, now_ms: i64) -> Result<CardRow, String> {
    let text = |field: &str| row.get(field).and_then(Value::as_str);
    let (Some(source), Some(leaderboard), Some(folder), Some(instance)) = (
        text("source"),
        text("leaderboard"),
        text("folder"),
        text("instance_id"),
    ) else {
        return Err("source, leaderboard, folder and instance_id are required".to_owned());
    };
    let resolved = row
        .get("resolved")
        .and_then(Value::as_bool)
        .ok_or("resolved must be true or false")?;
    let (occurred_ms, version, model) = swebench_folder(folder)
        .map(|(day, version, model)| (day, version, model.to_owned()))
        .or_else(|| {
            let day = day_ms(text("date")?)?;
            Some((day, "unknown", text("name")?.to_owned()))
        })
        .ok_or("the folder is not YYYYMMDD_mini-v<version>_<model> and there is no date")?;
    let cost = match row.get("cost") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_f64()
                .filter(|usd| (0.0..=MAX_RUN_USD).contains(usd))
                .ok_or("cost must be a number ≥ 0")?,
        ),
    };
    let item = format!("swe-bench:{folder}/{instance}");
    Ok(CardRow {
        id: format!("crd_{}", &sha256_hex(&item)[..24]),
        agent_id: None,
        category: "code.bugfix".to_owned(),
        tokens_in: None,
        tokens_out: None,
        cost_micros: cost.map(|usd| (usd * 1_000_000.0).round() as i64),
        turns: row
            .get("api_calls")
            .and_then(Value::as_i64)
            .filter(|n| *n >= 0),
        tool_calls: None,
        wall_ms: None,
        model: to_identifier(&model, 80),
        engine: to_identifier(&format!("mini-swe-agent/{version}"), 40),
        host: to_identifier(&format!("swe-bench:{leaderboard}"), 40),
        occurred_ms,
        outcome: Some(if resolved { "success" } else { "failure" }.to_owned()),
        is_digest: false,
        playbook_refs: refs_json(&[]),
        provenance: "imported".to_owned(),
        host_key_id: None,
        source: Some(source.to_owned()),
        source_item: Some(item),
        created_ms: now_ms,
    })
}

async fn flush(
    store: &Store,
    cards: Vec<CardRow>,
    report: &mut ImportReport,
) -> Result<(), ApiError> {
    let count = cards.len();
    let written = store
        .write(move |txn| {
            let mut written = 0;
            for card in &cards {
                if store::insert_card(txn.conn(), card)? == 1 {
                    txn.record(IMPORT_ACTOR, &card.id, &CardFiled(card.clone()))?;
                    written += 1;
                }
            }
            Ok::<_, ApiError>(written)
        })
        .await??;
    report.cards += written;
    report.already += count - written;
    Ok(())
}

/// Imports JSON Lines from `reader` (see the module doc). Bad rows are reported with their
/// line number and skipped.
///
/// # Errors
/// [`ApiError`] when reading fails or the store fails.
pub async fn import(store: &Store, reader: impl BufRead) -> Result<ImportReport, ApiError> {
    let now_ms = store.clock().now_ms();
    let mut report = ImportReport::default();
    let mut pending: Vec<CardRow> = Vec::new();
    for (index, line) in reader.lines().enumerate() {
        let line = line.map_err(|error| ApiError::invalid(format!("reading: {error}")))?;
        if line.trim().is_empty() {
            continue;
        }
        report.rows += 1;
        let row = match serde_json::from_str::<Value>(&line) {
            Ok(Value::Object(row)) => row,
            _ => {
                report.bad.push((index + 1, "not a JSON object".to_owned()));
                continue;
            }
        };
        let source = row
            .get("source")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let cards = if source.starts_with("Aider-AI/aider:") {
            aider_cards(&row, now_ms)
        } else if source.starts_with(SWEBENCH_SOURCE) && row.contains_key("instance_id") {
            swebench_card(&row, now_ms).map(|card| vec![card])
        } else {
            report.other_sources += 1;
            continue;
        };
        match cards {
            Ok(cards) => pending.extend(cards),
            Err(why) => report.bad.push((index + 1, why)),
        }
        if pending.len() >= CHUNK {
            flush(store, std::mem::take(&mut pending), &mut report).await?;
        }
    }
    if !pending.is_empty() {
        flush(store, pending, &mut report).await?;
    }
    Ok(report)
}

/// Imports the bundled Aider rows ([`BUNDLED_AIDER`]).
///
/// # Errors
/// As [`import`].
pub async fn import_bundled(store: &Store) -> Result<ImportReport, ApiError> {
    let reader = std::io::BufReader::new(flate2::read::GzDecoder::new(BUNDLED_AIDER));
    import(store, reader).await
}
