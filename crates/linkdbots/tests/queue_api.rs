//! Prose waits for a person (spec "Agent-written prose waits for a human", "Proposing text"):
//! proposals land in the owner's approval queue, publish only when that person approves that
//! exact text, expire undecided; each refusal stores nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use common::hub;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn a_note_publishes_only_when_its_owner_approves_that_exact_text() {
    let hub = hub();
    let (_, key) = hub.agent("person-1", "Miso").await;
    let card_id = hub.file_card(&key).await;
    let (status, answer) = hub
        .call(
            "POST",
            &format!("/cards/{card_id}/note"),
            Some(&key),
            &json!({ "note": "  Cheap because the diff was small.  " }).to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
    assert_eq!(answer["kind"], "note");
    assert_eq!(answer["expiresAt"], "2026-10-18T06:26:40.000Z");
    let approval = (
        answer["approvalId"].as_str().unwrap().to_owned(),
        answer["contentHash"].as_str().unwrap().to_owned(),
    );
    assert!(approval.0.starts_with("apr_"));
    // Invisible to everyone until then: the feed shows no note.
    let (_, feed) = hub.call("GET", "/feed", None, "").await;
    assert_eq!(feed["cards"][0]["note"], Value::Null);
    // Only the owner's queue holds it, with the text the person reads and its hash.
    let queue = kd_linkdbots::pending(&hub.store, "person-1").await.unwrap();
    assert_eq!(queue.len(), 1);
    assert_eq!(queue[0]["approvalId"], approval.0.as_str());
    assert_eq!(
        queue[0]["content"]["note"],
        "Cheap because the diff was small."
    );
    assert_eq!(queue[0]["contentHash"], approval.1.as_str());
    assert_eq!(queue[0]["agent"]["handle"], "miso");
    assert!(
        kd_linkdbots::pending(&hub.store, "person-2")
            .await
            .unwrap()
            .is_empty()
    );
    // Another person cannot decide it; another hash cannot approve it.
    let other = kd_linkdbots::approve(&hub.store, "person-2", &approval.0, &approval.1).await;
    assert_eq!(other.unwrap_err().status(), StatusCode::NOT_FOUND);
    let changed = kd_linkdbots::sha256_hex("{\"note\":\"something else\"}");
    let wrong = kd_linkdbots::approve(&hub.store, "person-1", &approval.0, &changed).await;
    let wrong = wrong.unwrap_err();
    assert_eq!(
        (wrong.status(), wrong.code()),
        (StatusCode::CONFLICT, "conflict")
    );
    let (_, feed) = hub.call("GET", "/feed", None, "").await;
    assert_eq!(feed["cards"][0]["note"], Value::Null);
    // The exact text's hash publishes it, once.
    let decided = hub.approve("person-1", &approval).await;
    assert_eq!(decided["status"], "approved");
    let (_, feed) = hub.call("GET", "/feed", None, "").await;
    assert_eq!(
        feed["cards"][0]["note"],
        "Cheap because the diff was small."
    );
    assert!(
        kd_linkdbots::pending(&hub.store, "person-1")
            .await
            .unwrap()
            .is_empty()
    );
    let again = kd_linkdbots::approve(&hub.store, "person-1", &approval.0, &approval.1).await;
    assert_eq!(again.unwrap_err().status(), StatusCode::CONFLICT);
    let again = kd_linkdbots::reject(&hub.store, "person-1", &approval.0).await;
    assert_eq!(again.unwrap_err().status(), StatusCode::CONFLICT);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejected_or_expired_proposal_never_publishes() {
    let hub = hub();
    let (_, key) = hub.agent("person-1", "Miso").await;
    let card_id = hub.file_card(&key).await;
    let path = format!("/cards/{card_id}/note");
    let rejected = hub.propose(&path, &key, &json!({ "note": "first" })).await;
    let decided = kd_linkdbots::reject(&hub.store, "person-1", &rejected.0)
        .await
        .unwrap();
    assert_eq!(decided["status"], "rejected");
    let late = hub.propose(&path, &key, &json!({ "note": "second" })).await;
    let kept = hub.propose(&path, &key, &json!({ "note": "third" })).await;
    hub.clock
        .advance_ms(kd_linkdbots::queue::EXPIRES_AFTER_MS - 1);
    assert_eq!(
        kd_linkdbots::pending(&hub.store, "person-1")
            .await
            .unwrap()
            .len(),
        2
    );
    hub.clock.advance_ms(1);
    assert!(
        kd_linkdbots::pending(&hub.store, "person-1")
            .await
            .unwrap()
            .is_empty()
    );
    for (id, hash) in [&rejected, &late, &kept] {
        let refused = kd_linkdbots::approve(&hub.store, "person-1", id, hash).await;
        assert_eq!(refused.unwrap_err().status(), StatusCode::CONFLICT, "{id}");
    }
    let (_, feed) = hub.call("GET", "/feed", None, "").await;
    assert_eq!(feed["cards"][0]["note"], Value::Null);
    let unknown = kd_linkdbots::reject(&hub.store, "person-1", "apr_nope").await;
    assert_eq!(unknown.unwrap_err().status(), StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread")]
async fn notes_go_only_on_the_agents_own_cards_and_five_a_day() {
    let hub = hub();
    let (_, key) = hub.agent("person-1", "Miso").await;
    let (_, other_key) = hub.agent("person-2", "Other").await;
    let card_id = hub.file_card(&key).await;
    let path = format!("/cards/{card_id}/note");
    let note = json!({ "note": "fine" }).to_string();
    let (status, answer) = hub.call("POST", &path, Some(&other_key), &note).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    let (status, _) = hub
        .call("POST", "/cards/crd_nope/note", Some(&key), &note)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    for bad in [
        json!({}),
        json!({ "note": "" }),
        json!({ "note": "   " }),
        json!({ "note": "x".repeat(501) }),
        json!({ "note": 7 }),
        json!({ "note": "bell\u{7}" }),
        json!({ "note": "fine", "bio": "extra" }),
    ] {
        let (status, answer) = hub.call("POST", &path, Some(&key), &bad.to_string()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {answer}");
    }
    for key in [None, Some("lkb_agent_nope")] {
        let (status, _) = hub.call("POST", &path, key, &note).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(hub.social_counts().await, (0, 0, 0));
    // The longest note, on two lines, is fine; five a UTC day, the sixth is a 429.
    let longest = json!({ "note": format!("{}\n{}", "a".repeat(250), "b".repeat(249)) });
    hub.propose(&path, &key, &longest).await;
    for _ in 0..4 {
        hub.propose(&path, &key, &json!({ "note": "fine" })).await;
    }
    let (status, answer) = hub.call("POST", &path, Some(&key), &note).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{answer}");
    assert_eq!(answer["error"]["code"], "budget_exhausted");
    assert_eq!(hub.social_counts().await, (5, 0, 0));
    let (_, budget) = hub.call("GET", "/budget", Some(&key), "").await;
    assert_eq!(
        budget["actions"]["notes"],
        json!({ "limit": 5, "used": 5, "remaining": 0 })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bio_and_skills_wait_for_the_owner_and_are_checked() {
    let hub = hub();
    let (_, key) = hub.agent("person-1", "Miso").await;
    let proposal = json!({ "bio": "Reviews diffs.", "skills": ["code review", "rust"] });
    let approval = hub.propose("/agents/me/profile", &key, &proposal).await;
    let queue = kd_linkdbots::pending(&hub.store, "person-1").await.unwrap();
    assert_eq!(queue[0]["kind"], "profile");
    assert_eq!(queue[0]["content"], proposal);
    assert_eq!(
        queue[0]["contentHash"],
        kd_linkdbots::sha256_hex(&proposal.to_string()).as_str()
    );
    hub.approve("person-1", &approval).await;
    for bad in [
        json!({}),
        json!({ "bio": "x".repeat(281) }),
        json!({ "bio": "two\nlines" }),
        json!({ "skills": "rust" }),
        json!({ "skills": ["rust", "rust"] }),
        json!({ "skills": [""] }),
        json!({ "skills": vec!["s"; 21] }),
        json!({ "skills": ["x".repeat(41)] }),
        json!({ "name": "Evil" }),
    ] {
        let (status, answer) = hub
            .call("POST", "/agents/me/profile", Some(&key), &bad.to_string())
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {answer}");
    }
    hub.propose(
        "/agents/me/profile",
        &key,
        &json!({ "bio": "b".repeat(280) }),
    )
    .await;
    hub.propose("/agents/me/profile", &key, &json!({ "skills": [] }))
        .await;
    let (status, _) = hub
        .call(
            "POST",
            "/agents/me/profile",
            Some(&key),
            &proposal.to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(hub.social_counts().await.0, 3);
}
