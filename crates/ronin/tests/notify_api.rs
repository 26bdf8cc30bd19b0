//! `POST /api/v1/me/notify` (Ronin section 8 "Email"): an address on file for a key, mail for
//! each task event naming it, a clear that stops them, refusals that store nothing, and an
//! address no door serves.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use kd_core::outbox::Mail;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tower::ServiceExt;

use common::market::{ALICE, BOB, CAROL, accepted, market, offer, only_template, task_as};
use common::{Hub, NOW_S, PUBLIC_URL, key, sign_template, signed};

const PATH: &str = "/api/v1/me/notify";

/// `Nostr <base64>` of a kind 27235 POST auth over `body` (its `payload` tag), or without the
/// payload tag.
fn auth(secret: &[u8; 32], body: &str, nonce: &str, payload: bool) -> String {
    use base64::Engine as _;
    let url = format!("{PUBLIC_URL}{PATH}");
    let digest = hex::encode(Sha256::digest(body.as_bytes()));
    let (u, method, nonce) = (["u", url.as_str()], ["method", "POST"], ["nonce", nonce]);
    let payload_tag = ["payload", digest.as_str()];
    let mut tags: Vec<&[&str]> = vec![&u, &method, &nonce];
    if payload {
        tags.push(&payload_tag);
    }
    let event = signed(secret, NOW_S, 27235, &tags, Value::String(String::new()));
    format!(
        "Nostr {}",
        base64::engine::general_purpose::STANDARD.encode(event.to_json_text())
    )
}

