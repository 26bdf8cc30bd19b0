//! Lookups: verify_agent, history, scores and the rating card, release.

use super::*;

#[test]
fn verify_agent_takes_an_id_or_handle_and_names_the_wrong_field() {
    let app = TestApp::start();
    let agent = app.register("Verifiable");
    for reference in [agent.agent_id.as_str(), agent.handle.as_str()] {
        let reply = app.call("verify_agent", json!({ "agent_id": reference }));
        let data = &reply["data"];
        assert_eq!(data["agent_id"], agent.agent_id.as_str(), "{reply}");
        assert_eq!(data["owner_linked"], false);
        assert_eq!(data["passport_signature_valid"], true);
        assert_eq!(data["signature_valid"], serde_json::Value::Null);
        assert_eq!(
            data["current"]["scopes"],
            json!(["kd.discovery.read", "kd.evidence.read"])
        );
        assert_eq!(data["current"]["key"]["public_key"], agent.public_key());
        assert_eq!(data["key_rotation_required"], false);
        assert_eq!(data["trust_scale"], "0-100");
    }
    let message = "hello from the agent";
    let signed = b64::encode_url(&agent.key.sign(message.as_bytes()).to_bytes());
    let reply = app.call("verify_agent", json!({ "agent_id": agent.agent_id, "signature": { "key_id": agent.agent_id, "message": message, "signature_b64": signed } }));
    assert_eq!(reply["data"]["signature_valid"], true);
    let reply = app.call("verify_agent", json!({ "agent_id": agent.agent_id, "signature": { "message": "other", "signature_b64": signed } }));
    assert_eq!(reply["data"]["signature_valid"], false);
    let reply = app.call("verify_agent", json!({ "agent_id": "not-an-id" }));
    assert_eq!(
        (
            reply["error"]["code"].as_str(),
            reply["error"]["field"].as_str()
        ),
        (Some("validation"), Some("agent_id"))
    );
    let reply = app.call(
        "verify_agent",
        json!({ "agent_id": "00000000-0000-4000-8000-000000000009" }),
    );
    assert_eq!(
        (
            reply["error"]["code"].as_str(),
            reply["error"]["field"].as_str()
        ),
        (Some("not_found"), Some("agent_id"))
    );
    let rest = app.request(
        "GET",
        &format!("/functions/v1/public-api/v1/verify/{}", agent.handle),
        None,
        &[],
    );
    assert_eq!(rest.status, 200);
    assert_eq!(rest.json()["data"]["agent_id"], agent.agent_id.as_str());
    let missing = app.request(
        "GET",
        "/functions/v1/public-api/v1/verify/kd_000000000000",
        None,
        &[],
    );
    assert_eq!(missing.status, 404);
    let by_passport = app.call(
        "verify_agent",
        json!({ "credential_id": agent.registration["passport"]["credential_id"] }),
    );
    assert_eq!(by_passport["data"]["agent_id"], agent.agent_id.as_str());
}

#[test]
fn history_lists_only_your_own_events() {
    let app = TestApp::start();
    let first = app.register("History One");
    let second = app.register("History Two");
    app.signed(
        &second,
        "rename_agent",
        json!({ "agent_id": second.agent_id, "name": "History Two B" }),
    );
    app.signed(
        &first,
        "rename_agent",
        json!({ "agent_id": first.agent_id, "name": "History One B" }),
    );
    let history = app.signed(
        &first,
        "get_history",
        json!({ "agent_id": first.agent_id, "limit": 10 }),
    );
    let events = history["data"]["events"].as_array().unwrap();
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| event["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["agent.renamed", "agent.registered"]);
    assert!(
        events
            .iter()
            .all(|event| event["actor"] == first.agent_id.as_str())
    );
    let bad = app.signed(
        &first,
        "get_history",
        json!({ "agent_id": first.agent_id, "limit": 0 }),
    );
    assert_eq!(bad["error"]["field"], "limit");
}

/// verify_agent's typed answer prints what it printed as JSON values (issue 10): whole-number
/// limits without ".0", `actions_per_day` absent without an owner's grant, and the fields that
/// may be null present as null.
#[test]
fn verify_agent_prints_whole_number_limits_and_keeps_its_nulls() {
    let app = TestApp::start();
    let agent = app.register("Plain Limits");
    let verified = app.call("verify_agent", json!({ "agent_id": agent.agent_id }));
    let data = &verified["data"];
    let limits = &data["current"]["limits"];
    let printed = serde_json::to_string(limits).unwrap();
    assert!(!printed.contains('.'), "{printed}");
    assert_eq!(limits["spend_usd_per_day"], 0);
    assert_eq!(limits["spend_usd_per_action"], 0);
    assert!(
        limits["reads_per_minute"].as_u64().unwrap() > 0,
        "{printed}"
    );
    assert!(limits.get("actions_per_day").is_none(), "{printed}");
    assert!(data["signature_valid"].is_null());
    assert!(data.as_object().unwrap().contains_key("signature_valid"));
    assert_eq!(data["passport_signature_valid"], true);
    assert_eq!(data["current"]["key"]["custody"], "agent");
    assert!(data["standing_tier"].is_string(), "{verified}");
}

#[test]
fn scores_rating_card_and_receipt_read_without_a_signature() {
    let app = TestApp::start();
    let agent = app.register("Score Reader");
    let scores = app.call("read_scores", json!({ "subject_id": agent.handle }));
    assert_eq!(scores["data"]["trust_score"], 0, "{scores}");
    assert_eq!(scores["data"]["trust_scale"], "0-100");
    let card = app.call("get_rating_card", json!({ "agent_id": agent.agent_id }));
    assert_eq!(
        card["data"]["passport_id"],
        agent.registration["passport"]["credential_id"]
    );
    assert_eq!(card["data"]["overall_scale"], "0-99");
    let receipt = app.call(
        "get_receipt",
        json!({ "credential_id": agent.registration["passport"]["credential_id"] }),
    );
    assert_eq!(receipt["data"]["label"], "Listed");
    assert_eq!(receipt["data"]["signature_valid"], true);
    let missing = app.call("get_receipt", json!({ "receipt_id": "kdp_nothing" }));
    assert_eq!(
        (
            missing["error"]["code"].as_str(),
            missing["error"]["field"].as_str()
        ),
        (Some("not_found"), Some("receipt_id"))
    );
}

#[test]
fn release_of_an_independent_agent_changes_nothing() {
    let app = TestApp::start();
    let agent = app.register("Free Agent");
    let before = app.log_len();
    let reply = app.signed(
        &agent,
        "release_agent",
        json!({ "agent_id": agent.agent_id }),
    );
    assert_eq!(reply["data"]["released"], false, "{reply}");
    assert_eq!(app.log_len(), before);
}
