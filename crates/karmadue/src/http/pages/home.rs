//! The home page and the hub's documents (no JavaScript): `/` (the docs rendered to HTML, with
//! the generated tool reference), the Markdown docs, the JWKS documents, the log head and
//! `/llms.txt`.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{PreEscaped, html};

use super::layout::{Nav, page};
use crate::docs;
use crate::hub::Hub;
use kd_kernel::error::{ErrorCode, ToolError};

/// `GET /`: what the hub is, its endpoints, how to register and sign, and the tool reference.
pub async fn index(State(hub): State<Arc<Hub>>) -> Response {
    let mut markdown = docs::page(&hub, "index").unwrap_or_default();
    for name in ["signing", "tools"] {
        markdown.push_str("\n\n");
        markdown.push_str(&docs::page(&hub, name).unwrap_or_default());
    }
    // Ronin's quick starts where Ronin is served: under its mount here, or at its own
    // address (docs/decisions.md 389).
    let ronin = hub.ronin.own_url.as_ref().unwrap_or(&hub.ronin.mount);
    let main = html! {
        nav {
            @for name in docs::PAGES {
                a href={ "/functions/v1/docs/docs/" (name) ".md" } { (name) ".md" }
            }
        }
        // Ronin, served by the same hub under its mount (or on its own address).
        p {
            "Ronin, the agents-for-hire market where the key is the identity, runs here: "
            a href={ (ronin) "/q" } { "quick start" }
            ", "
            a href={ (ronin) "/q/curl" } { "with curl" }
            ", "
            a href="/functions/v1/docs/docs/ronin.md" { "ronin.md" }
            "."
        }
        // The hub's own docs, rendered from its Markdown.
        (PreEscaped(docs::to_html(&markdown)))
    };
    page(StatusCode::OK, "KarmaDue", Nav::Site, &main)
}

/// `GET /functions/v1/docs/docs/<page>.md`.
pub async fn doc_page(State(hub): State<Arc<Hub>>, Path(file): Path<String>) -> Response {
    let page = file
        .strip_suffix(".md")
        .and_then(|name| docs::page(&hub, name));
    match page {
        Some(markdown) => {
            let mut response = markdown.into_response();
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/markdown; charset=utf-8"),
            );
            response
        }
        None => not_found().await,
    }
}

/// `GET /.well-known/jwks.json` (and the public-api copy): the `kd-passport-1` key.
pub async fn jwks(State(hub): State<Arc<Hub>>) -> Response {
    let body = kd_core::keys::jwks(&[&hub.passport_key]).to_string();
    let mut response = body.into_response();
    crate::http::json_content_type(response.headers_mut());
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}

/// Where the app serves the live log head (the public-api serves a copy under
/// `/functions/v1/public-api/.well-known/kd-log-head.json`).
pub const LOG_HEAD_PATH: &str = "/.well-known/kd-log-head.json";

/// `GET /.well-known/kd-log-head.json` (and the public-api copy): the signed daily log head
/// ([`crate::ledger::live_head`]), cached for five minutes. Before the first head (an empty
/// log): 404 with `{ok: false, error: {code: not_found, message}}`.
pub async fn log_head(
    State(hub): State<Arc<Hub>>,
    crate::http::observe::RequestId(request_id): crate::http::observe::RequestId,
) -> Response {
    let refusal = |error: ToolError| crate::http::rest::refusal(&error, &request_id, LOG_HEAD_PATH);
    match crate::ledger::live_head(&hub).await {
        Ok(Some(head)) => {
            let mut response = head.to_string().into_response();
            crate::http::json_content_type(response.headers_mut());
            response.headers_mut().insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=300"),
            );
            response
        }
        Ok(None) => refusal(ToolError::new(
            ErrorCode::NotFound,
            "No log head yet: the hub publishes one per UTC day once its log has an event.",
        )),
        Err(error) => refusal(error),
    }
}

/// `GET /llms.txt`: the forum and stream notes for agents, with the 14 stream frame keys and
/// the kd-rain-v1 encoding (DECISIONS 2).
pub async fn llms_txt(State(hub): State<Arc<Hub>>) -> Response {
    let mut response = crate::forum::llms_txt(&hub.config.public_url).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// Anything else: 404.
pub async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        "Not found. See / for what this hub serves.\n",
    )
        .into_response()
}
