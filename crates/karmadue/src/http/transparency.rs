//! The transparency log's routes (kd_core::tlog; docs/transparency.md; the checkpoints are
//! signed by `ledger::checkpoints`).
//!
//! - `GET /.well-known/kd-checkpoint` and `GET /log/checkpoint`: the latest signed checkpoint
//!   (C2SP tlog-checkpoint in a signed note, text/plain).
//! - `GET /log/tile/{*path}`: C2SP tlog-tiles (`<L>/<N>[.p/<W>]`, `entries/<N>[.p/<W>]`);
//!   full tiles are immutable and cacheable for a year.
//! - `GET /log/proof/inclusion?seq=N[&size=M]` and `GET /log/proof/consistency?old=A[&new=B]`:
//!   JSON proofs with base64 hashes (the size defaults to the latest checkpoint's).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use kd_core::tlog;
use serde_json::{Map, Value, json};

use crate::http::observe::RequestId;
use crate::http::rest;
use crate::hub::Hub;
use kd_kernel::error::{ErrorCode, ToolError};

/// The latest checkpoint, at the well-known path.
pub const CHECKPOINT_PATH: &str = "/.well-known/kd-checkpoint";
/// The latest checkpoint, under the tiles prefix (`<prefix>/checkpoint`, as tlog-tiles has it).
pub const LOG_CHECKPOINT_PATH: &str = "/log/checkpoint";
/// The tiles.
pub const TILE_PATH: &str = "/log/tile/{*path}";
/// Inclusion proofs.
pub const INCLUSION_PATH: &str = "/log/proof/inclusion";
/// Consistency proofs.
pub const CONSISTENCY_PATH: &str = "/log/proof/consistency";

/// A refusal of the log's routes: 404 `not_found` or 400 `validation`, in the tools' envelope.
fn refusal(status: u16, message: &str, request_id: &str) -> Response {
    let code = if status == 404 {
        ErrorCode::NotFound
    } else {
        ErrorCode::Validation
    };
    rest::refusal(
        &ToolError::new(code, message),
        request_id,
        "transparency log",
    )
}

/// 500 `internal`, the store's failure kept as the cause (logged once, never shown).
fn internal(error: kd_core::store::StoreError, request_id: &str) -> Response {
    rest::refusal(
        &ToolError::internal_from(error),
        request_id,
        "transparency log",
    )
}

/// `GET /.well-known/kd-checkpoint`, `GET /log/checkpoint`: the latest checkpoint.
pub async fn checkpoint(State(hub): State<Arc<Hub>>, RequestId(request_id): RequestId) -> Response {
    match hub.store.read(tlog::store::latest_checkpoint).await {
        Ok(Some(checkpoint)) => {
            let mut response = checkpoint.note.into_response();
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            response
        }
        Ok(None) => refusal(
            404,
            "no checkpoint yet: the hub signs one within seconds of its first event",
            &request_id,
        ),
        Err(error) => internal(error, &request_id),
    }
}

/// `GET /log/tile/{*path}`: a tile or an entry bundle.
pub async fn tile(
    State(hub): State<Arc<Hub>>,
    RequestId(request_id): RequestId,
    Path(path): Path<String>,
) -> Response {
    let parsed = match tlog::tiles::parse(&path) {
        Ok(parsed) => parsed,
        Err(reason) => return refusal(400, &reason, &request_id),
    };
    match hub
        .store
        .read(move |conn| tlog::serve::tile(conn, parsed))
        .await
    {
        Ok(Some(bytes)) => {
            let mut response = bytes.into_response();
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            );
            let cache = if parsed.is_full() {
                "public, max-age=31536000, immutable"
            } else {
                "public, max-age=5"
            };
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
            response
        }
        Ok(None) => refusal(404, "the tree has no such tile (yet)", &request_id),
        Err(error) => internal(error, &request_id),
    }
}

/// A whole number query parameter: `Ok(None)` when absent, a 400 when malformed.
fn number(query: &HashMap<String, String>, name: &str) -> Result<Option<u64>, String> {
    query
        .get(name)
        .map(|text| {
            text.parse::<u64>()
                .map_err(|_| format!("{name} must be a whole number; it is {text:?}"))
        })
        .transpose()
}

