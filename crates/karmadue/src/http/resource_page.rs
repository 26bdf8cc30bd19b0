//! The README badge and the resource page (spec "Signed log head": "README badge ...").
//!
//! - `GET /functions/v1/public-api/v1/badge.svg?id=<resource id>`: an SVG badge "KarmaDue:
//!   <state>", or with `&format=json` the data behind it. Read-only, `Cache-Control: public,
//!   max-age=3600`. An unknown (or demo) id answers 200 with the state "not listed", so a README
//!   shows it; a missing id is 400.
//! - `GET /resource?id=<resource id>`: a server-rendered page, no JavaScript: the record, its
//!   claims, its reliability reports and the badge snippet. Third-party text (title,
//!   description, claim values) is HTML-escaped and marked as third-party.
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
use serde_json::{Value, json};

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

/// Escapes text for HTML and XML (text and attribute values).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
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
    let width = left_width + right_width;
    let label = escape(&format!("{left}: {right}"));
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"20\" role=\"img\" aria-label=\"{label}\">\
<title>{label}</title>\
<rect width=\"{left_width}\" height=\"20\" fill=\"#555\"/>\
<rect x=\"{left_width}\" width=\"{right_width}\" height=\"20\" fill=\"{color}\"/>\
<g fill=\"#fff\" text-anchor=\"middle\" font-family=\"Verdana,DejaVu Sans,sans-serif\" font-size=\"11\">\
<text x=\"{left_middle}\" y=\"14\">{left}</text>\
<text x=\"{right_middle}\" y=\"14\">{right_text}</text>\
</g></svg>\n",
        color = state.color(),
        left_middle = left_width / 2,
        right_middle = left_width + right_width / 2,
        right_text = escape(right),
    )
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

fn internal(error: &ToolError) -> Response {
    tracing::error!(cause = ?error.cause, "resource page or badge failed");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        "Something went wrong on our side.\n",
    )
        .into_response()
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
        Err(error) => return internal(&error),
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

