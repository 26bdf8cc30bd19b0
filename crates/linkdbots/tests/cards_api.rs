//! Filing cards (spec "Publishing a card"): the field table, dropped fields, signatures,
//! budgets, and the feed.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use common::{NOW_MS, body, card, hub};
use ed25519_dalek::Signer as _;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn a_card_lands_self_reported_with_its_public_form_and_spends_the_budget() {
    let hub = hub();
    let (agent_id, key) = hub.agent("person-1", "Miso").await;
    let mut sent = card();
    sent["playbookRefs"] = json!([{ "playbookId": "pb_abc", "version": 3 }]);
    let (status, filed) = hub.call("POST", "/cards", Some(&key), &body(&sent)).await;
    assert_eq!(status, StatusCode::CREATED, "{filed}");
    assert!(filed["id"].as_str().unwrap().starts_with("crd_"));
    assert_eq!(filed["agent"], json!({ "id": agent_id, "handle": "miso" }));
    assert_eq!(filed["provenance"], "self-reported");
    assert_eq!(filed["costUsd"], 0.42);
    assert_eq!(filed["tokensIn"], 18432);
    assert_eq!(filed["outcome"], "success");
    assert_eq!(filed["isDigest"], false);
    assert_eq!(filed["occurredAt"], sent["occurredAt"]);
    assert_eq!(filed["playbookRefs"], sent["playbookRefs"]);
    let (_, budget) = hub.call("GET", "/budget", Some(&key), "").await;
    assert_eq!(
        budget["actions"]["cards"],
        json!({ "limit": 5, "used": 1, "remaining": 4 })
    );
    assert_eq!(budget["day"], "2026-10-11");
    assert_eq!(budget["resetsAt"], "2026-10-12T00:00:00.000Z");
    let (_, feed) = hub.call("GET", "/feed", None, "").await;
    assert_eq!(feed["cards"][0]["id"], filed["id"]);
}

/// Each refused card: the mutation, and a word its message names.
fn refused_cards() -> Vec<(Value, &'static str)> {
    let with = |field: &str, value: Value| {
        let mut card = card();
        card[field] = value;
        card
    };
    let without = |field: &str| {
        let mut card = card();
        card.as_object_mut().unwrap().remove(field);
        card
    };
    let mut cases = Vec::new();
    for field in [
        "category",
        "tokensIn",
        "tokensOut",
        "model",
        "engine",
        "host",
        "occurredAt",
    ] {
        cases.push((without(field), field));
    }
    for field in ["tokensIn", "tokensOut", "turns", "toolCalls", "wallMs"] {
        cases.push((with(field, json!(-1)), field));
        cases.push((with(field, json!(1.5)), field));
        cases.push((with(field, json!("12")), field));
    }
    let digest_with_outcome = {
        let mut card = card();
        card["isDigest"] = json!(true);
        card
    };
    cases.extend([
        (with("category", json!("code.reviews")), "unknown category"),
        (with("category", json!("Code.Review")), "unknown category"),
        (with("costUsd", json!(-0.01)), "costUsd"),
        (with("costUsd", json!("0.42")), "costUsd"),
        (with("model", json!("opus 4.6")), "model"),
        (with("engine", json!("e".repeat(41))), "engine"),
        (with("occurredAt", json!("yesterday")), "occurredAt"),
        (
            with(
                "occurredAt",
                json!(kd_core::clock::rfc3339_ms(NOW_MS - 86_400_001)),
            ),
            "24 hours",
        ),
        (
            with(
                "occurredAt",
                json!(kd_core::clock::rfc3339_ms(NOW_MS + 86_400_001)),
            ),
            "24 hours",
        ),
        (with("outcome", json!("partial")), "outcome"),
        (with("outcome", json!(null)), "outcome"),
        (with("outcome", json!(true)), "outcome"),
        (with("isDigest", json!("yes")), "isDigest"),
        (digest_with_outcome, "digest"),
        (
            with("playbookRefs", json!([{ "playbookId": "x", "version": 1 }])),
            "playbookRefs",
        ),
        (
            with(
                "playbookRefs",
                json!([{ "playbookId": "pb_a", "version": 0 }]),
            ),
            "playbookRefs",
        ),
        (with("playbookRefs", json!("pb_a")), "playbookRefs"),
    ]);
    cases
}

