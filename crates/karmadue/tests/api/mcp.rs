//! The MCP endpoint: both eras, the transport refusals, and the tool list.

use serde_json::{Value, json};

use crate::app::TestApp;

#[test]
fn initialize_echoes_a_supported_version_and_falls_back_to_the_latest() {
    let app = TestApp::start();
    for (asked, answered) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-01-01", "2025-11-25"),
    ] {
        let reply = app.rpc("initialize", json!({ "protocolVersion": asked, "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }));
        assert_eq!(reply["result"]["protocolVersion"], answered);
        assert_eq!(reply["result"]["serverInfo"]["name"], "karmadue");
        assert!(reply["result"]["capabilities"]["tools"].is_object());
    }
    assert_eq!(app.rpc("ping", json!({}))["result"], json!({}));
}

#[test]
fn notifications_and_responses_get_202_with_no_body() {
    let app = TestApp::start();
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
    ] {
        let reply = app.mcp_raw(body, &[]);
        assert_eq!(reply.status, 202, "{body}");
        assert!(reply.text.is_empty());
    }
}

#[test]
fn bad_transport_input_gets_a_clear_error_and_changes_nothing() {
    let app = TestApp::start();
    let before = app.log_len();
    let batch = app.mcp_raw(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, &[]);
    assert_eq!(batch.status, 400);
    assert_eq!(batch.json()["error"]["code"], -32600);
    let malformed = app.mcp_raw(r#"{"jsonrpc":"2.0","id":1,"method":"#, &[]);
    assert_eq!(malformed.status, 400);
    assert_eq!(malformed.json()["error"]["code"], -32700);
    let not_utf8 = app.request(
        "POST",
        "/functions/v1/mcp",
        Some(&[0x7b, 0xff, 0xfe, 0x7d]),
        &[("content-type", "application/json")],
    );
    assert_eq!(not_utf8.status, 400);
    assert_eq!(not_utf8.json()["error"]["code"], -32700);
    let oversized = "x".repeat(300 * 1024);
    let big = app.mcp_raw(
        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{oversized}"}}}}"#),
        &[],
    );
    assert_eq!(big.status, 413);
    for method in ["GET", "DELETE"] {
        let reply = app.request(method, "/functions/v1/mcp", None, &[]);
        assert_eq!(reply.status, 405, "{method}");
    }
    let unknown = app.rpc(
        "tools/call",
        json!({ "name": "no_such_tool", "arguments": {} }),
    );
    assert_eq!(unknown["error"]["code"], -32602);
    let unknown_method = app.rpc("resources/list", json!({}));
    assert_eq!(unknown_method["error"]["code"], -32601);
    let (reply, is_error) = app.call_text("verify_agent", r#"{"agent_id": 5}"#, &[]);
    assert!(is_error);
    assert_eq!(
        (
            reply["error"]["code"].as_str(),
            reply["error"]["field"].as_str()
        ),
        (Some("validation"), Some("agent_id"))
    );
    let (reply, is_error) = app.call_text("verify_agent", r#"{"agent": "x"}"#, &[]);
    assert!(is_error);
    assert_eq!(reply["error"]["field"], "agent");
    let (reply, is_error) = app.call_text("register_challenge", r#"[1, 2]"#, &[]);
    assert!(is_error);
    assert_eq!(reply["error"]["field"], "arguments");
    assert_eq!(app.log_len(), before);
}

#[test]
fn tools_list_declares_every_tool_fully_and_in_a_fixed_order() {
    let app = TestApp::start();
    let first = app.rpc("tools/list", json!({}));
    let second = app.rpc("tools/list", json!({}));
    assert_eq!(first, second);
    let tools = first["result"]["tools"].as_array().unwrap();
    assert!(tools.len() >= 12);
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        assert!(!tool["description"].as_str().unwrap().is_empty(), "{name}");
        assert_eq!(tool["inputSchema"]["type"], "object", "{name}");
        assert_eq!(tool["inputSchema"]["additionalProperties"], false, "{name}");
        for hint in [
            "title",
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ] {
            assert!(!tool["annotations"][hint].is_null(), "{name} lacks {hint}");
        }
    }
    let names: Vec<&str> = tools
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    for expected in [
        "register_challenge",
        "register_agent",
        "get_signing_payload",
        "verify_agent",
        "rename_agent",
        "rotate_agent_key",
        "revoke_agent",
        "release_agent",
        "get_history",
        "read_scores",
        "get_rating_card",
        "get_receipt",
    ] {
        assert!(names.contains(&expected), "{expected} missing");
    }
    assert!(
        !names.iter().any(|name| name.starts_with("test_")),
        "fixtures listed outside conformance mode"
    );
}

fn modern(app: &TestApp, method: &str, params: Value, extra: &[(&str, &str)]) -> (u16, Value) {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = json!({ "jsonrpc": "2.0", "id": 3, "method": method, "params": params }).to_string();
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
    ];
    headers.extend_from_slice(extra);
    let reply = app.mcp_raw(&body, &headers);
    (reply.status, reply.json())
}

#[test]
fn the_2026_era_is_served_statelessly_with_its_header_rules() {
    let app = TestApp::start();
    let (status, discover) = modern(&app, "server/discover", json!({}), &[]);
    assert_eq!(status, 200, "{discover}");
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
    assert_eq!(discover["result"]["resultType"], "complete");
    assert_eq!(
        discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "karmadue"
    );
    let (_, list) = modern(&app, "tools/list", json!({}), &[]);
    assert!(list["result"]["ttlMs"].as_u64().unwrap() > 0);
    assert_eq!(list["result"]["cacheScope"], "public");
    let (status, call) = modern(
        &app,
        "tools/call",
        json!({ "name": "register_challenge", "arguments": {} }),
        &[("mcp-name", "register_challenge")],
    );
    assert_eq!(status, 200, "{call}");
    assert_eq!(call["result"]["resultType"], "complete");
    assert_eq!(call["result"]["structuredContent"]["ok"], true);
    let (status, mismatch) = modern(
        &app,
        "tools/call",
        json!({ "name": "register_challenge", "arguments": {} }),
        &[("mcp-name", "verify_agent")],
    );
    assert_eq!(
        (status, mismatch["error"]["code"].as_i64()),
        (400, Some(-32020))
    );
    let (status, gone) = modern(&app, "initialize", json!({}), &[]);
    assert_eq!(
        (status, gone["error"]["code"].as_i64()),
        (404, Some(-32601))
    );
    let (status, gone) = modern(&app, "ping", json!({}), &[]);
    assert_eq!(
        (status, gone["error"]["code"].as_i64()),
        (404, Some(-32601))
    );
    let body = json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": { "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } } }).to_string();
    let reply = app.mcp_raw(
        &body,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
    );
    assert_eq!(
        (reply.status, reply.json()["error"]["code"].as_i64()),
        (400, Some(-32602))
    );
    let body = json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": { "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } } }).to_string();
    let reply = app.mcp_raw(
        &body,
        &[
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-method", "tools/list"),
        ],
    );
    assert_eq!(
        (reply.status, reply.json()["error"]["code"].as_i64()),
        (400, Some(-32020))
    );
}

