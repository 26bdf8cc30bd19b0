//! Reading one JSON-RPC 2.0 message of the MCP endpoint (JSON-RPC 2.0 §4–5; MCP
//! basic/index "Requests", "Notifications"): the transport's view of a POSTed body, before any
//! method runs.
//!
//! [`parse`] takes the body's text and answers what it is: a [`Message::Request`] (with its
//! id and the transport-level fields of `params`), a [`Message::Notification`], or a
//! [`Message::Response`] (a client's answer, which the endpoint accepts and drops); or a
//! [`Refused`] with the JSON-RPC error code and message the endpoint sends back (HTTP 400).
//! Tool arguments stay raw text (`params` as a [`RawValue`]) until the canonical printer has
//! seen them.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// JSON-RPC "Parse error": the body is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC "Invalid Request": JSON, but not a request this endpoint reads.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC "Method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC "Invalid params".
pub const INVALID_PARAMS: i64 = -32602;

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default)]
    jsonrpc: Option<String>,
    /// `Some` whenever the member is there, even as `null` (a plain `Option` would read `null`
    /// as absent and turn a request with `"id": null` into a notification).
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// The transport-level fields of a request's `params`; everything else is left in the raw
/// `params`.
#[derive(Debug, Deserialize, Default, Clone, PartialEq)]
pub struct ParamsHead {
    /// `params._meta` (the 2026-07-28 era's protocol version and client capabilities).
    #[serde(default, rename = "_meta")]
    pub meta: Option<Value>,
    /// `params.name` (a tool's name in `tools/call`).
    #[serde(default)]
    pub name: Option<Value>,
    /// `params.protocolVersion` (`initialize`).
    #[serde(default, rename = "protocolVersion")]
    pub protocol_version: Option<Value>,
}

/// One message, read.
#[derive(Debug, Clone)]
pub enum Message<'a> {
    /// A request: it gets an answer with this id (a string or an integer).
    Request {
        /// The request id, a JSON string or integer.
        id: Value,
        /// The method.
        method: String,
        /// `params` as sent (`None` when absent); always an object when present.
        params: Option<&'a RawValue>,
        /// The transport-level fields of `params`.
        head: ParamsHead,
    },
    /// A notification (no id): no answer.
    Notification {
        /// The method.
        method: String,
        /// `params` as sent, not checked.
        params: Option<&'a RawValue>,
    },
    /// A response from the client (`result` or `error`, no method): nothing to answer.
    Response,
}

/// Why a message is refused: the JSON-RPC error the endpoint answers (HTTP 400).
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    /// The id to answer with (`None`: `null`, when the id is missing or unreadable).
    pub id: Option<Value>,
    /// [`PARSE_ERROR`], [`INVALID_REQUEST`] or [`INVALID_PARAMS`].
    pub code: i64,
    /// The error's message.
    pub message: String,
}

impl Refused {
    fn new(id: Option<Value>, code: i64, message: impl Into<String>) -> Self {
        Self {
            id,
            code,
            message: message.into(),
        }
    }
}

