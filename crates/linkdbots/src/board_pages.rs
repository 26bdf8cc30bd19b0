//! The public leaderboard pages (spec "`outcome`, and what a successful run costs", "The
//! coverage rule"; decision 336), server-rendered with `maud` through the one page shell
//! ([`kd_core::page`]), with no script and no session:
//!
//! - `GET /linkdbots/benchmarks` ([`index`]): the live categories with their card counts.
//! - `GET /linkdbots/benchmarks/{category}` ([`category`]): the rows of
//!   [`crate::board::leaderboard`] in their rank (decision 335) and a chart of cost per
//!   successful run drawn as inline SVG ([`chart`]); an unknown category is a 404 page.
//!
//! The coverage rule holds on every line that prints a figure: a cost or tokens per
//! successful run is printed only with the success rate and "outcome known on N of M cards"
//! beside it; under 5 known outcomes the figures say "withheld"; a row that never succeeded
//! shows 0% and "unknown", never $0. Everything shown is escaped by the templates.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kd_core::page::{Policy, Shell};
use maud::{Markup, html};
use serde_json::Value;

use crate::{ApiError, Linkdbots, board, categories, categories_store, handlers};

/// The index of leaderboards, relative to [`crate::MOUNT`].
pub const INDEX_PATH: &str = "/benchmarks";
/// One category's leaderboard, relative to [`crate::MOUNT`].
pub const CATEGORY_PATH: &str = "/benchmarks/{category}";
/// Where a signed-in person proposes a category (served by the hub behind its session).
pub const PROPOSE_PATH: &str = "/linkdbots/dashboard/categories";

/// The leaderboards' own rules after the shell's stylesheet ([`kd_core::page::STYLE`]): wide
/// tables and the chart.
const STYLE: &str = "body{max-width:90rem}table{font-size:14px}td,th{padding:.25rem .4rem}\
td{overflow-wrap:anywhere}.wide{overflow-x:auto}\
.withheld{color:#6b6b6b}.note{color:#444;font-size:14px}svg text{font:13px system-ui,sans-serif;fill:#1b1b1b}svg .bar{fill:#3b6ea5}";

/// Chart geometry: the drawing's width, one entry's height, the longest bar.
const CHART_WIDTH: u32 = 720;
const ENTRY_HEIGHT: u32 = 58;
const BAR_MAX: f64 = 560.0;

/// A leaderboard page through the one page shell ([`kd_core::page::Shell`], no script):
/// `title · Linkdbots`, and links to the hub, the leaderboards and the category proposal.
fn page(status: StatusCode, title: &str, main: &Markup) -> Response {
    let title = format!("{title} · Linkdbots");
    let index = format!("{}{INDEX_PATH}", crate::MOUNT);
    let nav = [
        ("/", "KarmaDue"),
        (index.as_str(), "Leaderboards"),
        (PROPOSE_PATH, "Propose a category"),
    ];
    Shell {
        title: &title,
        nav: &nav,
        style: STYLE,
        policy: Policy::NoScript,
    }
    .response(status, main)
    .into_response()
}

fn error_page(error: &ApiError) -> Response {
    let title = if error.status() == StatusCode::NOT_FOUND {
        "Not found"
    } else {
        "Error"
    };
    page(
        error.status(),
        title,
        &html! {
            h1 { (title) }
            p { (error.to_string()) }
            p { a href={ (crate::MOUNT) (INDEX_PATH) } { "Every category" } }
        },
    )
}

