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
