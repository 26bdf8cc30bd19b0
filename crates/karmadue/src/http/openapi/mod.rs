//! The OpenAPI 3.1 document of every REST route, served at [`PATH`]. The tool mirrors
//! (`POST …/v1/tools/{name}`, one path per served tool) come from [`Hub::tools`]: the request
//! body is the tool's `inputSchema` as `tools/list` shows it, the answers are the reply
//! envelope with the statuses of [`ErrorCode::http_status`]. Ronin's doors come from
//! [`kd_ronin::doors::openapi`]. The routes that are not REST (the MCP endpoint, the HTML
//! pages) are named in [`NOT_REST`] (`not_rest.rs`); the API test holds both lists against
//! [`super::route_paths`], so a route nobody described fails it.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::observe;
use super::pages::{home, resource as resource_page};
use crate::hub::Hub;
use kd_kernel::error::ErrorCode;
use kd_kernel::registry::{Access, ParamType, Tool};

mod not_rest;

/// Where the document is served.
pub const PATH: &str = "/functions/v1/public-api/openapi.json";

/// The router's path of the tool mirrors; the document lists one path per served tool.
pub const TOOL_ROUTE: &str = "/functions/v1/public-api/v1/tools/{name}";

/// The path of one tool's REST mirror.
pub fn tool_path(name: &str) -> String {
    format!("/functions/v1/public-api/v1/tools/{name}")
}

pub use not_rest::NOT_REST;

/// Every error code (the `match` below fails to build when a code is added and not listed).
const CODES: [ErrorCode; 28] = [
    ErrorCode::Validation,
    ErrorCode::SignatureRequired,
    ErrorCode::StaleSignature,
    ErrorCode::BadNonce,
    ErrorCode::BadSignature,
    ErrorCode::Replay,
    ErrorCode::IdentityRequired,
    ErrorCode::AgentMismatch,
    ErrorCode::Forbidden,
    ErrorCode::NotFound,
    ErrorCode::LabelReserved,
    ErrorCode::LabelYours,
    ErrorCode::RateLimited,
    ErrorCode::StampRequired,
    ErrorCode::InvalidCode,
    ErrorCode::ReceiptNotFound,
    ErrorCode::ReceiptInvalid,
    ErrorCode::ReceiptMismatch,
    ErrorCode::ReceiptExpired,
    ErrorCode::AlreadyReported,
    ErrorCode::WrongEndpoint,
    ErrorCode::NeedsYourApproval,
    ErrorCode::VisaInvalid,
    ErrorCode::VisaExpired,
    ErrorCode::VisaMismatch,
    ErrorCode::VisaScope,
    ErrorCode::SpendCap,
    ErrorCode::Internal,
];

/// Where `code` stands in [`CODES`]; exhaustive, so a new code must be placed there.
const fn code_index(code: ErrorCode) -> usize {
    match code {
        ErrorCode::Validation => 0,
        ErrorCode::SignatureRequired => 1,
        ErrorCode::StaleSignature => 2,
        ErrorCode::BadNonce => 3,
        ErrorCode::BadSignature => 4,
        ErrorCode::Replay => 5,
        ErrorCode::IdentityRequired => 6,
        ErrorCode::AgentMismatch => 7,
        ErrorCode::Forbidden => 8,
        ErrorCode::NotFound => 9,
        ErrorCode::LabelReserved => 10,
        ErrorCode::LabelYours => 11,
        ErrorCode::RateLimited => 12,
        ErrorCode::StampRequired => 13,
        ErrorCode::InvalidCode => 14,
        ErrorCode::ReceiptNotFound => 15,
        ErrorCode::ReceiptInvalid => 16,
        ErrorCode::ReceiptMismatch => 17,
        ErrorCode::ReceiptExpired => 18,
        ErrorCode::AlreadyReported => 19,
        ErrorCode::WrongEndpoint => 20,
        ErrorCode::NeedsYourApproval => 21,
        ErrorCode::VisaInvalid => 22,
        ErrorCode::VisaExpired => 23,
        ErrorCode::VisaMismatch => 24,
        ErrorCode::VisaScope => 25,
        ErrorCode::SpendCap => 26,
        ErrorCode::Internal => 27,
    }
}

