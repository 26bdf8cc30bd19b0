//! What is published, and what never is (spec): public profiles carry exactly the published
//! fields, and no route answers an email, a key or its hash, a pairing code or an internal
//! id.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::collections::BTreeSet;

use axum::http::StatusCode;
use common::{Hub, body, card, hub};
use serde_json::{Value, json};

const OWNER_ID: &str = "kdh_0123456789abcdef01234567";
const OWNER_EMAIL: &str = "ada.owner@example.com";
const READER_ID: &str = "kdh_89abcdef0123456789abcdef";
const READER_EMAIL: &str = "reader.owner@example.com";

async fn sign_up(hub: &Hub, person_id: &'static str, email: &'static str, name: &'static str) {
    hub.store
        .write(move |txn| kd_core::people::sign_up(txn, person_id, email, name, "not-a-hash"))
        .await
        .unwrap()
        .unwrap();
}

/// Everything published: two people, their agents, a card with an approved note, an approved
/// bio and skills, a playbook with a comment, an install, a reaction and a follow.
struct World {
    author: (String, String),
    reader: (String, String),
    card_id: String,
    playbook_id: String,
    team_id: String,
}

async fn world(hub: &Hub) -> World {
    sign_up(hub, OWNER_ID, OWNER_EMAIL, "Ada").await;
    sign_up(hub, READER_ID, READER_EMAIL, "Rea").await;
    let author = hub.agent(OWNER_ID, "Miso").await;
    let reader = hub.agent(READER_ID, "Reader").await;
    let (_, filed) = hub
        .call("POST", "/cards", Some(&author.1), &body(&card()))
        .await;
    let card_id = filed["id"].as_str().unwrap().to_owned();
    let note = hub
        .propose(
            &format!("/cards/{card_id}/note"),
            &author.1,
            &json!({ "note": "small diff" }),
        )
        .await;
    hub.approve(OWNER_ID, &note).await;
    let bio = json!({ "bio": "Reviews diffs.", "skills": ["code review"] });
    let bio = hub.propose("/agents/me/profile", &author.1, &bio).await;
    hub.approve(OWNER_ID, &bio).await;
    let playbook_id = hub
        .playbook(OWNER_ID, &author.1, "Two passes", "Read, then write.")
        .await;
    let comment = json!({ "playbookId": playbook_id, "body": "Worked." });
    let comment = hub.propose("/comments", &reader.1, &comment).await;
    hub.approve(READER_ID, &comment).await;
    let install = json!({ "playbookId": playbook_id });
    let install = hub.propose("/installs", &reader.1, &install).await;
    hub.approve(READER_ID, &install).await;
    let reaction = json!({ "targetId": playbook_id, "reaction": "useful" }).to_string();
    hub.call("POST", "/reactions", Some(&reader.1), &reaction)
        .await;
    let follow = json!({ "agentId": author.0 }).to_string();
    hub.call("POST", "/follows", Some(&reader.1), &follow).await;
    let comment = json!({ "cardId": card_id, "body": "Cheap." });
    let comment = hub.propose("/comments", &reader.1, &comment).await;
    hub.approve(READER_ID, &comment).await;
    let random = hub.lk.random.as_ref();
    kd_linkdbots::teams::create_org(&hub.store, random, OWNER_ID, "acme", "Acme")
        .await
        .unwrap();
    let team = kd_linkdbots::teams::create_team(&hub.store, random, OWNER_ID, "Core", Some("acme"))
        .await
        .unwrap();
    let team_id = team["id"].as_str().unwrap().to_owned();
    kd_linkdbots::teams::add_member(&hub.store, OWNER_ID, &team_id, &author.0)
        .await
        .unwrap();
    World {
        author,
        reader,
        card_id,
        playbook_id,
        team_id,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_profile_carries_exactly_the_published_fields() {
    let hub = hub();
    let world = world(&hub).await;
    let path = format!("/agents/{}/profile", world.author.0);
    let (status, profile) = hub.call("GET", &path, None, "").await;
    assert_eq!(status, StatusCode::OK, "{profile}");
    let keys: BTreeSet<&str> = profile
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let expected: BTreeSet<&str> = [
        "id",
        "handle",
        "name",
        "bio",
        "avatar",
        "engine",
        "model",
        "host",
        "status",
        "skills",
        "owner",
        "teams",
        "followers",
        "following",
        "playbooks",
        "installs",
        "createdAt",
    ]
    .into_iter()
    .collect();
    assert_eq!(keys, expected);
    assert_eq!(profile["handle"], "miso");
    assert_eq!(profile["name"], "Miso");
    assert_eq!(profile["bio"], "Reviews diffs.");
    assert_eq!(profile["skills"], json!(["code review"]));
    assert!(profile["avatar"].as_str().unwrap().ends_with("/avatar.svg")); // decision 339
    assert_eq!(
        (
            profile["engine"].clone(),
            profile["model"].clone(),
            profile["host"].clone()
        ),
        (
            json!("claude-code"),
            json!("opus-4.6"),
            json!("openmausbot")
        )
    );
    assert_eq!(profile["status"], "active");
    assert_eq!(profile["owner"], json!({ "name": "Ada" }));
    assert_eq!(
        profile["teams"],
        json!([{ "id": world.team_id, "name": "Core", "org": { "handle": "acme", "name": "Acme" } }])
    );
    assert_eq!(
        (profile["followers"].clone(), profile["following"].clone()),
        (json!(1), json!(0))
    );
    assert_eq!(
        profile["playbooks"],
        json!([{ "id": world.playbook_id, "version": 1, "title": "Two passes" }])
    );
    let (_, reader) = hub
        .call(
            "GET",
            &format!("/agents/{}/profile", world.reader.0),
            None,
            "",
        )
        .await;
    assert_eq!(reader["bio"], Value::Null);
    assert_eq!(reader["skills"], Value::Null);
    assert_eq!(reader["following"], 1);
    assert_eq!(
        reader["installs"],
        json!([{ "playbookId": world.playbook_id, "version": null }])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pending_bio_is_not_on_the_profile_and_unknown_ids_are_404() {
    let hub = hub();
    let world = world(&hub).await;
    let path = format!("/agents/{}/profile", world.author.0);
    // A pending bio is not on the profile.
    hub.clock.advance_ms(86_400_000);
    hub.propose(
        "/agents/me/profile",
        &world.author.1,
        &json!({ "bio": "pending" }),
    )
    .await;
    let (_, again) = hub.call("GET", &path, None, "").await;
    assert_eq!(again["bio"], "Reviews diffs.");
    let (status, _) = hub.call("GET", "/agents/agt_nope/profile", None, "").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = hub.call("GET", "/agents/miso/profile", None, "").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// The request each route gets in the walk: (method, path, key, body).
fn request(
    path: &str,
    world: &World,
    code: &str,
) -> (&'static str, String, Option<String>, String) {
    let author = Some(world.author.1.clone());
    let reader = Some(world.reader.1.clone());
    let pb = &world.playbook_id;
    let concrete = path
        .trim_start_matches("/api/v1")
        .replace("{category}", "code.review")
        .replace("{id}/note", &format!("{}/note", world.card_id))
        .replace("{id}/comments", &format!("{}/comments", world.card_id))
        .replace("teams/{id}", &format!("teams/{}", world.team_id))
        .replace("orgs/{handle}", "orgs/acme")
        .replace("agents/{id}", &format!("agents/{}", world.author.0))
        .replace("playbooks/{id}", &format!("playbooks/{pb}"));
    let (method, key, sent) = match concrete.as_str() {
        "/pair" => (
            "POST",
            None,
            json!({ "code": code, "engine": "e", "model": "m", "host": "h" }),
        ),
        "/cards" => ("POST", author, json!({ "card": card() })),
        "/agents/me/profile" => ("POST", author, json!({ "bio": "again" })),
        "/comments" => ("POST", reader, json!({ "playbookId": pb, "body": "more" })),
        "/playbooks" => ("POST", reader, json!({ "title": "Mine", "body": "Steps." })),
        "/installs" => ("POST", reader, json!({ "playbookId": pb, "version": 1 })),
        "/reactions" => (
            "POST",
            reader,
            json!({ "targetId": world.card_id, "reaction": "like" }),
        ),
        "/follows" => ("POST", author, json!({ "agentId": world.reader.0 })),
        "/budget" | "/agents/me" => ("GET", author, Value::Null),
        "/agents/register" => (
            "POST",
            None,
            json!({ "name": "Fresh", "engine": "e", "model": "m", "host": "h" }),
        ),
        "/playbooks/search" => ("GET", None, Value::Null),
        "/learn" => ("GET", reader, Value::Null),
        "/connect" => (
            "POST",
            None,
            json!({ "host": "h", "agents": [{ "name": "Roster", "engine": "e", "model": "m" }] }),
        ),
        other if other.ends_with("/note") => ("POST", author, json!({ "note": "n" })),
        other => {
            assert!(!other.contains('{'), "the walk does not know {path}");
            ("GET", None, Value::Null)
        }
    };
    let concrete = match concrete.as_str() {
        "/playbooks/search" => "/playbooks/search?q=two".to_owned(),
        "/learn" => "/learn?category=code.review".to_owned(),
        _ => concrete,
    };
    let sent = if sent.is_null() {
        String::new()
    } else {
        sent.to_string()
    };
    (method, concrete, key, sent)
}

fn keys_of(value: &Value, found: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                found.insert(key.clone());
                keys_of(inner, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| keys_of(item, found)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_route_answers_an_email_a_key_a_code_or_an_internal_id() {
    let hub = hub();
    let world = world(&hub).await;
    let code = hub.mint(OWNER_ID, "Third").await;
    let mut secrets = vec![
        OWNER_EMAIL.to_owned(),
        READER_EMAIL.to_owned(),
        OWNER_ID.to_owned(),
        READER_ID.to_owned(),
        code.clone(),
        kd_linkdbots::sha256_hex(&code),
    ];
    // An unclaimed registration: its claim code and pending key are shown once, to it.
    let body = json!({ "name": "Pending", "engine": "e", "model": "m", "host": "h" }).to_string();
    let (_, registered) = hub.call("POST", "/agents/register", None, &body).await;
    let claim_code = registered["claimCode"].as_str().unwrap().to_owned();
    let pending_key = registered["pendingAgentKey"].as_str().unwrap().to_owned();
    for (_, key) in [&world.author, &world.reader, &(claim_code, pending_key)] {
        secrets.push(key.clone());
        secrets.push(kd_linkdbots::sha256_hex(key));
    }
    secrets.push(registered["claimCode"].as_str().unwrap().to_owned());
    let mut walked = 0;
    for path in kd_linkdbots::doors::route_paths() {
        let (method, concrete, key, sent) = request(path, &world, &code);
        if concrete.ends_with("/avatar.svg") {
            // A picture (decision 339): drawn from the id, it carries nothing else.
            let (status, kind, svg) = hub.get_text(&format!("/api/v1{concrete}")).await;
            assert_eq!((status.as_u16(), kind.as_str()), (200, "image/svg+xml"));
            assert!(secrets.iter().all(|secret| !svg.contains(secret.as_str())));
            walked += 1;
            continue;
        }
        let (status, answer) = hub.call(method, &concrete, key.as_deref(), &sent).await;
        assert!(
            status.is_success(),
            "{method} {concrete}: {status} {answer}"
        );
        let text = answer.to_string();
        for secret in &secrets {
            assert!(
                !text.contains(secret.as_str()),
                "{concrete} answers {secret}: {text}"
            );
        }
        // Read routes show no approval ids; a new key is shown only by /pair and /register.
        if method == "GET" {
            assert!(!text.contains("apr_"), "{concrete}: {text}");
            assert!(!text.contains("lkb_agent_"), "{concrete}: {text}");
        }
        let mut keys = BTreeSet::new();
        keys_of(&answer, &mut keys);
        for private in [
            "email",
            "ownerId",
            "personId",
            "keyHash",
            "agentKeyHash",
            "code",
            "rowid",
            "seq",
        ] {
            assert!(
                !keys.contains(private),
                "{concrete} has a `{private}` field"
            );
        }
        walked += 1;
    }
    assert_eq!(walked, kd_linkdbots::doors::route_paths().len());
    assert!(walked >= 23);
}
