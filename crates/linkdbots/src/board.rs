//! The leaderboard of one category (spec "`outcome`, and what a successful run costs"),
//! computed from the category's window ([`WINDOW_CARDS`] most recent cards) in memory:
//!
//! 1. Digests leave first: they stay on the record but count in no median, no outlier test and
//!    no fraction.
//! 2. Cards are grouped into rows: one model run by one harness on one host
//!    (`model`, `engine`, `host`).
//! 3. Outliers leave next (decision 203): in a row with at least [`OUTLIER_MIN_CARDS`] cards
//!    carrying a figure, a card whose cost, or whose tokens (in + out), is above
//!    `max(Q3 + 3 × (Q3 − Q1), 2 × median)` of the row's values is an outlier. Q1 and Q3 are the
//!    values at sorted positions `(n − 1) / 4` and `3 (n − 1) / 4` (integer division).
//! 4. Over the rows left (the same rows for every figure): medians; `successes ÷ known
//!    outcomes`; `Σ cost of all attempts ÷ successes`; `Σ tokens of all attempts ÷ successes`,
//!    always with the success rate and "outcome known on N of M cards". Nothing is derived
//!    below [`MIN_KNOWN_OUTCOMES`] known outcomes. Zero successes is a 0% rate and an unknown
//!    (null) cost and tokens per success. The cost figure is over the known-outcome cards that
//!    carry a cost (and its successes), the tokens figure over those that carry tokens: a card
//!    without the figure is on neither side of that fraction.
//!
//! 5. Rows rank by [`rank`] (decision 335): rows whose evidence is mostly host-signed first
//!    (tier 1), then the other rows with a cost per successful run (tier 2), each tier by
//!    cost per successful run, cheapest first; rows without one last (tier 3), by cards.
//!
//! The category's summary is the same arithmetic over every row's cards together.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::store::CardRow;

/// How many of a category's most recent cards the leaderboard reads.
pub const WINDOW_CARDS: i64 = 100_000;

/// Below this many known outcomes the coverage is published and the figures withheld.
pub const MIN_KNOWN_OUTCOMES: usize = 5;

/// The fewest cards carrying a figure for that figure's outlier test to run.
pub const OUTLIER_MIN_CARDS: usize = 8;

/// The outlier rule in words, as the answer states it.
pub const OUTLIER_RULE: &str = "per row, with at least 8 cards carrying the figure: cost or \
     tokens (in + out) above max(Q3 + 3 × IQR, 2 × median) of the row";

fn tokens(card: &CardRow) -> Option<i64> {
    Some(card.tokens_in? + card.tokens_out?)
}

/// The median of integers, as a float; `None` for none.
pub fn median(values: &mut [i64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    let mid = values.len() / 2;
    #[allow(clippy::cast_precision_loss)]
    Some(if values.len() % 2 == 1 {
        values[mid] as f64
    } else {
        (values[mid - 1] as f64 + values[mid] as f64) / 2.0
    })
}

/// The upper fence of decision 203 for `values`, or `None` when there are too few.
fn fence(values: &mut [i64]) -> Option<i128> {
    if values.len() < OUTLIER_MIN_CARDS {
        return None;
    }
    values.sort_unstable();
    let n = values.len();
    let q1 = i128::from(values[(n - 1) / 4]);
    let q3 = i128::from(values[3 * (n - 1) / 4]);
    let twice_median = if n % 2 == 1 {
        2 * i128::from(values[n / 2])
    } else {
        i128::from(values[n / 2 - 1]) + i128::from(values[n / 2])
    };
    Some((q3 + 3 * (q3 - q1)).max(twice_median))
}

/// Splits a row's cards into kept and outliers (decision 203).
pub fn drop_outliers(cards: Vec<&CardRow>) -> (Vec<&CardRow>, usize) {
    let cost_fence = fence(
        &mut cards
            .iter()
            .filter_map(|c| c.cost_micros)
            .collect::<Vec<_>>(),
    );
    let token_fence = fence(&mut cards.iter().filter_map(|c| tokens(c)).collect::<Vec<_>>());
    let above = |value: Option<i64>, fence: Option<i128>| match (value, fence) {
        (Some(value), Some(fence)) => i128::from(value) > fence,
        _ => false,
    };
    let total = cards.len();
    let kept: Vec<&CardRow> = cards
        .into_iter()
        .filter(|card| !above(card.cost_micros, cost_fence) && !above(tokens(card), token_fence))
        .collect();
    let dropped = total - kept.len();
    (kept, dropped)
}

fn median_of(cards: &[&CardRow], figure: impl Fn(&CardRow) -> Option<i64>) -> Option<f64> {
    median(
        &mut cards
            .iter()
            .filter_map(|card| figure(card))
            .collect::<Vec<_>>(),
    )
}

/// `Σ figure ÷ successes` over the known-outcome cards carrying the figure; `None` under the
/// minimum or with no success among them.
fn per_success(known: &[&CardRow], figure: impl Fn(&CardRow) -> Option<i64>) -> Option<f64> {
    let carrying: Vec<(i64, bool)> = known
        .iter()
        .filter_map(|card| Some((figure(card)?, card.outcome.as_deref() == Some("success"))))
        .collect();
    let successes = carrying.iter().filter(|(_, success)| *success).count();
    if carrying.len() < MIN_KNOWN_OUTCOMES || successes == 0 {
        return None;
    }
    let sum: i128 = carrying.iter().map(|(value, _)| i128::from(*value)).sum();
    #[allow(clippy::cast_precision_loss)]
    Some(sum as f64 / successes as f64)
}

/// The figures of a set of kept cards.
pub fn figures(cards: &[&CardRow]) -> Value {
    let known: Vec<&CardRow> = cards
        .iter()
        .copied()
        .filter(|card| card.outcome.is_some())
        .collect();
    let successes = known
        .iter()
        .filter(|card| card.outcome.as_deref() == Some("success"))
        .count();
    let derived = known.len() >= MIN_KNOWN_OUTCOMES;
    #[allow(clippy::cast_precision_loss)]
    let success_rate = derived.then(|| successes as f64 / known.len() as f64);
    let (cost, tokens_per) = if derived {
        (
            per_success(&known, |card| card.cost_micros).map(|micros| micros / 1_000_000.0),
            per_success(&known, tokens),
        )
    } else {
        (None, None)
    };
    let provenance = |word: &str| cards.iter().filter(|card| card.provenance == word).count();
    let signed_outcomes = known
        .iter()
        .filter(|card| card.provenance == "host-signed")
        .count();
    json!({
        "cards": cards.len(),
        "outcomeKnown": known.len(),
        "successes": successes,
        "coverage": format!("outcome known on {} of {} cards", known.len(), cards.len()),
        "derived": derived,
        "successRate": success_rate,
        "costPerSuccessUsd": cost,
        "tokensPerSuccess": tokens_per,
        "medians": {
            "costUsd": median_of(cards, |card| card.cost_micros).map(|m| m / 1_000_000.0),
            "tokensIn": median_of(cards, |card| card.tokens_in),
            "tokensOut": median_of(cards, |card| card.tokens_out),
            "turns": median_of(cards, |card| card.turns),
            "toolCalls": median_of(cards, |card| card.tool_calls),
            "wallMs": median_of(cards, |card| card.wall_ms),
        },
        "provenance": {
            "hostSigned": provenance("host-signed"),
            "selfReported": provenance("self-reported"),
            "imported": provenance("imported"),
            "hostSignedOutcomes": signed_outcomes,
        },
        "evidence": evidence(signed_outcomes, known.len()),
    })
}

/// A row's evidence (decision 335): `host-signed` when at least [`MIN_KNOWN_OUTCOMES`] of its
/// known outcomes are on host-signed cards and those are at least half of its known outcomes;
/// otherwise `unsigned` (self-reported or imported figures: the poster's word, or a published
/// benchmark's).
pub fn evidence(signed_outcomes: usize, known_outcomes: usize) -> &'static str {
    if signed_outcomes >= MIN_KNOWN_OUTCOMES && 2 * signed_outcomes >= known_outcomes {
        "host-signed"
    } else {
        "unsigned"
    }
}