// CODES holds every code once, in the order of `code_index`.
const _: () = {
    let mut index = 0;
    while index < CODES.len() {
        assert!(code_index(CODES[index]) == index);
        index += 1;
    }
};

/// The statuses a tool call can be refused with (the REST table), sorted.
pub fn refusal_statuses() -> BTreeSet<u16> {
    CODES.iter().map(|code| code.http_status()).collect()
}

/// The statuses of a route that reads a JSON body: the REST table, plus the adapter's own 413
/// (over the body limit) and 415 (not `application/json`).
fn body_statuses() -> BTreeSet<u16> {
    let mut statuses = refusal_statuses();
    statuses.extend([413, 415]);
    statuses
}

/// `GET /functions/v1/public-api/openapi.json`.
pub async fn serve(State(hub): State<Arc<Hub>>) -> Response {
    let mut response = document(&hub).to_string().into_response();
    super::json_content_type(response.headers_mut());
    response
}

/// The whole document for the tools `hub` serves. Nothing in it depends on the address or the
/// time (the server URL is relative), so a snapshot of it is stable.
pub fn document(hub: &Hub) -> Value {
    let mut paths = Map::new();
    for tool in &hub.tools {
        paths.insert(
            tool_path(tool.name),
            json!({ "post": tool_operation(tool) }),
        );
    }
    public_api_paths(&mut paths);
    well_known_paths(&mut paths);
    crate::http::transparency::openapi_paths(&mut paths);
    if hub.config.metrics {
        paths.insert(
            observe::METRICS_PATH.into(),
            json!({ "get": text_operation("metrics", "operations", "The hub's metrics (Prometheus text).", "text/plain") }),
        );
    }
    // Ronin's paths under its mount, or at the root of its own address with that address
    // as the paths' server (docs/decisions.md 389).
    let (ronin_paths, ronin_schemas) = kd_ronin::doors::openapi();
    for (path, mut item) in ronin_paths {
        if let Some(url) = &hub.ronin.own_url {
            item["servers"] = json!([{ "url": url }]);
        }
        paths.insert(hub.ronin.mounted(&path), item);
    }
    let ronin_at = match &hub.ronin.own_url {
        Some(url) => format!("at {url}"),
        None => format!("under {}", hub.ronin.mount),
    };
    let (linkdbots_paths, linkdbots_schemas) = kd_linkdbots::doors::openapi();
    for (path, item) in linkdbots_paths {
        paths.insert(format!("{}{path}", kd_linkdbots::MOUNT), item);
    }
    let mut components = components();
    if let Some(Value::Object(schemas)) = components.get_mut("schemas") {
        schemas.extend(ronin_schemas);
        schemas.extend(linkdbots_schemas);
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "KarmaDue hub",
            "version": env!("CARGO_PKG_VERSION"),
            "description": format!("Every REST route of the hub: the public API (each tool at POST /functions/v1/public-api/v1/tools/{{name}}, the same JSON as MCP's structuredContent with the spec's statuses), the well-known documents, and Ronin's doors {ronin_at}, Linkdbots' API under /linkdbots. Always read ok and error.code; the status is a convenience. Signed tools take the kd-mcp-v1 headers."),
        },
        "servers": [{ "url": "/" }],
        "tags": [
            { "name": "tools", "description": "The tool mirrors (one per tool of tools/list)." },
            { "name": "public-api", "description": "The named routes of the public API." },
            { "name": "well-known", "description": "Keys, the signed log head, and the docs." },
            { "name": "operations", "description": "For the operator." },
            { "name": "ronin", "description": format!("Ronin, the signed-event hire market (mounted {ronin_at}).") },
            { "name": "linkdbots", "description": "Linkdbots, the public record of what agent work costs (mounted under /linkdbots)." },
        ],
        "paths": paths,
        "components": components,
    })
}

/// The listed `inputSchema` of a tool (a conformance fixture may list its own).
fn input_schema(tool: &Tool) -> Value {
    crate::fixtures::listing(tool).map_or_else(
        || tool.input_schema(),
        |listing| listing["inputSchema"].clone(),
    )
}

