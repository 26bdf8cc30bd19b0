//! The README badge and the resource page (spec "Signed log head": "README badge ...").
//!
//! - `GET /functions/v1/public-api/v1/badge.svg?id=<resource id>`: an SVG badge "KarmaDue:
//!   <state>", or with `&format=json` the data behind it. Read-only, `Cache-Control: public,
//!   max-age=3600`. An unknown (or demo) id answers 200 with the state "not listed", so a README
//!   shows it; a missing id is 400.
//! - `GET /resource?id=<resource id>`: a server-rendered page, no JavaScript: the record, its
//!   claims, its reliability reports and the badge snippet. Third-party text (title,
//!   description, claim values) is escaped by the templates and marked as third-party.
//!
//! States, first match wins: `security warning` (needs an advisory feed, which this hub does not
//! have yet: never shown), `archived upstream`, `checked` (verification-grade evidence exists,
//! nothing more), `listed` (a record with public claims read from public metadata), `not checked`
//! (a record with no public claims yet, e.g. one an agent registered), `not listed`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde_json::{Value, json};

use super::layout::{Data, Nav, page, refusal_text};
use crate::catalog::model::{self, Claim, Resource};
use crate::catalog::{evidence_summary, resource_json};
use crate::hub::Hub;
use crate::outcomes;
use kd_kernel::error::ToolError;

/// The badge path.
pub const BADGE_PATH: &str = "/functions/v1/public-api/v1/badge.svg";
/// The resource page path.
pub const PAGE_PATH: &str = "/resource";
/// How long clients and caches may keep a badge.
pub const BADGE_CACHE: &str = "public, max-age=3600";

/// A badge state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadgeState {
    /// Verification-grade evidence exists.
    Checked,
    /// In the catalog, with claims read from public metadata; nothing checked.
    Listed,
    /// In the catalog with no public claims yet.
    NotChecked,
    /// Archived upstream.
    ArchivedUpstream,
    /// A security advisory names it. Needs an advisory feed; never produced yet.
    SecurityWarning,
    /// Not in the catalog (or only a demo record).
    NotListed,
}

impl BadgeState {
    /// The state's code, e.g. `not_checked`.
    pub fn code(self) -> &'static str {
        match self {
            Self::Checked => "checked",
            Self::Listed => "listed",
            Self::NotChecked => "not_checked",
            Self::ArchivedUpstream => "archived_upstream",
            Self::SecurityWarning => "security_warning",
            Self::NotListed => "not_listed",
        }
    }

    /// The words on the badge, e.g. `not checked`.
    pub fn words(self) -> &'static str {
        match self {
            Self::Checked => "checked",
            Self::Listed => "listed",
            Self::NotChecked => "not checked",
            Self::ArchivedUpstream => "archived upstream",
            Self::SecurityWarning => "security warning",
            Self::NotListed => "not listed",
        }
    }

    fn color(self) -> &'static str {
        match self {
            Self::Checked => "#2e7d32",
            Self::Listed => "#1565c0",
            Self::NotChecked => "#757575",
            Self::ArchivedUpstream => "#a15c00",
            Self::SecurityWarning => "#c62828",
            Self::NotListed => "#9e9e9e",
        }
    }
}

/// The state of a record (None: no record).
pub fn badge_state(resource: Option<&Resource>, claims: &[Claim]) -> BadgeState {
    match resource {
        None => BadgeState::NotListed,
        Some(resource) if resource.demo => BadgeState::NotListed,
        Some(resource) if resource.archived => BadgeState::ArchivedUpstream,
        Some(_) if claims.iter().any(|claim| claim.counts_as_verification) => BadgeState::Checked,
        Some(_) if !claims.is_empty() => BadgeState::Listed,
        Some(_) => BadgeState::NotChecked,
    }
}

/// Percent-encodes a query value, keeping the characters ids use (`:`, `/`, `@`, `.`, ...).
pub fn query_value(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~:/@!$'()*,;".contains(&byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// The badge as SVG: "KarmaDue" and the state's words, in a flat two-part badge.
pub fn badge_svg(state: BadgeState) -> String {
    // Approximate text widths (Verdana 11px averages about 6.5 px a character).
    let text_width = |text: &str| u32::try_from(text.chars().count()).unwrap_or(40) * 65 / 10 + 12;
    let (left, right) = ("KarmaDue", state.words());
    let (left_width, right_width) = (text_width(left), text_width(right));
    let label = format!("{left}: {right}");
    let svg = html! {
        svg xmlns="http://www.w3.org/2000/svg" width=(left_width + right_width) height="20" role="img" aria-label=(label) {
            title { (label) }
            rect width=(left_width) height="20" fill="#555" {}
            rect x=(left_width) width=(right_width) height="20" fill=(state.color()) {}
            g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" {
                text x=(left_width / 2) y="14" { (left) }
                text x=(left_width + right_width / 2) y="14" { (right) }
            }
        }
    };
    let mut text = svg.into_string();
    text.push('\n');
    text
}

