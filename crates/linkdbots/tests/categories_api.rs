//! Live categories (spec "Categories"; decisions 337, 338): a person proposes, the moderator
//! decides, and an accepted category is a category everywhere.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use common::{NOW_MS, body, card, hub};
use kd_core::clock::Clock as _;
use kd_linkdbots::ApiError;
use kd_linkdbots::categories::{self, PROPOSALS_PER_DAY};
use serde_json::Value;

const PERSON: &str = "per_proposer";
const OTHER: &str = "per_other";

async fn propose(
    hub: &common::Hub,
    person: &str,
    name: &str,
    text: &str,
) -> Result<Value, ApiError> {
    categories::propose(
        &hub.store,
        hub.lk.random.as_ref(),
        hub.clock.now_ms(),
        person,
        name,
        text,
    )
    .await
}

async fn stored(hub: &common::Hub) -> i64 {
    hub.store
        .read(|conn| kd_linkdbots::categories_store::count(conn).map_err(ApiError::from))
        .await
        .unwrap()
}

async fn listed(hub: &common::Hub) -> Vec<String> {
    let (status, list) = hub.call("GET", "/categories", None, "").await;
    assert_eq!(status, StatusCode::OK);
    list["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["category"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_proposal_says_why_and_stores_nothing() {
    let hub = hub();
    let long = "x".repeat(categories::DESCRIPTION_MAX + 1);
    let cases: [(&str, &str, u16); 9] = [
        ("Code.Lint", "Lint code", 400),
        ("code..lint", "Lint code", 400),
        ("code.-lint", "Lint code", 400),
        ("a.b.c.d", "Lint code", 400),
        ("code lint", "Lint code", 400),
        ("code.lint", &long, 400),
        ("code.lint", "see https://example.com", 400),
        ("code.lint", "  ", 400),
        ("code.review", "Already there", 409),
    ];
    for (name, text, status) in cases {
        let error = propose(&hub, PERSON, name, text).await.unwrap_err();
        assert_eq!(error.status().as_u16(), status, "{name}: {error}");
    }
    assert_eq!(stored(&hub).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_accepted_category_is_a_category_everywhere_and_a_rejected_one_nowhere() {
    let hub = hub();
    let (_, key) = hub.agent(PERSON, "Linter").await;
    let mut lint = card();
    lint["category"] = "code.lint".into();
    // Before: a 400 on cards, a 404 board, absent from the list.
    let (status, _) = hub.call("POST", "/cards", Some(&key), &body(&lint)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let proposed = propose(
        &hub,
        PERSON,
        "code.lint",
        " Run linters & fix what they flag ",
    )
    .await
    .unwrap();
    assert_eq!(proposed["status"], "proposed");
    assert_eq!(proposed["description"], "Run linters & fix what they flag");
    let id = proposed["id"].as_str().unwrap().to_owned();
    // Waiting: still not a category; a second proposal of the name is a 409.
    assert!(!listed(&hub).await.contains(&"code.lint".to_owned()));
    let again = propose(&hub, OTHER, "code.lint", "Lint").await.unwrap_err();
    assert_eq!(again.status(), StatusCode::CONFLICT);
    let pending = hub.store.read(categories::pending).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0]["id"], id.as_str());
    assert!(pending[0].get("proposerId").is_none());

    let decided = categories::decide(&hub.store, NOW_MS + 1, &id, true)
        .await
        .unwrap();
    assert_eq!(decided["status"], "accepted");
    let twice = categories::decide(&hub.store, NOW_MS + 2, &id, false)
        .await
        .unwrap_err();
    assert_eq!(twice.status(), StatusCode::CONFLICT);
    let missing = categories::decide(&hub.store, NOW_MS, "cat_nope", true)
        .await
        .unwrap_err();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);

    let list = listed(&hub).await;
    assert_eq!(list.last().unwrap(), "code.lint");
    assert_eq!(list[0], "code.review");
    let (status, filed) = hub.call("POST", "/cards", Some(&key), &body(&lint)).await;
    assert_eq!(status, StatusCode::CREATED, "{filed}");
    let (status, board) = hub.call("GET", "/benchmarks/code.lint", None, "").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(board["description"], "Run linters & fix what they flag");
    assert_eq!(board["window"]["cards"], 1);
    let (status, _) = hub
        .call("GET", "/learn?category=code.lint", Some(&key), "")
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, _, page) = hub.get_text("/benchmarks").await;
    assert!(
        page.contains("<td>Run linters &amp; fix what they flag</td><td>1</td>"),
        "{page}"
    );
    // An accepted name cannot be proposed again.
    let taken = propose(&hub, OTHER, "code.lint", "Lint").await.unwrap_err();
    assert_eq!(taken.status(), StatusCode::CONFLICT);

    // A rejected one stays unknown, and may be proposed again.
    let other = propose(&hub, OTHER, "ops.chatops", "Run ops from chat")
        .await
        .unwrap();
    let other_id = other["id"].as_str().unwrap();
    categories::decide(&hub.store, NOW_MS + 3, other_id, false)
        .await
        .unwrap();
    assert!(!listed(&hub).await.contains(&"ops.chatops".to_owned()));
    let (status, _) = hub.call("GET", "/benchmarks/ops.chatops", None, "").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    hub.clock.advance_ms(1000);
    propose(&hub, PERSON, "ops.chatops", "Again").await.unwrap();
    let mine = hub
        .store
        .read(|conn| categories::proposals_of(conn, PERSON))
        .await
        .unwrap();
    let statuses: Vec<&str> = mine.iter().map(|p| p["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["accepted", "proposed"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_proposes_three_categories_a_utc_day() {
    let hub = hub();
    for at in 0..PROPOSALS_PER_DAY {
        propose(&hub, PERSON, &format!("cap.n{at}"), "One more")
            .await
            .unwrap();
    }
    let error = propose(&hub, PERSON, "cap.over", "One more")
        .await
        .unwrap_err();
    assert_eq!(error.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(stored(&hub).await, PROPOSALS_PER_DAY);
    // Someone else is not capped by it, and the next UTC day the person may again.
    propose(&hub, OTHER, "cap.other", "Theirs").await.unwrap();
    hub.clock.advance_ms(86_400_000);
    propose(&hub, PERSON, "cap.over", "One more").await.unwrap();
}