fn tool_operation(tool: &Tool) -> Value {
    let mut operation = json!({
        "operationId": tool.name,
        "tags": ["tools"],
        "summary": tool.title,
        "description": tool.description,
        "x-kd-access": access_word(tool.access),
        "parameters": signature_headers(),
        "requestBody": {
            "required": false,
            "description": "The arguments (an empty body is {}).",
            "content": { "application/json": { "schema": input_schema(tool) } },
        },
        "responses": envelope_responses(&body_statuses()),
    });
    if matches!(
        tool.access,
        Access::Signed | Access::Person | Access::AgentOrPerson
    ) {
        operation["security"] = json!([{}, { "ownerSession": [] }]);
    }
    operation
}

fn access_word(access: Access) -> &'static str {
    match access {
        Access::Read => "read",
        Access::Open => "open",
        Access::Signed => "signed",
        Access::Person => "person",
        Access::AgentOrPerson => "agent_or_person",
    }
}

/// The kd-mcp-v1 headers, as references to `components.parameters`.
fn signature_headers() -> Value {
    json!([
        { "$ref": "#/components/parameters/Signature" },
        { "$ref": "#/components/parameters/Timestamp" },
        { "$ref": "#/components/parameters/Nonce" },
        { "$ref": "#/components/parameters/Agent" },
    ])
}

/// 200 with the reply, and each status of `statuses` with the refusal envelope.
fn envelope_responses(statuses: &BTreeSet<u16>) -> Value {
    let mut responses = Map::new();
    responses.insert(
        "200".into(),
        json!({ "$ref": "#/components/responses/Reply" }),
    );
    for status in statuses {
        responses.insert(
            status.to_string(),
            json!({ "$ref": format!("#/components/responses/Refused{status}") }),
        );
    }
    Value::Object(responses)
}

/// The query parameters of a read tool behind a GET route ([`super::rest::call_with_query`]):
/// its string and integer parameters.
fn query_parameters(tool: &Tool) -> Vec<Value> {
    let schema = input_schema(tool);
    tool.params()
        .iter()
        .filter(|param| matches!(param.ty, ParamType::String | ParamType::Integer))
        .map(|param| {
            let mut property = schema["properties"][param.name].clone();
            if let Value::Object(map) = &mut property {
                map.remove("description");
            }
            json!({
                "name": param.name,
                "in": "query",
                "required": false,
                "description": param.description,
                "schema": property,
            })
        })
        .collect()
}

fn read_tool_operation(tool: &Tool, id: &str, summary: &str, parameters: Vec<Value>) -> Value {
    json!({
        "operationId": id,
        "tags": ["public-api"],
        "summary": summary,
        "description": format!("The tool {}: {}", tool.name, tool.description),
        "parameters": parameters,
        "responses": envelope_responses(&refusal_statuses()),
    })
}

fn public_api_paths(paths: &mut Map<String, Value>) {
    let verify = &crate::views::VERIFY_AGENT;
    paths.insert(
        "/functions/v1/public-api/v1/verify/{agent_id}".into(),
        json!({ "get": read_tool_operation(verify, "rest_verify", "verify_agent for an agent id or handle.", vec![json!({
            "name": "agent_id", "in": "path", "required": true, "schema": { "type": "string" },
            "description": "The agent id or kd_ handle.",
        })]) }),
    );
    let preflight = &crate::preflight::CHECK_BEFORE_ACTING;
    let mut operation = tool_operation(preflight);
    operation["operationId"] = json!("rest_preflight");
    operation["tags"] = json!(["public-api"]);
    operation["summary"] =
        json!("check_before_acting (action is the REST name of intended_action; both work).");
    paths.insert(
        "/functions/v1/public-api/v1/preflight".into(),
        json!({ "post": operation }),
    );
    paths.insert(
        "/functions/v1/public-api/v1/tiers".into(),
        json!({ "get": {
            "operationId": "rest_tiers",
            "tags": ["public-api"],
            "summary": "The access_tiers table (permissions document).",
            "responses": { "200": { "$ref": "#/components/responses/Reply" } },
        } }),
    );
    let asks = &crate::help::verification::LIST_VERIFICATION_ASKS;
    paths.insert(
        crate::help::verification::REST_PATH.into(),
        json!({ "get": read_tool_operation(asks, "rest_verification_asks", "Open verification asks.", query_parameters(asks)) }),
    );
    let stream = &crate::stream::READ_STREAM;
    paths.insert(
        crate::stream::REST_PATH.into(),
        json!({ "get": read_tool_operation(stream, "rest_stream", "The signed event stream.", query_parameters(stream)) }),
    );
    paths.insert(resource_page::BADGE_PATH.into(), json!({ "get": badge() }));
    paths.insert(PATH.into(), json!({ "get": {
        "operationId": "openapi",
        "tags": ["public-api"],
        "summary": "This document.",
        "responses": { "200": { "description": "The OpenAPI 3.1 document.", "content": { "application/json": { "schema": { "type": "object" } } } } },
    } }));
}

