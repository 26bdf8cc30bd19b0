//! kd-mcp-v1 signed writes: every refusal is decided before anything is written.

use kd_core::clock::Clock;
use serde_json::json;

use crate::app::{TestApp, fresh_nonce, sign_at};

fn pairs(headers: &[(String, String)]) -> Vec<(&str, &str)> {
    headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

#[test]
fn a_signed_rename_is_accepted_and_logged() {
    let app = TestApp::start();
    let agent = app.register("Signer One");
    let before = app.log_len();
    let reply = app.signed(
        &agent,
        "rename_agent",
        json!({ "agent_id": agent.agent_id, "name": "Signer Renamed" }),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    assert_eq!(app.log_len(), before + 1);
    app.assert_chain_ok();
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "a table of refusals against one prepared state, each checked to change nothing"
)]
fn each_signature_refusal_leaves_the_log_unchanged() {
    let app = TestApp::start();
    let agent = app.register("Refusal Tester");
    let other = app.register("Someone Else Entirely");
    let arguments = json!({ "agent_id": agent.agent_id, "name": "New Label Here" }).to_string();
    let before = app.log_len();
    let now = app.clock.now_ms() / 1000;
    let good = sign_at(
        &agent.key,
        "rename_agent",
        &agent.agent_id,
        &arguments,
        "nonce-0000000000000001",
        now,
    );

    let expect = |headers: Vec<(String, String)>, code: &str| {
        let (reply, is_error) = app.call_text("rename_agent", &arguments, &pairs(&headers));
        assert!(is_error, "{reply}");
        assert_eq!(reply["error"]["code"], code, "{reply}");
        assert_eq!(app.log_len(), before, "{code} grew the log");
    };
    expect(vec![], "signature_required");
    expect(
        sign_at(
            &agent.key,
            "rename_agent",
            &agent.agent_id,
            &arguments,
            "nonce-0000000000000002",
            now - 301,
        ),
        "stale_signature",
    );
    expect(
        sign_at(
            &agent.key,
            "rename_agent",
            &agent.agent_id,
            &arguments,
            "nonce-0000000000000003",
            now + 301,
        ),
        "stale_signature",
    );
    expect(
        sign_at(
            &agent.key,
            "rename_agent",
            &agent.agent_id,
            &arguments,
            "short",
            now,
        ),
        "bad_nonce",
    );
    expect(
        sign_at(
            &agent.key,
            "rename_agent",
            &agent.agent_id,
            &arguments,
            "has space in it 12345",
            now,
        ),
        "bad_nonce",
    );
    expect(
        sign_at(
            &other.key,
            "rename_agent",
            &agent.agent_id,
            &arguments,
            "nonce-0000000000000004",
            now,
        ),
        "bad_signature",
    );
    let mut wrong_tool = sign_at(
        &agent.key,
        "revoke_agent",
        &agent.agent_id,
        &arguments,
        "nonce-0000000000000005",
        now,
    );
    expect(std::mem::take(&mut wrong_tool), "bad_signature");
    let mut mismatch = good.clone();
    mismatch.push(("x-karmadue-agent".into(), other.agent_id.clone()));
    expect(mismatch, "agent_mismatch");

    let (reply, is_error) = app.call_text("rename_agent", &arguments, &pairs(&good));
    assert!(!is_error, "{reply}");
    assert_eq!(app.log_len(), before + 1);
    let replay = sign_at(
        &agent.key,
        "rename_agent",
        &agent.agent_id,
        &arguments,
        "nonce-0000000000000001",
        now,
    );
    expect_after(&app, &arguments, &replay, "replay", before + 1);
}

fn expect_after(
    app: &TestApp,
    arguments: &str,
    headers: &[(String, String)],
    code: &str,
    log: i64,
) {
    let (reply, is_error) = app.call_text("rename_agent", arguments, &pairs(headers));
    assert!(is_error);
    assert_eq!(reply["error"]["code"], code, "{reply}");
    assert_eq!(app.log_len(), log);
}

#[test]
fn rest_refusals_use_the_spec_status_table() {
    let app = TestApp::start();
    let agent = app.register("Rest Status");
    let other = app.register("Another Rest Agent");
    let arguments = json!({ "agent_id": agent.agent_id, "name": "Rest Renamed" }).to_string();
    let now = app.clock.now_ms() / 1000;
    let (status, body) = app.rest("rename_agent", &arguments, &[]);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("signature_required"))
    );
    let bad = sign_at(
        &other.key,
        "rename_agent",
        &agent.agent_id,
        &arguments,
        "nonce-rest-00000001",
        now,
    );
    let (status, body) = app.rest("rename_agent", &arguments, &pairs(&bad));
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("bad_signature"))
    );
    let mut mismatch = sign_at(
        &agent.key,
        "rename_agent",
        &agent.agent_id,
        &arguments,
        "nonce-rest-00000002",
        now,
    );
    mismatch.push(("x-karmadue-agent".into(), other.agent_id.clone()));
    let (status, body) = app.rest("rename_agent", &arguments, &pairs(&mismatch));
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("agent_mismatch"))
    );
    let good = sign_at(
        &agent.key,
        "rename_agent",
        &agent.agent_id,
        &arguments,
        "nonce-rest-00000003",
        now,
    );
    let (status, body) = app.rest("rename_agent", &arguments, &pairs(&good));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["ok"], true);
    assert!(body["request_id"].as_str().unwrap().starts_with("req_"));
    let (status, body) = app.rest("rename_agent", &arguments, &pairs(&good));
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("replay"))
    );
}

