//! Receipts: signed checks, the REST route, lookup_findings and get_receipt.

use super::*;

#[test]
fn a_signed_check_names_the_agent_in_its_receipt_and_spends_the_nonce() {
    let app = TestApp::with_catalog();
    let agent = app.register("Preflight Signer");
    let before = app.log_len();
    let arguments = json!({ "target": SERVERS, "intended_action": "call" }).to_string();
    let mut headers = app.sign(
        &agent.key,
        "check_before_acting",
        &agent.agent_id,
        &arguments,
        &fresh_nonce(),
    );
    headers.push(("x-karmadue-agent".into(), agent.agent_id.clone()));
    let borrowed: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let (reply, _) = app.call_text("check_before_acting", &arguments, &borrowed);
    let receipt = &reply["data"]["receipt"];
    assert_eq!(receipt["agent_id"], agent.agent_id.as_str(), "{reply}");
    assert_eq!(receipt["reportable"], true);
    assert!(
        receipt["signed_text"]
            .as_str()
            .unwrap()
            .ends_with(&format!("\n{}", agent.agent_id))
    );
    assert!(verifies(
        &published_key(&app),
        receipt["signed_text"].as_str().unwrap(),
        receipt["signature"].as_str().unwrap()
    ));
    let (replayed, is_error) = app.call_text("check_before_acting", &arguments, &borrowed);
    assert!(is_error);
    assert_eq!(replayed["error"]["code"], "replay");
    // A named read with a bad signature is refused, never downgraded to anonymous.
    let mut forged = app.sign(
        &agent.key,
        "check_before_acting",
        &agent.agent_id,
        "{}",
        &fresh_nonce(),
    );
    forged.push(("x-karmadue-agent".into(), agent.agent_id.clone()));
    let borrowed: Vec<(&str, &str)> = forged
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let (refused, _) = app.call_text("check_before_acting", &arguments, &borrowed);
    assert_eq!(refused["error"]["code"], "bad_signature");
    assert_eq!(app.log_len(), before);
}

#[test]
fn the_rest_preflight_route_takes_action_and_answers_like_the_tool() {
    let app = TestApp::with_catalog();
    let post = |body: &str, headers: &[(&str, &str)]| {
        let mut all = vec![("content-type", "application/json")];
        all.extend_from_slice(headers);
        let reply = app.request(
            "POST",
            "/functions/v1/public-api/v1/preflight",
            Some(body.as_bytes()),
            &all,
        );
        (reply.status, reply.json())
    };
    let (status, body) = post(
        &json!({ "target": SERVERS, "action": "clone" }).to_string(),
        &[],
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["intended_action"], "clone");
    assert_eq!(body["data"]["receipt"]["target"]["kd_resource_id"], SERVERS);
    assert_eq!(
        post(
            &json!({ "target": "npm:no-such-package-here-at-all" }).to_string(),
            &[]
        )
        .0,
        404
    );
    assert_eq!(
        post(&json!({ "resource_id": SERVERS }).to_string(), &[]).0,
        400
    );
    assert_eq!(post("", &[]).0, 400);
    // Signed like the tool: the kd-mcp-v1 text names check_before_acting.
    let agent = app.register("Rest Preflight");
    let text = json!({ "target": SERVERS, "action": "read" }).to_string();
    let mut headers = app.sign(
        &agent.key,
        "check_before_acting",
        &agent.agent_id,
        &text,
        &fresh_nonce(),
    );
    headers.push(("x-karmadue-agent".into(), agent.agent_id.clone()));
    let borrowed: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let (status, signed) = post(&text, &borrowed);
    assert_eq!(status, 200, "{signed}");
    assert_eq!(
        signed["data"]["receipt"]["agent_id"],
        agent.agent_id.as_str()
    );
}

#[test]
fn lookup_findings_answers_an_empty_cache_in_plain_words_and_validates_min_evidence() {
    let app = TestApp::start();
    let reply = app.call(
        "lookup_findings",
        json!({ "question": "calendar connector", "min_evidence": "kd_check" }),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    assert_eq!(reply["data"]["findings"], json!([]));
    assert_eq!(reply["data"]["count"], 0);
    assert!(
        reply["data"]["note"]
            .as_str()
            .unwrap()
            .contains("No published finding matched")
    );
    assert_eq!(app.call("lookup_findings", json!({}))["ok"], true);
    let bad = app.call("lookup_findings", json!({ "min_evidence": "rumour" }));
    assert_eq!(error_of(&bad), ("validation".into(), "min_evidence".into()));
    let long = app.call("lookup_findings", json!({ "question": "x".repeat(501) }));
    assert_eq!(error_of(&long), ("validation".into(), "question".into()));
}

#[test]
fn get_receipt_reads_a_preflight_receipt_by_its_id() {
    let app = TestApp::with_catalog();
    let agent = app.register("Receipt Reader");
    let receipt_id = receipt_for(&app, &agent, SERVERS);
    let reply = app.call("get_receipt", json!({ "receipt_id": receipt_id }));
    assert_eq!(reply["data"]["kind"], "receipt", "{reply}");
    assert_eq!(reply["data"]["target"]["kd_resource_id"], SERVERS);
    assert_eq!(reply["data"]["agent_id"], agent.agent_id.as_str());
    assert_eq!(reply["data"]["signature_valid"], true);
    let missing = app.call(
        "get_receipt",
        json!({ "receipt_id": "kdr_000000000000000000000000" }),
    );
    assert_eq!(missing["error"]["code"], "not_found");
}