/// Reads the body `text` (already UTF-8) as one JSON-RPC message.
///
/// # Errors
/// [`Refused`], in this order: a batch (a JSON array) and text that is not one JSON object
/// with the envelope's members of their types ([`PARSE_ERROR`]); an id that is present but
/// cannot be read, `jsonrpc` other than `"2.0"`, a message with neither method nor
/// result/error, a request id that is not a string or an integer ([`INVALID_REQUEST`]);
/// `params` that is not an object ([`INVALID_PARAMS`]).
pub fn parse(text: &str) -> Result<Message<'_>, Refused> {
    if text.trim_start().starts_with('[') {
        return Err(Refused::new(
            None,
            INVALID_REQUEST,
            "Batches are not supported: send one JSON-RPC message per request.",
        ));
    }
    let envelope: Envelope<'_> = serde_json::from_str(text).map_err(|error| {
        Refused::new(
            None,
            PARSE_ERROR,
            format!("The body is not one JSON-RPC message: {error}"),
        )
    })?;
    // An id that is there but cannot be read (a lone surrogate, nesting past serde_json's
    // depth limit) is not a notification: the message is an Invalid Request (id null).
    let id: Option<Value> = match envelope.id.map(|raw| serde_json::from_str(raw.get())) {
        None => None,
        Some(Ok(id)) => Some(id),
        Some(Err(_)) => {
            return Err(Refused::new(
                None,
                INVALID_REQUEST,
                "The request id cannot be read: it must be a string or an integer.",
            ));
        }
    };
    if envelope.jsonrpc.as_deref() != Some("2.0") {
        return Err(Refused::new(
            id,
            INVALID_REQUEST,
            "jsonrpc must be \"2.0\".",
        ));
    }
    let Some(method) = envelope.method else {
        if envelope.result.is_some() || envelope.error.is_some() {
            return Ok(Message::Response);
        }
        return Err(Refused::new(
            id,
            INVALID_REQUEST,
            "A request needs a method.",
        ));
    };
    let Some(id) = id else {
        return Ok(Message::Notification {
            method,
            params: envelope.params,
        });
    };
    // MCP (basic/index "Requests"): a request id is a string or an integer, never null.
    if !(id.is_string() || id.is_i64() || id.is_u64()) {
        return Err(Refused::new(
            None,
            INVALID_REQUEST,
            "A request id must be a string or an integer (not null).",
        ));
    }
    // MCP params are always an object (serde would also read a struct from an array).
    let head = match envelope.params {
        None => ParamsHead::default(),
        Some(raw) => match serde_json::from_str(raw.get()) {
            Ok(head) if raw.get().trim_start().starts_with('{') => head,
            _ => {
                return Err(Refused::new(
                    Some(id),
                    INVALID_PARAMS,
                    "params must be an object.",
                ));
            }
        },
    };
    Ok(Message::Request {
        id,
        method,
        params: envelope.params,
        head,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> (Option<Value>, i64) {
        let refused = parse(text).unwrap_err();
        (refused.id, refused.code)
    }

    #[test]
    fn a_request_keeps_its_id_method_and_raw_params() {
        let text = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ping","arguments":{"b":1,"a":2}}}"#;
        let Ok(Message::Request {
            id,
            method,
            params,
            head,
        }) = parse(text)
        else {
            panic!("not a request");
        };
        assert_eq!((id, method.as_str()), (Value::from(7), "tools/call"));
        assert_eq!(
            params.map(RawValue::get),
            Some(r#"{"name":"ping","arguments":{"b":1,"a":2}}"#)
        );
        assert_eq!(head.name, Some(Value::from("ping")));
    }

    #[test]
    fn notifications_responses_and_each_refusal_in_order() {
        assert!(matches!(
            parse(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Message::Notification { .. })
        ));
        assert!(matches!(
            parse(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Ok(Message::Response)
        ));
        assert_eq!(refusal("[]"), (None, INVALID_REQUEST));
        assert_eq!(refusal("{"), (None, PARSE_ERROR));
        assert_eq!(refusal(r#"{"jsonrpc":2}"#), (None, PARSE_ERROR));
        assert_eq!(
            refusal(r#"{"jsonrpc":"2.0","id":"\ud800","method":"ping"}"#),
            (None, INVALID_REQUEST)
        );
        assert_eq!(
            refusal(r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#),
            (Some(Value::from(3)), INVALID_REQUEST)
        );
        assert_eq!(
            refusal(r#"{"jsonrpc":"2.0","id":3}"#),
            (Some(Value::from(3)), INVALID_REQUEST)
        );
        assert_eq!(
            refusal(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            (None, INVALID_REQUEST)
        );
        assert_eq!(
            refusal(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
            (None, INVALID_REQUEST)
        );
        assert_eq!(
            refusal(r#"{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}"#),
            (Some(Value::from(4)), INVALID_PARAMS)
        );
    }
}
