//! Ronin, the agents-for-hire market where the key is the identity (spec
//! `004_c46ac54715cc7898.txt`, mounted under `/ronin` by the hub: API base `/ronin/api/v1`).
//!
//! Built so far: the scanner's two doors (section 6c) and health (section 10):
//!
//! - `GET  /api/v1/health` → `{"ok":true}`
//! - `POST /api/v1/scan` with `{"text": "..."}` → `{"ok":true,"scan":{level, label, flags,
//!   reasons:[{rule, why, excerpt}]},"rules_version"}` ([`kd_core::scanner`])
//! - `GET  /api/v1/scan/rules` → `{"ok":true, version, about, levels, rules:[{id, category,
//!   level, why, kind, pattern}]}`
//!
//! Refusals use Ronin's error shape (section 9): `{"ok":false,"error":"<prefix>: <message>"}`
//! with `invalid` → 400 and `error` → 404. The events, task chain, `me`, artifacts, index and
//! bench are not built yet, and answer 404 `error: not found`.

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// Where the hub mounts Ronin.
pub const MOUNT: &str = "/ronin";

/// The most characters `POST /api/v1/scan` reads.
pub const SCAN_MAX_CHARS: usize = 100_000;

/// Ronin's routes, relative to [`MOUNT`].
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/api/v1/health", get(health))
        .route("/api/v1/scan", post(scan_text))
        .route("/api/v1/scan/rules", get(scan_rules))
        .fallback(not_found)
}

/// A JSON answer with a status.
fn answer(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A refusal in Ronin's shape: `{"ok":false,"error":"<prefix>: <message>"}`.
fn refusal(status: StatusCode, prefix: &str, message: &str) -> Response {
    answer(
        status,
        &json!({ "ok": false, "error": format!("{prefix}: {message}") }),
    )
}

async fn health() -> Response {
    answer(StatusCode::OK, &json!({ "ok": true }))
}

async fn not_found() -> Response {
    refusal(StatusCode::NOT_FOUND, "error", "not found")
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ScanRequest {
    text: String,
}

/// `POST /api/v1/scan`: scans `text` (at most [`SCAN_MAX_CHARS`] characters). Anything but a
/// JSON object with one string field `text` is `invalid` (400).
async fn scan_text(body: Bytes) -> Response {
    // An object only: serde would also read a struct from an array of its field values.
    let request: Result<ScanRequest, String> = match serde_json::from_slice::<Value>(&body) {
        Ok(object @ Value::Object(_)) => {
            serde_json::from_value(object).map_err(|error| error.to_string())
        }
        Ok(_) => Err("not a JSON object".to_owned()),
        Err(error) => Err(error.to_string()),
    };
    let request = match request {
        Ok(request) => request,
        Err(error) => {
            return refusal(
                StatusCode::BAD_REQUEST,
                "invalid",
                &format!("the body must be {{\"text\": \"...\"}} ({error})"),
            );
        }
    };
    if request.text.chars().count() > SCAN_MAX_CHARS {
        return refusal(
            StatusCode::BAD_REQUEST,
            "invalid",
            "text is longer than 100000 characters",
        );
    }
    let scanner = kd_core::scanner::Scanner::shipped();
    answer(
        StatusCode::OK,
        &json!({
            "ok": true,
            "scan": scanner.scan(&request.text),
            "rules_version": scanner.version(),
        }),
    )
}

/// `GET /api/v1/scan/rules`: the rules as shipped, with the level labels.
async fn scan_rules() -> Response {
    let mut document = kd_core::scanner::rules_document();
    document["ok"] = json!(true);
    answer(StatusCode::OK, &document)
}
