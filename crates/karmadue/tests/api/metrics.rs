//! Observability (DESIGN rule 10): `GET /metrics` in the Prometheus text format, one registry per
//! hub, and one request id per request shared by the span, the `x-request-id` header and the
//! body.

use std::collections::BTreeMap;

use kd_core::tiers::AccessTiers;
use serde_json::json;

use crate::app::{Reply, START_MS, TestApp, fresh_nonce};

/// A parsed exposition: each sample by metric name and its sorted labels, and each family's
/// `# TYPE`.
struct Exposition {
    samples: BTreeMap<(String, Vec<(String, String)>), f64>,
    types: BTreeMap<String, String>,
}

impl Exposition {
    /// Parses the text format strictly enough to catch a malformed line: every sample is
    /// `name{label="value",...} number`, and belongs to a family declared by a `# TYPE` line
    /// above it (histogram samples through their `_bucket`, `_sum` and `_count` series).
    fn parse(text: &str) -> Self {
        let mut samples = BTreeMap::new();
        let mut types = BTreeMap::new();
        for line in text.lines().filter(|line| !line.trim().is_empty()) {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').unwrap();
                assert!(
                    ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                    "{line}"
                );
                assert!(
                    types.insert(name.to_owned(), kind.to_owned()).is_none(),
                    "two TYPE lines for {name}"
                );
                continue;
            }
            if line.starts_with("# HELP ") {
                continue;
            }
            assert!(!line.starts_with('#'), "unexpected comment: {line}");
            let (series, value) = line.rsplit_once(' ').unwrap();
            let value: f64 = match value {
                "+Inf" => f64::INFINITY,
                "-Inf" => f64::NEG_INFINITY,
                value => value
                    .parse()
                    .unwrap_or_else(|_| panic!("not a number: {line}")),
            };
            let (name, labels) = match series.split_once('{') {
                None => (series, Vec::new()),
                Some((name, rest)) => {
                    let inner = rest.strip_suffix('}').unwrap_or_else(|| panic!("{line}"));
                    let mut labels: Vec<(String, String)> = inner
                        .split("\",")
                        .filter(|pair| !pair.is_empty())
                        .map(|pair| {
                            let (key, value) = pair.split_once("=\"").unwrap();
                            (key.to_owned(), value.trim_end_matches('"').to_owned())
                        })
                        .collect();
                    labels.sort();
                    (name, labels)
                }
            };
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
                "metric name {name}"
            );
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|suffix| {
                    name.strip_suffix(suffix)
                        .filter(|base| types.get(*base).is_some_and(|kind| kind == "histogram"))
                })
                .unwrap_or(name);
            assert!(
                types.contains_key(family),
                "{name} has no # TYPE line before it"
            );
            samples.insert((name.to_owned(), labels), value);
        }
        Self { samples, types }
    }

    fn value(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let mut labels: Vec<(String, String)> = labels
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect();
        labels.sort();
        self.samples.get(&(name.to_owned(), labels)).copied()
    }

    /// A counter or gauge that must be there.
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.value(name, labels)
            .unwrap_or_else(|| panic!("no {name}{labels:?}"))
    }

    /// A counter that may not exist yet (0).
    fn count(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.value(name, labels).unwrap_or(0.0)
    }

    fn kind(&self, name: &str) -> &str {
        self.types.get(name).map_or("", String::as_str)
    }
}

fn scrape(app: &TestApp) -> Exposition {
    let reply = app.request("GET", "/metrics", None, &[]);
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(
        reply
            .header("content-type")
            .unwrap()
            .starts_with("text/plain; version=0.0.4"),
        "{:?}",
        reply.header("content-type")
    );
    Exposition::parse(&reply.text)
}

const CALLS: &str = "karmadue_tool_calls_total";

