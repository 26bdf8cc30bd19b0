//! The MCP conformance suite's fixture tools, served only in `--conformance-fixtures` mode
//! (loopback only). They exist so the official suite's `tools-call-*` scenarios can run against
//! the real MCP adapter; they touch no store.
//!
//! The tools and their results follow `@modelcontextprotocol/conformance` 0.1.16 (the scenario
//! descriptions in its `dist/index.js`, and notes/mcp-oauth.md §2.3):
//!
//! | tool | result |
//! |---|---|
//! | `test_simple_text` | one text block |
//! | `test_image_content` | one image block (a 1×1 red PNG) |
//! | `test_audio_content` | one audio block (`audio/wav`, 8 samples of silence) |
//! | `test_embedded_resource` | one embedded text resource `test://embedded-resource` |
//! | `test_multiple_content_types` | text, image and embedded resource |
//! | `test_tool_with_logging` | three `notifications/message` before the text result |
//! | `test_tool_with_progress` | three `notifications/progress` (0, 50, 100 of 100) before the result |
//! | `test_error_handling` | `isError: true` with a text block |
//! | `json_schema_2020_12_tool` | listed with a JSON Schema 2020-12 `inputSchema` (`$schema`, `$defs`, `$anchor`, `allOf`/`anyOf`, `if`/`then`/`else`; the 0.2.0-alpha.12 schema) |
//!
//! Not served: `test_sampling`, `test_elicitation*` and `test_reconnection`, which need
//! server-to-client requests or resumable SSE streams that this hub does not offer.
//!
//! # How a fixture result differs from a tool result
//!
//! A fixture is an ordinary [`Tool`] (so it is listed, validated and called through
//! [`kd_kernel::Kernel::call`] like any other), but its `data` **is** the MCP `CallToolResult`
//! (`content`, optional `isError`) instead of the `{ok, data, request_id}` envelope. It may also
//! carry [`NOTIFICATIONS_KEY`]: JSON-RPC notifications that the MCP adapter sends, on an SSE
//! response, before the result. [`present`] splits the two; the adapter
//! (`crate::http::mcp`) calls it only for tools where [`is_fixture`] is true.

use serde_json::{Value, json};

use kd_kernel::Ctx;
use kd_kernel::policy::ToolPolicy;
use kd_kernel::registry::{Access, Args, Arguments, HandlerFuture, Hints, Param, ParamType, Tool};

/// The key in a fixture's data that lists the notifications to send before the result.
pub const NOTIFICATIONS_KEY: &str = "_notifications";

/// A 1×1 red PNG, base64.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// A WAV file (8 kHz, mono, 8-bit) holding 8 samples of silence, base64.
const SILENT_WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

/// The fixture tools.
pub static TOOLS: &[Tool] = &[
    fixture(
        "test_simple_text",
        "Conformance fixture: returns one text block.",
        &[],
        simple_text,
    ),
    fixture(
        "test_image_content",
        "Conformance fixture: returns one image block (a 1x1 red PNG).",
        &[],
        image_content,
    ),
    fixture(
        "test_audio_content",
        "Conformance fixture: returns one audio block (audio/wav).",
        &[],
        audio_content,
    ),
    fixture(
        "test_embedded_resource",
        "Conformance fixture: returns one embedded text resource.",
        &[],
        embedded_resource,
    ),
    fixture(
        "test_multiple_content_types",
        "Conformance fixture: returns text, image and embedded resource blocks.",
        &[],
        multiple_content_types,
    ),
    fixture(
        "test_tool_with_logging",
        "Conformance fixture: sends three log notifications, then returns text.",
        &[],
        tool_with_logging,
    ),
    fixture(
        "test_tool_with_progress",
        "Conformance fixture: sends three progress notifications (when the request has a progressToken), then returns text.",
        &[],
        tool_with_progress,
    ),
    fixture(
        "test_error_handling",
        "Conformance fixture: always fails, as a tool execution error (isError true).",
        &[],
        error_handling,
    ),
    fixture(
        JSON_SCHEMA_TOOL,
        "Tool with JSON Schema 2020-12 features",
        &[
            Param::new("name", ParamType::String, "A name."),
            Param::new("address", ParamType::Object, "An address (street, city)."),
        ],
        json_schema_tool,
    ),
];

const JSON_SCHEMA_TOOL: &str = "json_schema_2020_12_tool";

const fn fixture(
    name: &'static str,
    description: &'static str,
    params: &'static [Param],
    handler: fn(Ctx, Args) -> HandlerFuture,
) -> Tool {
    Tool {
        name,
        title: name,
        description,
        arguments: Arguments::Listed {
            params,
            required: &[],
        },
        access: Access::Read,
        hints: Hints::READ,
        untrusted: &[],
        // Reads that touch no store: offered to every connection, no tier gate.
        policy: ToolPolicy::READ,
        handler,
    }
}

/// True when `tool` is one of the fixtures (its data is a raw `CallToolResult`).
pub fn is_fixture(tool: &Tool) -> bool {
    TOOLS.iter().any(|fixture| fixture.name == tool.name)
}

/// The `tools/list` entry of a fixture whose listing differs from [`Tool::listing`]
/// (`json_schema_2020_12_tool`, whose `inputSchema` is the scenario's 2020-12 schema); `None`
/// for every other tool.
pub fn listing(tool: &Tool) -> Option<Value> {
    if tool.name != JSON_SCHEMA_TOOL || !is_fixture(tool) {
        return None;
    }
    let mut listing = tool.listing();
    // The alpha's schema (0.2.0-alpha.12, SEP-2106): 0.1.16 checks a subset of it.
    listing["inputSchema"] = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": { "type": "string" },
                    "city": { "type": "string" },
                },
            },
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" },
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false,
    });
    Some(listing)
}

