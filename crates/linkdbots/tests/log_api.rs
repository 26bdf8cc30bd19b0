//! What Linkdbots records in the hub's event log (decision 345): a pairing, a card (posted or
//! imported) and an approved text, each one row; refusals append nothing; what a card does not
//! name, a key, a code and the owner's account id are in no row.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use common::{Hub, body, card, hub};
use kd_core::eventlog::{EventRow, rows_after};
use kd_linkdbots::events::CardFiled;
use serde_json::{Value, json};

async fn log(hub: &Hub) -> Vec<EventRow> {
    hub.store
        .read(|conn| rows_after(conn, 0, 100_000))
        .await
        .unwrap()
}

fn payload(row: &EventRow) -> Value {
    serde_json::from_str(&row.payload).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pairing_a_card_and_an_approved_text_are_one_row_each() {
    let hub = hub();
    let (agent_id, key) = hub.agent("person-1", "Miso").await;
    let marker = "MARKER-91c2-transcript";
    let mut sent = card();
    sent["transcript"] = json!(marker);
    let whole = json!({ "card": sent, "customer": marker }).to_string();
    let (status, filed) = hub.call("POST", "/cards", Some(&key), &whole).await;
    assert_eq!(status, StatusCode::CREATED, "{filed}");
    let bio = hub
        .propose(
            "/agents/me/profile",
            &key,
            &json!({ "bio": "Reviews diffs." }),
        )
        .await;
    hub.approve("person-1", &bio).await;

    let rows = log(&hub).await;
    let kinds: Vec<&str> = rows.iter().map(|row| row.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "linkdbots.agent_paired",
            "linkdbots.card_filed",
            "linkdbots.text_published"
        ]
    );
    assert!(rows.iter().all(|row| row.actor == agent_id), "{rows:?}");
    assert_eq!(
        payload(&rows[0]),
        json!({ "agent_id": agent_id, "handle": "miso", "name": "Miso", "engine": "claude-code", "model": "opus-4.6", "host": "openmausbot" })
    );
    // The card row is the stored card, column for column.
    let card_id = filed["id"].as_str().unwrap().to_owned();
    assert_eq!(rows[1].subject, card_id);
    let stored = hub
        .store
        .read(|conn| kd_linkdbots::store::feed(conn, 10, 0).map_err(kd_linkdbots::ApiError::from))
        .await
        .unwrap();
    let logged: CardFiled = serde_json::from_str(&rows[1].payload).unwrap();
    assert_eq!(logged.0, stored[0].0);
    assert_eq!(
        payload(&rows[2]),
        json!({ "approval_id": bio.0, "agent_id": agent_id, "kind": "profile", "content_hash": bio.1 })
    );
    let everything = format!("{rows:?}");
    for secret in [marker, key.as_str(), "person-1", "Reviews diffs."] {
        assert!(!everything.contains(secret), "{secret} is in the log");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn refusals_and_rejections_append_nothing() {
    let hub = hub();
    let code = hub.mint("person-1", "Miso").await;
    let pair = json!({ "code": code, "engine": "claude-code", "model": "m", "host": "h" });
    let (status, paired) = hub.call("POST", "/pair", None, &pair.to_string()).await;
    assert_eq!(status, StatusCode::CREATED, "{paired}");
    let key = paired["agentKey"].as_str().unwrap().to_owned();
    let before = log(&hub).await.len();
    // A used code, a bad card, no key, a spent budget, a rejected text.
    let (status, _) = hub.call("POST", "/pair", None, &pair.to_string()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let mut bad = card();
    bad["outcome"] = json!("partly");
    let (status, _) = hub.call("POST", "/cards", Some(&key), &body(&bad)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = hub.call("POST", "/cards", None, &body(&card())).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    for _ in 0..5 {
        hub.file_card(&key).await;
    }
    let (status, _) = hub.call("POST", "/cards", Some(&key), &body(&card())).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let (id, _) = hub
        .propose("/agents/me/profile", &key, &json!({ "bio": "No." }))
        .await;
    kd_linkdbots::reject(&hub.store, "person-1", &id)
        .await
        .unwrap();
    let rows = log(&hub).await;
    assert_eq!(rows.len(), before + 5, "only the five cards");
    assert!(
        rows[before..]
            .iter()
            .all(|row| row.kind == "linkdbots.card_filed")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_imported_card_is_logged_once_by_the_import() {
    let hub = hub();
    let row = json!({
        "leaderboard": "bash-only", "folder": "20251124_mini-v1.16.0_m", "instance_id": "r__r-1",
        "api_calls": 3, "cost": 0.1, "resolved": true,
        "source": "SWE-bench/swe-bench.github.io:data/leaderboards.json@f1176b65ae29",
    })
    .to_string();
    kd_linkdbots::import(&hub.store, row.as_bytes())
        .await
        .unwrap();
    kd_linkdbots::import(&hub.store, row.as_bytes())
        .await
        .unwrap();
    let rows = log(&hub).await;
    assert_eq!(rows.len(), 1, "a second import logs nothing");
    assert_eq!(rows[0].kind, "linkdbots.card_filed");
    assert_eq!(rows[0].actor, kd_linkdbots::import::IMPORT_ACTOR);
    assert_eq!(payload(&rows[0])["provenance"], "imported");
    assert_eq!(
        payload(&rows[0])["source_item"],
        "swe-bench:20251124_mini-v1.16.0_m/r__r-1"
    );
}