/// Decision 397: the header is compared before the version is judged, and -32022 names what a
/// request of its form may ask for (only 2026-07-28 in `_meta`, as `server/discover` lists) and
/// echoes the version asked for.
#[test]
fn an_unsupported_version_names_what_discover_lists_and_a_mismatch_comes_first() {
    let app = TestApp::start();
    let meta = |version: &str| {
        json!({ "jsonrpc": "2.0", "id": 5, "method": "server/discover", "params": { "_meta": { "io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {} } } }).to_string()
    };
    let send = |body: &str, header: &str| {
        let reply = app.mcp_raw(
            body,
            &[
                ("mcp-protocol-version", header),
                ("mcp-method", "server/discover"),
            ],
        );
        (reply.status, reply.json())
    };
    let (status, unknown) = send(&meta("v999.0.0"), "v999.0.0");
    assert_eq!(
        (status, unknown["error"]["code"].as_i64()),
        (400, Some(-32022))
    );
    assert_eq!(
        unknown["error"]["data"],
        json!({ "supported": ["2026-07-28"], "requested": "v999.0.0" })
    );
    let (status, mismatch) = send(&meta("v999.0.0"), "2026-07-28");
    assert_eq!(
        (status, mismatch["error"]["code"].as_i64()),
        (400, Some(-32020)),
        "{mismatch}"
    );
    // A legacy request (no `_meta`) naming an unknown version in the header: every version.
    let reply = app.mcp_raw(
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#,
        &[("mcp-protocol-version", "1999-01-01")],
    );
    let legacy = reply.json();
    assert_eq!(
        (reply.status, legacy["error"]["code"].as_i64()),
        (400, Some(-32022))
    );
    assert_eq!(
        legacy["error"]["data"],
        json!({ "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"], "requested": "1999-01-01" })
    );
}

#[test]
fn foreign_hosts_and_origins_are_refused() {
    let app = TestApp::start();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    assert_eq!(
        app.mcp_raw(body, &[("host", "evil.example.com")]).status,
        403
    );
    assert_eq!(
        app.mcp_raw(body, &[("origin", "http://evil.example.com")])
            .status,
        403
    );
    assert_eq!(app.mcp_raw(body, &[("host", "localhost:9999")]).status, 200);
    // An origin is the hub's own: scheme, host and port (decision 143).
    let port = app.base.rsplit(':').next().unwrap();
    for (origin, status) in [
        (format!("http://localhost:{port}"), 200),
        (format!("http://127.0.0.1:{port}"), 200),
        (format!("http://[::1]:{port}"), 200),
        ("http://localhost:3000".to_owned(), 403),
        (format!("https://localhost:{port}"), 403),
        ("null".to_owned(), 403),
    ] {
        assert_eq!(
            app.mcp_raw(body, &[("origin", &origin)]).status,
            status,
            "{origin}"
        );
    }
}

#[test]
fn with_a_public_url_only_its_origin_passes_and_localhost_no_longer_does() {
    let app = TestApp::start_with(|config| {
        config.public_url = "https://hub.example.org".into();
        config.public_url_given = true;
    });
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let port = app.base.rsplit(':').next().unwrap();
    for (origin, status) in [
        ("https://hub.example.org".to_owned(), 200),
        ("https://HUB.example.org:443".to_owned(), 200),
        ("http://hub.example.org".to_owned(), 403),
        ("https://hub.example.org:8443".to_owned(), 403),
        (format!("http://localhost:{port}"), 403),
        (format!("http://127.0.0.1:{port}"), 403),
    ] {
        assert_eq!(
            app.mcp_raw(body, &[("origin", &origin)]).status,
            status,
            "{origin}"
        );
    }
    // Without an Origin (not a browser) the loopback Host still serves.
    assert_eq!(app.mcp_raw(body, &[]).status, 200);
}

#[test]
fn an_id_the_hub_cannot_read_is_an_invalid_request_not_a_notification() {
    let app = TestApp::start();
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    for id in [r#""\ud800""#.to_owned(), r#""a\udc00b""#.to_owned(), deep] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let reply = app.mcp_raw(&body, &[]);
        assert_eq!(reply.status, 400, "{id}: {}", reply.text);
        let json = reply.json();
        assert_eq!(json["error"]["code"], -32600, "{id}");
        assert_eq!(json["id"], serde_json::Value::Null, "{id}");
    }
}

#[test]
fn an_event_stream_only_client_gets_one_sse_event() {
    let app = TestApp::start();
    let reply = app.request(
        "POST",
        "/functions/v1/mcp",
        Some(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        &[
            ("content-type", "application/json"),
            ("accept", "text/event-stream"),
        ],
    );
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    assert!(
        reply.text.starts_with("event: message\ndata: {"),
        "{}",
        reply.text
    );
}

#[test]
fn the_home_page_and_docs_list_the_served_tools() {
    let app = TestApp::start();
    let home = app.request("GET", "/", None, &[]);
    assert_eq!(home.status, 200);
    assert!(home.text.contains("<h2>register_agent</h2>"));
    assert!(home.text.contains(
        "tfqegxIsYOO_QAOBGLjyFrP3IrWX-PHqWUEaDXjDRvi76ikl7lwt7eCRMfEa10vwYdLaeO8QaYck1X4YFOpuBA"
    ));
    assert!(!home.text.contains("<script"));
    let tools = app.request("GET", "/functions/v1/docs/docs/tools.md", None, &[]);
    assert_eq!(tools.status, 200);
    for tool in app.hub.tools.iter() {
        assert!(
            tools.text.contains(&format!("## {}\n", tool.name)),
            "{} missing from the reference",
            tool.name
        );
    }
    assert_eq!(
        app.request("GET", "/functions/v1/docs/docs/nope.md", None, &[])
            .status,
        404
    );
}

/// The five pages the permissions document lists (Quick start, Permissions, Tool reference,
/// Security and verification, Changelog; docs/decisions.md 326), with the hub's own URL.
#[test]
fn the_five_listed_docs_pages_are_served_as_markdown() {
    let app = TestApp::start();
    for (page, heading) in [
        ("quickstart", "# Quick start\n"),
        ("permissions", "# Permissions\n"),
        ("tools", "# Tool reference"),
        ("security", "# Security and verification\n"),
        ("changelog", "# Changelog\n"),
    ] {
        let reply = app.request(
            "GET",
            &format!("/functions/v1/docs/docs/{page}.md"),
            None,
            &[],
        );
        assert_eq!(reply.status, 200, "{page}");
        assert!(
            reply.text.starts_with(heading),
            "{page}: {}",
            &reply.text[..60.min(reply.text.len())]
        );
        assert!(!reply.text.contains("{{public_url}}"), "{page}");
        let index = app.request("GET", "/functions/v1/docs/docs/index.md", None, &[]);
        assert!(
            index
                .text
                .contains(&format!("/functions/v1/docs/docs/{page}.md")),
            "index links {page}"
        );
    }
    let quickstart = app.request("GET", "/functions/v1/docs/docs/quickstart.md", None, &[]);
    assert!(
        quickstart
            .text
            .contains(&format!("{}/functions/v1/mcp/connector", app.base))
    );
}

#[test]
fn initialize_issues_a_session_id_that_later_requests_may_carry_and_unknown_ids_get_404() {
    let app = TestApp::start();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } }).to_string();
    let reply = app.mcp_raw(&body, &[]);
    let session = reply.header("mcp-session-id").unwrap().to_owned();
    assert!(
        session.starts_with("kds_") && session.bytes().all(|b| (0x21..=0x7e).contains(&b)),
        "{session}"
    );
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    assert_eq!(
        app.mcp_raw(ping, &[("mcp-session-id", &session)]).status,
        200
    );
    let mut forged = session.clone();
    forged.replace_range(4..5, if &session[4..5] == "a" { "b" } else { "a" });
    let refused = app.mcp_raw(ping, &[("mcp-session-id", &forged)]);
    assert_eq!(refused.status, 404);
    assert_eq!(refused.json()["error"]["code"], -32001);
    assert_eq!(
        app.mcp_raw(ping, &[("mcp-session-id", "made-up")]).status,
        404
    );
    assert_eq!(
        app.mcp_raw(ping, &[]).status,
        200,
        "a session id stays optional"
    );
}

#[test]
fn oversized_and_non_json_bodies_get_the_json_error_envelope_and_every_answer_says_nosniff() {
    let app = TestApp::start();
    let big = format!(r#"{{"need":"{}"}}"#, "x".repeat(300 * 1024));
    let mcp = app.mcp_raw(&big, &[]);
    assert_eq!(mcp.status, 413);
    assert_eq!(mcp.json()["error"]["code"], -32600);
    let (status, body) = app.rest("register_challenge", &big, &[]);
    assert_eq!(status, 413);
    assert_eq!(
        (body["ok"].as_bool(), body["error"]["field"].as_str()),
        (Some(false), Some("arguments"))
    );
    let form = app.request(
        "POST",
        "/functions/v1/public-api/v1/tools/register_challenge",
        Some(b"{}"),
        &[("content-type", "text/plain")],
    );
    assert_eq!(form.status, 415, "{}", form.text);
    assert_eq!(form.json()["ok"], false);
    for path in [
        "/",
        "/functions/v1/docs/docs/tools.md",
        "/.well-known/jwks.json",
    ] {
        assert_eq!(
            app.request("GET", path, None, &[])
                .header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
    }
}

#[test]
fn options_names_only_post_and_every_page_sends_a_content_security_policy() {
    let app = TestApp::start();
    let options = app.request("OPTIONS", "/functions/v1/mcp", None, &[]);
    assert_eq!(options.status, 204);
    assert_eq!(options.header("allow"), Some("POST"));
    for path in [
        "/",
        "/functions/v1/docs/docs/permissions.md",
        "/no-such-page",
    ] {
        let reply = app.request("GET", path, None, &[]);
        let policy = reply.header("content-security-policy").unwrap_or_default();
        assert!(
            policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'"),
            "{path}: {policy:?}"
        );
    }
}
