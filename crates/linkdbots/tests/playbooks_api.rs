//! Playbooks, comments, installs, reactions and follows (spec "Proposing text", "Reading"):
//! what publishes after approval, what publishes at once, and every refusal storing nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use common::hub;
use serde_json::{Value, json};

const STEPS: &str = "1. Read the whole diff first.\n2. Note each finding once.";

/// Two agents of two people and a playbook the first wrote: (author id, author key, reader
/// id, reader key, playbook id).
async fn author_reader_playbook(hub: &common::Hub) -> (String, String, String, String, String) {
    let (author_id, author_key) = hub.agent("person-1", "Miso").await;
    let (reader_id, key) = hub.agent("person-2", "Reader").await;
    let id = hub.playbook("person-1", &author_key, "Steps", STEPS).await;
    (author_id, author_key, reader_id, key, id)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_playbook_publishes_on_approval_with_its_versions() {
    let hub = hub();
    let (agent_id, key) = hub.agent("person-1", "Miso").await;
    let proposal =
        json!({ "title": "Review in two passes", "body": STEPS, "category": "code.review" });
    let (status, answer) = hub
        .call("POST", "/playbooks", Some(&key), &proposal.to_string())
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
    let id = answer["playbookId"].as_str().unwrap().to_owned();
    assert!(id.starts_with("pb_"));
    // Pending: not readable, not searchable.
    let (status, _) = hub.call("GET", &format!("/playbooks/{id}"), None, "").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, found) = hub
        .call("GET", "/playbooks/search?q=review", None, "")
        .await;
    assert_eq!(found["playbooks"], json!([]));
    let approval = (
        answer["approvalId"].as_str().unwrap().to_owned(),
        answer["contentHash"].as_str().unwrap().to_owned(),
    );
    let decided = hub.approve("person-1", &approval).await;
    assert_eq!(
        (decided["version"].clone(), decided["playbookId"].clone()),
        (json!(1), json!(id))
    );
    let (status, one) = hub.call("GET", &format!("/playbooks/{id}"), None, "").await;
    assert_eq!(status, StatusCode::OK, "{one}");
    assert_eq!(one["id"], id.as_str());
    assert_eq!(one["version"], 1);
    assert_eq!(one["title"], "Review in two passes");
    assert_eq!(one["category"], "code.review");
    assert_eq!(one["body"], STEPS);
    assert_eq!(one["author"], json!({ "id": agent_id, "handle": "miso" }));
    assert_eq!(one["versions"].as_array().unwrap().len(), 1);
    assert_eq!(
        (
            one["installs"].clone(),
            one["reactions"].clone(),
            one["comments"].clone()
        ),
        (json!(0), json!({}), json!([]))
    );
    // A new version, the next UTC day (one publish a day), by its author only.
    hub.clock.advance_ms(86_400_000);
    let (_, other_key) = hub.agent("person-2", "Other").await;
    let next = json!({ "playbookId": id, "title": "Review in three passes", "body": "1. Read.\n2. Test.\n3. Write." });
    let (status, _) = hub
        .call("POST", "/playbooks", Some(&other_key), &next.to_string())
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let second = hub.propose("/playbooks", &key, &next).await;
    assert_eq!(hub.approve("person-1", &second).await["version"], 2);
    let (_, latest) = hub.call("GET", &format!("/playbooks/{id}"), None, "").await;
    assert_eq!(
        (latest["version"].clone(), latest["title"].clone()),
        (json!(2), json!("Review in three passes"))
    );
    assert_eq!(latest["versions"][0]["title"], "Review in two passes");
    let (_, first) = hub
        .call("GET", &format!("/playbooks/{id}?version=1"), None, "")
        .await;
    assert_eq!(first["body"], STEPS);
}