/// Splits a fixture's data into the `CallToolResult` and the notifications to send before it.
///
/// `notifications/progress` entries get the request's `progressToken`; without one they are
/// dropped (MCP progress: a server sends progress only for a request that asked for it).
pub fn present(mut data: Value, progress_token: Option<&Value>) -> (Value, Vec<Value>) {
    let notifications = match &mut data {
        Value::Object(map) => match map.remove(NOTIFICATIONS_KEY) {
            Some(Value::Array(list)) => list,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    let notifications = notifications
        .into_iter()
        .filter_map(|mut notification| {
            if notification["method"] == "notifications/progress" {
                let token = progress_token?;
                notification["params"]["progressToken"] = token.clone();
            }
            Some(notification)
        })
        .collect();
    (data, notifications)
}

fn text(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

fn image() -> Value {
    json!({ "type": "image", "data": RED_PIXEL_PNG, "mimeType": "image/png" })
}

fn resource() -> Value {
    json!({
        "type": "resource",
        "resource": {
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "This is an embedded resource content.",
        },
    })
}

fn result(content: Vec<Value>) -> HandlerFuture {
    Box::pin(async move { Ok(json!({ "content": content })) })
}

fn simple_text(_ctx: Ctx, _args: Args) -> HandlerFuture {
    result(vec![text("This is a simple text response for testing.")])
}

fn image_content(_ctx: Ctx, _args: Args) -> HandlerFuture {
    result(vec![image()])
}

fn audio_content(_ctx: Ctx, _args: Args) -> HandlerFuture {
    result(vec![
        json!({ "type": "audio", "data": SILENT_WAV, "mimeType": "audio/wav" }),
    ])
}

fn embedded_resource(_ctx: Ctx, _args: Args) -> HandlerFuture {
    result(vec![resource()])
}

fn multiple_content_types(_ctx: Ctx, _args: Args) -> HandlerFuture {
    result(vec![
        text("Multiple content types test:"),
        image(),
        resource(),
    ])
}

fn tool_with_logging(_ctx: Ctx, _args: Args) -> HandlerFuture {
    Box::pin(async move {
        let log = |message: &str| {
            json!({
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": { "level": "info", "logger": "test_tool_with_logging", "data": message },
            })
        };
        Ok(json!({
            "content": [text("Tool with logging completed.")],
            NOTIFICATIONS_KEY: [
                log("Tool execution started"),
                log("Tool processing data"),
                log("Tool execution completed"),
            ],
        }))
    })
}

fn tool_with_progress(_ctx: Ctx, _args: Args) -> HandlerFuture {
    Box::pin(async move {
        let progress = |done: u64, message: &str| {
            json!({
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": { "progress": done, "total": 100, "message": message },
            })
        };
        Ok(json!({
            "content": [text("Tool with progress completed.")],
            NOTIFICATIONS_KEY: [
                progress(0, "Started"),
                progress(50, "Halfway"),
                progress(100, "Done"),
            ],
        }))
    })
}

fn error_handling(_ctx: Ctx, _args: Args) -> HandlerFuture {
    Box::pin(async move {
        Ok(json!({
            "content": [text("This tool intentionally returns an error for testing.")],
            "isError": true,
        }))
    })
}

fn json_schema_tool(_ctx: Ctx, args: Args) -> HandlerFuture {
    let name = args.text(&["name"]).unwrap_or("nobody").to_owned();
    result(vec![text(&format!("Received name {name}."))])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_needs_a_token_and_gets_it() {
        let data = json!({
            "content": [],
            NOTIFICATIONS_KEY: [
                { "jsonrpc": "2.0", "method": "notifications/progress", "params": { "progress": 1 } },
                { "jsonrpc": "2.0", "method": "notifications/message", "params": { "level": "info", "data": "x" } },
            ],
        });
        let (result, sent) = present(data.clone(), None);
        assert_eq!(result, json!({ "content": [] }));
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0]["method"], "notifications/message");
        let token = json!("t-1");
        let (_, sent) = present(data, Some(&token));
        assert_eq!(sent.len(), 2);
        assert_eq!(sent[0]["params"]["progressToken"], "t-1");
    }

    #[test]
    fn fixtures_are_listed_and_the_schema_fixture_keeps_2020_12_keywords() {
        for tool in TOOLS {
            assert!(is_fixture(tool));
            assert!(!tool.description.is_empty());
        }
        let schema_tool = TOOLS
            .iter()
            .find(|tool| tool.name == JSON_SCHEMA_TOOL)
            .map(listing);
        let Some(Some(listed)) = schema_tool else {
            panic!("json_schema_2020_12_tool has no listing");
        };
        assert_eq!(
            listed["inputSchema"]["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert!(listed["inputSchema"]["$defs"]["address"].is_object());
        assert_eq!(listed["inputSchema"]["additionalProperties"], false);
        // SEP-2106 (conformance 0.2.0-alpha.12): composition, conditional and anchor keywords.
        assert_eq!(
            listed["inputSchema"]["$defs"]["address"]["$anchor"],
            "addressDef"
        );
        assert!(listed["inputSchema"]["allOf"][0]["anyOf"].is_array());
        for keyword in ["if", "then", "else"] {
            assert!(listed["inputSchema"][keyword].is_object(), "{keyword}");
        }
        assert!(listing(&crate::views::VERIFY_AGENT).is_none());
    }
}