async fn post_notify(hub: &Hub, authorization: &str, body: &str) -> (StatusCode, String) {
    let response = hub
        .router
        .clone()
        .oneshot(
            Request::builder()
                .method("POST")
                .uri(PATH)
                .header("content-type", "application/json")
                .header("authorization", authorization)
                .body(Body::from(body.to_owned()))
                .unwrap(),
        )
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

async fn set_email(hub: &Hub, secret: &[u8; 32], email: &str, nonce: &str) -> Value {
    let body = json!({ "email": email }).to_string();
    let (status, answer) = post_notify(hub, &auth(secret, &body, nonce, true), &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    serde_json::from_str(&answer).unwrap()
}

/// Every mail in the outbox (off the async threads: the PostgreSQL driver blocks).
fn outbox(hub: &Hub) -> Vec<Mail> {
    let store = hub.store.clone();
    std::thread::spawn(move || {
        store
            .read_blocking(|conn| kd_core::outbox::list(conn, false))
            .unwrap()
    })
    .join()
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_task_event_naming_a_key_mails_its_address_once_with_the_task_id() {
    let hub = common::hub();
    market(&hub, None).await;
    let (alice, bob) = (key(&ALICE), key(&BOB));
    assert_eq!(
        set_email(&hub, &ALICE, " Alice@Example.COM ", "n-a").await,
        json!({"ok": true, "notify": true})
    );
    set_email(&hub, &BOB, "bob@example.com", "n-b").await;

    let offered = offer(&BOB, &alice, "summaries", 2.5);
    accepted(&hub, &offered).await;
    let view = task_as(&hub, &offered.id, &alice).await;
    let accept = sign_template(&ALICE, NOW_S + 1, &only_template(&view, 1101));
    let body = accepted(&hub, &accept).await;
    let deliver = sign_template(&ALICE, NOW_S + 2, &only_template(&body, 1102));
    accepted(&hub, &deliver).await;
    let view = task_as(&hub, &offered.id, &bob).await;
    let complete = sign_template(&BOB, NOW_S + 3, &only_template(&view, 1103));
    let next = accepted(&hub, &complete).await["next"].clone();
    accepted(&hub, &sign_template(&BOB, NOW_S + 4, &next[0])).await;
    accepted(&hub, &sign_template(&BOB, NOW_S + 5, &next[1])).await;
    let view = task_as(&hub, &offered.id, &alice).await;
    accepted(
        &hub,
        &sign_template(&ALICE, NOW_S + 6, &only_template(&view, 1106)),
    )
    .await;

    let mails = outbox(&hub);
    let sent: Vec<(&str, &str)> = mails
        .iter()
        .map(|mail| {
            let kind = mail.subject.split(' ').nth(1).unwrap();
            (mail.to_email.as_str(), kind)
        })
        .collect();
    let mut expected = vec![
        ("alice@example.com", "OFFER"),
        ("bob@example.com", "ACCEPT"),
        ("bob@example.com", "DELIVER"),
        ("alice@example.com", "COMPLETE"),
        ("alice@example.com", "RATING"),
        ("alice@example.com", "PAID"),
        ("bob@example.com", "RECEIVED"),
    ];
    let mut sent_sorted = sent.clone();
    sent_sorted.sort_unstable();
    expected.sort_unstable();
    assert_eq!(sent_sorted, expected);
    for mail in &mails {
        assert!(mail.body.contains(&offered.id), "{}", mail.body);
        let recipient = if mail.to_email.starts_with("alice") {
            &alice
        } else {
            &bob
        };
        let command = format!(
            "curl -s '{PUBLIC_URL}/ronin/api/v1/tasks/{}?as={recipient}'",
            offered.id
        );
        assert!(mail.body.contains(&command), "{}", mail.body);
        // Never a secret: neither party's secret key appears.
        for secret in [ALICE, BOB] {
            assert!(!mail.body.contains(&hex::encode(secret)));
        }
    }
    plain_english(&mails);
    // The OFFER's mail tells Alice what she may sign next: the ACCEPT.
    let offer_mail = mails
        .iter()
        .find(|mail| mail.subject.contains("OFFER"))
        .unwrap();
    assert!(
        offer_mail.body.contains("- kind 1101: Accept this offer"),
        "{}",
        offer_mail.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cleared_address_gets_no_more_mail() {
    let hub = common::hub();
    market(&hub, None).await;
    let alice = key(&ALICE);
    set_email(&hub, &ALICE, "alice@example.com", "n-1").await;
    accepted(&hub, &offer(&BOB, &alice, "summaries", 1.0)).await;
    assert_eq!(outbox(&hub).len(), 1);
    assert_eq!(
        set_email(&hub, &ALICE, "", "n-2").await,
        json!({"ok": true, "notify": false})
    );
    accepted(&hub, &offer(&BOB, &alice, "summaries", 2.0)).await;
    assert_eq!(outbox(&hub).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_request_is_refused_and_stores_nothing() {
    let hub = common::hub();
    market(&hub, None).await;
    let alice = key(&ALICE);
    for (index, body) in [
        r#"{"email":"not-an-address"}"#,
        r#"{"email":"a b@example.com"}"#,
        r#"{"email":"x@localhost"}"#,
        r#"{"email":5}"#,
        r#"{"email":"\u202ealice@example.com"}"#,
        r#"{"email":"ali\u200bce@example.com"}"#,
        r#"{"email":"alice@example.com","email":"carol@example.com"}"#,
        r#"{"mail":"alice@example.com"}"#,
        r#"{"email":"alice@example.com","extra":1}"#,
        r#"["alice@example.com"]"#,
        "not json",
    ]
    .into_iter()
    .enumerate()
    {
        let (status, answer) = post_notify(
            &hub,
            &auth(&ALICE, body, &format!("bad-{index}"), true),
            body,
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert!(answer.contains("\"error\":\"invalid: "), "{answer}");
    }
    // Auth: no payload tag, a payload over another body, another key's event used twice.
    let body = r#"{"email":"alice@example.com"}"#;
    let (status, _) = post_notify(&hub, &auth(&ALICE, body, "np", false), body).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let other = r#"{"email":"carol@example.com"}"#;
    let (status, _) = post_notify(&hub, &auth(&ALICE, other, "pp", true), body).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let header = auth(&CAROL, other, "twice", true);
    assert_eq!(post_notify(&hub, &header, other).await.0, StatusCode::OK);
    assert_eq!(
        post_notify(&hub, &header, other).await.0,
        StatusCode::UNAUTHORIZED
    );
    // Nothing was stored for Alice: an offer to her mails nobody.
    accepted(&hub, &offer(&BOB, &alice, "summaries", 1.0)).await;
    assert!(outbox(&hub).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_address_is_never_served() {
    let hub = common::hub();
    market(&hub, None).await;
    let (alice, bob) = (key(&ALICE), key(&BOB));
    let answer = set_email(&hub, &ALICE, "alice.secret.inbox@example.com", "n").await;
    assert!(!answer.to_string().contains("alice.secret.inbox"));
    let offered = offer(&BOB, &alice, "summaries", 1.0);
    accepted(&hub, &offered).await;
    let mut reads = vec![
        format!("/api/v1/agents/{alice}"),
        format!("/api/v1/agents/{alice}/inbox"),
        "/api/v1/agents".to_owned(),
        "/api/v1/feed".to_owned(),
        format!("/api/v1/tasks/{}?as={alice}", offered.id),
        format!("/api/v1/tasks/{}?as={bob}", offered.id),
        "/api/v1/listings".to_owned(),
    ];
    let (_, feed) = hub.call("GET", "/api/v1/feed?limit=100", "").await;
    for item in feed["events"].as_array().unwrap_or(&Vec::new()) {
        if let Some(id) = item["id"].as_str() {
            reads.push(format!("/api/v1/events/{id}"));
        }
    }
    assert!(reads.len() > 7, "{feed}");
    for path in &reads {
        let text = hub.call_text("GET", path).await;
        assert!(!text.contains("alice.secret.inbox"), "{path}: {text}");
        assert!(!text.contains("example.com"), "{path}: {text}");
    }
    // Nor does `me`.
    let me_url = format!("{PUBLIC_URL}/api/v1/me");
    let header = common::nip98(&ALICE, &me_url, NOW_S, "me");
    let (_, body) = hub.get_authorized("/api/v1/me", Some(&header)).await;
    assert!(
        body["new"]["tasks"]
            .as_array()
            .is_some_and(|tasks| !tasks.is_empty())
    );
    assert!(!body.to_string().contains("example.com"));
}

/// Each mail opens in plain English: "An OFFER", "An ACCEPT", "A DELIVER".
fn plain_english(mails: &[kd_core::outbox::Mail]) {
    for mail in mails {
        let kind = mail.subject.split(' ').nth(1).unwrap();
        let article = if matches!(kind, "OFFER" | "ACCEPT") {
            "An"
        } else {
            "A"
        };
        assert!(
            mail.body
                .starts_with(&format!("{article} {kind} on a Ronin task")),
            "{}",
            mail.body
        );
    }
}
