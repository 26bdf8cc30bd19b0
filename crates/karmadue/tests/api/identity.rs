//! Identity tools: registration with the agent's own key, names, passports, rotation,
//! revocation, history and reads.

use ed25519_dalek::{Signer, SigningKey};
use kd_protocol::b64;
use serde_json::json;

use crate::app::TestApp;

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
fn rotating_the_key_needs_both_keys_and_retires_the_old_one() {
    let app = TestApp::start();
    let mut agent = app.register("Rotator");
    let old_passport = agent.registration["passport"]["credential_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let new_key = SigningKey::from_bytes(&[21; 32]);
    let (challenge_id, payload) = app.challenge();
    let wrong = app.signed(&agent, "rotate_agent_key", json!({ "agent_id": agent.agent_id,
        "public_key": b64::encode_url(new_key.verifying_key().as_bytes()), "challenge_id": challenge_id,
        "signature": b64::encode_url(&agent.key.sign(payload.as_bytes()).to_bytes()) }));
    assert_eq!(wrong["error"]["code"], "bad_signature", "{wrong}");
    let reply = app.signed(&agent, "rotate_agent_key", json!({ "agent_id": agent.agent_id,
        "public_key": b64::encode_url(new_key.verifying_key().as_bytes()), "challenge_id": challenge_id,
        "signature": b64::encode_url(&new_key.sign(payload.as_bytes()).to_bytes()) }));
    assert_eq!(reply["ok"], true, "{reply}");
    let old_key = std::mem::replace(&mut agent.key, new_key);
    let old = crate::app::Agent {
        agent_id: agent.agent_id.clone(),
        handle: agent.handle.clone(),
        key: old_key,
        registration: serde_json::Value::Null,
    };
    assert_eq!(
        app.signed(
            &old,
            "rename_agent",
            json!({ "agent_id": agent.agent_id, "name": "Old Key Try" })
        )["error"]["code"],
        "bad_signature"
    );
    assert_eq!(
        app.signed(
            &agent,
            "rename_agent",
            json!({ "agent_id": agent.agent_id, "name": "New Key Works" })
        )["ok"],
        true
    );
    let receipt = app.call("get_receipt", json!({ "receipt_id": old_passport }));
    assert_eq!(receipt["data"]["state"], "superseded", "{receipt}");
    let verified = app.call("verify_agent", json!({ "agent_id": agent.agent_id }));
    assert_eq!(
        verified["data"]["current"]["key"]["public_key"],
        agent.public_key()
    );
    assert_eq!(verified["data"]["passport_signature_valid"], true);
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

#[test]
fn compatibility_lookalikes_invisible_characters_and_the_hubs_own_names_are_refused() {
    let app = TestApp::start();
    app.register("Quickstart Scout II");
    let before = app.log_len();
    for (name, code) in [
        ("Ｑｕｉｃｋｓｔａｒｔ Ｓｃｏｕｔ ＩＩ", "label_reserved"),
        ("Quickstart Scout \u{2161}", "label_reserved"),
        ("\u{2066}Quickstart Scout II\u{2069}", "validation"),
        ("\u{202e}II tuocS tratskciuQ", "validation"),
        ("\u{200b}\u{200b}\u{200b}", "validation"),
        ("KarmaDue", "label_reserved"),
        ("admin", "label_reserved"),
    ] {
        let reply = app.try_register(name, &SigningKey::from_bytes(&[31; 32]), "t");
        assert_eq!(reply["error"]["code"], code, "{name:?}: {reply}");
    }
    assert_eq!(app.log_len(), before);
}

#[test]
fn a_rename_frees_the_old_name_and_reserves_the_new_one_with_its_lookalikes() {
    let app = TestApp::start();
    let mover = app.register("Scout Prime");
    let renamed = app.signed(
        &mover,
        "rename_agent",
        json!({ "agent_id": mover.agent_id, "name": "Field Ranger" }),
    );
    assert_eq!(renamed["ok"], true, "{renamed}");
    // The new name and its lookalikes are taken, by anyone else.
    let key = SigningKey::from_bytes(&[21; 32]);
    for taken in ["Field Ranger", "field-rangers", "Fie1d Ranger"] {
        let reply = app.try_register(taken, &key, "t");
        assert_eq!(reply["error"]["code"], "label_reserved", "{taken}: {reply}");
    }
    // The old one is free at once, and then its holder cannot take it back.
    let taker = app.try_register("Scout Prime", &key, "t");
    assert_eq!(taker["ok"], true, "{taker}");
    let back = app.signed(
        &mover,
        "rename_agent",
        json!({ "agent_id": mover.agent_id, "name": "Sc0ut Prime" }),
    );
    assert_eq!(back["error"]["code"], "label_reserved", "{back}");
    // Forty renames later (each leaves its old variants in the index as stale candidates),
    // the last name is the one held and the earlier ones are free.
    for round in 0..40 {
        let name = format!("Wanderer {round:02} x{round:02}");
        let reply = app.signed(
            &mover,
            "rename_agent",
            json!({ "agent_id": mover.agent_id, "name": name }),
        );
        assert_eq!(reply["ok"], true, "{reply}");
    }
    assert_eq!(
        app.try_register("Wanderer 39 x39", &SigningKey::from_bytes(&[22; 32]), "t")["error"]["code"],
        "label_reserved"
    );
    assert_eq!(
        app.try_register("Field Ranger", &SigningKey::from_bytes(&[22; 32]), "t")["ok"],
        true
    );
}

/// The writer keeps the names in memory; a name another process wrote to the same database
/// (a second hub on the file) must still be reserved here.
#[test]
fn a_name_another_process_registered_is_reserved_here_too() {
    let app = TestApp::start();
    // Builds this hub's name index.
    app.register("First Comer");
    let other = kd_core::store::Store::open_at(
        &app.hub.config.database(),
        std::sync::Arc::new(kd_core::clock::ManualClock::new(1_700_000_000_000)),
        kd_core::store::StoreMetrics::default(),
    )
    .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime
        .block_on(
            other.write(|txn| -> Result<(), kd_core::store::StoreError> {
                txn.conn().execute(
                "INSERT INTO agents (agent_id, handle, name, name_key, platform, public_key, status,
                   credential_id, created_ms, updated_ms)
                 VALUES ('00000000-0000-4000-8000-00000000beef', 'kd_elsewhere', 'Ranger One', ?1,
                   't', 'key-elsewhere', 'active', 'kdp_elsewhere', 1700000000000, 1700000000000)",
                [kd_karmadue::identity::names::fold("Ranger One")],
            )?;
                let id = "00000000-0000-4000-8000-00000000beef";
                txn.record(
                    id,
                    id,
                    &kd_karmadue::events::identity::AgentRegistered {
                        agent_id: id.into(),
                        handle: "kd_elsewhere".into(),
                        name: "Ranger One".into(),
                        platform: "t".into(),
                        public_key: "key-elsewhere".into(),
                        credential_id: "kdp_elsewhere".into(),
                        referral: None,
                    },
                )?;
                Ok(())
            }),
        )
        .unwrap()
        .unwrap();
    other.close();
    let reply = app.try_register("Ranger 0ne", &SigningKey::from_bytes(&[23; 32]), "t");
    assert_eq!(reply["error"]["code"], "label_reserved", "{reply}");
    app.assert_chain_ok();
}

/// Typed inputs (issue 10): where a refusal names the argument, it names the name that was
/// sent (an other name is a field of its own, not an alias row), and a required group of
/// names is still refused first, before the caller's proof is looked at.
#[test]
fn a_refusal_names_the_other_name_when_that_was_sent() {
    let app = TestApp::start();
    let agent = app.register("Other Names");
    let nobody = "00000000-0000-4000-8000-000000000000";
    for (tool, name) in [
        ("read_scores", "subject_id"),
        ("read_scores", "agent_id"),
        ("get_rating_card", "subject_id"),
    ] {
        let reply = app.call(tool, json!({ name: nobody }));
        assert_eq!(reply["error"]["field"], name, "{tool}: {reply}");
        assert_eq!(
            reply["error"]["message"],
            format!("No agent has this {name}."),
            "{tool}: {reply}"
        );
    }
    let receipt = app.call("get_receipt", json!({ "credential_id": "kdp_nope" }));
    assert_eq!(
        receipt["error"]["message"], "No passport or receipt has this credential_id.",
        "{receipt}"
    );
    // Blank under both names: the refusal names both, as when neither is sent.
    let blank = app.call("get_receipt", json!({ "receipt_id": "   " }));
    assert_eq!(
        (&blank["error"]["field"], &blank["error"]["message"]),
        (
            &json!("receipt_id"),
            &json!("receipt_id or credential_id is required")
        ),
        "{blank}"
    );
    let neither = app.call("read_scores", json!({}));
    assert_eq!(
        neither["error"]["message"], "agent_id or subject_id is required",
        "{neither}"
    );
    // Unsigned and without an address: the missing group is the refusal, not the proof.
    let unsigned = app.call("request_claim", json!({ "agent_id": agent.agent_id }));
    assert_eq!(unsigned["error"]["code"], "validation", "{unsigned}");
    assert_eq!(
        unsigned["error"]["message"], "email or human_email is required",
        "{unsigned}"
    );
    let bad = app.signed(
        &agent,
        "request_claim",
        json!({ "agent_id": agent.agent_id, "human_email": "not an address" }),
    );
    assert_eq!(bad["error"]["field"], "human_email", "{bad}");
    let long_why = app.signed(
        &agent,
        "invite_agent",
        json!({ "agent_id": agent.agent_id, "why": "x".repeat(281) }),
    );
    assert_eq!(long_why["error"]["field"], "why", "{long_why}");
    assert_eq!(
        long_why["error"]["message"], "why is at most 280 characters",
        "{long_why}"
    );
}