/// What a badge and a page read: the record (if any), its public claims, and its reliability
/// reports at `now_ms`.
struct Record {
    resource: Option<Resource>,
    claims: Vec<Claim>,
    reliability: Option<Value>,
}

async fn load(hub: &Arc<Hub>, id: String) -> Result<Record, ToolError> {
    let now = hub.clock.now_ms();
    hub.store
        .read(move |conn| {
            let Some(resource) = model::load_resource(conn, &id)? else {
                return Ok(Record {
                    resource: None,
                    claims: Vec::new(),
                    reliability: None,
                });
            };
            let claims = model::load_claims(conn, &resource.resource_id, None)?;
            let reliability = outcomes::reliability_reports_at(conn, &resource.resource_id, now)?;
            Ok(Record {
                resource: Some(resource),
                claims,
                reliability,
            })
        })
        .await
}

fn badge_markdown(public_url: &str, id: &str) -> String {
    let id = query_value(id);
    format!("[![KarmaDue]({public_url}{BADGE_PATH}?id={id})]({public_url}{PAGE_PATH}?id={id})")
}

/// The data behind a badge (`format=json`).
pub fn badge_json(
    public_url: &str,
    id: &str,
    state: BadgeState,
    resource: Option<&Resource>,
    claims: &[Claim],
) -> Value {
    let listed = !matches!(state, BadgeState::NotListed);
    json!({
        "resource_id": id,
        "state": state.code(),
        "message": state.words(),
        "label": format!("KarmaDue: {}", state.words()),
        "listed": listed,
        "counts_as_verification": resource.is_some_and(|resource| !resource.demo && claims.iter().any(|claim| claim.counts_as_verification)),
        "archived_upstream": resource.is_some_and(|resource| resource.archived),
        "security_warning": false,
        "security_feed": "none: this hub has no advisory feed yet, so it never shows security warning",
        "badge_url": format!("{public_url}{BADGE_PATH}?id={}", query_value(id)),
        "resource_url": format!("{public_url}{PAGE_PATH}?id={}", query_value(id)),
        "markdown": badge_markdown(public_url, id),
        "note": "Read-only and cached for an hour. Not a safety guarantee: checked means verification-grade evidence exists, nothing more.",
    })
}

fn cached(mut response: Response, content_type: &'static str) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(BADGE_CACHE));
    response
}

/// `GET /functions/v1/public-api/v1/badge.svg?id=<resource id>[&format=json]`.
pub async fn badge(
    State(hub): State<Arc<Hub>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let Some(id) = query
        .get("id")
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty())
    else {
        return (
            StatusCode::BAD_REQUEST,
            "Pass the resource id: badge.svg?id=kd:res:github:owner/repo\n",
        )
            .into_response();
    };
    let record = match load(&hub, id.clone()).await {
        Ok(record) => record,
        Err(error) => return refusal_text(&error, "resource"),
    };
    let state = badge_state(record.resource.as_ref(), &record.claims);
    if query.get("format").is_some_and(|format| format == "json") {
        let body = badge_json(
            &hub.config.public_url,
            &id,
            state,
            record.resource.as_ref(),
            &record.claims,
        );
        return cached(body.to_string().into_response(), "application/json");
    }
    cached(
        badge_svg(state).into_response(),
        "image/svg+xml; charset=utf-8",
    )
}

fn third_party(label: &str, text: &str) -> Markup {
    html! {
        div.third-party {
            div.tp-label { (label) " (third-party text, shown as data)" }
            (Data(text))
        }
    }
}

/// The record's facts, one `dt`/`dd` pair each.
fn facts(resource: &Resource, shown: &Value) -> Markup {
    let text = |value: &Value| value.as_str().unwrap_or("unknown").to_owned();
    let rows = [
        ("Type", text(&shown["type"])),
        ("Source", text(&shown["source"])),
        ("Publisher", text(&shown["owner"])),
        ("License (as stated upstream)", text(&shown["license"])),
        ("Version (as stated upstream)", text(&shown["version"])),
        ("Released or last seen", text(&shown["released_at"])),
        ("Popularity", text(&shown["popularity"])),
    ];
    let locator = &resource.locator;
    html! {
        dl {
            @for (name, value) in &rows[..2] { dt { (name) } dd { (Data(value)) } }
            dt { "Locator" }
            dd {
                @if locator.starts_with("https://") {
                    a href=(locator) rel="nofollow noopener noreferrer ugc" { code { (Data(locator)) } }
                } @else {
                    code { (Data(locator)) }
                }
            }
            @for (name, value) in &rows[2..] { dt { (name) } dd { (Data(value)) } }
            dt { "Archived upstream" }
            dd { (if resource.archived { "yes" } else { "no" }) }
        }
    }
}

