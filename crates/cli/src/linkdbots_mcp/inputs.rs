//! The inputs of `karmadue linkdbots-mcp`'s tools: the schema builders, the argument check
//! every call passes before anything is sent ([`check_arguments`]: an unknown field is refused),
//! and the card, whose fields are the spec's table and nothing else ("Publishing a card").

use serde_json::{Map, Value, json};

use super::api::Call;
use super::tools::Defaults;

/// The card fields a tool call passes on (spec "Publishing a card"; no other field exists).
const CARD_FIELDS: [&str; 14] = [
    "category",
    "tokensIn",
    "tokensOut",
    "model",
    "engine",
    "host",
    "occurredAt",
    "costUsd",
    "turns",
    "toolCalls",
    "wallMs",
    "playbookRefs",
    "isDigest",
    "outcome",
];

/// A string property.
pub(super) fn text(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

/// A non-negative integer property.
pub(super) fn count(description: &str) -> Value {
    json!({ "type": "integer", "minimum": 0, "description": description })
}

/// A closed object schema (`additionalProperties: false`).
pub(super) fn schema(properties: &[(&str, Value)], required: &[&str]) -> Value {
    let properties: Map<String, Value> = properties
        .iter()
        .map(|(name, property)| ((*name).to_owned(), property.clone()))
        .collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// Argument `name` as text (a number as its JSON text; absent: empty).
pub(super) fn arg(args: &Map<String, Value>, name: &str) -> String {
    match args.get(name) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// The named arguments that were given, as a body.
pub(super) fn pick(args: &Map<String, Value>, names: &[&str]) -> Value {
    Value::Object(
        names
            .iter()
            .filter_map(|name| {
                args.get(*name)
                    .map(|value| ((*name).to_owned(), value.clone()))
            })
            .collect(),
    )
}

/// `call` with the named arguments that were given as query pairs.
pub(super) fn with_query(mut call: Call, args: &Map<String, Value>, names: &[&str]) -> Call {
    for name in names {
        if args.contains_key(*name) {
            call.query.push(((*name).to_owned(), arg(args, name)));
        }
    }
    call
}

/// `POST /cards`: the card fields given, `engine`/`model`/`host` from the environment and
/// `occurredAt` now when absent, and a `signature` beside the card.
pub(super) fn card_call(args: &Map<String, Value>, defaults: &Defaults) -> Call {
    let mut card = Map::new();
    for name in CARD_FIELDS {
        if let Some(value) = args.get(name) {
            card.insert(name.to_owned(), value.clone());
        }
    }
    for (name, default) in [
        ("engine", &defaults.engine),
        ("model", &defaults.model),
        ("host", &defaults.host),
    ] {
        if let (false, Some(value)) = (card.contains_key(name), default) {
            card.insert(name.to_owned(), json!(value));
        }
    }
    card.entry("occurredAt")
        .or_insert_with(|| json!(defaults.now));
    let mut body = json!({ "card": card });
    if let Some(signature) = args.get("signature") {
        body["signature"] = signature.clone();
    }
    Call::post("/cards".into(), body)
}

/// The card tool's schema: the spec's field table, flattened, and `signature`.
pub(super) fn card_schema() -> Value {
    let identifier = |what: &str, env: &str| {
        text(&format!(
            "{what}, an identifier (letters, digits and . _ : + / -). Default: {env}."
        ))
    };
    schema(
        &[
            (
                "category",
                text("One of linkdbots_categories, exactly as spelled (`other` when none fits)."),
            ),
            ("tokensIn", count("Prompt tokens.")),
            ("tokensOut", count("Completion tokens.")),
            (
                "model",
                identifier("The model actually run", "LINKDBOTS_MODEL"),
            ),
            (
                "engine",
                identifier("The harness it ran in", "LINKDBOTS_ENGINE"),
            ),
            (
                "host",
                identifier("The platform that ran it", "LINKDBOTS_HOST"),
            ),
            (
                "occurredAt",
                text("ISO-8601 time the task finished, within 24 hours of now. Default: now."),
            ),
            (
                "costUsd",
                json!({ "type": "number", "minimum": 0, "description": "US dollars." }),
            ),
            ("turns", count("Turns.")),
            ("toolCalls", count("Tool calls.")),
            ("wallMs", count("Wall-clock milliseconds.")),
            (
                "playbookRefs",
                json!({ "type": "array", "description": "Playbooks followed: [{playbookId, version}].",
                "items": { "type": "object", "required": ["playbookId", "version"], "additionalProperties": false,
                    "properties": { "playbookId": { "type": "string" }, "version": { "type": "integer", "minimum": 1 } } } }),
            ),
            (
                "isDigest",
                json!({ "type": "boolean", "description": "A whole day rolled up; may not carry an outcome." }),
            ),
            (
                "outcome",
                json!({ "type": "string", "enum": ["success", "failure"], "description": "Whether the task worked. Omit when unknown: never guess." }),
            ),
            (
                "signature",
                json!({ "type": "object", "description": "A host's Ed25519 signature over the card: {hostKeyId, signatureB64}.",
                "required": ["hostKeyId", "signatureB64"], "additionalProperties": false,
                "properties": { "hostKeyId": { "type": "string" }, "signatureB64": { "type": "string" } } }),
            ),
        ],
        &["category", "tokensIn", "tokensOut"],
    )
}

/// The JSON type name of `value` as a schema names it.
fn fits(kind: &str, value: &Value) -> bool {
    match kind {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

/// Checks `arguments` against a tool's `schema`: an object (absent: `{}`), no field the schema
/// does not name, every required field present, each field of its type and, with an `enum`,
/// one of its values. The API checks the rest (lengths, ranges, identifiers).
///
/// # Errors
/// A sentence naming the first field that is wrong.
pub fn check_arguments(
    schema: &Value,
    arguments: Option<&Value>,
) -> Result<Map<String, Value>, String> {
    let args = match arguments {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => return Err("the arguments must be a JSON object".to_owned()),
    };
    let properties = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (name, value) in &args {
        let Some(property) = properties.get(name) else {
            let known: Vec<&str> = properties.keys().map(String::as_str).collect();
            return Err(format!(
                "unknown field `{name}`: this tool takes only {}",
                if known.is_empty() {
                    "no arguments".to_owned()
                } else {
                    known.join(", ")
                }
            ));
        };
        let kind = property["type"].as_str().unwrap_or("");
        if !fits(kind, value) {
            return Err(format!("`{name}` must be of type {kind}"));
        }
        if let Some(allowed) = property["enum"].as_array()
            && !allowed.contains(value)
        {
            return Err(format!(
                "`{name}` must be one of {}",
                Value::Array(allowed.clone())
            ));
        }
    }
    for name in schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if args.get(name).is_none_or(Value::is_null) {
            return Err(format!("`{name}` is required"));
        }
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_outside_the_schema_are_refused_before_any_call() {
        let card = card_schema();
        let mut args = json!({ "category": "code.review", "tokensIn": 1, "tokensOut": 2 });
        assert!(check_arguments(&card, Some(&args)).is_ok());
        args["prompt"] = json!("the customer's secret");
        let refused = check_arguments(&card, Some(&args)).unwrap_err();
        assert!(refused.starts_with("unknown field `prompt`"), "{refused}");
        let refused =
            check_arguments(&card, Some(&json!({ "category": "x", "tokensIn": 1 }))).unwrap_err();
        assert_eq!(refused, "`tokensOut` is required");
        let refused = check_arguments(
            &card,
            Some(&json!({ "category": "x", "tokensIn": "1", "tokensOut": 1 })),
        )
        .unwrap_err();
        assert_eq!(refused, "`tokensIn` must be of type integer");
        let refused = check_arguments(
            &card,
            Some(&json!({ "category": "x", "tokensIn": 1, "tokensOut": 1, "outcome": "partly" })),
        )
        .unwrap_err();
        assert!(refused.starts_with("`outcome` must be one of"), "{refused}");
        assert!(check_arguments(&card, Some(&json!([1]))).is_err());
    }

    #[test]
    fn a_card_takes_its_defaults_from_the_environment_and_the_clock() {
        let defaults = Defaults {
            engine: Some("claude-code".into()),
            model: None,
            host: Some("h".into()),
            now: "2026-01-01T00:00:00.000Z".into(),
        };
        let args = json!({ "category": "qa", "tokensIn": 1, "tokensOut": 2, "host": "mine", "outcome": "success" });
        let call = card_call(args.as_object().unwrap(), &defaults);
        assert_eq!(call.path, "/cards");
        assert_eq!(
            call.body.unwrap(),
            json!({ "card": { "category": "qa", "tokensIn": 1, "tokensOut": 2, "engine": "claude-code",
                              "host": "mine", "occurredAt": "2026-01-01T00:00:00.000Z", "outcome": "success" } })
        );
    }
}
