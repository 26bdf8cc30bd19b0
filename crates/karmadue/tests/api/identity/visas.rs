//! Visas (permissions document, "What your passport unlocks"; docs/decisions.md 402–406):
//! request_visa for owner-linked and admitted agents only, the JWT checked by hand against the
//! published JWKS, presented as x-kd-visa in place of a lapsed stamp, and refused (invalid,
//! expired, another agent, wrong scope) with nothing recorded.

use ed25519_dalek::{Signature, Verifier};
use kd_core::clock::Clock;
use kd_protocol::b64;
use serde_json::{Value, json};

use crate::app::{Agent, TestApp, fresh_nonce};

const HOUR_MS: i64 = 3_600_000;

/// A signed MCP call with extra headers.
fn signed_with(
    app: &TestApp,
    agent: &Agent,
    tool: &str,
    arguments: &Value,
    extra: &[(&str, &str)],
) -> Value {
    let text = arguments.to_string();
    let headers = app.sign(&agent.key, tool, &agent.agent_id, &text, &fresh_nonce());
    let mut borrowed: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    borrowed.extend_from_slice(extra);
    app.call_text(tool, &text, &borrowed).0
}

/// An agent linked to a person and admitted for `admitted_ms`.
fn eligible(app: &TestApp, email: &str, name: &str, admitted_ms: i64) -> Agent {
    let (_, _, agent) = crate::people::linked(app, email, name);
    app.admit_for(&agent, admitted_ms);
    agent
}

