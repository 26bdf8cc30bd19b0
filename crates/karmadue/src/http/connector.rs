//! The connector's MCP endpoint (issue 12; spec "Using KarmaDue from Claude or ChatGPT"):
//! `POST /functions/v1/mcp/connector` and its alias `POST /mcp`, the same Streamable HTTP
//! transport as the self-keyed endpoint (`mcp.rs`, both eras), authorized by an OAuth access
//! token instead of signatures. Both paths are one protected resource: a token from either
//! works on both.
//!
//! Without a live token: 401 with `WWW-Authenticate: Bearer resource_metadata="…",
//! scope="…"` (and `error="invalid_token"` when a token was sent), the metadata URL being the
//! path's own RFC 9728 document. With one: `tools/list` shows the tools the grant is offered
//! ([`connector::offered`]), and any other tool answers `needs_your_approval` with
//! `required_scope` and `approve_url`, before anything runs.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kd_kernel::RequestAuth;
use kd_kernel::registry::Tool;

use super::mcp::Exchange;
use super::mcp_reply::wants_sse_only;
use super::observe::RequestId;
use crate::connector::{self, BASE_SCOPES, ConnectorError, Grant};
use crate::hub::Hub;

/// Which MCP endpoint a request came to.
#[derive(Debug, Clone)]
pub enum Surface {
    /// `POST /functions/v1/mcp`: Ed25519 signatures; OAuth access tokens are refused there
    /// (`wrong_endpoint`).
    SelfKeyed,
    /// The connector, with the grant of the request's access token.
    Connector(Grant),
}

impl Surface {
    /// Whether `tools/list` on this surface shows `tool`.
    pub fn offers(&self, tool: &Tool) -> bool {
        match self {
            Self::SelfKeyed => true,
            Self::Connector(grant) => connector::offered(tool, grant).is_ok(),
        }
    }

    /// The `tools/list` entry of `tool` on this surface. On the connector `agent_id` is filled
    /// in by the server: it is not required, and its description says so.
    pub fn listing(&self, tool: &Tool) -> serde_json::Value {
        let mut listing = crate::fixtures::listing(tool).unwrap_or_else(|| tool.listing());
        if let Self::Connector(grant) = self {
            let schema = &mut listing["inputSchema"];
            // `get_mut`, not indexing: indexing a missing key would insert a null.
            if let Some(required) = schema
                .get_mut("required")
                .and_then(serde_json::Value::as_array_mut)
            {
                required.retain(|name| name != "agent_id");
                if required.is_empty()
                    && let Some(fields) = schema.as_object_mut()
                {
                    fields.remove("required");
                }
            }
            if let Some(agent) = schema
                .get_mut("properties")
                .and_then(|properties| properties.get_mut("agent_id"))
            {
                agent["description"] = format!(
                    "Filled in by the server: this connection's hosted agent, {}. Leave it out.",
                    grant.agent_id
                )
                .into();
            }
        }
        listing
    }

    /// The auth a `tools/call` of `tool` runs with, or its refusal (nothing has run): on the
    /// self-keyed endpoint an access token is `wrong_endpoint`; on the connector a tool the
    /// grant is not offered is `needs_your_approval`, and the token is not passed on (it is
    /// not a person's session).
    ///
    /// # Errors
    /// The refusal, as a tool error.
    pub fn admit(
        &self,
        hub: &Hub,
        tool: &Tool,
        mut auth: RequestAuth,
    ) -> Result<RequestAuth, kd_kernel::ToolError> {
        match self {
            Self::SelfKeyed => {
                if auth
                    .bearer
                    .as_ref()
                    .is_some_and(|token| connector::is_access_token(token.expose()))
                {
                    return Err(ConnectorError::WrongEndpoint {
                        connector_url: connector::resource(&hub.config),
                    }
                    .into());
                }
                Ok(auth)
            }
            Self::Connector(grant) => {
                if let Err(required_scope) = connector::offered(tool, grant) {
                    return Err(ConnectorError::NeedsYourApproval {
                        tool: tool.name.to_owned(),
                        required_scope: required_scope.to_owned(),
                        approve_url: approve_url(hub, grant, required_scope),
                    }
                    .into());
                }
                auth.bearer = None;
                auth.signature = None;
                auth.timestamp = None;
                auth.nonce = None;
                auth.agent_header = None;
                auth.connector = Some(connected(hub, grant)?);
                Ok(auth)
            }
        }
    }

    /// The connection a refusal of [`Surface::admit`] answers for: its hosted agent's standing
    /// goes on the refusal (docs/decisions.md 428). None on the self-keyed endpoint or when the
    /// grant's agent id is unreadable.
    pub fn connection(&self, hub: &Hub) -> Option<kd_kernel::ConnectorAuth> {
        match self {
            Self::SelfKeyed => None,
            Self::Connector(grant) => connected(hub, grant).ok(),
        }
    }
}

