//! A newcomer's first hour (issue 16): the reply to a freshly registered agent shows its own
//! tier, an unsigned call that names a registered agent asks for the signature, an unowned
//! agent's reports count no owner, and the pages show times as people read them.

use ed25519_dalek::SigningKey;
use kd_core::tiers::AccessTiers;
use serde_json::json;

use crate::app::TestApp;

/// A hub with the permissions document's own limits.
fn strict() -> TestApp {
    TestApp::start_with(|config| config.access_tiers = AccessTiers::default())
}

#[test]
fn the_register_agent_reply_shows_the_new_agents_tier_and_next_unlock() {
    let app = strict();
    let key = SigningKey::from_bytes(&[7; 32]);
    let reply = app.try_register("Fresh Newcomer", &key, "test-suite");
    assert_eq!(reply["ok"], true, "{reply}");
    // The challenge signature proved the key: the reply is to the agent, not to an address.
    assert_eq!(reply["tier"]["tier"], "registered", "{reply}");
    assert_eq!(reply["tier"]["writes_per_minute"], 20);
    assert_eq!(reply["next_unlock"]["missing_stamp"], "admission-passed");
    let steps = reply["next_unlock"]["how_to_get"].to_string();
    assert!(!steps.contains("register_challenge"), "{steps}");
    assert!(steps.contains("start_admission_test"), "{steps}");

    // A refused registration proved nothing: the reply stays the address's.
    let (challenge_id, _) = app.challenge();
    let refused = app.call(
        "register_agent",
        json!({
            "name": "Unproven Newcomer",
            "platform": "test-suite",
            "public_key": kd_protocol::b64::encode_url(SigningKey::from_bytes(&[8; 32]).verifying_key().as_bytes()),
            "challenge_id": challenge_id,
            "signature": kd_protocol::b64::encode_url(&[0u8; 64]),
        }),
    );
    assert_eq!(refused["ok"], false, "{refused}");
    assert_eq!(refused["tier"]["tier"], "anonymous");
    assert_eq!(refused["next_unlock"]["missing_stamp"], "passport");
}

#[test]
fn an_unsigned_gated_call_naming_a_registered_agent_is_signature_required_and_records_nothing() {
    let app = strict();
    let agent = app.register("Forgetful Signer");
    let before = app.log_len();
    for (tool, arguments) in [
        (
            "set_watchlist",
            json!({ "agent_id": agent.agent_id, "tools": [] }),
        ),
        (
            "publish_ask",
            json!({ "agent_id": agent.agent_id, "title": "Forgot to sign" }),
        ),
    ] {
        let reply = app.call(tool, arguments.clone());
        assert_eq!(
            reply["error"]["code"], "signature_required",
            "{tool}: {reply}"
        );
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("x-kd-signature"),
            "{reply}"
        );
        let (status, body) = app.rest(tool, &arguments.to_string(), &[]);
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (401, Some("signature_required")),
            "{body}"
        );
    }
    // An agent_id that names no agent keeps asking for a passport.
    let nobody = app.call(
        "set_watchlist",
        json!({ "agent_id": "00000000-0000-4000-8000-000000000000", "tools": [] }),
    );
    assert_eq!(nobody["error"]["code"], "identity_required", "{nobody}");
    assert_eq!(nobody["error"]["missing_stamp"], "passport");
    assert_eq!(app.log_len(), before, "nothing was recorded");
}

#[test]
fn an_agent_without_an_owner_counts_no_owner_in_reliability_reports() {
    use crate::outcomes::{check_and_report, listed, reliability, set_owner};
    let app = TestApp::start();
    let publisher = app.register("Unowned Publisher");
    let resource = listed(&app, &publisher, "unowned-reports");
    let loner = app.register("Unowned Reporter");
    check_and_report(&app, &loner, &resource, "worked");
    let summary = reliability(&app, &resource);
    assert_eq!(
        (
            summary["reports"].as_i64(),
            summary["agents"].as_i64(),
            summary["owners"].as_i64()
        ),
        (Some(1), Some(1), Some(0)),
        "{summary}"
    );
    assert_eq!(
        summary["by_owner"],
        json!({ "worked": 0, "broke": 0, "partial": 0, "didnt_use": 0 })
    );
    assert_eq!(summary["weighted"]["worked"], 0.0);
    assert_eq!(
        summary["line"],
        "no owner counted; 1 agent with no owner reported"
    );
    assert_eq!(summary["established"], false);

    // An owned agent counts its owner; the unowned one still counts none.
    let owned = app.register("Owned Reporter");
    set_owner(&app, &owned, "owner-counted");
    check_and_report(&app, &owned, &resource, "broke");
    let summary = reliability(&app, &resource);
    assert_eq!(summary["owners"], 1, "{summary}");
    assert_eq!(
        summary["line"],
        "worked for 0 of 1 owner; broke for 1; 1 agent with no owner reported"
    );
}
