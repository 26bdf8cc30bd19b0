//! The connector's MCP surface: both paths one resource, the tools a grant is offered,
//! needs_your_approval with nothing recorded, and wrong_endpoint on the self-keyed endpoint.

use super::*;

pub(super) fn tool_names(reply: &Reply) -> Vec<String> {
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.json()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

pub(super) fn call(app: &TestApp, path: &str, token: &str, tool: &str, arguments: Value) -> Value {
    let reply = rpc(
        app,
        path,
        token,
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
    );
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.json()["result"]["structuredContent"].clone()
}

#[test]
fn a_token_works_on_both_paths_and_lists_only_what_the_grant_offers() {
    let app = TestApp::start();
    let (_, tokens) = connected(&app, "maya@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    for path in [CONNECTOR, "/mcp"] {
        let init = rpc(
            &app,
            path,
            access,
            "initialize",
            json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
        );
        assert_eq!(init.status, 200, "{}", init.text);
        assert_eq!(init.json()["result"]["protocolVersion"], "2025-11-25");
        // A hosted agent is not told to register a key or sign (decision 348).
        let words = init.json()["result"]["instructions"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(words.contains("hosted agent"), "{words}");
        assert!(!words.contains("register_challenge"), "{words}");
        let names = tool_names(&rpc(&app, path, access, "tools/list", json!({})));
        assert!(
            names.contains(&"discover_resources".to_owned()),
            "{names:?}"
        );
        assert!(names.contains(&"get_claims".to_owned()));
        for hidden in [
            "register_agent",
            "register_challenge",
            "get_signing_payload",
            "rotate_agent_key",
            "invite_agent",
            "create_thread",
        ] {
            assert!(!names.contains(&hidden.to_owned()), "{hidden} offered");
        }
        let found = call(
            &app,
            path,
            access,
            "discover_resources",
            json!({ "need": "calendar" }),
        );
        assert_eq!(found["ok"], true, "{found}");
    }
    // The 2026-07-28 era on the connector too.
    let modern = app.request(
        "POST",
        "/mcp",
        Some(
            json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": { "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {} } } })
            .to_string()
            .as_bytes(),
        ),
        &[
            ("content-type", "application/json"),
            ("accept", "application/json"),
            ("authorization", &format!("Bearer {access}")),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
    );
    assert_eq!(modern.status, 200, "{}", modern.text);
    assert_eq!(modern.json()["result"]["ttlMs"], 300_000);
    // The list depends on the grant: no shared cache may keep it (decision 348).
    assert_eq!(modern.json()["result"]["cacheScope"], "private");
}

#[test]
fn tools_outside_the_grant_answer_needs_your_approval_and_record_nothing() {
    let app = TestApp::start();
    let (_, tokens) = connected(&app, "maya@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    let before = app.log_len();
    for (tool, scope) in [
        ("register_agent", "kd.self_keyed"),
        ("create_thread", "kd.listings.write"),
    ] {
        let refused = call(&app, CONNECTOR, access, tool, json!({}));
        assert_eq!(refused["ok"], false);
        assert_eq!(refused["error"]["code"], "needs_your_approval", "{refused}");
        assert_eq!(refused["error"]["required_scope"], scope);
        assert_eq!(refused["error"]["legacy_code"], "insufficient_scope");
        assert!(
            refused["error"]["approve_url"]
                .as_str()
                .unwrap()
                .starts_with(&app.base)
        );
    }
    assert_eq!(app.log_len(), before, "nothing was recorded");
}

#[test]
fn an_oauth_token_on_the_self_keyed_endpoint_is_wrong_endpoint() {
    let app = TestApp::start();
    let (_, tokens) = connected(&app, "maya@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    let before = app.log_len();
    let refused = call(
        &app,
        "/functions/v1/mcp",
        access,
        "discover_resources",
        json!({ "need": "calendar" }),
    );
    assert_eq!(refused["ok"], false);
    assert_eq!(refused["error"]["code"], "wrong_endpoint", "{refused}");
    assert_eq!(
        refused["error"]["connector_url"],
        format!("{}{CONNECTOR}", app.base)
    );
    assert_eq!(app.log_len(), before);
}

#[test]
fn a_connected_app_asking_trust_query_about_any_amount_above_zero_gets_spend_cap() {
    let app = TestApp::start();
    let (_, tokens) = connected(&app, "trust-app@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    let other = app.register("Trust Subject Agent");
    let names = tool_names(&rpc(&app, CONNECTOR, access, "tools/list", json!({})));
    assert!(names.contains(&"trust_query".to_owned()), "{names:?}");
    let before = app.log_len();
    let priced = call(
        &app,
        CONNECTOR,
        access,
        "trust_query",
        json!({ "subject_id": other.agent_id, "amount": 0.01 }),
    );
    assert_eq!(priced["data"]["reason"], "spend_cap", "{priced}");
    assert_eq!(priced["data"]["basis"]["asked_by_connected_app"], true);
    // The signed answer says who asked: the proof is about the app's $0, not the agent.
    let signed = priced["data"]["proof"]["signed_text"].as_str().unwrap();
    assert_eq!(signed.split('\n').nth(5), Some("connected_app"), "{signed}");
    assert!(
        priced["data"]["explanation"]
            .as_str()
            .unwrap()
            .contains("Nothing was judged about this agent")
    );
    // subject_id names the agent asked about; it is not replaced by the app's own agent.
    assert_eq!(priced["data"]["agent_id"], json!(other.agent_id));
    // At $0 the checks about the agent answer: this one has no owner.
    let free = call(
        &app,
        "/mcp",
        access,
        "trust_query",
        json!({ "subject_id": other.agent_id }),
    );
    assert_eq!(free["data"]["reason"], "independent", "{free}");
    // Without an agent the app asks about its own hosted agent: linked, no reviews yet.
    let own = call(&app, CONNECTOR, access, "trust_query", json!({}));
    assert_eq!(own["data"]["reason"], "low_confidence", "{own}");
    assert_ne!(own["data"]["agent_id"], json!(other.agent_id));
    assert_eq!(app.log_len(), before);
    // The self-keyed endpoint answers the same question on the agent's merits.
    let direct = app.call(
        "trust_query",
        json!({ "subject_id": other.agent_id, "amount": 0.01 }),
    );
    assert_eq!(direct["data"]["reason"], "independent", "{direct}");
    assert_eq!(direct["data"]["basis"]["asked_by_connected_app"], false);
}