/// The kernel's view of a connected call: the hosted agent, the connection, the person, and
/// the connection's `next_unlock` ([`connector::permission::next_unlock`]).
fn connected(hub: &Hub, grant: &Grant) -> Result<kd_kernel::ConnectorAuth, kd_kernel::ToolError> {
    let agent_id = grant.agent_id.parse().map_err(|_| {
        kd_kernel::ToolError::internal("a connection's hosted agent id is malformed")
    })?;
    Ok(kd_kernel::ConnectorAuth {
        agent_id,
        connection_id: grant.connection_id.clone(),
        person_id: grant.person_id.clone(),
        next_unlock: connector::permission::next_unlock(&connector::issuer(&hub.config), grant),
    })
}

/// Where the person decides: the add-one-permission screen for a scope a connected app may
/// be given (`/oauth/add-permission?agent=&scope=`); for one it may never hold, the
/// permissions page of the docs, which says why.
fn approve_url(hub: &Hub, grant: &connector::Grant, scope: &str) -> String {
    let issuer = connector::issuer(&hub.config);
    if connector::permission::addable(scope) {
        connector::permission::approve_url(&issuer, &grant.agent_id, scope)
    } else {
        format!("{issuer}/functions/v1/docs/docs/permissions.md")
    }
}

/// The RFC 9728 document a 401 on `path` points to.
pub fn resource_metadata_url(hub: &Hub, path: &str) -> String {
    let issuer = connector::issuer(&hub.config);
    if path == connector::ALIAS_PATH {
        format!("{issuer}/.well-known/oauth-protected-resource/mcp")
    } else {
        format!("{issuer}/functions/v1/mcp/.well-known/oauth-protected-resource")
    }
}

/// `POST /functions/v1/mcp/connector`.
pub async fn connector_endpoint(
    State(hub): State<Arc<Hub>>,
    request_id: RequestId,
    peer: ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    serve(
        &hub,
        connector::CONNECTOR_PATH,
        request_id,
        peer,
        headers,
        body,
    )
    .await
}

/// `POST /mcp`: the same resource.
pub async fn alias_endpoint(
    State(hub): State<Arc<Hub>>,
    request_id: RequestId,
    peer: ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    serve(&hub, connector::ALIAS_PATH, request_id, peer, headers, body).await
}

async fn serve(
    hub: &Arc<Hub>,
    path: &str,
    RequestId(request_id): RequestId,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let auth = super::request_auth(&headers, Some(peer));
    let Some(token) = auth.bearer else {
        return unauthorized(hub, path, false);
    };
    let grant = match connector::access(hub, token.expose()).await {
        Ok(Some(grant)) => grant,
        Ok(None) => return unauthorized(hub, path, true),
        Err(error) => {
            tracing::error!(error = %kd_core::error::Chain(&error), "connector token lookup");
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
    };
    if let Some(refusal) = over_the_limit(hub, &grant).await {
        return refusal;
    }
    let surface = Surface::Connector(grant);
    let exchange = Exchange {
        hub,
        headers: &headers,
        peer,
        request_id: &request_id,
        sse: wants_sse_only(&headers),
        surface: &surface,
    };
    exchange.serve(body).await
}

/// Charges the request to its connection ([`connector::READS_PER_MINUTE`] a rolling minute;
/// every request counts, a refused one too). Past it: 429 with `Retry-After` and a JSON-RPC
/// error whose data is `{code: rate_limited, retry_after_s}`.
async fn over_the_limit(hub: &Hub, grant: &Grant) -> Option<Response> {
    let charge = [kd_core::limits::Charge::one(
        format!("oauth:{}:reads", grant.connection_id),
        connector::READS_PER_MINUTE,
    )];
    let retry_after_s = match hub.limiter.take(&charge, hub.clock.now_ms()).await {
        Ok(Ok(())) => return None,
        Ok(Err(limited)) => limited.retry_after_s(),
        Err(error) => {
            tracing::error!(error = %kd_core::error::Chain(&error), "connector limit");
            return Some(StatusCode::INTERNAL_SERVER_ERROR.into_response());
        }
    };
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32000,
            "message": format!("Too many requests for this connection: {} a minute. Try again in {retry_after_s} seconds.", connector::READS_PER_MINUTE),
            "data": { "code": "rate_limited", "retry_after_s": retry_after_s },
        },
    });
    let mut response = (StatusCode::TOO_MANY_REQUESTS, body.to_string()).into_response();
    super::json_content_type(response.headers_mut());
    if let Ok(value) = HeaderValue::from_str(&retry_after_s.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    Some(response)
}

/// 401 with the RFC 6750 / RFC 9728 challenge.
fn unauthorized(hub: &Hub, path: &str, token_sent: bool) -> Response {
    let mut challenge = format!(
        "Bearer resource_metadata=\"{}\", scope=\"{}\"",
        resource_metadata_url(hub, path),
        BASE_SCOPES.join(" ")
    );
    if token_sent {
        challenge.push_str(", error=\"invalid_token\", error_description=\"The access token is unknown, expired or revoked.\"");
    }
    let body = serde_json::json!({
        "error": if token_sent { "invalid_token" } else { "unauthorized" },
        "error_description": "This is KarmaDue's OAuth connector: connect through your MCP client (OAuth 2.1), or use the self-keyed endpoint /functions/v1/mcp with Ed25519 signatures.",
    });
    let mut response = (StatusCode::UNAUTHORIZED, body.to_string()).into_response();
    super::json_content_type(response.headers_mut());
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}