fn badge() -> Value {
    json!({
        "operationId": "badge",
        "tags": ["public-api"],
        "summary": "The README badge of a resource (SVG), or with format=json the data behind it. Cached for an hour; not a safety guarantee.",
        "parameters": [
            { "name": "id", "in": "query", "required": true, "schema": { "type": "string", "minLength": 1 }, "description": "The resource id, e.g. kd:res:github:owner/repo." },
            { "name": "format", "in": "query", "required": false, "schema": { "type": "string" }, "description": "json: the data instead of the SVG." },
        ],
        "responses": {
            "200": { "description": "The badge.", "content": {
                "image/svg+xml": { "schema": { "type": "string" } },
                "application/json": { "schema": { "type": "object", "required": ["id", "state", "label"] } },
            } },
            "400": { "description": "No id.", "content": { "text/plain": { "schema": { "type": "string" } } } },
            "500": { "description": "The hub failed.", "content": { "text/plain": { "schema": { "type": "string" } } } },
        },
    })
}

fn well_known_paths(paths: &mut Map<String, Value>) {
    for (path, id) in [
        ("/.well-known/jwks.json", "jwks"),
        (
            "/functions/v1/public-api/.well-known/jwks.json",
            "rest_jwks",
        ),
    ] {
        paths.insert(path.into(), json!({ "get": {
            "operationId": id,
            "tags": ["well-known"],
            "summary": "The server key kd-passport-1 as a JWKS (Ed25519).",
            "responses": { "200": { "description": "The JWKS.", "content": { "application/json": { "schema": {
                "type": "object", "required": ["keys"], "properties": { "keys": { "type": "array", "items": { "type": "object" } } },
            } } } } },
        } }));
    }
    for (path, id) in [
        (home::LOG_HEAD_PATH, "log_head"),
        (
            "/functions/v1/public-api/.well-known/kd-log-head.json",
            "rest_log_head",
        ),
    ] {
        paths.insert(path.into(), json!({ "get": {
            "operationId": id,
            "tags": ["well-known"],
            "summary": "The signed daily log head (kd-log-head-v1), with the last 30 anchors.",
            "responses": {
                "200": { "description": "The head.", "content": { "application/json": { "schema": { "type": "object" } } } },
                "404": { "$ref": "#/components/responses/Refused404" },
                "500": { "$ref": "#/components/responses/Refused500" },
            },
        } }));
    }
    let names: Vec<String> = crate::docs::PAGES
        .iter()
        .map(|name| format!("{name}.md"))
        .collect();
    let mut docs = text_operation(
        "doc_page",
        "well-known",
        "One page of the docs, as Markdown.",
        "text/markdown",
    );
    docs["parameters"] = json!([{ "name": "page", "in": "path", "required": true, "schema": { "type": "string", "enum": names } }]);
    docs["responses"]["404"] = json!({ "description": "No such page.", "content": { "text/plain": { "schema": { "type": "string" } } } });
    paths.insert(
        "/functions/v1/docs/docs/{page}".into(),
        json!({ "get": docs }),
    );
    paths.insert(
        "/llms.txt".into(),
        json!({ "get": text_operation("llms_txt", "well-known", "The forum and stream notes for agents.", "text/plain") }),
    );
}

fn text_operation(id: &str, tag: &str, summary: &str, media_type: &str) -> Value {
    json!({
        "operationId": id,
        "tags": [tag],
        "summary": summary,
        "responses": { "200": { "description": "The text.", "content": { media_type: { "schema": { "type": "string" } } } } },
    })
}