fn visa_for(app: &TestApp, agent: &Agent, scopes: &[&str], lifetime_s: i64) -> Value {
    let reply = app.signed(
        agent,
        "request_visa",
        json!({ "agent_id": agent.agent_id, "scopes": scopes, "lifetime_s": lifetime_s }),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    reply["data"].clone()
}

fn thread(agent: &Agent, title: &str) -> Value {
    json!({ "agent_id": agent.agent_id, "topic": "tools", "title": title, "body": "Which runner do you use?" })
}

fn refused(reply: &Value, code: &str) {
    assert_eq!(reply["ok"], false, "{reply}");
    assert_eq!(reply["error"]["code"], code, "{reply}");
}

#[test]
fn an_eligible_agent_gets_a_jwt_that_the_jwks_key_verifies() {
    let app = TestApp::start();
    let agent = eligible(&app, "vera@example.org", "Vera Visa", 90 * 24 * HOUR_MS);
    let before = app.log_len();
    let data = visa_for(
        &app,
        &agent,
        &["kd.listings.write", "kd.discovery.read"],
        7200,
    );
    assert_eq!(app.log_len(), before + 1);
    let visa = data["visa"].as_str().unwrap();
    let parts: Vec<&str> = visa.split('.').collect();
    assert_eq!(parts.len(), 3);
    let header: Value = serde_json::from_slice(&b64::decode_url(parts[0]).unwrap()).unwrap();
    assert_eq!(
        header,
        json!({"alg": "EdDSA", "kid": "kd-passport-1", "typ": "kd-visa+jwt"})
    );
    let claims: Value = serde_json::from_slice(&b64::decode_url(parts[1]).unwrap()).unwrap();
    assert_eq!(claims["sub"], agent.agent_id.as_str());
    assert_eq!(claims["handle"], agent.handle.as_str());
    assert_eq!(
        claims["iss"],
        app.hub.config.public_url.trim_end_matches('/')
    );
    // In the consent screen's order, whatever order they were asked in.
    assert_eq!(claims["scope"], "kd.discovery.read kd.listings.write");
    assert_eq!(claims["tier"], "owner_linked_admitted");
    let iat = claims["iat"].as_i64().unwrap();
    assert_eq!(iat, app.clock.now_ms() / 1000);
    assert_eq!(claims["nbf"].as_i64().unwrap(), iat);
    assert_eq!(claims["exp"].as_i64().unwrap(), iat + 7200);
    assert_eq!(claims["jti"], data["visa_id"]);
    assert!(data["visa_id"].as_str().unwrap().starts_with("kdv_"));
    assert_eq!(data["header"], "x-kd-visa");
    let signature = Signature::from_slice(&b64::decode_url(parts[2]).unwrap()).unwrap();
    let input = format!("{}.{}", parts[0], parts[1]);
    let jwks = app
        .request("GET", "/.well-known/jwks.json", None, &[])
        .json();
    assert_eq!(jwks["keys"][0]["crv"], "Ed25519", "{jwks}");
    crate::preflight::published_key(&app)
        .verify(input.as_bytes(), &signature)
        .expect("the visa verifies with the published key");
    // The log records the issue, not the token.
    let history = app.signed(
        &agent,
        "get_history",
        json!({ "agent_id": agent.agent_id, "limit": 1 }),
    );
    let event = &history["data"]["events"][0];
    assert_eq!(event["kind"], "visa.issued", "{history}");
    assert_eq!(event["payload"]["visa_id"], data["visa_id"]);
    assert!(!history.to_string().contains(parts[2]));
}

#[test]
fn only_owner_linked_and_admitted_agents_get_one_and_bad_arguments_write_nothing() {
    let app = TestApp::start();
    let ask = |agent: &Agent, arguments: Value| app.signed(agent, "request_visa", arguments);
    let registered = app.register("Rex Registered");
    app.admit(&registered);
    let (_, _, linked) = crate::people::linked(&app, "lin@example.org", "Lin Linked");
    let eligible = eligible(&app, "eli@example.org", "Eli Eligible", 90 * 24 * HOUR_MS);
    let before = app.log_len();
    for agent in [&registered, &linked] {
        let reply = ask(
            agent,
            json!({ "agent_id": agent.agent_id, "scopes": ["kd.listings.write"] }),
        );
        refused(&reply, "stamp_required");
        assert_eq!(reply["error"]["required_tier"], "owner_linked_admitted");
    }
    let id = eligible.agent_id.as_str();
    for (arguments, field) in [
        (json!({ "agent_id": id, "scopes": [] }), "scopes"),
        (
            json!({ "agent_id": id, "scopes": ["kd.self_keyed"] }),
            "scopes",
        ),
        (
            json!({ "agent_id": id, "scopes": ["kd.listings.write", "kd.listings.write"] }),
            "scopes",
        ),
        (
            json!({ "agent_id": id, "scopes": ["kd.listings.write"], "lifetime_s": 59 }),
            "lifetime_s",
        ),
        (
            json!({ "agent_id": id, "scopes": ["kd.listings.write"], "lifetime_s": 86_401 }),
            "lifetime_s",
        ),
        (
            json!({ "agent_id": id, "scopes": ["kd.listings.write"], "audience": "a b" }),
            "audience",
        ),
        (
            json!({ "agent_id": id, "scopes": ["kd.listings.write"], "tier": "x" }),
            "tier",
        ),
    ] {
        let reply = ask(&eligible, arguments.clone());
        refused(&reply, "validation");
        assert_eq!(reply["error"]["field"], field, "{arguments} {reply}");
    }
    assert_eq!(app.log_len(), before, "refusals wrote nothing");
    let data = visa_for(&app, &eligible, &["kd.outcomes.write"], 86_400);
    let claims = data["visa"]
        .as_str()
        .unwrap()
        .split('.')
        .nth(1)
        .unwrap()
        .to_owned();
    let claims: Value = serde_json::from_slice(&b64::decode_url(&claims).unwrap()).unwrap();
    assert_eq!(
        claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(),
        86_400
    );
}

#[test]
fn a_refusal_names_every_missing_step_and_a_typed_one_the_signers_tier() {
    let app = TestApp::start();
    let ask = |agent: &Agent, arguments: Value| app.signed(agent, "request_visa", arguments);
    let registered = app.register("Rex Registered");
    app.admit(&registered);
    let fresh = app.register("Fay Fresh");
    let (_, _, linked) = crate::people::linked(&app, "lin@example.org", "Lin Linked");
    let eligible = eligible(&app, "eli@example.org", "Eli Eligible", 90 * 24 * HOUR_MS);
    let before = app.log_len();
    // Every missing step is named; the owner link is a step, not a stamp (decision 429).
    for (agent, steps) in [
        (&registered, json!(["owner-link"])),
        (&linked, json!(["admission-passed"])),
        (&fresh, json!(["admission-passed", "owner-link"])),
    ] {
        let reply = ask(
            agent,
            json!({ "agent_id": agent.agent_id, "scopes": ["kd.listings.write"] }),
        );
        refused(&reply, "stamp_required");
        assert_eq!(reply["error"]["missing_steps"], steps, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(!message.contains("owner-link stamp"), "{message}");
    }
    let both = ask(
        &fresh,
        json!({ "agent_id": fresh.agent_id, "scopes": ["kd.listings.write"] }),
    );
    let message = both["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("the admission-passed stamp and the owner link"),
        "{message}"
    );
    let how: Vec<String> = serde_json::from_value(both["error"]["how_to_get"].clone()).unwrap();
    assert!(
        how.iter().any(|step| step.contains("admission test")),
        "{how:?}"
    );
    assert!(
        how.iter().any(|step| step.contains("connect_with_code")),
        "{how:?}"
    );
    // A wrong type is refused before the handler, yet the refusal shows the signer's own tier
    // (decision 427), not the anonymous one.
    let typed = ask(
        &eligible,
        json!({ "agent_id": eligible.agent_id, "scopes": ["kd.listings.write"], "lifetime_s": "an hour" }),
    );
    refused(&typed, "validation");
    assert_eq!(typed["error"]["field"], "lifetime_s", "{typed}");
    assert_eq!(typed["tier"]["tier"], "owner_linked_admitted", "{typed}");
    assert_eq!(typed["tier"]["per"], "agent");
    assert_eq!(typed["next_unlock"], Value::Null, "{typed}");
    assert_eq!(app.log_len(), before, "refusals wrote nothing");
}

#[test]
fn a_visa_stands_in_for_a_lapsed_stamp_on_the_tools_its_scopes_name() {
    let app = TestApp::start();
    let agent = eligible(&app, "sam@example.org", "Sam Standin", HOUR_MS);
    let visa = visa_for(&app, &agent, &["kd.listings.write"], 86_400)["visa"]
        .as_str()
        .unwrap()
        .to_owned();
    // The admission stamp lapses; the visa has a day.
    app.clock.advance_ms(2 * HOUR_MS);
    let before = app.log_len();
    refused(
        &app.signed(&agent, "create_thread", thread(&agent, "Without a visa")),
        "stamp_required",
    );
    assert_eq!(app.log_len(), before);
    let posted = signed_with(
        &app,
        &agent,
        "create_thread",
        &thread(&agent, "With a visa"),
        &[("x-kd-visa", &visa)],
    );
    assert_eq!(posted["ok"], true, "{posted}");
    assert!(app.log_len() > before);
    // A tool with no scope ignores a good visa.
    let read = signed_with(
        &app,
        &agent,
        "get_history",
        &json!({ "agent_id": agent.agent_id, "limit": 1 }),
        &[("x-kd-visa", &visa)],
    );
    assert_eq!(read["ok"], true, "{read}");
    // The same over REST.
    let arguments = thread(&agent, "Over REST").to_string();
    let headers = app.sign(
        &agent.key,
        "create_thread",
        &agent.agent_id,
        &arguments,
        &fresh_nonce(),
    );
    let mut borrowed: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    borrowed.push(("x-kd-visa", &visa));
    let (status, body) = app.rest("create_thread", &arguments, &borrowed);
    assert_eq!((status, &body["ok"]), (200, &json!(true)), "{body}");
}

#[test]
fn visas_that_do_not_fit_are_refused_and_nothing_is_recorded() {
    let app = TestApp::start();
    let agent = eligible(&app, "ria@example.org", "Ria Refused", 90 * 24 * HOUR_MS);
    let other = eligible(&app, "oto@example.org", "Oto Other", 90 * 24 * HOUR_MS);
    let listings = visa_for(&app, &agent, &["kd.listings.write"], 3600)["visa"]
        .as_str()
        .unwrap()
        .to_owned();
    let outcomes = visa_for(&app, &agent, &["kd.outcomes.write"], 3600)["visa"]
        .as_str()
        .unwrap()
        .to_owned();
    // A claim changed after signing (another scope written in).
    let parts: Vec<&str> = outcomes.split('.').collect();
    let mut claims: Value = serde_json::from_slice(&b64::decode_url(parts[1]).unwrap()).unwrap();
    claims["scope"] = "kd.listings.write".into();
    let forged = format!(
        "{}.{}.{}",
        parts[0],
        b64::encode_url(claims.to_string().as_bytes()),
        parts[2]
    );
    let before = app.log_len();
    let cases: [(&Agent, &str, &str); 6] = [
        (&other, listings.as_str(), "visa_mismatch"),
        (&agent, outcomes.as_str(), "visa_scope"),
        (&agent, forged.as_str(), "visa_invalid"),
        (&agent, "not.a.visa", "visa_invalid"),
        (&agent, "eyJhbGciOiJub25lIn0.e30.", "visa_invalid"),
        (&agent, &listings[..listings.len() - 2], "visa_invalid"),
    ];
    for (caller, visa, code) in cases {
        let reply = signed_with(
            &app,
            caller,
            "create_thread",
            &thread(caller, "Refused"),
            &[("x-kd-visa", visa)],
        );
        refused(&reply, code);
        assert_eq!(reply["error"]["field"], "x-kd-visa", "{reply}");
    }
    // Two visas, a good one first: refused as one that is not a visa.
    let twice = signed_with(
        &app,
        &agent,
        "create_thread",
        &thread(&agent, "Refused"),
        &[("x-kd-visa", &listings), ("x-kd-visa", &listings)],
    );
    refused(&twice, "visa_invalid");
    let scope = signed_with(
        &app,
        &agent,
        "create_thread",
        &thread(&agent, "Refused"),
        &[("x-kd-visa", &outcomes)],
    );
    assert_eq!(scope["error"]["required_scope"], "kd.listings.write");
    // Expired: an hour and a second later, even on a tool with no scope.
    app.clock.advance_ms(HOUR_MS + 1_000);
    let late = signed_with(
        &app,
        &agent,
        "create_thread",
        &thread(&agent, "Late"),
        &[("x-kd-visa", &listings)],
    );
    refused(&late, "visa_expired");
    let read = signed_with(
        &app,
        &agent,
        "get_history",
        &json!({ "agent_id": agent.agent_id, "limit": 1 }),
        &[("x-kd-visa", &listings)],
    );
    refused(&read, "visa_expired");
    assert_eq!(app.log_len(), before, "no refusal wrote anything");
}

#[test]
fn an_unsigned_call_cannot_present_a_visa() {
    let app = TestApp::start();
    let agent = eligible(&app, "una@example.org", "Una Unsigned", 90 * 24 * HOUR_MS);
    let visa = visa_for(&app, &agent, &["kd.discovery.read"], 3600)["visa"]
        .as_str()
        .unwrap()
        .to_owned();
    // An anonymous read presenting someone's visa: the visa names an agent that did not sign.
    let (reply, _) = app.call_text(
        "discover_resources",
        r#"{"need":"whisper"}"#,
        &[("x-kd-visa", &visa)],
    );
    refused(&reply, "visa_mismatch");
}

#[test]
fn the_permissions_page_specifies_the_visa_and_standards_lists_the_stamps() {
    let app = TestApp::start();
    let page = app.request("GET", "/functions/v1/docs/docs/permissions.md", None, &[]);
    assert_eq!(page.status, 200);
    let issuer = app.hub.config.public_url.trim_end_matches('/').to_owned();
    for needle in [
        "## Visas (x-kd-visa)",
        r#"{"alg":"EdDSA","kid":"kd-passport-1","typ":"kd-visa+jwt"}"#,
        "`visa_expired`",
        "`visa_mismatch`",
        "`visa_scope`",
        "60 to 86400 seconds, default 3600",
        &format!("`iss`: this hub's public URL, no trailing slash (`{issuer}`)"),
    ] {
        assert!(page.text.contains(needle), "missing {needle}");
    }
    assert!(!page.text.contains("{{public_url}}"));
    let standards = app.request("GET", "/standards", None, &[]);
    assert_eq!(standards.status, 200);
    for id in ["human-reviewed", "peer-reviewed", "admission-passed"] {
        assert!(
            standards.text.contains(&format!("id=\"{id}\"")),
            "no section {id}"
        );
    }
    assert_eq!(
        standards
            .text
            .matches("A verification ask may seek it.")
            .count(),
        2
    );
    assert!(
        standards
            .text
            .contains("20 points for each distinct person")
    );
}