#[test]
fn the_signature_covers_the_canonical_text_not_the_key_order_sent() {
    let app = TestApp::start();
    let agent = app.register("Order Agnostic");
    let now = app.clock.now_ms() / 1000;
    let signed_as = format!(
        "{{\"agent_id\":\"{}\",\"name\":\"Renamed Twice\"}}",
        agent.agent_id
    );
    let sent_as = format!(
        "{{ \"name\" : \"Renamed Twice\",  \"agent_id\":\"{}\" }}",
        agent.agent_id
    );
    let headers = sign_at(
        &agent.key,
        "rename_agent",
        &agent.agent_id,
        &signed_as,
        &fresh_nonce(),
        now,
    );
    let (reply, is_error) = app.call_text("rename_agent", &sent_as, &pairs(&headers));
    assert!(!is_error, "{reply}");
    let tampered = format!(
        "{{\"agent_id\":\"{}\",\"name\":\"Renamed Thrice\"}}",
        agent.agent_id
    );
    let headers = sign_at(
        &agent.key,
        "rename_agent",
        &agent.agent_id,
        &signed_as,
        &fresh_nonce(),
        now,
    );
    let (reply, _) = app.call_text("rename_agent", &tampered, &pairs(&headers));
    assert_eq!(reply["error"]["code"], "bad_signature");
}

#[test]
fn repeated_keys_and_unprintable_arguments_are_refused_naming_the_field() {
    let app = TestApp::start();
    let agent = app.register("Duplicate Keys");
    let before = app.log_len();
    let cases = [
        (
            format!(
                "{{\"agent_id\":\"{}\",\"name\":\"One\",\"name\":\"Two\"}}",
                agent.agent_id
            ),
            "name",
        ),
        (
            format!(
                "{{\"agent_id\":\"{}\",\"name\":\"x\\u0000y\"}}",
                agent.agent_id
            ),
            "name",
        ),
        (
            format!(
                "{{\"agent_id\":\"{}\",\"name\":\"\\ud800\"}}",
                agent.agent_id
            ),
            "name",
        ),
        (
            format!("{{\"agent_id\":\"{}\",\"name\":1e200}}", agent.agent_id),
            "name",
        ),
    ];
    for (arguments, field) in cases {
        let (reply, is_error) = app.call_text("rename_agent", &arguments, &[]);
        assert!(is_error);
        assert_eq!(reply["error"]["code"], "validation", "{arguments}: {reply}");
        assert_eq!(reply["error"]["field"], field, "{arguments}: {reply}");
    }
    assert_eq!(app.log_len(), before);
}