/// A row's rank tier (decision 335): 1 for a row with a cost per successful run whose
/// evidence is host-signed, 2 for the other rows with one, 3 for rows without one.
pub fn tier(row: &Value) -> u8 {
    match (
        row["costPerSuccessUsd"].is_number(),
        row["evidence"].as_str(),
    ) {
        (true, Some("host-signed")) => 1,
        (true, _) => 2,
        (false, _) => 3,
    }
}

/// Orders rows as the leaderboard shows them and sets each row's `rank` (1, 2, …) and
/// `tier` ([`tier`]): by tier, then cost per successful run (cheapest first), then cards
/// (most first), then model, engine and host.
pub fn rank(rows: &mut [Value]) {
    rows.sort_by(|a, b| {
        let cost = |row: &Value| row["costPerSuccessUsd"].as_f64().unwrap_or(f64::INFINITY);
        tier(a)
            .cmp(&tier(b))
            .then_with(|| cost(a).total_cmp(&cost(b)))
            .then_with(|| b["cards"].as_u64().cmp(&a["cards"].as_u64()))
    });
    for (at, row) in rows.iter_mut().enumerate() {
        row["tier"] = json!(tier(row));
        row["rank"] = json!(at + 1);
    }
}

/// The leaderboard of `category` from its window (most recent first, digests included).
pub fn leaderboard(category: &str, description: &str, window: &[CardRow]) -> Value {
    let digests = window.iter().filter(|card| card.is_digest).count();
    let mut groups: BTreeMap<(&str, &str, &str), Vec<&CardRow>> = BTreeMap::new();
    for card in window.iter().filter(|card| !card.is_digest) {
        groups
            .entry((&card.model, &card.engine, &card.host))
            .or_default()
            .push(card);
    }
    let mut outliers = 0;
    let mut kept_all: Vec<&CardRow> = Vec::new();
    let mut rows: Vec<Value> = Vec::new();
    for ((model, engine, host), cards) in groups {
        let (kept, dropped) = drop_outliers(cards);
        outliers += dropped;
        let mut row = figures(&kept);
        row["model"] = json!(model);
        row["engine"] = json!(engine);
        row["host"] = json!(host);
        row["outliersExcluded"] = json!(dropped);
        kept_all.extend(kept);
        rows.push(row);
    }
    rank(&mut rows);
    json!({
        "category": category,
        "description": description,
        "window": {
            "limit": WINDOW_CARDS,
            "cards": window.len(),
            "digestsExcluded": digests,
            "outliersExcluded": outliers,
            "outlierRule": OUTLIER_RULE,
            "minKnownOutcomes": MIN_KNOWN_OUTCOMES,
        },
        "summary": figures(&kept_all),
        "rows": rows,
    })
}