fn calls(metrics: &Exposition, tool: &str, transport: &str, code: &str) -> f64 {
    metrics.count(
        CALLS,
        &[("tool", tool), ("transport", transport), ("code", code)],
    )
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "a table of refusals against one prepared state, each checked to change nothing"
)]
fn metrics_count_this_hubs_calls_refusals_writes_and_log_head() {
    // The default tiers table: anonymous reads stop at 30 a minute per address.
    let app = TestApp::start_with(|config| config.access_tiers = AccessTiers::default());
    let first = scrape(&app);
    for (name, kind) in [
        ("karmadue_rate_limited_total", "counter"),
        ("karmadue_store_batches_committed_total", "counter"),
        ("karmadue_store_jobs_committed_total", "counter"),
        ("karmadue_event_log_head_seq", "gauge"),
        ("karmadue_process_start_time_seconds", "gauge"),
        ("karmadue_build_info", "gauge"),
    ] {
        assert_eq!(first.kind(name), kind, "{name}");
    }
    for bucket in ["address", "tier", "tool", "quota"] {
        assert_eq!(
            first.get("karmadue_rate_limited_total", &[("bucket", bucket)]),
            0.0
        );
    }
    assert_eq!(
        first.get("karmadue_process_start_time_seconds", &[]),
        START_MS as f64 / 1000.0
    );
    assert_eq!(
        first.get(
            "karmadue_build_info",
            &[("version", env!("CARGO_PKG_VERSION"))]
        ),
        1.0
    );
    assert_eq!(first.get("karmadue_event_log_head_seq", &[]), 0.0);
    assert_eq!(calls(&first, "register_agent", "mcp", "ok"), 0.0);

    // Registration: two MCP calls, both ok, and writes.
    let agent = app.register("Metrics Agent");
    // A validation refusal over REST.
    let (status, refused) = app.rest("get_resource", r#"{"bogus": true}"#, &[]);
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (400, Some("validation"))
    );
    // Anonymous reads until the tier's limit refuses one.
    let mut not_found = 0;
    let limited = loop {
        let reply = app.call("get_resource", json!({ "resource_id": "kd:res:npm:nope" }));
        match reply["error"]["code"].as_str() {
            Some("not_found") => not_found += 1,
            _ => break reply,
        }
        assert!(not_found <= 30, "no limit after {not_found} reads");
    };
    assert_eq!(limited["error"]["code"], "rate_limited", "{limited}");
    let mcp_requests = 2 + not_found + 1;

    let before = scrape(&app);
    // One signed write: one job in its own batch.
    let renamed = app.signed(
        &agent,
        "rename_agent",
        json!({ "agent_id": agent.agent_id, "name": "Metrics Renamed" }),
    );
    assert_eq!(renamed["ok"], true, "{renamed}");
    let unmatched = app.request("GET", "/no/such/page?code=AAAA-BBBB", None, &[]);
    assert_eq!(unmatched.status, 404);
    let after = scrape(&app);

    assert_eq!(calls(&after, "register_challenge", "mcp", "ok"), 1.0);
    assert_eq!(calls(&after, "register_agent", "mcp", "ok"), 1.0);
    assert_eq!(calls(&after, "get_resource", "rest", "validation"), 1.0);
    assert_eq!(
        calls(&after, "get_resource", "mcp", "not_found"),
        f64::from(not_found)
    );
    assert_eq!(calls(&after, "get_resource", "mcp", "rate_limited"), 1.0);
    assert_eq!(calls(&after, "rename_agent", "mcp", "ok"), 1.0);
    assert_eq!(
        after.get("karmadue_rate_limited_total", &[("bucket", "tier")]),
        1.0
    );
    for bucket in ["address", "tool", "quota"] {
        assert_eq!(
            after.get("karmadue_rate_limited_total", &[("bucket", bucket)]),
            0.0
        );
    }
    // The duration histogram of a tool: as many observations as calls.
    assert_eq!(
        after.kind("karmadue_tool_call_duration_seconds"),
        "histogram"
    );
    assert_eq!(
        after.get(
            "karmadue_tool_call_duration_seconds_count",
            &[("tool", "get_resource")]
        ),
        f64::from(not_found) + 2.0
    );
    assert_eq!(
        after.get(
            "karmadue_tool_call_duration_seconds_bucket",
            &[("tool", "get_resource"), ("le", "+Inf")]
        ),
        f64::from(not_found) + 2.0
    );

    // HTTP requests by route template and status (never the path as sent).
    assert_eq!(after.kind("karmadue_http_requests_total"), "counter");
    assert_eq!(
        after.get(
            "karmadue_http_requests_total",
            &[("route", "/functions/v1/mcp"), ("status", "200")]
        ),
        f64::from(mcp_requests + 1)
    );
    assert_eq!(
        after.get(
            "karmadue_http_requests_total",
            &[
                ("route", "/functions/v1/public-api/v1/tools/{name}"),
                ("status", "400")
            ]
        ),
        1.0
    );
    assert_eq!(
        after.get(
            "karmadue_http_requests_total",
            &[("route", "unmatched"), ("status", "404")]
        ),
        1.0
    );
    assert_eq!(
        after.get(
            "karmadue_http_requests_total",
            &[("route", "/metrics"), ("status", "200")]
        ),
        2.0,
        "the two scrapes before this one"
    );

    // The writer: registration wrote; the rename was one job in one batch.
    let batches = "karmadue_store_batches_committed_total";
    let jobs = "karmadue_store_jobs_committed_total";
    assert!(before.get(batches, &[]) >= 1.0);
    assert!(before.get(jobs, &[]) >= before.get(batches, &[]));
    assert_eq!(after.get(batches, &[]) - before.get(batches, &[]), 1.0);
    assert_eq!(after.get(jobs, &[]) - before.get(jobs, &[]), 1.0);
    assert_eq!(after.kind("karmadue_store_batch_size"), "histogram");
    assert_eq!(
        after.get("karmadue_store_batch_size_count", &[])
            - before.get("karmadue_store_batch_size_count", &[]),
        1.0
    );
    assert_eq!(
        after.get("karmadue_store_batch_size_bucket", &[("le", "1")])
            - before.get("karmadue_store_batch_size_bucket", &[("le", "1")]),
        1.0
    );
    assert_eq!(
        after.kind("karmadue_store_commit_duration_seconds"),
        "histogram"
    );
    assert_eq!(
        after.get("karmadue_store_commit_duration_seconds_count", &[]),
        after.get(batches, &[])
    );

    // The head gauge is the log's length.
    assert!(app.log_len() >= 2);
    assert_eq!(
        after.get("karmadue_event_log_head_seq", &[]),
        app.log_len() as f64
    );
    assert!(before.get("karmadue_event_log_head_seq", &[]) < app.log_len() as f64);
}

