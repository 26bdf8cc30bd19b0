//! Key events (Ronin sections 7 and 8): SUCCESSOR rotates a key with the new key's proof (only
//! the new key writes afterwards, and it must be fresh), CLAIM names a principal with the
//! agent's proof, CERTIFY is the operator's alone.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use kd_protocol::nostr::{Event, sign_schnorr};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use common::{Hub, NOW_S, batch, key, signed};

const ALICE: [u8; 32] = [0x11; 32];
const ALICE_NEW: [u8; 32] = [0x12; 32];
const BOB: [u8; 32] = [0x22; 32];
const CAROL: [u8; 32] = [0x33; 32];

/// `signer`'s BIP-340 signature over sha256 of `over`'s key bytes, hex.
fn proof(signer: &[u8; 32], over: &str) -> String {
    let digest = Sha256::digest(hex::decode(over).unwrap());
    hex::encode(sign_schnorr(signer, &digest, &[0; 32]).unwrap())
}

fn successor(old: &[u8; 32], new: &[u8; 32], at: u64) -> Event {
    let new_key = key(new);
    let proof = proof(new, &key(old));
    signed(
        old,
        NOW_S + at,
        1107,
        &[&["p", &new_key], &["proof", &proof]],
        json!(""),
    )
}

fn offer(secret: &[u8; 32], owner: &str, p: &str, at: u64) -> Event {
    let address = format!("31100:{owner}:summaries");
    signed(
        secret,
        NOW_S + at,
        1100,
        &[&["a", &address], &["p", p]],
        json!({"scope": "Five bullets.", "price": 2, "currency": "USDC"}),
    )
}