#[test]
fn get_signing_payload_reproduces_the_worked_example_and_spends_no_nonce() {
    let app = TestApp::start();
    let reply = app.call(
        "get_signing_payload",
        json!({
            "tool": "withdraw_finding",
            "agent_id": "00000000-0000-4000-8000-000000000001",
            "arguments": {"agent_id": "00000000-0000-4000-8000-000000000001", "finding_id": "11111111-2222-4333-8444-555555555555", "reason": "test, café"},
            "timestamp": 1_791_700_000,
            "nonce": "n-3f9a1c2e7b5d4f60",
        }),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    assert_eq!(
        reply["data"]["canonical_arguments"],
        "{\"reason\": \"test, café\", \"agent_id\": \"00000000-0000-4000-8000-000000000001\", \"finding_id\": \"11111111-2222-4333-8444-555555555555\"}"
    );
    assert_eq!(
        reply["data"]["arguments_hash"],
        "d4c5d794a6ebcfd92cbc37b0ac8119475e5ab7ed85bbe522d9aebf730eb96498"
    );
    assert_eq!(
        reply["data"]["text"],
        "kd-mcp-v1\nwithdraw_finding\n00000000-0000-4000-8000-000000000001\n1791700000\nn-3f9a1c2e7b5d4f60\nd4c5d794a6ebcfd92cbc37b0ac8119475e5ab7ed85bbe522d9aebf730eb96498"
    );

    // The payload text it returns is what a signed write verifies, and asking spends nothing.
    let agent = app.register("Payload Checker");
    let arguments = json!({ "agent_id": agent.agent_id, "name": "Payload Renamed" });
    let now = app.clock.now_ms() / 1000;
    let shown = app.call(
        "get_signing_payload",
        json!({ "tool": "rename_agent", "agent_id": agent.agent_id, "arguments": arguments, "timestamp": now, "nonce": "nonce-payload-000001" }),
    );
    let text = shown["data"]["text"].as_str().unwrap();
    use ed25519_dalek::Signer;
    let signature = kd_protocol::b64::encode_url(&agent.key.sign(text.as_bytes()).to_bytes());
    let now_text = now.to_string();
    let headers = [
        ("x-kd-signature", signature.as_str()),
        ("x-kd-timestamp", now_text.as_str()),
        ("x-kd-nonce", "nonce-payload-000001"),
    ];
    let (reply, is_error) = app.call_text("rename_agent", &arguments.to_string(), &headers);
    assert!(!is_error, "{reply}");
}

#[test]
fn standard_base64_and_padded_signatures_are_accepted() {
    use base64::Engine;
    let app = TestApp::start();
    let agent = app.register("Base64 Flavours");
    for (index, engine) in [
        base64::engine::general_purpose::STANDARD,
        base64::engine::general_purpose::URL_SAFE,
    ]
    .iter()
    .enumerate()
    {
        let arguments =
            json!({ "agent_id": agent.agent_id, "name": format!("Flavour {index}") }).to_string();
        let mut headers = app.sign(
            &agent.key,
            "rename_agent",
            &agent.agent_id,
            &arguments,
            &fresh_nonce(),
        );
        let raw = kd_protocol::b64::decode_signature(&headers[0].1).unwrap();
        headers[0].1 = engine.encode(raw);
        let (reply, is_error) = app.call_text("rename_agent", &arguments, &pairs(&headers));
        assert!(!is_error, "{reply}");
    }
}

#[test]
fn nonces_are_remembered_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let data = data_dir.clone();
    let app = TestApp::start_with(move |config| config.data_dir = data);
    let agent = app.register("Restart Survivor");
    let arguments = json!({ "agent_id": agent.agent_id, "name": "Survivor Renamed" }).to_string();
    let headers = app.sign(
        &agent.key,
        "rename_agent",
        &agent.agent_id,
        &arguments,
        "nonce-restart-000001",
    );
    let (reply, is_error) = app.call_text("rename_agent", &arguments, &pairs(&headers));
    assert!(!is_error, "{reply}");
    drop(app);
    let data = data_dir.clone();
    let app = TestApp::start_with(move |config| config.data_dir = data);
    let (reply, _) = app.call_text("rename_agent", &arguments, &pairs(&headers));
    assert_eq!(reply["error"]["code"], "replay", "{reply}");
}

