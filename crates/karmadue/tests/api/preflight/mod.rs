//! Pre-flight checks (`check_before_acting`, `POST /v1/preflight`) and their receipts, plus the
//! catalog writes beside them: `lookup_findings`, `register_resource`, `report_content`.

use ed25519_dalek::{Signature, VerifyingKey};
use kd_protocol::b64;
use serde_json::{Value, json};

use kd_core::clock::Clock;

use crate::app::{Agent, TestApp, fresh_nonce};

pub const SERVERS: &str = "kd:res:github:modelcontextprotocol/servers";

/// A read signed by `agent` (kd-mcp-v1 headers and x-karmadue-agent); the whole reply.
pub fn signed_read(app: &TestApp, agent: &Agent, tool: &str, arguments: Value) -> Value {
    let text = arguments.to_string();
    let mut headers = app.sign(&agent.key, tool, &agent.agent_id, &text, &fresh_nonce());
    headers.push(("x-karmadue-agent".into(), agent.agent_id.clone()));
    let borrowed: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    app.call_text(tool, &text, &borrowed).0
}

/// A signed check of `target` by `agent`; the receipt id.
pub fn receipt_for(app: &TestApp, agent: &Agent, target: &str) -> String {
    let reply = signed_read(
        app,
        agent,
        "check_before_acting",
        json!({ "target": target }),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    reply["data"]["receipt"]["receipt_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A direct connection to the hub's database, for setting up state the API cannot reach yet.
pub fn db(app: &TestApp) -> kd_core::db::Connection {
    kd_core::db::Connection::open(&app.hub.config.database()).unwrap()
}

/// kd-passport-1 as published in the JWKS.
pub fn published_key(app: &TestApp) -> VerifyingKey {
    let jwks = app
        .request("GET", "/.well-known/jwks.json", None, &[])
        .json();
    let key = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|key| key["kid"] == "kd-passport-1")
        .unwrap();
    let bytes: [u8; 32] = b64::decode_url(key["x"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    VerifyingKey::from_bytes(&bytes).unwrap()
}

pub fn verifies(key: &VerifyingKey, text: &str, signature: &str) -> bool {
    let bytes: [u8; 64] = b64::decode_url(signature).unwrap().try_into().unwrap();
    key.verify_strict(text.as_bytes(), &Signature::from_bytes(&bytes))
        .is_ok()
}

fn error_of(reply: &Value) -> (String, String) {
    assert_eq!(reply["ok"], false, "{reply}");
    (
        reply["error"]["code"].as_str().unwrap().to_owned(),
        reply["error"]["field"].as_str().unwrap_or("").to_owned(),
    )
}

fn resolved(app: &TestApp, target: Value) -> String {
    let reply = app.call("check_before_acting", json!({ "target": target }));
    assert_eq!(reply["ok"], true, "{target}: {reply}");
    reply["data"]["resolved"]["kd_resource_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

mod contributions;
mod receipts;
mod targets;