fn proof_response(
    result: Result<Result<Value, tlog::serve::Refusal>, kd_core::store::StoreError>,
    request_id: &str,
) -> Response {
    match result {
        Ok(Ok(body)) => {
            let mut response = body.to_string().into_response();
            crate::http::json_content_type(response.headers_mut());
            response
        }
        Ok(Err((status, reason))) => refusal(status, &reason, request_id),
        Err(error) => internal(error, request_id),
    }
}

/// `GET /log/proof/inclusion?seq=N[&size=M]`.
pub async fn inclusion(
    State(hub): State<Arc<Hub>>,
    RequestId(request_id): RequestId,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let (seq, size) = match (number(&query, "seq"), number(&query, "size")) {
        (Ok(Some(seq)), Ok(size)) => (seq, size),
        (Ok(None), _) => return refusal(400, "seq is required: the event's seq", &request_id),
        (Err(reason), _) | (_, Err(reason)) => return refusal(400, &reason, &request_id),
    };
    proof_response(
        hub.store
            .read(move |conn| tlog::serve::inclusion(conn, seq, size))
            .await,
        &request_id,
    )
}

/// `GET /log/proof/consistency?old=A[&new=B]`.
pub async fn consistency(
    State(hub): State<Arc<Hub>>,
    RequestId(request_id): RequestId,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let (old, new) = match (number(&query, "old"), number(&query, "new")) {
        (Ok(Some(old)), Ok(new)) => (old, new),
        (Ok(None), _) => return refusal(400, "old is required: the older tree size", &request_id),
        (Err(reason), _) | (_, Err(reason)) => return refusal(400, &reason, &request_id),
    };
    proof_response(
        hub.store
            .read(move |conn| tlog::serve::consistency(conn, old, new))
            .await,
        &request_id,
    )
}

/// The routes' OpenAPI path items.
pub fn openapi_paths(paths: &mut Map<String, Value>) {
    let refused = json!({ "description": "Refused.", "content": { "application/json": { "schema": { "type": "object" } } } });
    for (path, id) in [
        (CHECKPOINT_PATH, "checkpoint"),
        (LOG_CHECKPOINT_PATH, "log_checkpoint"),
    ] {
        paths.insert(path.into(), json!({ "get": {
            "operationId": id,
            "tags": ["transparency"],
            "summary": "The latest signed checkpoint of the transparency log (C2SP tlog-checkpoint in a signed note).",
            "responses": {
                "200": { "description": "The signed note.", "content": { "text/plain": { "schema": { "type": "string" } } } },
                "404": refused,
            },
        } }));
    }
    let proof_ok = json!({ "description": "The proof, hashes in standard base64.", "content": { "application/json": { "schema": { "type": "object", "required": ["proof"] } } } });
    paths.insert(INCLUSION_PATH.into(), json!({ "get": {
        "operationId": "inclusion_proof",
        "tags": ["transparency"],
        "summary": "The RFC 6962 inclusion proof of an event under a tree size (default: the latest checkpoint's).",
        "parameters": [
            { "name": "seq", "in": "query", "required": true, "schema": { "type": "integer", "minimum": 1 } },
            { "name": "size", "in": "query", "required": false, "schema": { "type": "integer", "minimum": 1 } },
        ],
        "responses": { "200": proof_ok, "400": refused, "404": refused },
    } }));
    paths.insert(CONSISTENCY_PATH.into(), json!({ "get": {
        "operationId": "consistency_proof",
        "tags": ["transparency"],
        "summary": "The RFC 6962 consistency proof between two tree sizes (new defaults to the latest checkpoint's).",
        "parameters": [
            { "name": "old", "in": "query", "required": true, "schema": { "type": "integer", "minimum": 1 } },
            { "name": "new", "in": "query", "required": false, "schema": { "type": "integer", "minimum": 1 } },
        ],
        "responses": { "200": proof_ok, "400": refused, "404": refused },
    } }));
}
