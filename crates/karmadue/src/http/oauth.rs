//! The connector's authorization server on the wire (issue 12; spec "Using KarmaDue from
//! Claude or ChatGPT (OAuth connector)"; notes/mcp-oauth.md §5, §7): the RFC 9728 protected
//! resource metadata, the RFC 8414 authorization server metadata (one issuer string
//! everywhere), RFC 7591 registration, the token endpoint (form-encoded or JSON; `no-store`)
//! and RFC 7009 revocation. The rules are in [`crate::connector`].

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Form, FromRequest, Json, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::connector::{self, ConnectorError, Registration, TokenRequest};
use crate::hub::Hub;

/// The RFC 9728 documents: (path, the resource it describes relative to the issuer).
pub const PROTECTED_RESOURCE_PATHS: [(&str, &str); 4] = [
    ("/.well-known/oauth-protected-resource", ""),
    (
        "/.well-known/oauth-protected-resource/functions/v1/mcp/connector",
        connector::CONNECTOR_PATH,
    ),
    (
        "/functions/v1/mcp/.well-known/oauth-protected-resource",
        connector::CONNECTOR_PATH,
    ),
    (
        "/.well-known/oauth-protected-resource/mcp",
        connector::ALIAS_PATH,
    ),
];

/// The RFC 8414 document's paths (the same document at each).
pub const AUTHORIZATION_SERVER_PATHS: [&str; 4] = [
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
    "/functions/v1/mcp/.well-known/oauth-authorization-server",
    "/.well-known/oauth-authorization-server/mcp",
];

/// A JSON response with the CORS header browser-based MCP clients need (the documents and
/// endpoints here carry no cookie and no ambient authority).
fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    let headers = response.headers_mut();
    super::json_content_type(headers);
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

/// The protected resource metadata for the resource at `suffix` of the issuer (`""`: the
/// origin, for the root document, whose `resource` must be the origin; RFC 9728 §3.3).
pub fn protected_resource(hub: &Hub, suffix: &str) -> Value {
    let issuer = connector::issuer(&hub.config);
    json!({
        "resource": format!("{issuer}{suffix}"),
        "authorization_servers": [issuer],
        "scopes_supported": connector::SCOPES,
        "bearer_methods_supported": ["header"],
        "resource_name": "KarmaDue",
        "resource_documentation": format!("{issuer}/functions/v1/docs/docs/permissions.md"),
    })
}

/// `GET` of one of [`PROTECTED_RESOURCE_PATHS`].
pub fn protected_resource_response(hub: &Hub, suffix: &str) -> Response {
    json_response(StatusCode::OK, &protected_resource(hub, suffix))
}

/// The RFC 8414 authorization server metadata.
pub fn authorization_server(hub: &Hub) -> Value {
    let issuer = connector::issuer(&hub.config);
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}{}", connector::AUTHORIZE_PATH),
        "token_endpoint": format!("{issuer}{}", connector::TOKEN_PATH),
        "registration_endpoint": format!("{issuer}{}", connector::REGISTER_PATH),
        "revocation_endpoint": format!("{issuer}{}", connector::REVOKE_PATH),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": connector::SCOPES,
        "authorization_response_iss_parameter_supported": true,
        // Client ID Metadata Documents are not built yet (docs/decisions.md 304).
        "client_id_metadata_document_supported": true,
        "service_documentation": format!("{issuer}/functions/v1/docs/docs/permissions.md"),
    })
}

/// `GET` of one of [`AUTHORIZATION_SERVER_PATHS`].
pub async fn authorization_server_document(State(hub): State<Arc<Hub>>) -> Response {
    json_response(StatusCode::OK, &authorization_server(&hub))
}

/// `OPTIONS` of the metadata documents and the register, token and revoke endpoints: the
/// CORS preflight browser-based MCP clients send (notes/mcp-oauth.md §5.3.7), answered 204
/// without any authentication.
pub async fn preflight() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(
            "Authorization, Content-Type, MCP-Protocol-Version, Mcp-Method, Mcp-Name",
        ),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("86400"),
    );
    response
}

/// An OAuth error response (`{error, error_description}`), `no-store`.
fn refusal(error: &ConnectorError) -> Response {
    if let ConnectorError::Store(cause) = error {
        tracing::error!(error = %kd_core::error::Chain(cause), "oauth endpoint");
    }
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let mut response = no_store(json_response(
        status,
        &json!({ "error": error.oauth_code(), "error_description": error.description() }),
    ));
    if let Some(retry_after_s) = error.retry_after_s() {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_s));
    }
    response
}

