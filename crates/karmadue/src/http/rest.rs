//! The public REST API (`/functions/v1/public-api/v1/...`): every tool at
//! `POST /tools/{name}` (body = the arguments, the same signature headers as MCP), plus the
//! named routes of the spec. Same JSON body as MCP's `structuredContent`, with the spec's
//! status table (see [`kd_kernel::error::ErrorCode::http_status`]).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::observe::RequestId;
use crate::hub::Hub;
use kd_kernel::error::{ErrorCode, ToolError};
use kd_kernel::{Called, Tool, Transport};

/// `POST /functions/v1/public-api/v1/tools/{name}`.
pub async fn call_tool(
    State(hub): State<Arc<Hub>>,
    RequestId(request_id): RequestId,
    Path(name): Path<String>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let Some(tool) = hub.tool(&name) else {
        let error = ToolError::not_found("name", format!("Unknown tool: {name}"));
        return present(hub.refused(error, Some(peer.ip())), &request_id, &name);
    };
    call_with_body(&hub, tool, request_id, peer, &headers, body).await
}

/// Calls `tool` with a REST body as its arguments ([`arguments_text`]'s refusals answered
/// before the kernel sees anything) and presents the outcome.
async fn call_with_body(
    hub: &Hub,
    tool: &'static Tool,
    request_id: String,
    peer: SocketAddr,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let text = match arguments_text(headers, body) {
        Ok(text) => text,
        Err((status, error)) => {
            let refused = hub.refused(error, Some(peer.ip()));
            return present_with(status, refused, &request_id, tool.name);
        }
    };
    let outcome = run(hub, tool, &text, headers, peer, &request_id).await;
    present(outcome, &request_id, tool.name)
}

/// Runs `tool` with `arguments` for a REST request. An OAuth access token is `wrong_endpoint`
/// before the kernel sees anything: the connector is the one endpoint that takes one
/// (docs/decisions.md 347).
async fn run(
    hub: &Hub,
    tool: &'static kd_kernel::registry::Tool,
    arguments: &str,
    headers: &HeaderMap,
    peer: SocketAddr,
    request_id: &str,
) -> kd_kernel::Called {
    let auth = super::request_auth(headers, Some(peer));
    match super::connector::Surface::SelfKeyed.admit(hub, tool, auth) {
        Ok(auth) => {
            hub.kernel
                .call(
                    tool,
                    Some(arguments),
                    auth,
                    request_id.to_owned(),
                    Transport::Rest,
                )
                .await
        }
        Err(error) => hub.refused(error, Some(peer.ip())),
    }
}

/// `GET /functions/v1/public-api/v1/verify/{agent_id}`: `verify_agent` for an id or handle.
pub async fn verify(
    State(hub): State<Arc<Hub>>,
    RequestId(request_id): RequestId,
    Path(agent_id): Path<String>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Response {
    let tool = &crate::views::VERIFY_AGENT;
    let arguments = json!({ "agent_id": agent_id }).to_string();
    let outcome = run(&hub, tool, &arguments, &headers, peer, &request_id).await;
    present(outcome, &request_id, tool.name)
}

/// `GET /functions/v1/public-api/v1/tiers`: the `access_tiers` table (permissions document).
pub async fn tiers(State(hub): State<Arc<Hub>>, RequestId(request_id): RequestId) -> Response {
    let mut body = crate::standing::tiers_document(&hub.config.access_tiers);
    body["request_id"] = json!(request_id);
    let mut response = (StatusCode::OK, body.to_string()).into_response();
    super::json_content_type(response.headers_mut());
    super::set_request_id(response.headers_mut(), &request_id);
    response
}

/// `POST /functions/v1/public-api/v1/preflight`: `check_before_acting` with the body as its
/// arguments (`action` is the REST name of `intended_action`; both names work). A signed
/// preflight signs exactly like the tool: the kd-mcp-v1 text names `check_before_acting`.
pub async fn preflight(
    State(hub): State<Arc<Hub>>,
    RequestId(request_id): RequestId,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let tool = &crate::preflight::CHECK_BEFORE_ACTING;
    call_with_body(&hub, tool, request_id, peer, &headers, body).await
}

/// The arguments text of a REST tool call: the body, as UTF-8 JSON (`{}` when empty). A body
/// over the size cap is 413, a body that is not `application/json` is 415 (so that a web page
/// cannot post a plain form to a tool from a visitor's browser), and non-UTF-8 is 400; each
/// with the JSON error envelope.
fn arguments_text(
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<String, (StatusCode, ToolError)> {
    let body = body.map_err(|rejection| {
        let status = rejection.status();
        (
            status,
            ToolError::validation(
                "arguments",
                format!("The body was refused: {}.", rejection.body_text()),
            ),
        )
    })?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok("{}".to_owned());
    }
    let json = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("application/json")
        });
    if !json {
        return Err((
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ToolError::validation(
                "arguments",
                "Send the arguments as JSON with Content-Type: application/json.",
            ),
        ));
    }
    String::from_utf8(body.to_vec()).map_err(|_| {
        (
            StatusCode::BAD_REQUEST,
            ToolError::validation("arguments", "The body is not UTF-8."),
        )
    })
}