#[test]
fn each_hub_counts_in_its_own_registry() {
    let one = TestApp::start();
    let two = TestApp::start();
    let _ = one.call("register_challenge", json!({}));
    let _ = one.call("register_challenge", json!({}));
    let _ = two.call("register_challenge", json!({}));
    assert_eq!(calls(&scrape(&one), "register_challenge", "mcp", "ok"), 2.0);
    assert_eq!(calls(&scrape(&two), "register_challenge", "mcp", "ok"), 1.0);
}

#[test]
fn metrics_can_be_turned_off() {
    let app = TestApp::start_with(|config| config.metrics = false);
    assert_eq!(app.request("GET", "/metrics", None, &[]).status, 404);
}

#[test]
fn the_metrics_hold_no_ids_or_addresses() {
    let app = TestApp::start();
    let agent = app.register("Private Metrics");
    let reply = app.request("GET", "/metrics", None, &[]);
    for secret in [
        agent.agent_id.as_str(),
        agent.handle.as_str(),
        "127.0.0.1",
        "req_",
    ] {
        assert!(!reply.text.contains(secret), "/metrics shows {secret}");
    }
}

fn request_id_header(reply: &Reply) -> &str {
    let id = reply
        .header("x-request-id")
        .unwrap_or_else(|| panic!("no x-request-id: {:?}", reply.headers));
    assert!(id.starts_with("req_") && id.len() == 20, "{id}");
    id
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario: each step acts on the state the step before it left"
)]
fn the_request_id_header_is_the_body_request_id() {
    let app = TestApp::start();
    // MCP tools/call, ok and refused.
    let mut seen = Vec::new();
    for arguments in [json!({}), json!({ "bogus": 1 })] {
        let body = json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "register_challenge", "arguments": arguments } });
        let reply = app.mcp_raw(&body.to_string(), &[]);
        let header = request_id_header(&reply).to_owned();
        assert_eq!(
            reply.json()["result"]["structuredContent"]["request_id"],
            json!(header),
            "{}",
            reply.text
        );
        seen.push(header);
    }
    // An MCP JSON-RPC error carries it in error.data.
    let reply = app.mcp_raw(
        &json!({ "jsonrpc": "2.0", "id": 4, "method": "no/such" }).to_string(),
        &[],
    );
    let header = request_id_header(&reply).to_owned();
    assert_eq!(reply.json()["error"]["data"]["request_id"], json!(header));
    seen.push(header);
    // REST: a tool, a refusal, a named route, the tiers document.
    for (method, path, body) in [
        (
            "POST",
            "/functions/v1/public-api/v1/tools/register_challenge",
            Some("{}"),
        ),
        (
            "POST",
            "/functions/v1/public-api/v1/tools/register_challenge",
            Some("{\"x\":1}"),
        ),
        (
            "POST",
            "/functions/v1/public-api/v1/tools/no_such_tool",
            Some("{}"),
        ),
        (
            "GET",
            "/functions/v1/public-api/v1/verify/kd_000000000000",
            None,
        ),
        ("GET", "/functions/v1/public-api/v1/tiers", None),
        ("POST", "/functions/v1/public-api/v1/preflight", Some("{}")),
    ] {
        let reply = app.request(
            method,
            path,
            body.map(str::as_bytes),
            &[("content-type", "application/json")],
        );
        let header = request_id_header(&reply).to_owned();
        assert_eq!(
            reply.json()["request_id"],
            json!(header),
            "{path}: {}",
            reply.text
        );
        seen.push(header);
    }
    // Pages and refusals before any handler carry one too.
    for path in ["/", "/no/such/page", "/signin"] {
        seen.push(request_id_header(&app.request("GET", path, None, &[])).to_owned());
    }
    let forbidden = app.mcp_raw("{}", &[("origin", "https://evil.example")]);
    assert_eq!(forbidden.status, 403);
    seen.push(request_id_header(&forbidden).to_owned());
    // A signed write: header and body agree.
    let agent = app.register("Request Ids");
    let text = json!({ "agent_id": agent.agent_id, "name": "Ids Renamed" }).to_string();
    let headers = app.sign(
        &agent.key,
        "rename_agent",
        &agent.agent_id,
        &text,
        &fresh_nonce(),
    );
    let mut borrowed: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    borrowed.push(("content-type", "application/json"));
    let reply = app.request(
        "POST",
        "/functions/v1/public-api/v1/tools/rename_agent",
        Some(text.as_bytes()),
        &borrowed,
    );
    assert_eq!(reply.status, 200, "{}", reply.text);
    let header = request_id_header(&reply).to_owned();
    assert_eq!(reply.json()["request_id"], json!(header));
    seen.push(header);
    let count = seen.len();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), count, "every request has its own id");
}

