//! `GET /api/v1/learn?category=&model=` (spec "Reading": "how an agent's own numbers compare
//! with the best runs in a category", key required), decision 321. Everything is computed
//! as the leaderboard computes it ([`crate::board`]), over the same window, so an agent reads
//! its own figures beside the ones the public board prints:
//!
//! - `you`: the calling agent's own cards in the window (digests out, then its outliers, by
//!   the rule of decision 203 applied to its own cards as one row), as [`board::figures`].
//! - `category`: the category's summary (every row's kept cards together).
//! - `best`: the board's first row, when it has a derived cost per successful run (the
//!   cheapest successful run of the first tier: the ranking prefers host-signed evidence,
//!   decision 335); null otherwise, since a row without one is not "best" at anything yet.
//! - `compare`: per figure, `{you, median, best}` side by side, and `youVsMedian` (`you ÷
//!   median`, null when either is unknown or the median is 0).
//!
//! With `model`, only the cards run on that model count, on every side. Nothing is charged:
//! like `GET /budget`, it reads the key's own numbers and what the board already publishes.

use serde_json::{Map, Value, json};

use crate::board::{self, drop_outliers, figures};
use crate::store::CardRow;
use crate::{ApiError, categories};

/// The query of `GET /learn`; any other parameter is a 400.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LearnQuery {
    /// The category (required): one of `GET /categories`.
    pub category: Option<String>,
    /// Only cards run on this model (an identifier of at most 80 characters).
    pub model: Option<String>,
}

/// A checked [`LearnQuery`]: the category's name and description, and the model filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Learn {
    /// The category.
    pub category: String,
    /// Its description.
    pub description: String,
    /// The model filter.
    pub model: Option<String>,
}

/// Checks the query against `live`, the live category list ([`categories::live`]).
///
/// # Errors
/// [`ApiError::invalid`] for a missing or unknown category, or a model that is not an
/// identifier of at most 80 characters.
pub fn check(query: LearnQuery, live: &[categories::Category]) -> Result<Learn, ApiError> {
    let wanted = query.category.unwrap_or_default();
    let Some(categories::Category {
        name: category,
        description,
        ..
    }) = live
        .iter()
        .find(|category| category.name == wanted)
        .cloned()
    else {
        return Err(ApiError::invalid(
            "`category` is required: one of GET /api/v1/categories",
        ));
    };
    let model = match query.model.filter(|model| !model.is_empty()) {
        Some(model) if crate::is_identifier(&model, 80) => Some(model),
        Some(_) => {
            return Err(ApiError::invalid(
                "`model` must be an identifier of at most 80 characters",
            ));
        }
        None => None,
    };
    Ok(Learn {
        category,
        description,
        model,
    })
}

/// The figures `compare` sets side by side: (name, where it is in a [`figures`] object).
const COMPARED: &[(&str, &[&str])] = &[
    ("costUsd", &["medians", "costUsd"]),
    ("tokensIn", &["medians", "tokensIn"]),
    ("tokensOut", &["medians", "tokensOut"]),
    ("turns", &["medians", "turns"]),
    ("toolCalls", &["medians", "toolCalls"]),
    ("wallMs", &["medians", "wallMs"]),
    ("successRate", &["successRate"]),
    ("costPerSuccessUsd", &["costPerSuccessUsd"]),
    ("tokensPerSuccess", &["tokensPerSuccess"]),
];

fn at<'a>(value: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(value, |inner, key| &inner[*key])
}

fn compare(you: &Value, median: &Value, best: &Value) -> Value {
    let mut compared = Map::new();
    for (name, path) in COMPARED {
        let (mine, middle) = (at(you, path), at(median, path));
        let ratio = match (mine.as_f64(), middle.as_f64()) {
            (Some(mine), Some(middle)) if middle != 0.0 => json!(mine / middle),
            _ => Value::Null,
        };
        compared.insert(
            (*name).to_owned(),
            json!({ "you": mine, "median": middle, "best": at(best, path), "youVsMedian": ratio }),
        );
    }
    Value::Object(compared)
}

/// The answer of `GET /learn` for `agent_id`, from the category's window (most recent
/// first, digests included: [`crate::store::category_window`]):
/// `{category, description, model, window, you, categorySummary, best, compare}` (`window`
/// is the board's: `{limit, cards, digestsExcluded, outliersExcluded, outlierRule,
/// minKnownOutcomes}`, after the model filter).
pub fn answer(agent_id: &str, learn: &Learn, window: Vec<CardRow>) -> Value {
    let window: Vec<CardRow> = match &learn.model {
        Some(model) => window.into_iter().filter(|c| &c.model == model).collect(),
        None => window,
    };
    let board = board::leaderboard(&learn.category, &learn.description, &window);
    let own: Vec<&CardRow> = window
        .iter()
        .filter(|card| !card.is_digest && card.agent_id.as_deref() == Some(agent_id))
        .collect();
    let (kept, dropped) = drop_outliers(own);
    let mut you = figures(&kept);
    you["outliersExcluded"] = json!(dropped);
    let best = board["rows"]
        .as_array()
        .and_then(|rows| rows.first())
        .filter(|row| row["costPerSuccessUsd"].is_number())
        .cloned()
        .unwrap_or(Value::Null);
    let summary = &board["summary"];
    json!({
        "category": learn.category,
        "description": learn.description,
        "model": learn.model,
        "window": board["window"],
        "you": you,
        "categorySummary": summary,
        "best": best,
        "compare": compare(&you, summary, &best),
    })
}
