//! The OpenAPI document (`GET /functions/v1/public-api/openapi.json`): it names exactly the
//! router's REST routes and the served tools, with the methods the router answers and the
//! statuses the tools refuse with; it and `tools/list` are pinned by snapshots
//! (`snapshots/`), so an API change shows in review.

use std::collections::BTreeSet;

use kd_karmadue::http::openapi;
use serde_json::{Value, json};

use crate::app::TestApp;

fn document(app: &TestApp) -> Value {
    let reply = app.request("GET", openapi::PATH, None, &[]);
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    reply.json()
}

fn documented_paths(document: &Value) -> BTreeSet<String> {
    document["paths"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

/// A concrete path for a templated one (`{name}` becomes `x`).
fn concrete(path: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for character in path.chars() {
        match character {
            '{' => inside = true,
            '}' => {
                inside = false;
                out.push('x');
            }
            _ if !inside => out.push(character),
            _ => {}
        }
    }
    out
}

#[test]
fn the_document_lists_every_rest_route_of_the_router_and_nothing_else() {
    let app = TestApp::start();
    let document = document(&app);
    assert_eq!(document["openapi"], "3.1.0");
    let routes: BTreeSet<String> = kd_karmadue::http::route_paths(&app.hub)
        .into_iter()
        .collect();
    let not_rest: BTreeSet<String> = openapi::NOT_REST
        .iter()
        .map(|(path, _)| (*path).to_owned())
        .collect();
    let stale: Vec<&String> = not_rest.difference(&routes).collect();
    assert!(
        stale.is_empty(),
        "NOT_REST names paths the router does not serve: {stale:?}"
    );
    assert!(routes.contains(openapi::TOOL_ROUTE));
    let mut expected: BTreeSet<String> = routes
        .difference(&not_rest)
        .filter(|path| path.as_str() != openapi::TOOL_ROUTE)
        .cloned()
        .collect();
    expected.extend(
        app.hub
            .tools
            .iter()
            .map(|tool| openapi::tool_path(tool.name)),
    );
    let documented = documented_paths(&document);
    let missing: Vec<&String> = expected.difference(&documented).collect();
    let extra: Vec<&String> = documented.difference(&expected).collect();
    assert!(
        missing.is_empty(),
        "routes the document leaves out: {missing:?}"
    );
    assert!(
        extra.is_empty(),
        "paths the router does not serve: {extra:?}"
    );
}

#[test]
fn the_tool_mirrors_are_the_tools_of_tools_list_with_their_input_schemas() {
    let app = TestApp::start();
    let document = document(&app);
    let listing = app.rpc("tools/list", json!({}));
    let tools = listing["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), app.hub.tools.len());
    let documented_tools = documented_paths(&document)
        .into_iter()
        .filter(|path| path.starts_with("/functions/v1/public-api/v1/tools/"))
        .count();
    assert_eq!(documented_tools, tools.len());
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        let operation = &document["paths"][openapi::tool_path(name)]["post"];
        assert_eq!(operation["operationId"], name);
        assert_eq!(
            operation["requestBody"]["content"]["application/json"]["schema"], tool["inputSchema"],
            "{name}"
        );
    }
}

#[test]
fn every_documented_path_answers_exactly_its_documented_methods() {
    let app = TestApp::start();
    let document = document(&app);
    for (path, item) in document["paths"].as_object().unwrap() {
        let documented: BTreeSet<String> = item
            .as_object()
            .unwrap()
            .keys()
            .map(|method| method.to_ascii_uppercase())
            .collect();
        // A method no route takes: the router answers 405 and names the methods it serves.
        let reply = app.request("PUT", &concrete(path), None, &[]);
        assert_eq!(reply.status, 405, "PUT {path}: {}", reply.text);
        let allowed: BTreeSet<String> = reply
            .header("allow")
            .unwrap_or_else(|| panic!("PUT {path}: no Allow header"))
            .split(',')
            .map(|method| method.trim().to_owned())
            .filter(|method| method != "HEAD")
            .collect();
        assert_eq!(allowed, documented, "{path}");
    }
}

#[test]
fn a_refused_tool_call_answers_with_a_status_its_operation_documents() {
    let app = TestApp::start();
    let document = document(&app);
    let operation = &document["paths"][openapi::tool_path("rename_agent")]["post"];
    let documented: BTreeSet<u16> = operation["responses"]
        .as_object()
        .unwrap()
        .keys()
        .map(|status| status.parse().unwrap())
        .collect();
    let mut expected = openapi::refusal_statuses();
    expected.extend([200, 413, 415]);
    assert_eq!(documented, expected);
    // Unsigned: signature_required, 401, in the refusal envelope.
    let (status, body) = app.rest(
        "rename_agent",
        r#"{"agent_id":"kd_agent_00000000000000000000000000","name":"Someone"}"#,
        &[],
    );
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["error"]["code"], "signature_required");
    assert!(documented.contains(&status));
    let refused = &document["components"]["responses"]["Refused401"];
    assert!(
        refused["description"]
            .as_str()
            .unwrap()
            .contains("signature_required"),
        "{refused}"
    );
    // An unknown argument: validation, 400.
    let (status, body) = app.rest("rename_agent", r#"{"nope":1}"#, &[]);
    assert_eq!(
        (status, &body["error"]["code"]),
        (400, &json!("validation"))
    );
    assert!(documented.contains(&status));
    // A body that is not JSON: the adapter's 415, documented too.
    let reply = app.request(
        "POST",
        &openapi::tool_path("rename_agent"),
        Some(b"name=x"),
        &[("content-type", "application/x-www-form-urlencoded")],
    );
    assert_eq!(reply.status, 415);
    assert_eq!(reply.json()["ok"], false);
    assert!(documented.contains(&reply.status));
}

#[test]
fn tools_list_is_pinned_by_a_snapshot() {
    let app = TestApp::start();
    let listing = app.rpc("tools/list", json!({}));
    insta::assert_json_snapshot!("tools_list", listing["result"]);
}

#[test]
fn the_openapi_document_is_pinned_by_a_snapshot() {
    let app = TestApp::start();
    insta::assert_json_snapshot!("openapi", document(&app));
}
