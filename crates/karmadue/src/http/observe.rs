//! Observability of the HTTP surface (DESIGN rule 10): one request id and one `tracing` span
//! per request, the HTTP metrics, and `GET /metrics`.
//!
//! [`trace_request`] wraps every route (and the fallback). It draws the request's id once,
//! stores it in the request's extensions for the handlers ([`RequestId`]), runs the handler
//! inside a `request` span and sets `x-request-id` on the response, so the span, the header and
//! a body's `request_id` are the same id. The span records the request id, the method, the
//! matched route template, and, when it is done, the status and latency; `Hub::call` adds the
//! tool and the outcome code. Nothing else of the request is recorded: no other header, no
//! path or query (they can carry claim codes), no body.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{FromRequestParts, MatchedPath, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tracing::Instrument;
use tracing::field::Empty;

use crate::hub::Hub;

/// The path of the metrics document.
pub const METRICS_PATH: &str = "/metrics";

/// The route label of a request no route matched.
pub const UNMATCHED: &str = "unmatched";

/// This request's id, decided once by [`trace_request`]. As an extractor it reads it from the
/// request's extensions (drawing a fresh one only if the layer is missing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(pub String);

impl FromRequestParts<Arc<Hub>> for RequestId {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        hub: &Arc<Hub>,
    ) -> Result<Self, Self::Rejection> {
        Ok(parts
            .extensions
            .get::<Self>()
            .cloned()
            .unwrap_or_else(|| Self(hub.request_id())))
    }
}

/// The middleware around every route: request id, span, `x-request-id`, HTTP metrics.
pub async fn trace_request(
    State(hub): State<Arc<Hub>>,
    mut request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let request_id = hub.request_id();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or(UNMATCHED, MatchedPath::as_str)
        .to_owned();
    let span = tracing::info_span!(
        "request",
        request_id = %request_id,
        method = %request.method(),
        route = %route,
        tool = Empty,
        code = Empty,
        status = Empty,
        latency_ms = Empty,
    );
    request
        .extensions_mut()
        .insert(RequestId(request_id.clone()));
    let mut response = next.run(request).instrument(span.clone()).await;
    let took = started.elapsed();
    let status = response.status();
    span.record("status", status.as_u16());
    span.record("latency_ms", took.as_secs_f64() * 1000.0);
    span.in_scope(|| {
        if status.is_server_error() {
            tracing::warn!("request failed");
        } else {
            tracing::debug!("request done");
        }
    });
    super::set_request_id(response.headers_mut(), &request_id);
    hub.metrics.http_request(&route, status.as_u16(), took);
    response
}

/// `GET /metrics`: this hub's registry as Prometheus text. Counts only: no ids, no addresses
/// (docs/decisions.md 100).
pub async fn metrics(State(hub): State<Arc<Hub>>) -> Response {
    // The log's head, read now (another process, an import, may have appended).
    let head = hub
        .store
        .read(|conn| kd_core::eventlog::ChainHead::load(conn).map(|head| head.seq))
        .await;
    match head {
        Ok(seq) => hub.metrics.set_event_log_head(seq),
        Err(error) => tracing::error!(%error, "metrics: could not read the log head"),
    }
    let mut response = (StatusCode::OK, hub.metrics.render()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}
