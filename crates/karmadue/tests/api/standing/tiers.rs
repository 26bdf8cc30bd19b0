//! Tiers: the served table, the caller's tier on every reply and on adapter refusals.

use super::*;

#[test]
fn the_tiers_table_is_served_as_configured() {
    let app = strict();
    let reply = app.request("GET", "/functions/v1/public-api/v1/tiers", None, &[]);
    assert_eq!(reply.status, 200);
    let body = reply.json();
    let tiers = body["data"]["tiers"].as_array().unwrap();
    let rows: Vec<(String, u64, u64, String)> = tiers
        .iter()
        .map(|tier| {
            (
                tier["tier"].as_str().unwrap().to_owned(),
                tier["reads_per_minute"].as_u64().unwrap(),
                tier["writes_per_minute"].as_u64().unwrap(),
                tier["per"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("anonymous".to_owned(), 30, 10, "ip".to_owned()),
            ("registered".to_owned(), 60, 20, "agent".to_owned()),
            ("admission_passed".to_owned(), 120, 30, "agent".to_owned()),
            (
                "owner_linked_admitted".to_owned(),
                240,
                60,
                "agent".to_owned()
            ),
        ]
    );
    assert!(
        tiers[0]["unlocks"]
            .as_array()
            .unwrap()
            .contains(&json!("discover_resources"))
    );
    assert!(
        tiers[2]["unlocks"]
            .as_array()
            .unwrap()
            .contains(&json!("publish_ask"))
    );
    assert_eq!(
        body["data"]["tool_reads_per_minute"]["discover_resources"],
        40
    );

    // The permissions page is generated from the same table.
    let page = app.request("GET", "/functions/v1/docs/docs/permissions.md", None, &[]);
    assert_eq!(page.status, 200);
    for line in [
        "| Anonymous | Nothing | 30 / 10 (per IP) |",
        "| Owner-linked and admitted |",
        "240 / 60 (per agent)",
        "`publish_ask`",
        "- `discover_resources`: 40",
        &format!(
            "{}/functions/v1/public-api/v1/tiers",
            app.hub.config.public_url
        ),
    ] {
        assert!(page.text.contains(line), "{line}\n{}", page.text);
    }
}

#[test]
fn every_reply_carries_the_callers_tier_and_next_unlock() {
    let app = strict();
    let anonymous = app.call(
        "get_resource",
        json!({ "resource_id": "kd:res:npm:nothing" }),
    );
    assert_eq!(anonymous["ok"], false, "refusals carry it too");
    assert_eq!(anonymous["tier"]["tier"], "anonymous");
    assert_eq!(anonymous["tier"]["reads_per_minute"], 30);
    assert_eq!(anonymous["tier"]["per"], "ip");
    assert_eq!(anonymous["next_unlock"]["tier"], "registered");
    assert_eq!(anonymous["next_unlock"]["missing_stamp"], "passport");
    assert!(anonymous["next_unlock"]["how_to_get"][0].is_string());
    assert!(anonymous.get("quota").is_none());

    let agent = app.register("Tier Reader");
    let read = signed_read(&app, &agent, "get_standing", &json!({}));
    assert_eq!(read["ok"], true, "{read}");
    assert_eq!(read["tier"]["tier"], "registered");
    assert_eq!(read["tier"]["writes_per_minute"], 20);
    assert_eq!(read["next_unlock"]["missing_stamp"], "admission-passed");
    assert!(
        read["next_unlock"]["unlocks"]
            .as_array()
            .unwrap()
            .contains(&json!("publish_ask"))
    );
    assert_eq!(read["data"]["subject_id"], json!(agent.agent_id));
    assert_eq!(read["data"]["tier"]["tier"], "registered");
    assert!(read["data"].get("quota").is_none(), "unlinked: no quota");
    assert_eq!(read["data"]["verifier_record"]["completed"], 0);
    assert_eq!(read["data"]["verifications"], json!([]));

    // REST answers carry the same fields.
    let (status, body) = app.rest(
        "verify_agent",
        &json!({ "agent_id": agent.agent_id }).to_string(),
        &[],
    );
    assert_eq!(status, 200);
    assert_eq!(body["tier"]["tier"], "anonymous");
    assert_eq!(body["data"]["standing_tier"], "registered");
    assert_eq!(body["data"]["current"]["limits"]["reads_per_minute"], 60);
    assert_eq!(
        body["data"]["verifier_record"]["reviewer"],
        json!(agent.agent_id)
    );
}

#[test]
fn an_unsigned_call_to_a_gated_tool_is_identity_required_with_the_way_to_a_passport() {
    let app = strict();
    let before = app.log_len();
    for (tool, required) in [
        ("publish_ask", "admission_passed"),
        ("set_watchlist", "registered"),
    ] {
        let reply = app.call(
            tool,
            json!({ "agent_id": "00000000-0000-4000-8000-000000000000", "title": "x", "tools": [] }),
        );
        assert_eq!(
            reply["error"]["code"], "identity_required",
            "{tool}: {reply}"
        );
        assert_eq!(reply["error"]["missing_stamp"], "passport");
        assert_eq!(reply["error"]["required_tier"], required);
        assert!(
            reply["error"]["how_to_get"][1]
                .as_str()
                .unwrap()
                .contains("register_challenge")
        );
    }
    let (status, _) = app.rest("publish_ask", r#"{"title":"x"}"#, &[]);
    assert_eq!(status, 401);
    // A tool no tier gates still asks for the signature.
    let rename = app.call(
        "rename_agent",
        json!({ "agent_id": "00000000-0000-4000-8000-000000000000", "name": "Someone" }),
    );
    assert_eq!(rename["error"]["code"], "signature_required");
    assert_eq!(app.log_len(), before);
}

#[test]
fn refusals_decided_by_the_rest_adapter_carry_the_tier_too() {
    let app = strict();
    let (status, unknown) = app.rest("no_such_tool", "{}", &[]);
    assert_eq!(status, 404);
    assert_eq!(unknown["tier"]["tier"], "anonymous", "{unknown}");
    assert_eq!(unknown["next_unlock"]["missing_stamp"], "passport");
    let reply = app.request(
        "POST",
        "/functions/v1/public-api/v1/tools/get_resource",
        Some(b"resource_id=x"),
        &[("content-type", "application/x-www-form-urlencoded")],
    );
    assert_eq!(reply.status, 415);
    assert_eq!(reply.json()["tier"]["tier"], "anonymous");
}

#[test]
fn a_stray_bearer_or_nonce_does_not_lift_an_anonymous_callers_limits() {
    let app = strict();
    for index in 0..30 {
        let (reply, _) = app.call_text(
            "get_resource",
            &json!({ "resource_id": format!("kd:res:npm:s{index}") }).to_string(),
            &[("authorization", "Bearer junk")],
        );
        assert_ne!(
            reply["error"]["code"], "rate_limited",
            "call {index}: {reply}"
        );
    }
    let (limited, _) = app.call_text(
        "get_resource",
        r#"{"resource_id":"kd:res:npm:x"}"#,
        &[("x-kd-nonce", "nonce-without-a-signature")],
    );
    assert_eq!(limited["error"]["code"], "rate_limited", "{limited}");
    assert_eq!(limited["tier"]["tier"], "anonymous");
}

/// Arguments of the wrong type are refused before the handler; the refusal shows the signer's
/// own tier when its signature holds over the arguments as sent, and the anonymous tier when
/// the proof proved nothing (decision 427). Nothing is written.
#[test]
fn a_typed_refusal_shows_the_proven_callers_tier() {
    let app = strict();
    let agent = app.register("Typed Tess");
    let other = app.register("Other Otto");
    let before = app.log_len();
    let arguments = json!({ "agent_id": agent.agent_id, "name": 5 });
    let typed = app.signed(&agent, "rename_agent", arguments.clone());
    assert_eq!(typed["error"]["code"], "validation", "{typed}");
    assert_eq!(typed["error"]["field"], "name", "{typed}");
    assert_eq!(typed["tier"]["tier"], "registered", "{typed}");
    assert_eq!(typed["tier"]["per"], "agent");
    assert_eq!(typed["next_unlock"]["missing_stamp"], "admission-passed");
    // Signed with another agent's key: nothing is proven, the address's tier stands.
    let text = arguments.to_string();
    let headers = app.sign(
        &other.key,
        "rename_agent",
        &agent.agent_id,
        &text,
        &fresh_nonce(),
    );
    let borrowed: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let forged = app.call_text("rename_agent", &text, &borrowed).0;
    assert_eq!(forged["error"]["code"], "validation", "{forged}");
    assert_eq!(forged["tier"]["tier"], "anonymous", "{forged}");
    assert_eq!(app.log_len(), before);
}
