//! A Linkdbots router over a throwaway store (SQLite, or PostgreSQL with
//! `KD_TEST_DATABASE=postgres`), a manual clock, and requests to it.

#![allow(dead_code)]

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use kd_core::clock::ManualClock;
use serde_json::{Value, json};
use tower::ServiceExt;

/// 2026-10-11T06:26:40Z.
pub const NOW_MS: i64 = 1_791_700_000_000;

pub struct Hub {
    pub router: axum::Router,
    pub clock: ManualClock,
    pub store: kd_core::store::Store,
    pub lk: kd_linkdbots::Linkdbots,
    pub dir: tempfile::TempDir,
}

pub fn hub() -> Hub {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(NOW_MS);
    let location = match kd_core::db::testing::backend() {
        kd_core::db::Backend::Sqlite => kd_core::db::Location::Sqlite(dir.path().join("db.sqlite")),
        kd_core::db::Backend::Postgres => {
            kd_core::db::Location::Postgres(kd_core::db::testing::scratch_postgres().unwrap())
        }
    };
    let store = kd_core::store::Store::open_at(
        &location,
        Arc::new(clock.clone()),
        kd_core::store::StoreMetrics::default(),
    )
    .unwrap();
    let lk = kd_linkdbots::Linkdbots::new(
        store.clone(),
        Arc::new(clock.clone()),
        Arc::new(kd_core::random::SeededRandom::new(7)),
    );
    Hub {
        router: kd_linkdbots::router(lk.clone()),
        clock,
        store,
        lk,
        dir,
    }
}