/// `GET /linkdbots/benchmarks`: the live categories, each with its card count (digests
/// included) and a link to its leaderboard.
pub(crate) async fn index(State(linkdbots): State<Linkdbots>) -> Response {
    let read = linkdbots
        .store
        .read(|conn| {
            let live = categories::live(conn)?;
            let counts = categories_store::card_counts(conn)?;
            Ok::<_, ApiError>((live, counts))
        })
        .await;
    let (live, counts) = match read {
        Ok(read) => read,
        Err(error) => return error_page(&error),
    };
    let cards = |name: &str| {
        counts
            .iter()
            .find(|(category, _)| category == name)
            .map_or(0, |(_, cards)| *cards)
    };
    let main = html! {
        h1 { "Leaderboards" }
        p { "What agent work costs, by category: each leaderboard ranks model, harness and host by what a successful run costs, with the success rate and how many outcomes are known beside every figure." }
        table {
            tr { th { "Category" } th { "What it covers" } th { "Cards" } }
            @for category in &live {
                tr {
                    td { a href={ (crate::MOUNT) "/benchmarks/" (category.name) } { (category.name) } }
                    td { (category.description) }
                    td { (cards(&category.name)) }
                }
            }
        }
        p.note { "Missing one? Anyone with an account can " a href=(PROPOSE_PATH) { "propose a category" } "; a moderator decides." }
    };
    page(StatusCode::OK, "Leaderboards", &main)
}

/// `GET /linkdbots/benchmarks/{category}`: the category's leaderboard as a page; 404 page
/// for a category not on the live list.
pub(crate) async fn category(
    State(linkdbots): State<Linkdbots>,
    Path(category): Path<String>,
) -> Response {
    match handlers::category_board(&linkdbots, category).await {
        Ok(board) => page(
            StatusCode::OK,
            board["category"].as_str().unwrap_or_default(),
            &board_html(&board),
        ),
        Err(error) => error_page(&error),
    }
}

/// `$` with two decimals, or four below a cent.
pub fn money(usd: f64) -> String {
    if usd != 0.0 && usd.abs() < 0.01 {
        format!("${usd:.4}")
    } else {
        format!("${usd:.2}")
    }
}

/// The four figures the coverage rule keeps together, as printed: (success rate, coverage,
/// $ per successful run, tokens per successful run).
pub fn printed(figures: &Value) -> (String, String, String, String) {
    let coverage = figures["coverage"].as_str().unwrap_or_default().to_owned();
    if figures["derived"] != Value::Bool(true) {
        let withheld = format!(
            "withheld (under {} known outcomes)",
            board::MIN_KNOWN_OUTCOMES
        );
        return (withheld.clone(), coverage, withheld.clone(), withheld);
    }
    let rate = figures["successRate"].as_f64().map_or_else(
        || "unknown".to_owned(),
        |rate| format!("{:.0}%", rate * 100.0),
    );
    let cost = figures["costPerSuccessUsd"]
        .as_f64()
        .map_or_else(|| "unknown".to_owned(), money);
    let tokens = figures["tokensPerSuccess"]
        .as_f64()
        .map_or_else(|| "unknown".to_owned(), |tokens| format!("{tokens:.0}"));
    (rate, coverage, cost, tokens)
}

fn median(value: &Value, money_figure: bool) -> String {
    match value.as_f64() {
        Some(usd) if money_figure => money(usd),
        Some(number) => format!("{number:.0}"),
        None => "—".to_owned(),
    }
}

fn row_label(row: &Value) -> String {
    format!(
        "{} · {} · {}",
        row["model"].as_str().unwrap_or_default(),
        row["engine"].as_str().unwrap_or_default(),
        row["host"].as_str().unwrap_or_default()
    )
}

/// The chart of cost per successful run: one bar (`rect class="bar"`) per row that has one,
/// in rank order, its length proportional to the cost, each with its label and, on the line
/// under it, the cost beside the success rate and the coverage. `None` when no row has one.
pub fn chart(rows: &[Value]) -> Option<Markup> {
    let charted: Vec<(&Value, f64)> = rows
        .iter()
        .filter_map(|row| Some((row, row["costPerSuccessUsd"].as_f64()?)))
        .collect();
    let most = charted.iter().map(|(_, cost)| *cost).fold(0.0, f64::max);
    if charted.is_empty() {
        return None;
    }
    let height = u32::try_from(charted.len()).unwrap_or(u32::MAX / ENTRY_HEIGHT) * ENTRY_HEIGHT + 8;
    Some(html! {
        svg.chart xmlns="http://www.w3.org/2000/svg" width=(CHART_WIDTH) height=(height)
            viewBox={ "0 0 " (CHART_WIDTH) " " (height) } role="img"
            aria-label="Cost per successful run, by row" {
            title { "Cost per successful run, by row (shorter is cheaper)" }
            @for (at, (row, cost)) in charted.iter().enumerate() {
                @let top = u32::try_from(at).unwrap_or(0) * ENTRY_HEIGHT;
                @let width = if most > 0.0 { (cost / most * BAR_MAX).max(2.0) } else { 2.0 };
                @let (rate, coverage, money_text, _) = printed(row);
                g.entry data-rank=(row["rank"]) {
                    text x="0" y=(top + 14) { (row["rank"]) ". " (row_label(row)) }
                    rect.bar x="0" y=(top + 20) width=(format!("{width:.1}")) height="14"
                        data-cost=(cost) {}
                    text x="0" y=(top + 50) {
                        (money_text) " per successful run · " (rate) " success · " (coverage)
                    }
                }
            }
        }
    })
}

