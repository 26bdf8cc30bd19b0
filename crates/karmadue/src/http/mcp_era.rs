//! Which MCP era a request is served under, and the 2026-07-28 header rules: a request whose
//! `params._meta` names the modern version must repeat it, its method and its tool in the
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers; one without it is served
//! under the legacy versions.

use axum::http::{HeaderMap, StatusCode};
use kd_protocol::jsonrpc::{INVALID_PARAMS, ParamsHead};
use serde_json::{Value, json};

use super::mcp::{LEGACY_VERSIONS, META_CAPABILITIES, META_VERSION, MODERN_VERSION};

/// JSON-RPC error: a header disagrees with the body.
const HEADER_MISMATCH: i64 = -32020;
/// JSON-RPC error: a protocol version this hub does not speak.
const UNSUPPORTED_VERSION: i64 = -32022;

/// Which rules a request is served under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Era {
    /// 2025-03-26 to 2025-11-25: sessions, `initialize` first.
    Legacy,
    /// 2026-07-28: every request carries its version and capabilities in `_meta`.
    Modern,
}

/// A refused request: the HTTP status, the JSON-RPC error code, the message and its data.
pub(super) type EraRefusal = (StatusCode, i64, String, Option<Value>);

fn refused(code: i64, message: String, data: Option<Value>) -> EraRefusal {
    (StatusCode::BAD_REQUEST, code, message, data)
}

/// The `-32022` error's data: the versions a request of this form may name (only
/// [`MODERN_VERSION`] in `_meta`, as `server/discover`'s `supportedVersions` says; every version
/// in the header of a legacy request) and the one it asked for (decision 397).
fn unsupported(requested: &str, modern_form: bool) -> Value {
    let supported: Vec<&str> = if modern_form {
        vec![MODERN_VERSION]
    } else {
        std::iter::once(MODERN_VERSION)
            .chain(LEGACY_VERSIONS.iter().copied())
            .collect()
    };
    json!({ "supported": supported, "requested": requested })
}

/// Picks the era and applies the 2026-07-28 header rules.
pub(super) fn choose_era(
    headers: &HeaderMap,
    method: &str,
    params: &ParamsHead,
) -> Result<Era, EraRefusal> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    let meta = params.meta.as_ref();
    let meta_version = meta
        .and_then(|meta| meta.get(META_VERSION))
        .and_then(Value::as_str);
    let header_version = header("mcp-protocol-version");
    let Some(version) = meta_version else {
        return legacy(header_version, method);
    };
    // The header is compared first: a mismatch is a HeaderMismatch whichever version either
    // names (decision 397).
    if header_version != Some(version) {
        let message = "MCP-Protocol-Version must equal params._meta protocol version.";
        return Err(refused(HEADER_MISMATCH, message.into(), None));
    }
    if version != MODERN_VERSION {
        let message = format!("Unsupported protocol version {version}.");
        return Err(refused(
            UNSUPPORTED_VERSION,
            message,
            Some(unsupported(version, true)),
        ));
    }
    if !meta
        .and_then(|meta| meta.get(META_CAPABILITIES))
        .is_some_and(Value::is_object)
    {
        let message = format!("params._meta[\"{META_CAPABILITIES}\"] must be an object.");
        return Err(refused(INVALID_PARAMS, message, None));
    }
    if header("mcp-method") != Some(method) {
        let message = "Mcp-Method must equal the request's method.";
        return Err(refused(HEADER_MISMATCH, message.into(), None));
    }
    if method == "tools/call" {
        let name = params.name.as_ref().and_then(Value::as_str);
        if name.is_none() || header_value_decoded(header("mcp-name")).as_deref() != name {
            let message = "Mcp-Name must equal params.name.";
            return Err(refused(HEADER_MISMATCH, message.into(), None));
        }
    }
    Ok(Era::Modern)
}

/// A request without `_meta`'s version: legacy, unless its header names the modern version
/// (which needs the `_meta`) or a version this hub does not speak (`initialize` negotiates).
fn legacy(header_version: Option<&str>, method: &str) -> Result<Era, EraRefusal> {
    match header_version {
        Some(MODERN_VERSION) => Err(refused(
            INVALID_PARAMS,
            format!(
                "A {MODERN_VERSION} request needs params._meta[\"{META_VERSION}\"] and [\"{META_CAPABILITIES}\"]."
            ),
            None,
        )),
        Some(version) if !LEGACY_VERSIONS.contains(&version) && method != "initialize" => {
            let message = format!("Unsupported MCP-Protocol-Version {version}.");
            Err(refused(
                UNSUPPORTED_VERSION,
                message,
                Some(unsupported(version, false)),
            ))
        }
        _ => Ok(Era::Legacy),
    }
}

/// Decodes the `=?base64?…?=` sentinel form of a header value (2026-07-28).
fn header_value_decoded(value: Option<&str>) -> Option<String> {
    let value = value?;
    match value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => {
            let bytes = kd_protocol::b64::decode_signature(encoded).ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(value.to_owned()),
    }
}