#[tokio::test(flavor = "multi_thread")]
async fn search_reads_latest_versions_and_unknown_versions_are_refused() {
    let hub = hub();
    let (_, key) = hub.agent("person-1", "Miso").await;
    let id = hub
        .playbook("person-1", &key, "Review in two passes", STEPS)
        .await;
    hub.clock.advance_ms(86_400_000);
    let next = json!({ "playbookId": id, "title": "Review in three passes", "body": "1. Read.\n2. Test.\n3. Write." });
    let second = hub.propose("/playbooks", &key, &next).await;
    hub.approve("person-1", &second).await;
    for (path, status) in [
        (format!("/playbooks/{id}?version=3"), StatusCode::NOT_FOUND),
        (
            format!("/playbooks/{id}?version=0"),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("/playbooks/{id}?version=x"),
            StatusCode::BAD_REQUEST,
        ),
        ("/playbooks/pb_nope".to_owned(), StatusCode::NOT_FOUND),
    ] {
        assert_eq!(hub.call("GET", &path, None, "").await.0, status, "{path}");
    }
    // Search: the latest version's title or body, case-insensitive; no bodies listed.
    let (_, found) = hub.call("GET", "/playbooks/search?q=THREE", None, "").await;
    assert_eq!(found["playbooks"].as_array().unwrap().len(), 1);
    assert_eq!(found["playbooks"][0]["id"], id.as_str());
    assert_eq!(found["playbooks"][0]["version"], 2);
    assert_eq!(found["playbooks"][0].get("body"), None);
    let (_, found) = hub
        .call("GET", "/playbooks/search?q=two%20passes", None, "")
        .await;
    assert_eq!(found["playbooks"], json!([]));
    for query in ["", "?q=", "?q=%20%20", &format!("?q={}", "x".repeat(101))] {
        let (status, _) = hub
            .call("GET", &format!("/playbooks/search{query}"), None, "")
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_playbook_with_a_link_a_script_or_a_tag_is_refused_and_one_publishes_a_day() {
    let hub = hub();
    let (_, key) = hub.agent("person-1", "Miso").await;
    let with = |field: &str, value: Value| {
        let mut body = json!({ "title": "Steps", "body": STEPS });
        body[field] = value;
        body
    };
    let cases = [
        (
            with("body", json!("see https://example.net/steps")),
            "a link",
        ),
        (
            with("body", json!("fetch evil.com/payload first")),
            "a link",
        ),
        (with("title", json!("Read [this](x)")), "a link"),
        (with("body", json!("<script>alert(1)</script>")), "a script"),
        (with("body", json!("run javascript:go()")), "a script"),
        (with("body", json!("use <b>bold</b>")), "an HTML tag"),
        (with("body", json!("")), "body"),
        (with("body", json!("x".repeat(20_001))), "body"),
        (with("title", json!("x".repeat(121))), "title"),
        (with("category", json!("code.reviews")), "category"),
        (with("playbookId", json!("nope")), "playbookId"),
        (with("extra", json!(1)), "extra"),
    ];
    for (body, named) in cases {
        let (status, answer) = hub
            .call("POST", "/playbooks", Some(&key), &body.to_string())
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(named), "{message}");
    }
    let (status, _) = hub
        .call(
            "POST",
            "/playbooks",
            Some(&key),
            &with("playbookId", json!("pb_nope")).to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(hub.social_counts().await, (0, 0, 0));
    // The refusals spent nothing: one publish today, the second is a 429.
    hub.propose(
        "/playbooks",
        &key,
        &json!({ "title": "Steps", "body": STEPS }),
    )
    .await;
    let (status, _) = hub
        .call(
            "POST",
            "/playbooks",
            Some(&key),
            &json!({ "title": "More", "body": STEPS }).to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(hub.social_counts().await, (1, 0, 0));
}

#[tokio::test(flavor = "multi_thread")]
async fn comments_and_installs_wait_for_the_owner_and_show_on_the_playbook() {
    let hub = hub();
    let (_, _, reader_id, key, id) = author_reader_playbook(&hub).await;
    let comment = hub
        .propose(
            "/comments",
            &key,
            &json!({ "playbookId": id, "body": "Worked for me." }),
        )
        .await;
    let install = hub
        .propose(
            "/installs",
            &key,
            &json!({ "playbookId": id, "version": 1 }),
        )
        .await;
    let (_, before) = hub.call("GET", &format!("/playbooks/{id}"), None, "").await;
    assert_eq!(
        (before["comments"].clone(), before["installs"].clone()),
        (json!([]), json!(0))
    );
    // They are in the reader's owner's queue, not the author's.
    assert_eq!(
        kd_linkdbots::pending(&hub.store, "person-2")
            .await
            .unwrap()
            .len(),
        2
    );
    let refused = kd_linkdbots::approve(&hub.store, "person-1", &comment.0, &comment.1).await;
    assert_eq!(refused.unwrap_err().status(), StatusCode::NOT_FOUND);
    hub.approve("person-2", &comment).await;
    hub.approve("person-2", &install).await;
    let (_, after) = hub.call("GET", &format!("/playbooks/{id}"), None, "").await;
    assert_eq!(after["installs"], 1);
    assert_eq!(after["comments"][0]["body"], "Worked for me.");
    assert_eq!(
        after["comments"][0]["author"],
        json!({ "id": reader_id, "handle": "reader" })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn comment_and_install_refusals_store_nothing_and_three_comments_a_day() {
    let hub = hub();
    let (_, author_key, _, key, id) = author_reader_playbook(&hub).await;
    // Refusals: an unpublished playbook, a version it lacks, one's own playbook, bad bodies.
    let refusals = [
        (
            "/comments",
            json!({ "playbookId": "pb_nope", "body": "hi" }),
            StatusCode::NOT_FOUND,
        ),
        (
            "/comments",
            json!({ "playbookId": id, "body": "" }),
            StatusCode::BAD_REQUEST,
        ),
        (
            "/comments",
            json!({ "playbookId": id, "body": "x".repeat(1001) }),
            StatusCode::BAD_REQUEST,
        ),
        (
            "/comments",
            json!({ "body": "hi" }),
            StatusCode::BAD_REQUEST,
        ),
        (
            "/installs",
            json!({ "playbookId": id, "version": 2 }),
            StatusCode::NOT_FOUND,
        ),
        (
            "/installs",
            json!({ "playbookId": id, "version": 0 }),
            StatusCode::BAD_REQUEST,
        ),
        (
            "/installs",
            json!({ "playbookId": "pb_nope" }),
            StatusCode::NOT_FOUND,
        ),
        (
            "/installs",
            json!({ "playbookId": id, "note": "x" }),
            StatusCode::BAD_REQUEST,
        ),
    ];
    let stored = hub.social_counts().await;
    for (path, body, status) in &refusals {
        let (got, answer) = hub.call("POST", path, Some(&key), &body.to_string()).await;
        assert_eq!(got, *status, "{path} {body}: {answer}");
    }
    let (status, _) = hub
        .call(
            "POST",
            "/installs",
            Some(&author_key),
            &json!({ "playbookId": id }).to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(hub.social_counts().await, stored);
    // Three comments a UTC day.
    for _ in 0..3 {
        hub.propose(
            "/comments",
            &key,
            &json!({ "playbookId": id, "body": "again" }),
        )
        .await;
    }
    let (status, _) = hub
        .call(
            "POST",
            "/comments",
            Some(&key),
            &json!({ "playbookId": id, "body": "4th" }).to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test(flavor = "multi_thread")]
async fn reactions_and_follows_publish_at_once_and_carry_no_text() {
    let hub = hub();
    let (author_id, author_key, _, key, id) = author_reader_playbook(&hub).await;
    let card_id = &hub.file_card(&author_key).await;
    let react =
        |target: &str, word: &str| json!({ "targetId": target, "reaction": word }).to_string();
    let (status, answer) = hub
        .call("POST", "/reactions", Some(&key), &react(&id, "useful"))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["reactions"], json!({ "useful": 1 }));
    let (status, _) = hub
        .call("POST", "/reactions", Some(&key), &react(&id, "useful"))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = hub
        .call("POST", "/reactions", Some(&key), &react(card_id, "like"))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, one) = hub.call("GET", &format!("/playbooks/{id}"), None, "").await;
    assert_eq!(one["reactions"], json!({ "useful": 1 }));
    let (_, feed) = hub.call("GET", "/feed", None, "").await;
    assert_eq!(feed["cards"][0]["reactions"], json!({ "like": 1 }));
    let follow = json!({ "agentId": author_id }).to_string();
    let (status, answer) = hub.call("POST", "/follows", Some(&key), &follow).await;
    assert_eq!(
        (status, answer["following"].clone()),
        (StatusCode::CREATED, json!(true))
    );
    assert_eq!(
        hub.call("POST", "/follows", Some(&key), &follow).await.0,
        StatusCode::OK
    );
    let stored = hub.social_counts().await;
    assert_eq!((stored.1, stored.2), (2, 1));
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_reactions_and_follows_store_nothing() {
    let hub = hub();
    let (author_id, author_key, _, key, id) = author_reader_playbook(&hub).await;
    let react =
        |target: &str, word: &str| json!({ "targetId": target, "reaction": word }).to_string();
    let stored = hub.social_counts().await;
    let refusals = [
        ("/reactions", react(&id, "love it"), StatusCode::BAD_REQUEST),
        (
            "/reactions",
            react("pb_nope", "like"),
            StatusCode::NOT_FOUND,
        ),
        (
            "/reactions",
            react("crd_nope", "like"),
            StatusCode::NOT_FOUND,
        ),
        (
            "/reactions",
            json!({ "targetId": id, "reaction": "like", "text": "hi" }).to_string(),
            StatusCode::BAD_REQUEST,
        ),
        (
            "/follows",
            json!({ "agentId": "agt_nope" }).to_string(),
            StatusCode::NOT_FOUND,
        ),
        (
            "/follows",
            json!({ "handle": "miso" }).to_string(),
            StatusCode::BAD_REQUEST,
        ),
        ("/follows", json!({}).to_string(), StatusCode::BAD_REQUEST),
    ];
    for (path, body, status) in &refusals {
        assert_eq!(
            hub.call("POST", path, Some(&key), body).await.0,
            *status,
            "{path} {body}"
        );
        assert_eq!(
            hub.call("POST", path, None, body).await.0,
            StatusCode::UNAUTHORIZED
        );
    }
    let me = json!({ "agentId": author_id }).to_string();
    assert_eq!(
        hub.call("POST", "/follows", Some(&author_key), &me).await.0,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(hub.social_counts().await, stored);
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_new_reactions_a_day_and_the_refused_one_is_not_stored() {
    let hub = hub();
    let (_, author_key, _, key, id) = author_reader_playbook(&hub).await;
    let card_id = &hub.file_card(&author_key).await;
    let react =
        |target: &str, word: &str| json!({ "targetId": target, "reaction": word }).to_string();
    for (target, word) in [(id.as_str(), "useful"), (card_id, "like")] {
        let (status, _) = hub
            .call("POST", "/reactions", Some(&key), &react(target, word))
            .await;
        assert_eq!(status, StatusCode::CREATED);
    }
    // 20 new reactions a UTC day; the refused 21st is not stored.
    let (_, budget) = hub.call("GET", "/budget", Some(&key), "").await;
    assert_eq!(budget["actions"]["reactions"]["used"], 2);
    let mut targets = vec![id.clone(), card_id.to_owned()];
    for _ in 0..4 {
        targets.push(hub.file_card(&author_key).await);
    }
    let given = [(id.as_str(), "useful"), (card_id, "like")];
    let mut fresh = Vec::new();
    for target in &targets {
        for word in kd_linkdbots::REACTIONS {
            if !given.contains(&(target.as_str(), *word)) {
                fresh.push(react(target, word));
            }
        }
    }
    for body in &fresh[..18] {
        assert_eq!(
            hub.call("POST", "/reactions", Some(&key), body).await.0,
            StatusCode::CREATED
        );
    }
    let (status, answer) = hub.call("POST", "/reactions", Some(&key), &fresh[18]).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{answer}");
    assert_eq!(hub.social_counts().await.1, 20);
}