async fn posted(hub: &Hub, event: &Event) -> Value {
    let (status, body) = hub.post(event).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn refused(hub: &Hub, event: &Event, error: &str) {
    let log = hub.log_len();
    let (status, body) = hub.post(event).await;
    assert!(status.is_client_error(), "{body}");
    assert_eq!(body["error"], error, "{body}");
    assert_eq!(hub.log_len(), log, "{error}: nothing stored");
}

async fn setup(hub: &Hub) {
    let events = [
        signed(&ALICE, NOW_S, 0, &[], json!({"name": "Alice"})),
        signed(
            &ALICE,
            NOW_S,
            31100,
            &[&["d", "summaries"]],
            json!({"title": "Summaries"}),
        ),
        signed(&BOB, NOW_S, 0, &[], json!({"name": "Bob"})),
    ];
    let refs: Vec<&Event> = events.iter().collect();
    let (status, body) = hub.call("POST", "/api/v1/events", &batch(&refs)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario: each step acts on the state the step before it left"
)]
async fn a_successor_takes_over_the_lineage_and_the_old_key_writes_no_more() {
    let hub = common::hub();
    setup(&hub).await;
    let (alice, alice_new, bob) = (key(&ALICE), key(&ALICE_NEW), key(&BOB));
    // A task in flight before the rotation.
    let before = offer(&BOB, &alice, &alice, 1);
    posted(&hub, &before).await;

    // A proof by another key, or over another key, is refused; so is a key that is not fresh.
    let mut forged = successor(&ALICE, &ALICE_NEW, 2);
    forged = signed(
        &ALICE,
        forged.created_at,
        1107,
        &[&["p", &alice_new], &["proof", &proof(&CAROL, &alice)]],
        json!(""),
    );
    refused(&hub, &forged, "invalid: the proof must be the new key's signature over sha256 of the old public key's bytes").await;
    refused(
        &hub,
        &successor(&ALICE, &BOB, 2),
        "invalid: the new key must be fresh: it has signed on this hub before",
    )
    .await;
    refused(
        &hub,
        &successor(&CAROL, &ALICE_NEW, 2),
        "invalid: publish a PROFILE (kind 0) before a SUCCESSOR",
    )
    .await;
    posted(&hub, &successor(&ALICE, &ALICE_NEW, 2)).await;

    // Only the new key writes now; an OFFER must name it.
    refused(
        &hub,
        &signed(&ALICE, NOW_S + 3, 0, &[], json!({"name": "Old Alice"})),
        "restricted: this key is retired: its successor writes now",
    )
    .await;
    refused(
        &hub,
        &offer(&BOB, &alice, &alice, 3),
        "invalid: an OFFER must name the listing owner's current (head) key in its p tag",
    )
    .await;
    let after = posted(&hub, &offer(&BOB, &alice, &alice_new, 3)).await;
    assert_eq!(after["task"]["roles"]["agent"], alice_new.as_str());
    // The task made before the rotation passes to the new key: it accepts, the old key cannot.
    let accept = |secret: &[u8; 32]| {
        signed(
            secret,
            NOW_S + 4,
            1101,
            &[&["e", &before.id], &["p", &bob]],
            json!(""),
        )
    };
    refused(
        &hub,
        &accept(&ALICE),
        "restricted: this key is retired: its successor writes now",
    )
    .await;
    let (_, view) = hub
        .call(
            "GET",
            &format!("/api/v1/tasks/{}?as={alice_new}", before.id),
            "",
        )
        .await;
    assert_eq!(view["next"][0]["kind"], 1101, "{view}");
    assert_eq!(
        posted(&hub, &accept(&ALICE_NEW)).await["task"]["status"],
        "accepted"
    );
    // A second rotation to a key the lineage already used is not fresh.
    refused(
        &hub,
        &successor(&ALICE_NEW, &ALICE, 5),
        "invalid: the new key must be fresh: it has signed on this hub before",
    )
    .await;

    // The new key lists on the lineage's profile.
    let more = signed(
        &ALICE_NEW,
        NOW_S + 6,
        31100,
        &[&["d", "more"]],
        json!({"title": "More"}),
    );
    posted(&hub, &more).await;

    // Either key answers with one agent: the head, all keys, every listing.
    for pubkey in [&alice, &alice_new] {
        let (status, agent) = hub
            .call("GET", &format!("/api/v1/agents/{pubkey}"), "")
            .await;
        assert_eq!(status, StatusCode::OK);
        let agent = &agent["agent"];
        assert_eq!(agent["pubkey"], alice_new.as_str());
        assert_eq!(agent["keys"], json!([alice_new, alice]));
        assert_eq!(agent["name"], "Alice");
        assert_eq!(agent["status"], "active");
        let owners: Vec<&str> = agent["listings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|listing| listing["owner"].as_str().unwrap())
            .collect();
        assert_eq!(owners, [alice_new.as_str(), alice.as_str()]);
    }
}

#[tokio::test]
async fn a_claim_needs_the_agent_s_proof_and_a_certify_the_operator_s_key() {
    let hub = common::hub();
    setup(&hub).await;
    let (alice, carol) = (key(&ALICE), key(&CAROL));
    let claim = |principal: &[u8; 32], agent: &str, proof: &str| {
        signed(
            principal,
            NOW_S + 1,
            1109,
            &[&["p", agent], &["proof", proof]],
            json!("my agent"),
        )
    };
    refused(&hub, &claim(&CAROL, &alice, &proof(&BOB, &carol)), "invalid: the proof must be the agent key's signature over sha256 of the principal's public key bytes").await;
    refused(
        &hub,
        &claim(&ALICE, &alice, &proof(&ALICE, &alice)),
        "invalid: a CLAIM is signed by a principal, not by the agent",
    )
    .await;
    let stranger = key(&[0x44; 32]);
    refused(
        &hub,
        &claim(&CAROL, &stranger, &proof(&[0x44; 32], &carol)),
        "invalid: the agent of a CLAIM must exist on this hub",
    )
    .await;
    posted(&hub, &claim(&CAROL, &alice, &proof(&ALICE, &carol))).await;
    let again = signed(
        &CAROL,
        NOW_S + 2,
        1109,
        &[&["p", &alice], &["proof", &proof(&ALICE, &carol)]],
        json!(""),
    );
    refused(
        &hub,
        &again,
        "duplicate: this principal has claimed this agent already",
    )
    .await;

    // CERTIFY: the operator key (the hub's test seed is [1; 32]) and nobody else.
    let operator = [1u8; 32];
    assert_eq!(key(&operator), hub.ronin.operator_pubkey);
    let certify = |secret: &[u8; 32]| {
        signed(
            secret,
            NOW_S + 3,
            1110,
            &[&["p", &alice]],
            json!({"human": true}),
        )
    };
    refused(
        &hub,
        &certify(&BOB),
        "restricted: only the hub's operator key signs a CERTIFY",
    )
    .await;
    let (_, agent) = hub
        .call("GET", &format!("/api/v1/agents/{alice}"), "")
        .await;
    assert_eq!(agent["agent"]["certified"], false);
    posted(&hub, &certify(&operator)).await;
    let (_, agent) = hub
        .call("GET", &format!("/api/v1/agents/{alice}"), "")
        .await;
    assert_eq!(agent["agent"]["certified"], true);
    assert_eq!(agent["agent"]["principals"], json!([carol]));
}
