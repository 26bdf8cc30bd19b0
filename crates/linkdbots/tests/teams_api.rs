//! Orgs and teams (spec "What is published": an agent's owner and teams; "Reading": `GET
//! /teams/{id}`, `GET /orgs/{handle}`), decision 324: a person makes them and puts their own
//! agents in; anyone reads them. A refusal changes nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use common::{Hub, hub};
use kd_linkdbots::teams;
use serde_json::json;

async fn counts(hub: &Hub) -> (i64, i64, i64) {
    hub.store
        .read(|conn| {
            Ok::<_, kd_core::store::StoreError>(kd_linkdbots::teams_store::counts(conn).unwrap())
        })
        .await
        .unwrap()
}

async fn sign_up(hub: &Hub, person_id: &'static str, name: &'static str) {
    hub.store
        .write(move |txn| {
            let email = format!("{person_id}@example.org");
            kd_core::people::sign_up(txn, person_id, &email, name, "not-a-hash")
        })
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_makes_an_org_and_a_team_of_their_agents_and_anyone_reads_them() {
    let hub = hub();
    sign_up(&hub, "kdh_ada", "Ada").await;
    let (agent_id, _) = hub.agent("kdh_ada", "Miso").await;
    let random = hub.lk.random.as_ref();
    let org = teams::create_org(&hub.store, random, "kdh_ada", "acme-labs", "Acme Labs")
        .await
        .unwrap();
    assert_eq!(org["handle"], "acme-labs");
    let team = teams::create_team(
        &hub.store,
        random,
        "kdh_ada",
        "Reviewers",
        Some("acme-labs"),
    )
    .await
    .unwrap();
    let team_id = team["id"].as_str().unwrap().to_owned();
    assert!(team_id.starts_with("tm_"));
    assert_eq!(team["members"], json!([]));
    let added = teams::add_member(&hub.store, "kdh_ada", &team_id, &agent_id)
        .await
        .unwrap();
    let member = json!({ "id": agent_id, "handle": "miso", "name": "Miso", "status": "active" });
    assert_eq!(added["members"], json!([member]));
    let (status, public) = hub
        .call("GET", &format!("/teams/{team_id}"), None, "")
        .await;
    assert_eq!(status, StatusCode::OK, "{public}");
    assert_eq!(public["name"], "Reviewers");
    assert_eq!(
        public["org"],
        json!({ "handle": "acme-labs", "name": "Acme Labs" })
    );
    assert_eq!(public["owner"], json!({ "name": "Ada" }));
    assert_eq!(public["members"], json!([member]));
    let (status, org) = hub.call("GET", "/orgs/acme-labs", None, "").await;
    assert_eq!(status, StatusCode::OK, "{org}");
    assert_eq!(org["name"], "Acme Labs");
    assert_eq!(org["owner"], json!({ "name": "Ada" }));
    assert_eq!(org["teams"][0]["id"], team_id.as_str());
    assert_eq!(org["teams"][0]["members"], json!([member]));
    let (_, profile) = hub
        .call("GET", &format!("/agents/{agent_id}/profile"), None, "")
        .await;
    assert_eq!(
        profile["teams"],
        json!([{ "id": team_id, "name": "Reviewers", "org": { "handle": "acme-labs", "name": "Acme Labs" } }])
    );
    // A team in no org; the person's own listing.
    teams::create_team(&hub.store, random, "kdh_ada", "Solo", None)
        .await
        .unwrap();
    let mine = teams::mine(&hub.store, "kdh_ada").await.unwrap();
    assert_eq!(mine["orgs"].as_array().unwrap().len(), 1);
    let solo = mine["teams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|team| team["name"] == "Solo")
        .unwrap();
    assert_eq!(solo["org"], json!(null));
    assert_eq!(counts(&hub).await, (1, 2, 1));
    for path in ["/teams/tm_nope", "/orgs/nope"] {
        let (status, answer) = hub.call("GET", path, None, "").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {answer}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn refusals_make_no_org_team_or_membership() {
    let hub = hub();
    let (mine, _) = hub.agent("person-1", "Miso").await;
    let (theirs, _) = hub.agent("person-2", "Other").await;
    let (store, random) = (&hub.store, hub.lk.random.as_ref());
    teams::create_org(store, random, "person-1", "acme", "Acme")
        .await
        .unwrap();
    let team = teams::create_team(store, random, "person-1", "Reviewers", None)
        .await
        .unwrap();
    let team_id = team["id"].as_str().unwrap();
    teams::add_member(store, "person-1", team_id, &mine)
        .await
        .unwrap();
    let before = counts(&hub).await;
    let refusals = [
        (
            teams::create_org(store, random, "person-2", "acme", "Again").await,
            "conflict",
        ),
        (
            teams::create_org(store, random, "person-2", "A", "Caps").await,
            "invalid_request",
        ),
        (
            teams::create_org(store, random, "person-2", "-x", "Dash").await,
            "invalid_request",
        ),
        (
            teams::create_org(store, random, "person-2", "ok", "").await,
            "invalid_request",
        ),
        (
            teams::create_team(store, random, "person-2", "T", Some("acme")).await,
            "not_found",
        ),
        (
            teams::create_team(store, random, "person-2", " ", None).await,
            "invalid_request",
        ),
        (
            teams::add_member(store, "person-1", team_id, &theirs).await,
            "not_found",
        ),
        (
            teams::add_member(store, "person-2", team_id, &theirs).await,
            "not_found",
        ),
        (
            teams::add_member(store, "person-1", team_id, &mine).await,
            "conflict",
        ),
        (
            teams::add_member(store, "person-1", "tm_nope", &mine).await,
            "not_found",
        ),
    ];
    for (at, (refused, code)) in refusals.into_iter().enumerate() {
        assert_eq!(refused.unwrap_err().code(), code, "refusal {at}");
    }
    assert_eq!(counts(&hub).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_takes_an_agent_out_of_their_team_and_refusals_change_nothing() {
    let hub = hub();
    let (miso, _) = hub.agent("person-1", "Miso").await;
    let (theirs, _) = hub.agent("person-2", "Other").await;
    let (store, random) = (&hub.store, hub.lk.random.as_ref());
    let team = teams::create_team(store, random, "person-1", "Reviewers", None)
        .await
        .unwrap();
    let team_id = team["id"].as_str().unwrap();
    teams::add_member(store, "person-1", team_id, &miso)
        .await
        .unwrap();
    let before = counts(&hub).await;
    // Someone else's team, an agent not in it, an unknown team: 404, nothing removed.
    for (person, team, agent) in [
        ("person-2", team_id, miso.as_str()),
        ("person-1", team_id, theirs.as_str()),
        ("person-1", "tm_nope", miso.as_str()),
    ] {
        let refused = teams::remove_member(store, person, team, agent).await;
        assert_eq!(
            refused.unwrap_err().code(),
            "not_found",
            "{person} {team} {agent}"
        );
    }
    assert_eq!(counts(&hub).await, before);
    let removed = teams::remove_member(store, "person-1", team_id, &miso)
        .await
        .unwrap();
    assert_eq!(removed["members"], json!([]));
    assert_eq!(counts(&hub).await, (before.0, before.1, before.2 - 1));
    let (_, profile) = hub
        .call("GET", &format!("/agents/{miso}/profile"), None, "")
        .await;
    assert_eq!(profile["teams"], json!([]));
    let again = teams::remove_member(store, "person-1", team_id, &miso).await;
    assert_eq!(again.unwrap_err().code(), "not_found");
    // Out of the team, it can be put back.
    teams::add_member(store, "person-1", team_id, &miso)
        .await
        .unwrap();
}