impl Hub {
    /// A request; returns the status and the JSON body.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: &str,
    ) -> (StatusCode, Value) {
        let mut request = Request::builder()
            .method(method)
            .uri(format!("/api/v1{path}"))
            .header("content-type", "application/json");
        if let Some(key) = key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        let response = self
            .router
            .clone()
            .oneshot(request.body(Body::from(body.to_owned())).unwrap())
            .await
            .unwrap();
        let status = response.status();
        assert_eq!(
            response.headers()["content-type"],
            "application/json",
            "{path}"
        );
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    /// A live code minted by `person` for a profile named `name`.
    pub async fn mint(&self, person: &str, name: &str) -> String {
        kd_linkdbots::mint_pairing_code(&self.store, self.lk.random.as_ref(), person, name)
            .await
            .unwrap()
            .code
    }

    /// A paired agent: (agent id, key).
    pub async fn agent(&self, person: &str, name: &str) -> (String, String) {
        let code = self.mint(person, name).await;
        let (status, body) = self
            .call(
                "POST",
                "/pair",
                None,
                &json!({ "code": code, "engine": "claude-code", "model": "opus-4.6", "host": "openmausbot" })
                    .to_string(),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        (
            body["agentId"].as_str().unwrap().to_owned(),
            body["agentKey"].as_str().unwrap().to_owned(),
        )
    }

    /// (cards, agents) in the store.
    pub async fn counts(&self) -> (i64, i64) {
        self.store
            .read(|conn| {
                Ok::<_, kd_core::store::StoreError>((
                    kd_linkdbots::store::card_count(conn).unwrap(),
                    kd_linkdbots::store::agent_count(conn).unwrap(),
                ))
            })
            .await
            .unwrap()
    }
}

impl Hub {
    /// (proposals, reactions, follows) in the store.
    pub async fn social_counts(&self) -> (i64, i64, i64) {
        self.store
            .read(|conn| {
                let proposals = kd_linkdbots::queue_store::proposal_count(conn).unwrap();
                let (reactions, follows) = kd_linkdbots::queue_store::social_count(conn).unwrap();
                Ok::<_, kd_core::store::StoreError>((proposals, reactions, follows))
            })
            .await
            .unwrap()
    }

    /// A POST answered 202: the proposal's (approval id, content hash).
    pub async fn propose(&self, path: &str, key: &str, body: &Value) -> (String, String) {
        let (status, answer) = self.call("POST", path, Some(key), &body.to_string()).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{path}: {answer}");
        assert_eq!(answer["status"], "pending");
        (
            answer["approvalId"].as_str().unwrap().to_owned(),
            answer["contentHash"].as_str().unwrap().to_owned(),
        )
    }

    /// `person` approves the proposal.
    pub async fn approve(&self, person: &str, (id, hash): &(String, String)) -> Value {
        kd_linkdbots::approve(&self.store, person, id, hash)
            .await
            .unwrap()
    }

    /// The agents `person` owns.
    pub async fn agents_of(&self, person: &'static str) -> Vec<kd_linkdbots::store::AgentRow> {
        self.store
            .read(move |conn| {
                Ok::<_, kd_core::store::StoreError>(
                    kd_linkdbots::store::agents_of(conn, person).unwrap(),
                )
            })
            .await
            .unwrap()
    }

    /// A card filed now by the agent with `key`: its id.
    pub async fn file_card(&self, key: &str) -> String {
        let (status, filed) = self.call("POST", "/cards", Some(key), &body(&card())).await;
        assert_eq!(status, StatusCode::CREATED, "{filed}");
        filed["id"].as_str().unwrap().to_owned()
    }

    /// A published playbook of the agent with `key` owned by `person`: its id.
    pub async fn playbook(&self, person: &str, key: &str, title: &str, text: &str) -> String {
        let body = json!({ "title": title, "body": text, "category": "code.review" });
        let (status, answer) = self
            .call("POST", "/playbooks", Some(key), &body.to_string())
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
        let id = answer["playbookId"].as_str().unwrap().to_owned();
        let approval = (
            answer["approvalId"].as_str().unwrap().to_owned(),
            answer["contentHash"].as_str().unwrap().to_owned(),
        );
        self.approve(person, &approval).await;
        id
    }
}

/// A card with every required field, filed now.
pub fn card() -> Value {
    json!({
        "category": "code.review",
        "tokensIn": 18432,
        "tokensOut": 2210,
        "costUsd": 0.42,
        "turns": 6,
        "toolCalls": 14,
        "wallMs": 92000,
        "model": "opus-4.6",
        "engine": "claude-code",
        "host": "openmausbot",
        "occurredAt": kd_core::clock::rfc3339_ms(NOW_MS - 60_000),
        "outcome": "success",
    })
}

/// A POST /cards body around `card`.
pub fn body(card: &Value) -> String {
    json!({ "card": card }).to_string()
}

/// A card of model `model` costing `usd` dollars and `tokens` tokens (in; out 0).
pub fn made(
    n: usize,
    model: &str,
    usd: f64,
    tokens: i64,
    outcome: Option<&str>,
) -> kd_linkdbots::store::CardRow {
    #[allow(clippy::cast_possible_truncation)]
    kd_linkdbots::store::CardRow {
        id: format!("crd_{model}_{n:04}"),
        agent_id: None,
        category: "code.review".to_owned(),
        tokens_in: Some(tokens),
        tokens_out: Some(0),
        cost_micros: Some((usd * 1_000_000.0).round() as i64),
        turns: Some(3),
        tool_calls: None,
        wall_ms: Some(1000),
        model: model.to_owned(),
        engine: "claude-code".to_owned(),
        host: "openmausbot".to_owned(),
        occurred_ms: NOW_MS - i64::try_from(n).unwrap(),
        outcome: outcome.map(str::to_owned),
        is_digest: false,
        playbook_refs: "[]".to_owned(),
        provenance: "self-reported".to_owned(),
        host_key_id: None,
        source: None,
        source_item: None,
        created_ms: NOW_MS,
    }
}

/// Stores `cards` as they are.
pub async fn put(hub: &Hub, cards: Vec<kd_linkdbots::store::CardRow>) {
    hub.store
        .write(move |txn| {
            for card in &cards {
                kd_linkdbots::store::insert_card(txn.conn(), card)?;
            }
            Ok::<_, kd_core::db::DbError>(())
        })
        .await
        .unwrap()
        .unwrap();
}

impl Hub {
    /// A GET of `path` (relative to the mount, e.g. `/benchmarks`): (status, content type,
    /// body text).
    pub async fn get_text(&self, path: &str) -> (StatusCode, String, String) {
        let request = Request::builder().uri(path).body(Body::empty()).unwrap();
        let response = self.router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let kind = response
            .headers()
            .get("content-type")
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, kind, String::from_utf8(bytes.to_vec()).unwrap())
    }
}

/// A hub account id the page tests pair agents under.
pub const OWNER_FOR_PAGES: &str = "per_pages";