#[tokio::test(flavor = "multi_thread")]
async fn every_refused_card_is_a_400_naming_the_rule_and_stores_nothing() {
    let hub = hub();
    let (_, key) = hub.agent("person-1", "Miso").await;
    for (sent, named) in refused_cards() {
        let (status, answer) = hub.call("POST", "/cards", Some(&key), &body(&sent)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{sent}: {answer}");
        assert_eq!(answer["error"]["code"], "invalid_request");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(named), "{named}: {message}");
    }
    for raw in ["{}", "{\"card\": 5}", "not json", "[]"] {
        let (status, _) = hub.call("POST", "/cards", Some(&key), raw).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{raw}");
    }
    let bad_signature = json!({ "card": card(), "signature": { "hostKeyId": "h1" } }).to_string();
    let (status, _) = hub.call("POST", "/cards", Some(&key), &bad_signature).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(hub.counts().await.0, 0);
    // None of the refusals spent the budget.
    let (_, budget) = hub.call("GET", "/budget", Some(&key), "").await;
    assert_eq!(budget["actions"]["cards"]["used"], 0);
    // The edges are accepted: 24 hours either way, zero figures, a digest without outcome.
    let mut edge = card();
    edge["occurredAt"] = json!(kd_core::clock::rfc3339_ms(NOW_MS - 86_400_000));
    edge["tokensIn"] = json!(0);
    edge["costUsd"] = json!(0);
    let (status, _) = hub.call("POST", "/cards", Some(&key), &body(&edge)).await;
    assert_eq!(status, StatusCode::CREATED);
    let mut digest = card();
    digest.as_object_mut().unwrap().remove("outcome");
    digest["isDigest"] = json!(true);
    digest["occurredAt"] = json!("2026-10-12T06:26:40+00:00");
    let (status, filed) = hub.call("POST", "/cards", Some(&key), &body(&digest)).await;
    assert_eq!(status, StatusCode::CREATED, "{filed}");
    assert_eq!(filed["outcome"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn fields_the_schema_does_not_name_are_dropped_and_nowhere_in_the_database() {
    let hub = hub();
    let (_, key) = hub.agent("person-1", "Miso").await;
    let marker = "MARKER-7f3a9c-prompt-text";
    let mut sent = card();
    sent["prompt"] = json!(marker);
    sent["transcript"] = json!([marker]);
    sent["playbookRefs"] = json!([{ "playbookId": "pb_a", "version": 1, "note": marker }]);
    let whole = json!({ "card": sent, "customer": marker, "signature": null }).to_string();
    let (status, filed) = hub.call("POST", "/cards", Some(&key), &whole).await;
    assert_eq!(status, StatusCode::CREATED, "{filed}");
    assert!(!filed.to_string().contains(marker));
    let (_, feed) = hub.call("GET", "/feed", None, "").await;
    assert!(!feed.to_string().contains(marker));
    let rows = hub
        .store
        .read(|conn| {
            Ok::<_, kd_core::store::StoreError>(kd_linkdbots::store::feed(conn, 10, 0).unwrap())
        })
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert!(!format!("{rows:?}").contains(marker));
    if let Some(path) = hub.store.path() {
        hub.store.close();
        let mut bytes = std::fs::read(path).unwrap();
        bytes.extend(std::fs::read(path.with_extension("sqlite-wal")).unwrap_or_default());
        assert!(!String::from_utf8_lossy(&bytes).contains(marker));
        assert!(String::from_utf8_lossy(&bytes).contains("pb_a"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn five_cards_a_utc_day_then_429_until_midnight() {
    let hub = hub();
    let (_, key) = hub.agent("person-1", "Miso").await;
    for _ in 0..5 {
        let (status, _) = hub.call("POST", "/cards", Some(&key), &body(&card())).await;
        assert_eq!(status, StatusCode::CREATED);
    }
    let (status, answer) = hub.call("POST", "/cards", Some(&key), &body(&card())).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(answer["error"]["code"], "budget_exhausted");
    assert_eq!(hub.counts().await.0, 5);
    // Another agent has its own budget; the next UTC day renews.
    let (_, other) = hub.agent("person-1", "Other").await;
    let (status, _) = hub
        .call("POST", "/cards", Some(&other), &body(&card()))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    hub.clock
        .set_ms(kd_linkdbots::budget::next_midnight_ms(NOW_MS));
    let (status, _) = hub.call("POST", "/cards", Some(&key), &body(&card())).await;
    assert_eq!(status, StatusCode::CREATED);
}

#[tokio::test(flavor = "multi_thread")]
async fn feed_reads_with_a_key_spend_ten_a_day_and_anonymous_reads_do_not() {
    let hub = hub();
    let (_, key) = hub.agent("person-1", "Miso").await;
    for _ in 0..10 {
        let (status, _) = hub.call("GET", "/feed", Some(&key), "").await;
        assert_eq!(status, StatusCode::OK);
    }
    let (status, answer) = hub.call("GET", "/feed", Some(&key), "").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{answer}");
    let (status, _) = hub.call("GET", "/feed", None, "").await;
    assert_eq!(status, StatusCode::OK);
    for query in ["?limit=0", "?limit=101", "?offset=-1", "?limit=x"] {
        let (status, _) = hub.call("GET", &format!("/feed{query}"), None, "").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_card_signed_by_a_registered_host_key_lands_host_signed() {
    let hub = hub();
    let (agent_id, key) = hub.agent("person-1", "Miso").await;
    let signing = ed25519_dalek::SigningKey::from_bytes(&[9u8; 32]);
    let public = kd_protocol::b64::encode_url(signing.verifying_key().as_bytes());
    kd_linkdbots::register_host_key(&hub.store, "person-1", "openmausbot-1", &public)
        .await
        .unwrap();
    let sent = card();
    let input =
        kd_linkdbots::cards::read_card(sent.as_object().unwrap(), NOW_MS, true, &[]).unwrap();
    let text = kd_linkdbots::cards::canonical_text(&agent_id, &input);
    assert!(text.starts_with("linkdbots-card-v1\nagentId=agt_"));
    assert!(text.contains("\ncostUsd=0.420000\n"));
    assert!(text.ends_with("\nisDigest=false\noutcome=success"));
    let signature = kd_protocol::b64::encode_url(&signing.sign(text.as_bytes()).to_bytes());
    let post = |key_id: &str, signature: &str| {
        json!({ "card": sent, "signature": { "hostKeyId": key_id, "signatureB64": signature } })
            .to_string()
    };
    let (status, filed) = hub
        .call(
            "POST",
            "/cards",
            Some(&key),
            &post("openmausbot-1", &signature),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{filed}");
    assert_eq!(filed["provenance"], "host-signed");
    assert_eq!(filed["hostKeyId"], "openmausbot-1");
    // An unknown key, a signature over other bytes, or another agent's post: self-reported.
    let other_text = text.replace("outcome=success", "outcome=failure");
    let wrong = kd_protocol::b64::encode_url(&signing.sign(other_text.as_bytes()).to_bytes());
    let (_, other_key) = hub.agent("person-1", "Other").await;
    for (key, key_id, signature) in [
        (&key, "nobody", signature.as_str()),
        (&key, "openmausbot-1", wrong.as_str()),
        (&key, "openmausbot-1", "AAAA"),
        (&other_key, "openmausbot-1", signature.as_str()),
    ] {
        let (status, filed) = hub
            .call("POST", "/cards", Some(key), &post(key_id, signature))
            .await;
        assert_eq!(status, StatusCode::CREATED);
        assert_eq!(filed["provenance"], "self-reported", "{key_id}");
        assert_eq!(filed["hostKeyId"], Value::Null);
    }
    // A key id is registered once.
    let again = kd_linkdbots::register_host_key(&hub.store, "person-2", "openmausbot-1", &public);
    assert_eq!(again.await.unwrap_err().status(), StatusCode::BAD_REQUEST);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revoked_host_key_signs_nothing_and_only_its_owner_lists_or_revokes_it() {
    let hub = hub();
    let (agent_id, key) = hub.agent("person-1", "Miso").await;
    let signing = ed25519_dalek::SigningKey::from_bytes(&[9u8; 32]);
    let public = kd_protocol::b64::encode_url(signing.verifying_key().as_bytes());
    kd_linkdbots::register_host_key(&hub.store, "person-1", "openmausbot-1", &public)
        .await
        .unwrap();
    let listed = kd_linkdbots::host_keys::mine(&hub.store, "person-1")
        .await
        .unwrap();
    assert_eq!(listed[0]["keyId"], "openmausbot-1");
    assert_eq!(listed[0]["publicKey"], public.as_str());
    assert_eq!(listed[0]["revokedAt"], Value::Null);
    let others = kd_linkdbots::host_keys::mine(&hub.store, "person-2").await;
    assert_eq!(others.unwrap(), json!([]));
    let sent = card();
    let input =
        kd_linkdbots::cards::read_card(sent.as_object().unwrap(), NOW_MS, true, &[]).unwrap();
    let text = kd_linkdbots::cards::canonical_text(&agent_id, &input);
    let signature = kd_protocol::b64::encode_url(&signing.sign(text.as_bytes()).to_bytes());
    let post = json!({ "card": sent, "signature": { "hostKeyId": "openmausbot-1", "signatureB64": signature } })
        .to_string();
    let provenance = || async {
        let (status, filed) = hub.call("POST", "/cards", Some(&key), &post).await;
        assert_eq!(status, StatusCode::CREATED, "{filed}");
        filed["provenance"].as_str().unwrap().to_owned()
    };
    assert_eq!(provenance().await, "host-signed");
    // Someone else's revoke is a 404 and changes nothing.
    let refused = kd_linkdbots::host_keys::revoke(&hub.store, "person-2", "openmausbot-1").await;
    assert_eq!(refused.unwrap_err().status(), StatusCode::NOT_FOUND);
    assert_eq!(provenance().await, "host-signed");
    let revoked = kd_linkdbots::host_keys::revoke(&hub.store, "person-1", "openmausbot-1")
        .await
        .unwrap();
    assert_eq!(revoked["keyId"], "openmausbot-1");
    assert_eq!(provenance().await, "self-reported");
    let listed = kd_linkdbots::host_keys::mine(&hub.store, "person-1")
        .await
        .unwrap();
    assert_eq!(listed[0]["revokedAt"], revoked["revokedAt"]);
    // Revoked once; its id stays taken.
    let again = kd_linkdbots::host_keys::revoke(&hub.store, "person-1", "openmausbot-1").await;
    assert_eq!(again.unwrap_err().status(), StatusCode::NOT_FOUND);
    let reused = kd_linkdbots::register_host_key(&hub.store, "person-1", "openmausbot-1", &public);
    assert_eq!(reused.await.unwrap_err().status(), StatusCode::BAD_REQUEST);
}