#[test]
fn a_refusal_by_the_daily_action_quota_is_counted_as_quota() {
    let app = TestApp::start();
    let browser = app.browser();
    browser.sign_up(
        "metrics@example.com",
        "Mira Metrics",
        "correct horse battery staple",
    );
    let agent = app.register("Quota Metrics");
    let code = crate::people::mint(&browser);
    assert_eq!(crate::people::connect(&app, &agent, &code)["ok"], true);
    app.clock.advance_ms(1_000);
    crate::people::decide(&browser, "approve");
    // The owner allows one action a day.
    crate::standing::set_actions_per_day(&app, &agent, 1);
    let rename = |name: &str| {
        app.signed(
            &agent,
            "rename_agent",
            json!({ "agent_id": agent.agent_id, "name": name }),
        )
    };
    assert_eq!(rename("Quota Metrics One")["ok"], true);
    let limited = rename("Quota Metrics Two");
    assert_eq!(limited["error"]["code"], "rate_limited", "{limited}");
    let metrics = scrape(&app);
    assert_eq!(
        metrics.get("karmadue_rate_limited_total", &[("bucket", "quota")]),
        1.0
    );
    assert_eq!(
        metrics.get("karmadue_rate_limited_total", &[("bucket", "tier")]),
        0.0
    );
    assert_eq!(calls(&metrics, "rename_agent", "mcp", "rate_limited"), 1.0);
    assert_eq!(calls(&metrics, "rename_agent", "mcp", "ok"), 1.0);
}
