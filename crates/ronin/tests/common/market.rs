//! The market the task tests share: three keys, a service listing, offers, and the asserts
//! of an accepted event, a task view, a template and a refusal that stored nothing.

use axum::http::StatusCode;
use kd_protocol::nostr::Event;
use serde_json::{Value, json};

use super::{Hub, NOW_S, batch, signed};

/// The agent.
pub const ALICE: [u8; 32] = [0x11; 32];
/// The buyer.
pub const BOB: [u8; 32] = [0x22; 32];
/// A third key.
pub const CAROL: [u8; 32] = [0x33; 32];

pub fn profile(secret: &[u8; 32], name: &str) -> Event {
    signed(secret, NOW_S, 0, &[], json!({ "name": name }))
}

pub fn listing(secret: &[u8; 32], d: &str, content: Value) -> Event {
    signed(secret, NOW_S, 31100, &[&["d", d]], content)
}

pub fn offer_on(secret: &[u8; 32], owner: &str, d: &str, p: &str, content: Value) -> Event {
    let address = format!("31100:{owner}:{d}");
    signed(secret, NOW_S, 1100, &[&["a", &address], &["p", p]], content)
}

pub fn offer(secret: &[u8; 32], owner: &str, d: &str, price: f64) -> Event {
    offer_on(
        secret,
        owner,
        d,
        owner,
        json!({"scope": "Summarise this PDF in five bullets.", "price": price, "currency": "USDC"}),
    )
}

/// Alice (agent) with a service listing `summaries` (extra content fields given), Bob
/// (buyer) with a profile.
pub async fn market(hub: &Hub, terms: Option<Value>) -> Event {
    let mut content = json!({"title": "Summaries", "price_hint": 2, "currency": "USDC"});
    if let Some(terms) = terms {
        content["terms"] = terms;
    }
    let listed = listing(&ALICE, "summaries", content);
    let (status, body) = hub
        .call(
            "POST",
            "/api/v1/events",
            &batch(&[&profile(&ALICE, "Alice"), &listed, &profile(&BOB, "Bob")]),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    listed
}

pub async fn accepted(hub: &Hub, event: &Event) -> Value {
    let (status, body) = hub.post(event).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["id"], event.id.as_str());
    body
}

pub async fn task_as(hub: &Hub, task: &str, viewer: &str) -> Value {
    let (status, body) = hub
        .call("GET", &format!("/api/v1/tasks/{task}?as={viewer}"), "")
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

pub fn only_template(body: &Value, kind: u64) -> Value {
    let next = body["next"].as_array().unwrap();
    assert_eq!(next.len(), 1, "{body}");
    assert_eq!(next[0]["kind"], kind, "{body}");
    assert!(next[0]["why"].as_str().is_some_and(|why| !why.is_empty()));
    next[0].clone()
}

/// Posts `event` and asserts the refusal (status from the prefix) and that nothing was
/// stored: no log row, no task, no event.
pub async fn refused(hub: &Hub, event: &Event, error: &str) {
    let (log, tasks) = (hub.log_len(), hub.task_count().await);
    let (status, body) = hub.post(event).await;
    let expected = match error.split(':').next().unwrap() {
        "invalid" => StatusCode::BAD_REQUEST,
        "duplicate" => StatusCode::CONFLICT,
        "restricted" => StatusCode::FORBIDDEN,
        other => panic!("{other}"),
    };
    assert_eq!(
        (status, body["error"].as_str().unwrap()),
        (expected, error),
        "{body}"
    );
    assert_eq!(
        (hub.log_len(), hub.task_count().await),
        (log, tasks),
        "{error}"
    );
    let (status, _) = hub
        .call("GET", &format!("/api/v1/events/{}", event.id), "")
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{error}");
}