/// The REST presentation of a refusal that is no tool call's (the transparency log's routes,
/// the log head): the tools' envelope `{ok: false, error, request_id}` with the spec status
/// of its code and the request id header; an internal error's cause is logged here, once.
pub fn refusal(error: &ToolError, request_id: &str, route: &str) -> Response {
    super::mcp_reply::log_refusal(error, request_id, route);
    let status =
        StatusCode::from_u16(error.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = json!({ "ok": false, "error": error.to_json(), "request_id": request_id });
    let mut response = (status, body.to_string()).into_response();
    super::json_content_type(response.headers_mut());
    super::set_request_id(response.headers_mut(), request_id);
    response
}

/// A refusal decided by the adapter itself, with its own status and the JSON error envelope.
fn present_with(status: StatusCode, refused: Called, request_id: &str, tool: &str) -> Response {
    let mut response = present(refused, request_id, tool);
    *response.status_mut() = status;
    response
}

/// The REST presentation of an outcome: `{ok, data | error, request_id}` with the spec
/// status; 429 answers carry `Retry-After`.
pub fn present(called: Called, request_id: &str, tool: &str) -> Response {
    let (status, retry_after) = match &called.outcome {
        Ok(_) => (StatusCode::OK, None),
        Err(error) => {
            super::mcp_reply::log_refusal(error, request_id, tool);
            let status = StatusCode::from_u16(error.code.http_status())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let retry_after = (error.code == ErrorCode::RateLimited)
                .then(|| error.extra.get("retry_after_s").and_then(Value::as_u64))
                .flatten();
            (status, retry_after)
        }
    };
    let body = called.body(request_id);
    let mut response = (status, body.to_string()).into_response();
    super::json_content_type(response.headers_mut());
    super::set_request_id(response.headers_mut(), request_id);
    if let Some(seconds) = retry_after
        && let Ok(value) = HeaderValue::from_str(&seconds.to_string())
    {
        response.headers_mut().insert("retry-after", value);
    }
    response
}

/// A read tool served behind a `GET` route as well as its `POST …/v1/tools/{name}` mirror.
#[derive(Debug)]
pub struct QueryRoute {
    /// The route's path.
    pub path: &'static str,
    /// The tool it calls.
    pub tool: &'static kd_kernel::registry::Tool,
}

/// The `GET` routes of read tools: the verification asks and the signed stream.
pub static QUERY_ROUTES: [QueryRoute; 2] = [
    QueryRoute {
        path: crate::help::verification::REST_PATH,
        tool: &crate::help::verification::LIST_VERIFICATION_ASKS,
    },
    QueryRoute {
        path: crate::stream::REST_PATH,
        tool: &crate::stream::READ_STREAM,
    },
];

/// The handler of one [`QueryRoute`].
pub async fn query_route(
    route: &'static QueryRoute,
    State(hub): State<Arc<Hub>>,
    RequestId(request_id): RequestId,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Query(query): Query<std::collections::HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    call_with_query(hub, route.tool, query, request_id, peer, &headers).await
}

/// A read tool behind a `GET` route: the query string becomes its arguments (each value a
/// string, but the tool's integer parameters sent as integers when they parse as one), then
/// the same pipeline and presentation as `POST …/v1/tools/{name}`.
pub async fn call_with_query(
    hub: Arc<Hub>,
    tool: &'static kd_kernel::registry::Tool,
    query: std::collections::HashMap<String, String>,
    request_id: String,
    peer: SocketAddr,
    headers: &HeaderMap,
) -> Response {
    let mut arguments = serde_json::Map::new();
    for (key, value) in query {
        let numeric = tool
            .params()
            .iter()
            .any(|param| param.name == key && param.ty == kd_kernel::registry::ParamType::Integer);
        let value = if numeric {
            value
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or(Value::String(value))
        } else {
            Value::String(value)
        };
        arguments.insert(key, value);
    }
    let text = Value::Object(arguments).to_string();
    let outcome = run(&hub, tool, &text, headers, peer, &request_id).await;
    present(outcome, &request_id, tool.name)
}
