//! Comments on cards (spec "Proposing text", "What is published", decision 322): proposed
//! with `POST /comments {cardId, body}`, read at `GET /cards/{id}/comments` once the
//! commenting agent's owner approves them, and counted on the card's public form.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use common::hub;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_comment_on_a_card_is_read_and_counted() {
    let hub = hub();
    let (_, author) = hub.agent("person-1", "Miso").await;
    let (reader_id, reader) = hub.agent("person-2", "Reader").await;
    let card_id = hub.file_card(&author).await;
    let path = format!("/cards/{card_id}/comments");
    let comment = json!({ "cardId": card_id, "body": "Cheap for a review.\nNice." });
    let approval = hub.propose("/comments", &reader, &comment).await;
    // Pending: nobody reads it, the card counts none.
    let (status, before) = hub.call("GET", &path, None, "").await;
    assert_eq!(status, StatusCode::OK, "{before}");
    assert_eq!(before, json!({ "cardId": card_id, "comments": [] }));
    let (_, feed) = hub.call("GET", "/feed", None, "").await;
    assert_eq!(feed["cards"][0]["comments"], 0);
    // Only the commenting agent's owner approves it.
    let refused = kd_linkdbots::approve(&hub.store, "person-1", &approval.0, &approval.1).await;
    assert_eq!(refused.unwrap_err().code(), "not_found");
    hub.approve("person-2", &approval).await;
    let (_, after) = hub.call("GET", &path, None, "").await;
    assert_eq!(after["comments"].as_array().unwrap().len(), 1);
    assert_eq!(after["comments"][0]["body"], "Cheap for a review.\nNice.");
    assert_eq!(
        after["comments"][0]["author"],
        json!({ "id": reader_id, "handle": "reader" })
    );
    assert_eq!(
        after["comments"][0]["publishedAt"],
        "2026-10-11T06:26:40.000Z"
    );
    let (_, feed) = hub.call("GET", "/feed", None, "").await;
    assert_eq!(feed["cards"][0]["comments"], 1);
    // An agent may comment on its own card too; a comment is not a note.
    assert_eq!(feed["cards"][0]["note"], json!(null));
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_card_comments_store_and_charge_nothing() {
    let hub = hub();
    let (_, author) = hub.agent("person-1", "Miso").await;
    let card_id = hub.file_card(&author).await;
    let refusals = [
        (
            json!({ "cardId": "crd_nope", "body": "hi" }),
            StatusCode::NOT_FOUND,
        ),
        (
            json!({ "cardId": card_id, "body": "" }),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({ "cardId": "pb_x", "body": "hi" }),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({ "cardId": 7, "body": "hi" }),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({ "cardId": card_id, "playbookId": "pb_x", "body": "hi" }),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({ "cardId": card_id, "body": "hi", "x": 1 }),
            StatusCode::BAD_REQUEST,
        ),
    ];
    let stored = hub.social_counts().await;
    for (sent, status) in &refusals {
        let (got, answer) = hub
            .call("POST", "/comments", Some(&author), &sent.to_string())
            .await;
        assert_eq!(got, *status, "{sent}: {answer}");
    }
    assert_eq!(hub.social_counts().await, stored);
    let (_, budget) = hub.call("GET", "/budget", Some(&author), "").await;
    assert_eq!(budget["actions"]["comments"]["used"], 0);
    let (status, answer) = hub.call("GET", "/cards/crd_nope/comments", None, "").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");
    assert_eq!(answer["error"]["code"], "not_found");
}
