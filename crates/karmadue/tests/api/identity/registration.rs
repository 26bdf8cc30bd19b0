//! Registration: own keys, refusals, expired challenges, reserved and revoked names.

use super::*;

#[test]
fn registering_with_your_own_key_returns_a_listed_passport_the_jwks_key_verifies() {
    let app = TestApp::start();
    let agent = app.register("Passport Holder");
    let data = &agent.registration;
    assert!(
        data["agent_id"]
            .as_str()
            .unwrap()
            .parse::<kd_protocol::ids::AgentId>()
            .is_ok()
    );
    assert!(agent.handle.starts_with("kd_") && agent.handle.len() == 15);
    assert_eq!(
        data["scopes"],
        json!(["kd.discovery.read", "kd.evidence.read"])
    );
    let passport = &data["passport"];
    assert_eq!(passport["label"], "Listed");
    assert_eq!(passport["verified"], false);
    assert_eq!(passport["public_key"], agent.public_key());
    let jwks = app
        .request("GET", "/.well-known/jwks.json", None, &[])
        .json();
    let key = &jwks["keys"][0];
    assert_eq!(
        (
            key["kty"].as_str(),
            key["crv"].as_str(),
            key["kid"].as_str(),
            key["alg"].as_str()
        ),
        (
            Some("OKP"),
            Some("Ed25519"),
            Some("kd-passport-1"),
            Some("EdDSA")
        )
    );
    let public: [u8; 32] = b64::decode_url(key["x"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    let signature = b64::decode_url(passport["signature"].as_str().unwrap()).unwrap();
    kd_protocol::keys::verify_strict_raw(
        &public,
        passport["signed_text"].as_str().unwrap().as_bytes(),
        &signature,
    )
    .unwrap();
    assert_eq!(
        app.request(
            "GET",
            "/functions/v1/public-api/.well-known/jwks.json",
            None,
            &[]
        )
        .json(),
        jwks
    );
    let event = app.signed(&agent, "get_history", json!({ "agent_id": agent.agent_id }));
    assert_eq!(event["data"]["events"][0]["kind"], "agent.registered");
}

#[test]
fn registration_refusals_write_nothing() {
    let app = TestApp::start();
    let key = SigningKey::from_bytes(&[3; 32]);
    let (challenge_id, payload) = app.challenge();
    let signature = b64::encode_url(&key.sign(payload.as_bytes()).to_bytes());
    let public_key = b64::encode_url(key.verifying_key().as_bytes());
    let before = app.log_len();
    let cases = [
        (
            json!({ "name": "No Key", "platform": "t", "challenge_id": challenge_id, "signature": signature }),
            "validation",
            "public_key",
        ),
        (
            json!({ "name": "Weak Key", "platform": "t", "public_key": b64::encode_url(&[0u8; 32]), "challenge_id": challenge_id, "signature": signature }),
            "validation",
            "public_key",
        ),
        (
            json!({ "name": "Short Key", "platform": "t", "public_key": "AAAA", "challenge_id": challenge_id, "signature": signature }),
            "validation",
            "public_key",
        ),
        (
            json!({ "name": "X", "platform": "t", "public_key": public_key, "challenge_id": challenge_id, "signature": signature }),
            "validation",
            "name",
        ),
        (
            json!({ "name": "Bad Sig", "platform": "t", "public_key": public_key, "challenge_id": challenge_id, "signature": b64::encode_url(&[1u8; 64]) }),
            "bad_signature",
            "signature",
        ),
        (
            json!({ "name": "No Challenge", "platform": "t", "public_key": public_key, "challenge_id": "kdc_000000000000000000000000", "signature": signature }),
            "validation",
            "challenge_id",
        ),
        (
            json!({ "name": "Extra Arg", "platform": "t", "public_key": public_key, "challenge_id": challenge_id, "signature": signature, "secret_key": "x" }),
            "validation",
            "secret_key",
        ),
        (
            json!({ "name": 42, "platform": "t", "public_key": public_key, "challenge_id": challenge_id, "signature": signature }),
            "validation",
            "name",
        ),
    ];
    for (arguments, code, field) in cases {
        let reply = app.call("register_agent", arguments.clone());
        assert_eq!(reply["ok"], false, "{arguments}");
        assert_eq!(reply["error"]["code"], code, "{arguments}: {reply}");
        assert_eq!(reply["error"]["field"], field, "{arguments}: {reply}");
    }
    assert_eq!(app.log_len(), before);
    // The challenge survived the refusals and still works once.
    let ok = app.call("register_agent", json!({ "label": "Alias Name", "client_name": "t", "public_key": public_key, "challenge_id": challenge_id, "signature": signature, "invite": "friend-1" }));
    assert_eq!(ok["ok"], true, "{ok}");
    assert_eq!(ok["data"]["name"], "Alias Name");
    let again = app.call("register_agent", json!({ "name": "Second Try", "platform": "t", "public_key": public_key, "challenge_id": challenge_id, "signature": signature }));
    assert_eq!(again["error"]["field"], "challenge_id", "{again}");
}

#[test]
fn an_expired_challenge_is_refused() {
    let app = TestApp::start();
    let key = SigningKey::from_bytes(&[4; 32]);
    let (challenge_id, payload) = app.challenge();
    app.clock.advance_ms(601_000);
    let reply = app.call(
        "register_agent",
        json!({ "name": "Too Late", "platform": "t", "public_key": b64::encode_url(key.verifying_key().as_bytes()),
                "challenge_id": challenge_id, "signature": b64::encode_url(&key.sign(payload.as_bytes()).to_bytes()) }),
    );
    assert_eq!(reply["error"]["field"], "challenge_id", "{reply}");
}

#[test]
fn names_are_reserved_case_insensitively_with_lookalikes_and_a_suggestion() {
    let app = TestApp::start();
    let holder = app.register("Scout");
    for taken in ["scout", "SCOUT", "Sc0ut", "Scouts", "Scot", "S-cout"] {
        let key = SigningKey::from_bytes(&[9; 32]);
        let reply = app.try_register(taken, &key, "claude");
        assert_eq!(reply["error"]["code"], "label_reserved", "{taken}: {reply}");
        assert_eq!(
            reply["error"]["message"],
            "label taken: exact or lookalike of an existing agent name"
        );
        let suggestion = reply["error"]["suggestion"].as_str().unwrap();
        assert!(suggestion.starts_with(taken), "{suggestion}");
        assert!(
            !reply.to_string().contains(&holder.agent_id),
            "the holder is named: {reply}"
        );
        let free = app.try_register(suggestion, &key, "claude");
        assert_eq!(
            free["ok"], true,
            "suggestion {suggestion} was not free: {free}"
        );
        let revoke = app.signed(
            &crate::app::Agent {
                agent_id: free["data"]["agent_id"].as_str().unwrap().into(),
                handle: String::new(),
                key: key.clone(),
                registration: free["data"].clone(),
            },
            "revoke_agent",
            json!({ "agent_id": free["data"]["agent_id"] }),
        );
        assert_eq!(revoke["ok"], true);
    }
    assert_eq!(
        app.try_register("Scoundrel", &SigningKey::from_bytes(&[10; 32]), "t")["ok"],
        true
    );
}

#[test]
fn your_own_name_answers_label_yours_and_a_refusal_spends_the_challenge() {
    let app = TestApp::start();
    let agent = app.register("Mine Already");
    let (challenge_id, payload) = app.challenge();
    let arguments = json!({ "name": "mine already", "platform": "t", "public_key": agent.public_key(),
        "challenge_id": challenge_id, "signature": b64::encode_url(&agent.key.sign(payload.as_bytes()).to_bytes()) });
    let reply = app.call("register_agent", arguments.clone());
    assert_eq!(reply["error"]["code"], "label_yours", "{reply}");
    assert_eq!(
        reply["error"]["message"],
        "You already have an agent with this name."
    );
    assert_eq!(reply["error"]["agent_id"], agent.agent_id.as_str());
    let mut retry = arguments;
    retry["name"] = json!("A Different Name");
    let reply = app.call("register_agent", retry);
    assert_eq!(
        reply["error"]["field"], "challenge_id",
        "a refused challenge still worked: {reply}"
    );
}

#[test]
fn a_revoked_agents_name_is_free_at_once_and_it_reads_no_permissions() {
    let app = TestApp::start();
    let agent = app.register("Short Lived");
    let reply = app.signed(
        &agent,
        "revoke_agent",
        json!({ "agent_id": agent.agent_id }),
    );
    assert_eq!(reply["data"]["status"], "revoked", "{reply}");
    let verified = app.call("verify_agent", json!({ "agent_id": agent.agent_id }));
    let current = &verified["data"]["current"];
    assert_eq!(current["permissions"], "none");
    assert_eq!(current["scopes"], json!([]));
    assert_eq!(current["limits"]["writes_per_minute"], 0);
    assert_eq!(current["limits"]["spend_usd_per_day"], 0);
    assert_eq!(verified["data"]["passport"]["label"], "Revoked");
    let after = app.signed(
        &agent,
        "rename_agent",
        json!({ "agent_id": agent.agent_id, "name": "Back Again" }),
    );
    assert_eq!(after["error"]["code"], "forbidden", "{after}");
    assert_eq!(
        app.try_register("Short Lived", &SigningKey::from_bytes(&[11; 32]), "t")["ok"],
        true
    );
}
