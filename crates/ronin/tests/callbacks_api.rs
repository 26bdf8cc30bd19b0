//! Signed callbacks (Ronin section 6 "Push instead"): a change that includes a task for a key
//! is POSTed to its lineage's callback as the payload `me` shows for it, signed by the
//! operator key; three tries, then silence; private addresses are never contacted unless the
//! operator allows them.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use kd_core::outbound::Policy;
use kd_ronin::callbacks::{self, RETRY_AFTER_MS};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use common::market::{ALICE, BOB, listing, offer, profile};
use common::{Hub, NOW_S, PUBLIC_URL, batch, key, nip98, signed};

/// A receiver on loopback answering `status` to every POST; it keeps what it got.
struct Receiver {
    url: String,
    got: Arc<Mutex<Vec<(HeaderMap, Bytes)>>>,
}

async fn receiver(status: StatusCode) -> Receiver {
    let got: Arc<Mutex<Vec<(HeaderMap, Bytes)>>> = Arc::default();
    let kept = Arc::clone(&got);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let kept = Arc::clone(&kept);
            async move {
                kept.lock().unwrap().push((headers, body));
                status
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Receiver { url, got }
}

impl Receiver {
    fn count(&self) -> usize {
        self.got.lock().unwrap().len()
    }
}

/// Alice (agent, with `callback`) lists `summaries`; Bob (buyer) has a plain profile.
async fn market_with_callback(hub: &Hub, callback: &str) {
    let alice_profile = signed(
        &ALICE,
        NOW_S,
        0,
        &[],
        json!({ "name": "Alice", "callback": callback }),
    );
    let listed = listing(
        &ALICE,
        "summaries",
        json!({"title": "Summaries", "price_hint": 2}),
    );
    let (status, body) = hub
        .call(
            "POST",
            "/api/v1/events",
            &batch(&[&alice_profile, &listed, &profile(&BOB, "Bob")]),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// `me` for `secret` since `since`.
async fn me(hub: &Hub, secret: &[u8; 32], since: &str, nonce: &str) -> Value {
    let path = format!("/api/v1/me?since={since}");
    let header = nip98(secret, &format!("{PUBLIC_URL}{path}"), NOW_S, nonce);
    let (status, body) = hub.get_authorized(&path, Some(&header)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

fn verify(pubkey_hex: &str, signature_hex: &str, body: &[u8]) -> bool {
    let pubkey = secp256k1::XOnlyPublicKey::from_byte_array(
        hex::decode(pubkey_hex).unwrap().try_into().unwrap(),
    )
    .unwrap();
    let signature = secp256k1::schnorr::Signature::from_byte_array(
        hex::decode(signature_hex).unwrap().try_into().unwrap(),
    );
    let digest = Sha256::digest(body);
    secp256k1::schnorr::verify(&signature, &digest, &pubkey).is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_change_is_posted_signed_as_me_shows_it() {
    let hub = common::hub();
    let hook = receiver(StatusCode::OK).await;
    market_with_callback(&hub, &hook.url).await;
    let (alice, bob) = (key(&ALICE), key(&BOB));
    let before = me(&hub, &ALICE, "", "m0").await["cursor"]
        .as_str()
        .unwrap()
        .to_owned();
    let offered = offer(&BOB, &alice, "summaries", 2.0);
    assert_eq!(hub.post(&offered).await.0, StatusCode::OK);
    // The same offer again is refused: it queues nothing.
    assert_eq!(hub.post(&offered).await.0, StatusCode::CONFLICT);

    let policy = Policy::new(true);
    assert_eq!(
        callbacks::deliver_due(&hub.ronin, &policy).await.unwrap(),
        1
    );
    assert_eq!(hook.count(), 1);
    let (headers, body) = hook.got.lock().unwrap()[0].clone();
    let (_, server) = hub.call("GET", "/api/v1/server", "").await;
    let operator = server["pubkey"].as_str().unwrap();
    assert_eq!(headers["ronin-pubkey"], operator);
    assert_eq!(headers["content-type"], "application/json");
    let signature = headers["ronin-signature"].to_str().unwrap();
    assert_eq!(signature.len(), 128);
    assert!(verify(operator, signature, &body));
    assert!(
        !verify(operator, signature, b"{}"),
        "the signature covers the body"
    );
    // The body is what `me` answers for that change, byte for byte.
    let shown = me(&hub, &ALICE, &before, "m1").await;
    assert_eq!(body, Bytes::from(shown.to_string()));
    assert_eq!(shown["new"]["tasks"][0]["task"], offered.id.as_str());
    assert_eq!(shown["new"]["tasks"][0]["role"], "agent");

    let deliveries = callbacks::deliveries(&hub.ronin, &alice).await.unwrap();
    assert_eq!(deliveries.len(), 1, "the refused duplicate queued nothing");
    assert_eq!(
        (deliveries[0].tries, deliveries[0].state.as_str()),
        (1, "delivered")
    );
    // Bob has no callback; nothing is left to send.
    assert!(
        callbacks::deliveries(&hub.ronin, &bob)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        callbacks::deliver_due(&hub.ronin, &policy).await.unwrap(),
        0
    );
    assert_eq!(hook.count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_receiver_gets_exactly_three_tries_then_silence() {
    let hub = common::hub();
    let hook = receiver(StatusCode::INTERNAL_SERVER_ERROR).await;
    market_with_callback(&hub, &hook.url).await;
    let alice = key(&ALICE);
    assert_eq!(
        hub.post(&offer(&BOB, &alice, "summaries", 2.0)).await.0,
        StatusCode::OK
    );
    let policy = Policy::new(true);
    let mut tries = Vec::new();
    for wait_ms in [
        0,
        1_000,
        RETRY_AFTER_MS[0],
        1_000,
        RETRY_AFTER_MS[1],
        3_600_000,
    ] {
        hub.clock.advance_ms(wait_ms);
        tries.push(callbacks::deliver_due(&hub.ronin, &policy).await.unwrap());
    }
    // Tried at once, not again before the first wait, then after each wait; then never.
    assert_eq!(tries, vec![1, 0, 1, 0, 1, 0]);
    assert_eq!(hook.count(), 3);
    let deliveries = callbacks::deliveries(&hub.ronin, &alice).await.unwrap();
    assert_eq!(
        (
            deliveries[0].tries,
            deliveries[0].state.as_str(),
            deliveries[0].last_error.as_deref()
        ),
        (3, "given_up", Some("status 500"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_to_a_private_address_is_never_contacted_when_the_setting_is_off() {
    let hub = common::hub();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    market_with_callback(&hub, &url).await;
    let alice = key(&ALICE);
    assert_eq!(
        hub.post(&offer(&BOB, &alice, "summaries", 2.0)).await.0,
        StatusCode::OK
    );
    for wait_ms in [0, RETRY_AFTER_MS[0], RETRY_AFTER_MS[1]] {
        hub.clock.advance_ms(wait_ms);
        assert_eq!(
            callbacks::deliver_due(&hub.ronin, &Policy::default())
                .await
                .unwrap(),
            1
        );
    }
    assert_eq!(
        listener.accept().unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock,
        "the hub connected to a loopback address"
    );
    let deliveries = callbacks::deliveries(&hub.ronin, &alice).await.unwrap();
    assert_eq!(deliveries[0].state, "given_up");
    assert!(
        deliveries[0]
            .last_error
            .as_deref()
            .is_some_and(|error| error.contains("refused address 127.0.0.1")),
        "{deliveries:?}"
    );
}