fn claims_table(claims: &[Claim]) -> Markup {
    html! {
        @if claims.is_empty() {
            p { "No public claims." }
        } @else {
            table {
                tr {
                    th { "Claim" } th { "Value (third-party)" } th { "Kind" } th { "Evidence" }
                    th { "Observed" } th { "Counts as verification" }
                }
                @for claim in claims {
                    tr {
                        td { (claim.kind) }
                        td.third-party { (Data(claim.value.as_deref().unwrap_or("unknown"))) }
                        td { (claim.kind_label()) }
                        td { (claim.evidence_label) }
                        td { (super::layout::time_ms(claim.observed_ms)) }
                        td { (if claim.counts_as_verification { "yes" } else { "no" }) }
                    }
                }
            }
        }
    }
}

fn reliability_section(reliability: Option<&Value>) -> Markup {
    html! {
        h2 { (outcomes::RELIABILITY_LABEL) }
        @match reliability {
            Some(reports) => {
                p {
                    strong { (reports["line"].as_str().unwrap_or_default()) }
                    " (" (reports["reports"].to_string()) " reports from " (reports["agents"].to_string())
                    " agents; " (reports["owners"].to_string()) " owners counted"
                    @if reports["established"] != true { "; anecdotal" }
                    ")."
                }
                p { (reports["note"].as_str().unwrap_or_default()) }
            }
            None => p { "No reports in the last 30 days." },
        }
    }
}

/// The resource page's `main` for a record.
pub fn render_page(
    public_url: &str,
    resource: &Resource,
    claims: &[Claim],
    reliability: Option<&Value>,
) -> Markup {
    let id = &resource.resource_id;
    let state = badge_state(Some(resource), claims);
    let shown = resource_json(resource, claims);
    let (_, summary) = evidence_summary(resource, claims);
    html! {
        h1 { (Data(id)) }
        @if resource.demo {
            p.demo { strong { "DEMO record." } " A fixture that shows the shape of a record. It is not a real tool and never evidence." }
        }
        p { img src={ (BADGE_PATH) "?id=" (query_value(id)) } alt={ "KarmaDue: " (state.words()) }; }
        (third_party("Title", &resource.title))
        @if let Some(description) = &resource.description {
            (third_party("Description", description))
        }
        (facts(resource, &shown))
        h2 { "Evidence" }
        p { (summary) }
        (claims_table(claims))
        (reliability_section(reliability))
        h2 { "README badge" }
        pre { code { (Data(&badge_markdown(public_url, id))) } }
        p { "The badge is read-only and cached for an hour. It is not a safety guarantee: checked means verification-grade evidence exists, nothing more. This hub has no advisory feed yet, so it never shows security warning." }
    }
}

/// `GET /resource?id=<resource id>`.
pub async fn resource_page(
    State(hub): State<Arc<Hub>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let Some(id) = query
        .get("id")
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty())
    else {
        return page(
            StatusCode::BAD_REQUEST,
            "KarmaDue: resource",
            Nav::Site,
            &html! {
                h1 { "Which resource?" }
                p { "Open " code { "/resource?id=kd:res:github:owner/repo" } "." }
            },
        );
    };
    let record = match load(&hub, id.clone()).await {
        Ok(record) => record,
        Err(error) => return refusal_text(&error, "resource"),
    };
    match record.resource {
        Some(resource) => page(
            StatusCode::OK,
            &format!("KarmaDue: {}", resource.resource_id),
            Nav::Site,
            &render_page(
                &hub.config.public_url,
                &resource,
                &record.claims,
                record.reliability.as_ref(),
            ),
        ),
        None => page(
            StatusCode::NOT_FOUND,
            "KarmaDue: not listed",
            Nav::Site,
            &html! {
                h1 { "Not listed" }
                p { "No resource has the id " code { (Data(&id)) } "." }
            },
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(
            query_value("kd:res:npm:@scope/a b&c#d"),
            "kd:res:npm:@scope/a%20b%26c%23d"
        );
    }

    #[test]
    fn every_state_renders_a_badge_with_its_words() {
        for state in [
            BadgeState::Checked,
            BadgeState::Listed,
            BadgeState::NotChecked,
            BadgeState::ArchivedUpstream,
            BadgeState::SecurityWarning,
            BadgeState::NotListed,
        ] {
            let svg = badge_svg(state);
            assert!(
                svg.starts_with("<svg") && svg.contains(&format!("KarmaDue: {}", state.words())),
                "{svg}"
            );
        }
    }
}
