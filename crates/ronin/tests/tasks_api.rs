//! The task chain (Ronin "Kinds" 1100-1106): an OFFER to RECEIVED with real BIP-340
//! signatures and the answers' templates, roles on a wanted listing, and each refusal with
//! the spec's prefix and nothing stored.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use kd_protocol::nostr::Event;
use serde_json::{Value, json};

use common::market::{
    ALICE, BOB, CAROL, accepted, listing, market, offer, offer_on, only_template, profile, refused,
    task_as,
};
use common::{NOW_S, batch, key, sign_template, signed, text};

#[tokio::test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario: each step acts on the state the step before it left"
)]
async fn a_task_runs_from_offer_to_received_on_the_templates_alone() {
    let hub = common::hub();
    let listed = market(&hub, None).await;
    let (alice, bob) = (key(&ALICE), key(&BOB));
    let offered = offer(&BOB, &alice, "summaries", 2.5);
    let body = accepted(&hub, &offered).await;
    let task = &body["task"];
    assert_eq!(task["id"], offered.id.as_str());
    assert_eq!(task["status"], "offered");
    assert_eq!(task["type"], "service");
    assert_eq!(task["listing"], listed.id.as_str());
    assert_eq!(
        task["roles"],
        json!({"agent": alice, "buyer": bob, "hirer": bob})
    );
    assert_eq!(task["accept"], Value::Null);
    assert_eq!(body["next"], json!([]), "nothing for the buyer to sign yet");
    // The compact view holds no event bodies; the full one does.
    assert!(
        task.get("events").is_none() && task.get("scope").is_none(),
        "{task}"
    );

    // Alice reads the task and signs what it hands her, step by step.
    let view = task_as(&hub, &offered.id, &alice).await;
    assert_eq!(view["task"]["scope"], "Summarise this PDF in five bullets.");
    assert_eq!(view["task"]["scan"]["level"], "clean");
    let accept = sign_template(&ALICE, NOW_S + 1, &only_template(&view, 1101));
    assert_eq!(
        accept.tags,
        vec![
            vec!["e".to_owned(), offered.id.clone()],
            vec!["p".to_owned(), bob.clone()]
        ]
    );
    let body = accepted(&hub, &accept).await;
    assert_eq!(body["task"]["status"], "accepted");
    assert_eq!(
        body["task"]["accept"],
        json!({"by_terms": false, "id": accept.id})
    );
    let deliver = sign_template(&ALICE, NOW_S + 2, &only_template(&body, 1102));
    assert_eq!(deliver.tag_value("e"), Some(accept.id.as_str()));
    let body = accepted(&hub, &deliver).await;
    assert_eq!(body["task"]["status"], "delivered");
    assert_eq!(body["next"], json!([]));

    let view = task_as(&hub, &offered.id, &bob).await;
    let complete = sign_template(&BOB, NOW_S + 3, &only_template(&view, 1103));
    let body = accepted(&hub, &complete).await;
    assert_eq!(body["task"]["status"], "completed");
    let next = body["next"].as_array().unwrap().clone();
    assert_eq!(
        next.iter()
            .map(|t| t["kind"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        vec![1104, 1105]
    );
    let rating = sign_template(&BOB, NOW_S + 4, &next[0]);
    assert_eq!(rating.tag_value("rating"), Some("5"));
    assert_eq!(accepted(&hub, &rating).await["task"]["rated"], true);
    let paid = sign_template(&BOB, NOW_S + 5, &next[1]);
    assert_eq!(paid.tag_value("amount"), Some("2.5"));
    assert_eq!(paid.tag_value("currency"), Some("USDC"));
    let body = accepted(&hub, &paid).await;
    assert_eq!(body["task"]["settlement"]["state"], "paid");

    let view = task_as(&hub, &offered.id, &alice).await;
    let received = sign_template(&ALICE, NOW_S + 6, &only_template(&view, 1106));
    let body = hub
        .call("POST", "/api/v1/events?full=1", &text(&received))
        .await
        .1;
    let task = &body["task"];
    assert_eq!(task["settlement"]["state"], "received", "{body}");
    assert_eq!(task["settlement"]["paid"]["amount"], "2.5");
    assert_eq!(task["rating"], 5);
    assert_eq!(task["price"], 2.5);
    assert_eq!(body["next"], json!([]));
    let ids: Vec<&str> = task["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|event| event["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            &offered, &accept, &deliver, &complete, &rating, &paid, &received
        ]
        .iter()
        .map(|event| event.id.as_str())
        .collect::<Vec<_>>()
    );
    // Nobody else gets templates; an unknown task is not found.
    assert_eq!(
        task_as(&hub, &offered.id, &key(&CAROL)).await["next"],
        json!([])
    );
    let (status, missing) = hub
        .call("GET", &format!("/api/v1/tasks/{}", listed.id), "")
        .await;
    assert_eq!(
        (status, missing["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("error: not found"))
    );
    assert_eq!(hub.task_count().await, 1);
}

#[tokio::test]
async fn on_a_wanted_listing_the_roles_flip() {
    let hub = common::hub();
    let (alice, bob) = (key(&ALICE), key(&BOB));
    let wanted = listing(
        &BOB,
        "need-a-logo",
        json!({"title": "Need a logo", "type": "wanted"}),
    );
    let (status, body) = hub
        .call(
            "POST",
            "/api/v1/events",
            &batch(&[&profile(&BOB, "Bob"), &wanted, &profile(&ALICE, "Alice")]),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Alice answers the wanted listing: she is the agent, Bob (the owner) the buyer.
    let answer = offer(&ALICE, &bob, "need-a-logo", 10.0);
    let body = accepted(&hub, &answer).await;
    assert_eq!(body["task"]["type"], "wanted");
    assert_eq!(
        body["task"]["roles"],
        json!({"agent": alice, "buyer": bob, "hirer": alice})
    );
    // Bob, the buyer, signs the ACCEPT; Alice then delivers.
    let view = task_as(&hub, &answer.id, &bob).await;
    let accept = sign_template(&BOB, NOW_S + 1, &only_template(&view, 1101));
    assert_eq!(accept.tag_value("p"), Some(alice.as_str()));
    let body = accepted(&hub, &accept).await;
    assert_eq!(body["next"], json!([]), "the buyer waits for the delivery");
    let view = task_as(&hub, &answer.id, &alice).await;
    let deliver = sign_template(&ALICE, NOW_S + 2, &only_template(&view, 1102));
    assert_eq!(deliver.tag_value("p"), Some(bob.as_str()));
    assert_eq!(
        accepted(&hub, &deliver).await["task"]["status"],
        "delivered"
    );
}

/// A PAID or RECEIVED: `e` and `p` as given, `amount` in USDC.
fn money(secret: &[u8; 32], at: u64, kind: u16, [e, p]: [&str; 2], amount: &str) -> Event {
    signed(
        secret,
        NOW_S + at,
        kind,
        &[
            &["e", e],
            &["p", p],
            &["amount", amount],
            &["currency", "USDC"],
        ],
        json!(""),
    )
}

#[tokio::test]
#[expect(
    clippy::too_many_lines,
    reason = "a table of refusals against one prepared state, each checked to change nothing"
)]
async fn each_rule_of_the_chain_refuses_with_its_prefix_and_stores_nothing() {
    let hub = common::hub();
    market(&hub, None).await;
    let (alice, bob, carol) = (key(&ALICE), key(&BOB), key(&CAROL));
    let first = offer(&BOB, &alice, "summaries", 2.0);
    accepted(&hub, &first).await;

    // OFFER: a stale or wrong owner key, yourself, no profile, no live listing, bad shapes.
    let scope = json!({"scope": "x", "price": 1, "currency": "USDC"});
    refused(
        &hub,
        &offer_on(&BOB, &alice, "summaries", &bob, scope.clone()),
        "invalid: an OFFER must name the listing owner's current (head) key in its p tag",
    )
    .await;
    refused(
        &hub,
        &offer(&ALICE, &alice, "summaries", 1.0),
        "restricted: you cannot hire yourself",
    )
    .await;
    refused(
        &hub,
        &offer(&CAROL, &alice, "summaries", 1.0),
        "invalid: publish a PROFILE (kind 0) before an OFFER",
    )
    .await;
    refused(
        &hub,
        &offer(&BOB, &alice, "no-such-listing", 1.0),
        "invalid: the a tag of an OFFER must name a live listing",
    )
    .await;
    refused(
        &hub,
        &offer_on(
            &BOB,
            &alice,
            "summaries",
            &alice,
            json!({"scope": "", "price": 1, "currency": "USDC"}),
        ),
        "invalid: scope must be a string of 1 to 2000 characters",
    )
    .await;
    refused(
        &hub,
        &offer_on(
            &BOB,
            &alice,
            "summaries",
            &alice,
            json!({"scope": "x", "price": -1, "currency": "USDC"}),
        ),
        "invalid: price must be a number >= 0",
    )
    .await;

    // ACCEPT: the wrong signer, a bad reference, the wrong p; then a second ACCEPT.
    let accept_by = |secret: &[u8; 32], e: &str, p: &str| {
        signed(secret, NOW_S + 1, 1101, &[&["e", e], &["p", p]], json!(""))
    };
    refused(
        &hub,
        &accept_by(&BOB, &first.id, &bob),
        "restricted: only the listing owner signs an ACCEPT",
    )
    .await;
    refused(
        &hub,
        &accept_by(&ALICE, &"ab".repeat(32), &bob),
        "invalid: the e tag of an ACCEPT must name the OFFER",
    )
    .await;
    refused(
        &hub,
        &accept_by(&ALICE, &first.id, &carol),
        "invalid: the p tag of an ACCEPT must name the offer's author",
    )
    .await;
    // A DELIVER before the ACCEPT.
    let early = signed(
        &ALICE,
        NOW_S + 1,
        1102,
        &[&["e", &first.id], &["p", &bob]],
        json!({}),
    );
    refused(&hub, &early, "invalid: this OFFER is not accepted yet").await;
    let accept = accept_by(&ALICE, &first.id, &bob);
    accepted(&hub, &accept).await;
    let again = signed(
        &ALICE,
        NOW_S + 2,
        1101,
        &[&["e", &first.id], &["p", &bob]],
        json!("{}"),
    );
    refused(&hub, &again, "duplicate: this OFFER is accepted already").await;

    // DELIVER: the buyer cannot, the OFFER is the wrong reference once an ACCEPT exists.
    let deliver_by = |secret: &[u8; 32], e: &str| {
        signed(
            secret,
            NOW_S + 3,
            1102,
            &[&["e", e], &["p", &bob]],
            json!({"note": "done"}),
        )
    };
    refused(
        &hub,
        &deliver_by(&BOB, &accept.id),
        "restricted: only the agent on the task signs a DELIVER",
    )
    .await;
    refused(
        &hub,
        &deliver_by(&ALICE, &first.id),
        "invalid: the e tag of a DELIVER must name the ACCEPT, or the OFFER when accepted by terms",
    )
    .await;
    let deliver = deliver_by(&ALICE, &accept.id);
    accepted(&hub, &deliver).await;
    refused(
        &hub,
        &signed(
            &ALICE,
            NOW_S + 4,
            1102,
            &[&["e", &accept.id], &["p", &bob]],
            json!({}),
        ),
        "duplicate: this task is delivered already",
    )
    .await;

    // COMPLETE, RATING, PAID, RECEIVED: signers, references, tags, one of each.
    refused(
        &hub,
        &signed(
            &ALICE,
            NOW_S + 4,
            1103,
            &[&["e", &deliver.id], &["p", &alice]],
            json!(""),
        ),
        "restricted: only the buyer on the task signs a COMPLETE",
    )
    .await;
    let complete = signed(
        &BOB,
        NOW_S + 4,
        1103,
        &[&["e", &deliver.id], &["p", &alice]],
        json!(""),
    );
    accepted(&hub, &complete).await;
    refused(
        &hub,
        &signed(
            &BOB,
            NOW_S + 5,
            1104,
            &[&["e", &deliver.id], &["p", &alice], &["rating", "4"]],
            json!(""),
        ),
        "invalid: the e tag of a RATING must name the COMPLETE",
    )
    .await;
    refused(
        &hub,
        &signed(
            &BOB,
            NOW_S + 5,
            1104,
            &[&["e", &complete.id], &["p", &alice], &["rating", "6"]],
            json!(""),
        ),
        "invalid: the rating tag must be \"1\" to \"5\"",
    )
    .await;
    let rating = signed(
        &BOB,
        NOW_S + 5,
        1104,
        &[&["e", &complete.id], &["p", &alice], &["rating", "4"]],
        json!("Quick."),
    );
    accepted(&hub, &rating).await;
    refused(
        &hub,
        &signed(
            &BOB,
            NOW_S + 6,
            1104,
            &[&["e", &complete.id], &["p", &alice], &["rating", "5"]],
            json!(""),
        ),
        "duplicate: this task is rated already",
    )
    .await;
    let pay = |secret: &[u8; 32], at: u64, amount: &str| {
        money(secret, at, 1105, [&complete.id, &alice], amount)
    };
    refused(
        &hub,
        &pay(&ALICE, 6, "2.00"),
        "restricted: only the buyer who completed signs a PAID",
    )
    .await;
    refused(
        &hub,
        &pay(&BOB, 6, "two"),
        "invalid: the amount tag is a decimal number as a string, like \"2.50\"",
    )
    .await;
    let paid = pay(&BOB, 6, "2.00");
    accepted(&hub, &paid).await;
    refused(
        &hub,
        &pay(&BOB, 7, "2.00"),
        "duplicate: this task is paid already",
    )
    .await;
    let receive = |secret: &[u8; 32], at: u64, amount: &str| {
        money(secret, at, 1106, [&paid.id, &bob], amount)
    };
    refused(
        &hub,
        &receive(&BOB, 7, "2"),
        "restricted: only the agent named in the PAID signs a RECEIVED",
    )
    .await;
    // What arrived differs: recorded, and the settlement shows the mismatch.
    let body = accepted(&hub, &receive(&ALICE, 7, "1.50")).await;
    assert_eq!(body["task"]["settlement"]["state"], "mismatch");
    refused(
        &hub,
        &receive(&ALICE, 8, "2"),
        "duplicate: this PAID is received already",
    )
    .await;

    // A revoked key writes nothing more.
    accepted(&hub, &signed(&BOB, NOW_S + 9, 1108, &[], json!("lost"))).await;
    refused(
        &hub,
        &offer(&BOB, &alice, "summaries", 3.0),
        "restricted: this key is revoked",
    )
    .await;
    // A batch with one bad event keeps none of it.
    let (log, tasks) = (hub.log_len(), hub.task_count().await);
    let (status, body) = hub
        .call(
            "POST",
            "/api/v1/events",
            &batch(&[
                &profile(&CAROL, "Carol"),
                &offer(&CAROL, &alice, "summaries", 2.0),
                &offer(&CAROL, &carol, "summaries", 2.0),
            ]),
        )
        .await;
    assert_eq!(
        (status, body["index"].as_u64()),
        (StatusCode::BAD_REQUEST, Some(2)),
        "{body}"
    );
    assert_eq!((hub.log_len(), hub.task_count().await), (log, tasks));
}
