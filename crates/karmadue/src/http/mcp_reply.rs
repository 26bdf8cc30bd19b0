//! What the MCP endpoint sends back ([`super::mcp`]): JSON-RPC responses and errors, as one
//! JSON body or as a `text/event-stream`.
//!
//! A `tools/call` reply is built once (issue 10, "A reply built once"; docs/decisions.md 207):
//! the kernel's reply object (`{ok, data | error, untrusted_content?, receipt?, request_id,
//! tier, next_unlock, quota?}`) is serialised to text a single time; those bytes are the
//! `structuredContent` (embedded as a raw JSON value, not parsed again) and, escaped as a JSON
//! string, the text content. The envelope around them is a typed struct whose fields are in
//! the order the previous `Value` printed them (sorted), so the bytes on the wire did not
//! change.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// A JSON-RPC `result` ready to send.
#[derive(Debug)]
pub enum RpcResult {
    /// Any result built as JSON (initialize, lists, a conformance fixture's result).
    Json(Value),
    /// A `tools/call` result of a registry tool.
    Tool(ToolReply),
}

/// A `tools/call` result: the reply object's text, and whether it is a refusal.
#[derive(Debug)]
pub struct ToolReply {
    structured: Box<RawValue>,
    is_error: bool,
}

impl ToolReply {
    /// The result of `called`: its reply object serialised once. A refusal's cause is logged
    /// here, once, inside the request's span.
    pub fn new(called: kd_kernel::Called, request_id: &str, tool: &str) -> Self {
        let is_error = match &called.outcome {
            Ok(_) => false,
            Err(error) => {
                log_refusal(error, request_id, tool);
                true
            }
        };
        let body = called.body(request_id);
        // Serialising a `Value` cannot fail; the fallback keeps the type total.
        let structured =
            serde_json::value::to_raw_value(&body).unwrap_or_else(|_| RawValue::NULL.to_owned());
        Self {
            structured,
            is_error,
        }
    }
}

/// `{"content":[{"text":…,"type":"text"}],"isError":…,"resultType"?:…,"structuredContent":…}`.
#[derive(Serialize)]
struct ToolResultOut<'a> {
    content: [TextContent<'a>; 1],
    #[serde(rename = "isError")]
    is_error: bool,
    #[serde(rename = "resultType", skip_serializing_if = "Option::is_none")]
    result_type: Option<&'static str>,
    #[serde(rename = "structuredContent")]
    structured: &'a RawValue,
}

#[derive(Serialize)]
struct TextContent<'a> {
    text: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// `{"id":…,"jsonrpc":"2.0","result":…}`.
#[derive(Serialize)]
struct Envelope<'a, R: Serialize> {
    id: &'a Value,
    jsonrpc: &'static str,
    result: R,
}

/// The JSON-RPC response text for `id` and `result`; `complete` adds the 2026-07-28 era's
/// `resultType: "complete"` to the result.
pub fn response_text(id: &Value, result: RpcResult, complete: bool) -> String {
    let printed = match result {
        RpcResult::Json(mut result) => {
            if complete && let Value::Object(map) = &mut result {
                map.insert("resultType".into(), "complete".into());
            }
            serde_json::to_string(&Envelope {
                id,
                jsonrpc: "2.0",
                result,
            })
        }
        RpcResult::Tool(reply) => serde_json::to_string(&Envelope {
            id,
            jsonrpc: "2.0",
            result: ToolResultOut {
                content: [TextContent {
                    text: reply.structured.get(),
                    kind: "text",
                }],
                is_error: reply.is_error,
                result_type: complete.then_some("complete"),
                structured: &reply.structured,
            },
        }),
    };
    // Serialising these types cannot fail (string keys, no maps with other keys).
    printed.unwrap_or_default()
}

/// Logs an internal failure's cause once, inside the request; refusals at debug level.
pub fn log_refusal(error: &kd_kernel::error::ToolError, request_id: &str, tool: &str) {
    match &error.cause {
        Some(cause) => tracing::error!(request_id, tool, cause = %cause, "internal error"),
        None => tracing::debug!(request_id, tool, code = error.code.as_str(), "refused"),
    }
}

/// A JSON-RPC error response: `{jsonrpc, id, error: {code, message, data?}}`.
pub fn error_message(id: Option<&Value>, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({ "jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null), "error": error })
}

/// True when the client accepts only an event stream (some proxies send just that).
pub fn wants_sse_only(headers: &axum::http::HeaderMap) -> bool {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    accept.contains("text/event-stream")
        && !accept.contains("application/json")
        && !accept.contains("*/*")
}

/// True when the client's `Accept` allows an event stream.
pub fn accepts_sse(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|accept| accept.contains("text/event-stream") || accept.contains("*/*"))
}

/// One JSON-RPC message as the response: a JSON body, or one event when `sse`.
pub fn respond(status: StatusCode, message: String, request_id: &str, sse: bool) -> Response {
    if sse {
        return respond_events(status, &[message], request_id);
    }
    let mut response = (status, message).into_response();
    super::json_content_type(response.headers_mut());
    super::set_request_id(response.headers_mut(), request_id);
    response
}

/// A `text/event-stream` response carrying `messages` (JSON texts) in order, one `message`
/// event each (notifications first, the response last), then the end of the stream.
pub fn respond_events(status: StatusCode, messages: &[String], request_id: &str) -> Response {
    let body: String = messages
        .iter()
        .map(|message| format!("event: message\ndata: {message}\n\n"))
        .collect();
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    super::set_request_id(response.headers_mut(), request_id);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed envelope prints exactly what the `Value` envelope printed before.
    #[test]
    fn a_tool_reply_prints_the_bytes_of_the_value_envelope() {
        let structured =
            json!({ "ok": true, "data": { "n": 1.50, "s": "a\"b\n" }, "request_id": "r1" });
        for (is_error, complete) in [(false, false), (true, true)] {
            let reply = ToolReply {
                structured: serde_json::value::to_raw_value(&structured).unwrap(),
                is_error,
            };
            let mut result = json!({
                "content": [{ "type": "text", "text": structured.to_string() }],
                "structuredContent": structured,
                "isError": is_error,
            });
            if complete {
                result["resultType"] = json!("complete");
            }
            let id = json!(7);
            let before = json!({ "jsonrpc": "2.0", "id": id, "result": result }).to_string();
            assert_eq!(response_text(&id, RpcResult::Tool(reply), complete), before);
        }
    }
}