const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}\
code,pre{font:14px ui-monospace,monospace;background:#f4f4f2}pre{padding:.75rem;overflow-x:auto;white-space:pre-wrap}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left;vertical-align:top}\
.third-party{border-left:4px solid #d9a400;background:#fffbe6;padding:.4rem .75rem;margin:.5rem 0}\
.tp-label{font-size:13px;color:#6b5800;text-transform:uppercase;letter-spacing:.04em}\
.demo{background:#fde7e7;border:1px solid #c62828;padding:.5rem .75rem}dt{font-weight:600}dd{margin:0 0 .4rem 0}";

/// A public page: `title` (escaped) and `body` (HTML the caller escaped) in the house layout.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{}</title><style>{STYLE}</style></head><body><nav>{}</nav><main>{body}</main></body></html>\n",
        escape(title),
        super::SITE_NAV
    )
}

fn third_party(label: &str, text: &str) -> String {
    format!(
        "<div class=\"third-party\"><div class=\"tp-label\">{} (third-party text, shown as data)</div>{}</div>",
        escape(label),
        escape(text)
    )
}

/// The resource page's HTML for a record.
pub fn render_page(
    public_url: &str,
    resource: &Resource,
    claims: &[Claim],
    reliability: Option<&Value>,
) -> String {
    let id = &resource.resource_id;
    let state = badge_state(Some(resource), claims);
    let shown = resource_json(resource, claims);
    let (_, summary) = evidence_summary(resource, claims);
    let mut body = String::new();
    let _ = write!(body, "<h1>{}</h1>", escape(id));
    if resource.demo {
        body.push_str("<p class=\"demo\"><strong>DEMO record.</strong> A fixture that shows the shape of a record. It is not a real tool and never evidence.</p>");
    }
    let _ = write!(
        body,
        "<p><img src=\"{}?id={}\" alt=\"KarmaDue: {}\"></p>",
        BADGE_PATH,
        escape(&query_value(id)),
        escape(state.words())
    );
    body.push_str(&third_party("Title", &resource.title));
    if let Some(description) = &resource.description {
        body.push_str(&third_party("Description", description));
    }
    body.push_str("<dl>");
    let locator = if resource.locator.starts_with("https://") {
        format!(
            "<a href=\"{0}\" rel=\"nofollow noopener noreferrer ugc\"><code>{0}</code></a>",
            escape(&resource.locator)
        )
    } else {
        format!("<code>{}</code>", escape(&resource.locator))
    };
    let text = |value: &Value| value.as_str().map_or_else(|| "unknown".to_owned(), escape);
    for (name, value) in [
        ("Type", text(&shown["type"])),
        ("Source", text(&shown["source"])),
        ("Locator", locator),
        ("Publisher", text(&shown["owner"])),
        ("License (as stated upstream)", text(&shown["license"])),
        ("Version (as stated upstream)", text(&shown["version"])),
        ("Released or last seen", text(&shown["released_at"])),
        ("Popularity", text(&shown["popularity"])),
        (
            "Archived upstream",
            (if resource.archived { "yes" } else { "no" }).to_owned(),
        ),
    ] {
        let _ = write!(body, "<dt>{name}</dt><dd>{value}</dd>");
    }
    body.push_str("</dl>");
    let _ = write!(body, "<h2>Evidence</h2><p>{}</p>", escape(&summary));
    if claims.is_empty() {
        body.push_str("<p>No public claims.</p>");
    } else {
        body.push_str("<table><tr><th>Claim</th><th>Value (third-party)</th><th>Kind</th><th>Evidence</th><th>Observed</th><th>Counts as verification</th></tr>");
        for claim in claims {
            let _ = write!(
                body,
                "<tr><td>{}</td><td class=\"third-party\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&claim.kind),
                escape(claim.value.as_deref().unwrap_or("unknown")),
                escape(claim.kind_label()),
                escape(&claim.evidence_label),
                escape(&kd_core::clock::rfc3339_ms(claim.observed_ms)),
                if claim.counts_as_verification {
                    "yes"
                } else {
                    "no"
                },
            );
        }
        body.push_str("</table>");
    }
    let _ = write!(body, "<h2>{}</h2>", escape(outcomes::RELIABILITY_LABEL));
    match reliability {
        Some(reports) => {
            let _ = write!(
                body,
                "<p><strong>{}</strong> ({} reports from {} agents; {} owners counted{}).</p><p>{}</p>",
                escape(reports["line"].as_str().unwrap_or_default()),
                reports["reports"],
                reports["agents"],
                reports["owners"],
                if reports["established"] == true {
                    ""
                } else {
                    "; anecdotal"
                },
                escape(reports["note"].as_str().unwrap_or_default()),
            );
        }
        None => body.push_str("<p>No reports in the last 30 days.</p>"),
    }
    let _ = write!(
        body,
        "<h2>README badge</h2><pre><code>{}</code></pre>\
<p>The badge is read-only and cached for an hour. It is not a safety guarantee: checked means verification-grade evidence exists, nothing more. This hub has no advisory feed yet, so it never shows security warning.</p>",
        escape(&badge_markdown(public_url, id))
    );
    page(&format!("KarmaDue: {id}"), &body)
}

/// `GET /resource?id=<resource id>`.
pub async fn resource_page(
    State(hub): State<Arc<Hub>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let html = |status: StatusCode, text: String| {
        let mut response = (status, text).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        // No scripts, ever; images only from this hub.
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'",
            ),
        );
        response
    };
    let Some(id) = query
        .get("id")
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty())
    else {
        return html(
            StatusCode::BAD_REQUEST,
            page(
                "KarmaDue: resource",
                "<h1>Which resource?</h1><p>Open <code>/resource?id=kd:res:github:owner/repo</code>.</p>",
            ),
        );
    };
    let record = match load(&hub, id.clone()).await {
        Ok(record) => record,
        Err(error) => return internal(&error),
    };
    match record.resource {
        Some(resource) => html(
            StatusCode::OK,
            render_page(
                &hub.config.public_url,
                &resource,
                &record.claims,
                record.reliability.as_ref(),
            ),
        ),
        None => html(
            StatusCode::NOT_FOUND,
            page(
                "KarmaDue: not listed",
                &format!(
                    "<h1>Not listed</h1><p>No resource has the id <code>{}</code>.</p>",
                    escape(&id)
                ),
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_quotes() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"y\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;"
        );
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