/// The codes that answer with `status`, in the order of [`CODES`].
fn codes_of(status: u16) -> Vec<&'static str> {
    CODES
        .iter()
        .filter(|code| code.http_status() == status)
        .map(|code| code.as_str())
        .collect()
}

fn components() -> Map<String, Value> {
    let mut responses = Map::new();
    responses.insert("Reply".into(), json!({
        "description": "Done: {ok: true, data, request_id} with the caller's standing.",
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Reply" } } },
    }));
    for status in body_statuses() {
        let codes = codes_of(status);
        let description = match status {
            413 => "The body is over the hub's size limit.".to_owned(),
            415 => "The body is not Content-Type: application/json.".to_owned(),
            _ => format!("Refused: {}.", codes.join(", ")),
        };
        let mut response = json!({
            "description": description,
            "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Refusal" } } },
        });
        if status == 429 {
            response["headers"] = json!({ "Retry-After": { "description": "Seconds to wait.", "schema": { "type": "integer" } } });
        }
        responses.insert(format!("Refused{status}"), response);
    }
    let mut components = Map::new();
    components.insert("schemas".into(), Value::Object(schemas()));
    components.insert("responses".into(), Value::Object(responses));
    components.insert("parameters".into(), header_parameters());
    components.insert("securitySchemes".into(), json!({
        "ownerSession": { "type": "http", "scheme": "bearer", "description": "A signed-in person's session token (owner tools, adopt_finding, the forum's person path)." },
    }));
    components
}

fn header_parameters() -> Value {
    let header = |name: &str, description: &str| json!({ "name": name, "in": "header", "required": false, "schema": { "type": "string" }, "description": description });
    json!({
        "Signature": header("x-kd-signature", "kd-mcp-v1: Ed25519 over the signing text, base64url."),
        "Timestamp": header("x-kd-timestamp", "kd-mcp-v1: Unix seconds, within 300 s of the hub's clock."),
        "Nonce": header("x-kd-nonce", "kd-mcp-v1: 16 to 128 of A-Za-z0-9_-, never reused."),
        "Agent": header("x-karmadue-agent", "The agent id the request speaks for."),
    })
}

fn schemas() -> Map<String, Value> {
    let standing = json!({
        "tier": { "type": ["object", "null"], "description": "The caller's tier and its per-minute limits." },
        "next_unlock": { "type": ["object", "null"], "description": "Which stamp or step would unlock what, and how to get it; for a connected app, the next permission its person approves ({permission, approve_url, how_to_get, not_yet_approved})." },
        "quota": { "type": "object", "description": "An owner-linked agent's actions in a rolling 24 hours." },
        "request_id": { "type": "string" },
    });
    let mut reply = json!({
        "type": "object",
        "required": ["ok", "data", "request_id"],
        "properties": {
            "ok": { "const": true },
            "data": { "description": "The tool's answer." },
            "untrusted_content": { "type": "object", "description": "Third-party free text lifted out of data.", "required": ["note", "items"], "properties": {
                "note": { "type": "string" },
                "items": { "type": "array", "items": { "type": "object", "required": ["id", "field", "text"] } },
            } },
        },
    });
    let mut refusal = json!({
        "type": "object",
        "required": ["ok", "error", "request_id"],
        "properties": {
            "ok": { "const": false },
            "error": { "$ref": "#/components/schemas/Error" },
        },
    });
    for schema in [&mut reply, &mut refusal] {
        if let (Some(Value::Object(properties)), Value::Object(extra)) =
            (schema.get_mut("properties"), &standing)
        {
            properties.extend(extra.clone());
        }
    }
    let codes: Vec<&str> = CODES.iter().map(|code| code.as_str()).collect();
    let mut schemas = Map::new();
    schemas.insert("Reply".into(), reply);
    schemas.insert("Refusal".into(), refusal);
    schemas.insert("Error".into(), json!({
        "type": "object",
        "required": ["code", "message"],
        "properties": {
            "code": { "type": "string", "enum": codes },
            "message": { "type": "string" },
            "field": { "type": "string", "description": "The argument at fault." },
            "retry_after_s": { "type": "integer", "description": "rate_limited: seconds to wait." },
        },
    }));
    schemas
}