/// A body rejection in words for the client: the extractor's text without its framework
/// prefix or Rust type names (docs/decisions.md 347).
fn plain(rejection: &str) -> String {
    const PREFIXES: [&str; 4] = [
        "Failed to deserialize the JSON body into the target type: ",
        "Failed to parse the request body as JSON: ",
        "Failed to deserialize form body: ",
        "Failed to deserialize form: ",
    ];
    let text = PREFIXES
        .iter()
        .find_map(|prefix| rejection.strip_prefix(prefix))
        .unwrap_or(rejection);
    let text = text
        .replace(
            "Expected request with `Content-Type: application/json`",
            "Send Content-Type: application/json",
        )
        .replace(
            "Form requests must have `Content-Type: application/x-www-form-urlencoded`",
            "Send Content-Type: application/x-www-form-urlencoded",
        );
    [
        "struct Registration",
        "struct TokenRequest",
        "struct RevokeRequest",
    ]
    .iter()
    .fold(text, |text, name| text.replace(name, "a JSON object"))
}

fn no_store(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    response
}

/// Reads a form-encoded or JSON body (by its `Content-Type`) into `T`.
async fn form_or_json<T: DeserializeOwned>(
    hub: &Arc<Hub>,
    request: Request,
) -> Result<T, ConnectorError> {
    let json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with("application/json"));
    let unreadable =
        |text: String| ConnectorError::InvalidRequest(format!("The body: {}", plain(&text)));
    if json {
        Json::<T>::from_request(request, hub)
            .await
            .map(|Json(value)| value)
            .map_err(|rejection| unreadable(rejection.body_text()))
    } else {
        Form::<T>::from_request(request, hub)
            .await
            .map(|Form(value)| value)
            .map_err(|rejection| unreadable(rejection.body_text()))
    }
}

/// `POST /functions/v1/mcp/oauth/register` (RFC 7591): 201 with the registered client, or
/// 400 `invalid_redirect_uri` / `invalid_client_metadata`.
pub async fn register(
    State(hub): State<Arc<Hub>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
) -> Response {
    let registration = match Json::<Registration>::from_request(request, &hub).await {
        Ok(Json(registration)) => registration,
        Err(rejection) => {
            return refusal(&ConnectorError::InvalidClientMetadata(format!(
                "The body is a JSON object of client metadata: {}",
                plain(&rejection.body_text())
            )));
        }
    };
    match connector::register(&hub, registration, Some(peer.ip())).await {
        Ok(client) => no_store(json_response(
            StatusCode::CREATED,
            &json!({
                "client_id": client.client_id,
                "client_id_issued_at": client.issued_at,
                "client_name": client.client_name,
                "redirect_uris": client.redirect_uris,
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            }),
        )),
        Err(error) => refusal(&error),
    }
}

/// `POST /functions/v1/mcp/oauth/token`: the code exchange and refresh, `Cache-Control:
/// no-store` on every answer.
pub async fn token(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    let request = match form_or_json::<TokenRequest>(&hub, request).await {
        Ok(request) => request,
        Err(error) => return refusal(&error),
    };
    match connector::token(&hub, request).await {
        Ok(tokens) => no_store(json_response(
            StatusCode::OK,
            &json!({
                "access_token": tokens.access_token,
                "token_type": "Bearer",
                "expires_in": tokens.expires_in,
                "refresh_token": tokens.refresh_token,
                "scope": tokens.scope,
            }),
        )),
        Err(error) => refusal(&error),
    }
}

/// Any method but `POST` and `OPTIONS` on the registration, token and revocation endpoints:
/// 405 with `Allow` and an OAuth error body (docs/decisions.md 379).
pub async fn post_only() -> Response {
    let mut response = no_store(json_response(
        StatusCode::METHOD_NOT_ALLOWED,
        &json!({
            "error": "invalid_request",
            "error_description": "This endpoint takes POST (form-encoded or JSON).",
        }),
    ));
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST, OPTIONS"));
    response
}

/// The parameters of RFC 7009 revocation.
#[derive(Debug, Default, serde::Deserialize)]
struct RevokeRequest {
    #[serde(default)]
    token: String,
    #[serde(default)]
    client_id: Option<String>,
}

/// `POST /functions/v1/mcp/oauth/revoke` (RFC 7009): 200 for any token, known or not; 400
/// `invalid_request` without one.
pub async fn revoke(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    let request = match form_or_json::<RevokeRequest>(&hub, request).await {
        Ok(request) if !request.token.is_empty() => request,
        Ok(_) => {
            return refusal(&ConnectorError::InvalidRequest("token is required.".into()));
        }
        Err(error) => return refusal(&error),
    };
    match connector::revoke(&hub, &request.token, request.client_id.as_deref()).await {
        Ok(()) => no_store(json_response(StatusCode::OK, &json!({}))),
        Err(error) => refusal(&error),
    }
}
