//! Key rotation, renames and the names other processes or lookalikes hold.

use super::*;

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
                    &kd_karmadue::identity::events::AgentRegistered {
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