#[test]
fn a_read_that_names_its_agent_must_carry_a_good_signature() {
    let app = TestApp::start();
    let agent = app.register("Signed Reader");
    let other = app.register("Other Reader Key");
    let arguments = json!({ "agent_id": other.agent_id }).to_string();
    let (reply, is_error) = app.call_text("verify_agent", &arguments, &[]);
    assert!(!is_error, "an anonymous read works: {reply}");
    let mut good = app.sign(
        &agent.key,
        "verify_agent",
        &agent.agent_id,
        &arguments,
        &fresh_nonce(),
    );
    good.push(("x-karmadue-agent".into(), agent.agent_id.clone()));
    let (reply, is_error) = app.call_text("verify_agent", &arguments, &pairs(&good));
    assert!(!is_error, "{reply}");
    let mut bad = app.sign(
        &other.key,
        "verify_agent",
        &agent.agent_id,
        &arguments,
        &fresh_nonce(),
    );
    bad.push(("x-karmadue-agent".into(), agent.agent_id.clone()));
    let (reply, _) = app.call_text("verify_agent", &arguments, &pairs(&bad));
    assert_eq!(
        reply["error"]["code"], "bad_signature",
        "a bad signature on a read is refused, not downgraded"
    );
    let named_only = [("x-karmadue-agent", agent.agent_id.as_str())];
    let (reply, _) = app.call_text("verify_agent", &arguments, &named_only);
    assert_eq!(reply["error"]["code"], "signature_required", "{reply}");
}

#[test]
fn garbage_in_the_signature_header_is_bad_signature_and_writes_nothing() {
    let app = TestApp::start();
    let agent = app.register("Garbage Header");
    let arguments = json!({ "agent_id": agent.agent_id, "name": "Garbage Renamed" }).to_string();
    let before = app.log_len();
    for garbage in ["***", "", "AAAA", "-_-_+/+/"] {
        let mut headers = app.sign(
            &agent.key,
            "rename_agent",
            &agent.agent_id,
            &arguments,
            &fresh_nonce(),
        );
        headers[0].1 = garbage.to_owned();
        let (reply, _) = app.call_text("rename_agent", &arguments, &pairs(&headers));
        assert_eq!(
            reply["error"]["code"], "bad_signature",
            "{garbage:?}: {reply}"
        );
    }
    assert_eq!(app.log_len(), before);
}

#[test]
fn a_non_ascii_nonce_is_bad_nonce_not_a_missing_signature() {
    let app = TestApp::start();
    let agent = app.register("Nonce Bytes");
    let arguments = json!({ "agent_id": agent.agent_id, "name": "Nonce Bytes Two" }).to_string();
    let mut headers = app.sign(
        &agent.key,
        "rename_agent",
        &agent.agent_id,
        &arguments,
        &fresh_nonce(),
    );
    headers[2].1 = "nonce-ünïcödé-0000000".to_owned();
    let (reply, _) = app.call_text("rename_agent", &arguments, &pairs(&headers));
    assert_eq!(reply["error"]["code"], "bad_nonce", "{reply}");
}