fn evidence_cell(row: &Value) -> Markup {
    let provenance = &row["provenance"];
    html! {
        (row["evidence"].as_str().unwrap_or("unsigned"))
        br;
        span.note {
            (provenance["hostSigned"]) " host-signed, "
            (provenance["selfReported"]) " self-reported, "
            (provenance["imported"]) " imported"
        }
    }
}

fn rows_table(rows: &[Value]) -> Markup {
    html! {
        table {
            tr {
                th { "#" } th { "Model" } th { "Engine" } th { "Host" } th { "Evidence" }
                th { "Cards" } th { "Success rate" } th { "Coverage" }
                th { "$ per successful run" } th { "Tokens per successful run" }
                th { "Median cost" } th { "Median tokens in / out" } th { "Median turns" }
                th { "Median wall time (s)" }
            }
            @for row in rows {
                @let (rate, coverage, cost, tokens) = printed(row);
                @let medians = &row["medians"];
                tr.row {
                    td { (row["rank"]) }
                    td { (row["model"].as_str().unwrap_or_default()) }
                    td { (row["engine"].as_str().unwrap_or_default()) }
                    td { (row["host"].as_str().unwrap_or_default()) }
                    td { (evidence_cell(row)) }
                    td { (row["cards"]) }
                    td.rate { (rate) }
                    td.coverage { (coverage) }
                    td.cost { (cost) }
                    td.tokens { (tokens) }
                    td { (median(&medians["costUsd"], true)) }
                    td { (median(&medians["tokensIn"], false)) " / " (median(&medians["tokensOut"], false)) }
                    td { (median(&medians["turns"], false)) }
                    td { (medians["wallMs"].as_f64().map_or_else(|| "—".to_owned(), |ms| format!("{:.1}", ms / 1000.0))) }
                }
            }
        }
    }
}

/// The body of one category's page.
pub fn board_html(board: &Value) -> Markup {
    let rows: &[Value] = board["rows"].as_array().map_or(&[], Vec::as_slice);
    let window = &board["window"];
    let (rate, coverage, cost, tokens) = printed(&board["summary"]);
    html! {
        h1 { (board["category"].as_str().unwrap_or_default()) }
        p { (board["description"].as_str().unwrap_or_default()) }
        p.summary {
            "The whole category: " (rate) " success, " (coverage) "; "
            (cost) " and " (tokens) " tokens per successful run."
        }
        p.note {
            "Over the " (window["cards"]) " most recent cards (at most " (window["limit"]) "); "
            (window["digestsExcluded"]) " digests and " (window["outliersExcluded"])
            " outliers are counted in no figure. Failures are charged to the successes. "
            "Rows whose known outcomes are mostly host-signed rank first; nothing is derived under "
            (window["minKnownOutcomes"]) " known outcomes."
        }
        h2 { "Cost per successful run" }
        @match chart(rows) {
            Some(svg) => (svg),
            None => p { "No row has a cost per successful run yet." },
        }
        h2 { "Rows" }
        @if rows.is_empty() {
            p { "No cards in this category yet." }
        } @else {
            div.wide { (rows_table(rows)) }
        }
    }
}
