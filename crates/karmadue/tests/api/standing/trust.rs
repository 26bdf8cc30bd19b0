//! get_standing, trust from independent reviewers, paused agents.

use super::*;

#[test]
fn get_standing_is_never_about_a_person_and_names_unknown_agents() {
    let app = TestApp::start();
    let person = app.call(
        "get_standing",
        json!({ "subject_id": "kdh_0123456789abcdef01234567" }),
    );
    assert_eq!(person["error"]["code"], "validation");
    assert_eq!(person["error"]["field"], "subject_id");
    let unknown = app.call("get_standing", json!({ "agent_id": "kd_000000000000" }));
    assert_eq!(unknown["error"]["code"], "not_found");
    assert_eq!(unknown["error"]["field"], "agent_id");
    let agent = app.register("Keyed Agent");
    let by_key = app.call("get_standing", json!({ "subject_id": agent.public_key() }));
    assert_eq!(
        by_key["data"]["subject_id"],
        json!(agent.agent_id),
        "{by_key}"
    );
    let missing = app.call("get_standing", json!({}));
    assert_eq!(missing["error"]["code"], "validation");
}

#[test]
fn trust_counts_each_independent_reviewer_once_and_never_a_newcomer_peer() {
    use kd_karmadue::standing::stamps::{HUMAN_REVIEWED, PEER_REVIEWED};
    let app = TestApp::start();
    let subject = app.register("Reviewed Subject");
    let trust = |app: &TestApp| {
        app.call("read_scores", json!({ "subject_id": subject.agent_id }))["data"]["trust_score"]
            .clone()
    };
    // A person's review counts once they have had their account 7 days, and once however
    // often they stamp.
    app.browser()
        .sign_up("reviewer@example.org", "Rita Reviewer", PASSWORD);
    let person = format!("person:{}", person_id(&app, "reviewer@example.org"));
    review_stamp(&app, &subject, &person, HUMAN_REVIEWED, 1);
    assert_eq!(
        trust(&app),
        0,
        "an account made just now counts for nothing"
    );
    app.clock.advance_ms(7 * 86_400_000);
    review_stamp(&app, &subject, &person, HUMAN_REVIEWED, 2);
    review_stamp(&app, &subject, &person, HUMAN_REVIEWED, 4);
    assert_eq!(trust(&app), 20);
    // A person id with no account behind it counts for nothing either.
    review_stamp(
        &app,
        &subject,
        "person:kdh_aaaaaaaaaaaaaaaaaaaaaaaa",
        HUMAN_REVIEWED,
        5,
    );
    assert_eq!(trust(&app), 20);
    // A peer registered just now counts for nothing.
    let fresh = app.register("Fresh Reviewer");
    review_stamp(&app, &subject, &fresh.agent_id, PEER_REVIEWED, 3);
    assert_eq!(trust(&app), 20);
    // Established peers count 10 each, at most 30 together, each once.
    let peers: Vec<Agent> = [
        "Alder Reviewer",
        "Birch Checker",
        "Cedar Auditor",
        "Dogwood Examiner",
    ]
    .iter()
    .map(|name| app.register(name))
    .collect();
    app.clock.advance_ms(7 * 86_400_000);
    for (index, peer) in peers.iter().enumerate() {
        review_stamp(
            &app,
            &subject,
            &peer.agent_id,
            PEER_REVIEWED,
            10 + u32::try_from(index).unwrap(),
        );
        review_stamp(
            &app,
            &subject,
            &peer.agent_id,
            PEER_REVIEWED,
            20 + u32::try_from(index).unwrap(),
        );
    }
    assert_eq!(
        trust(&app),
        50,
        "20 from the person, 30 (capped) from four established peers"
    );
    let scores = app.call("read_scores", json!({ "subject_id": subject.agent_id }));
    assert_eq!(scores["data"]["basis"]["peer_reviews"], 4);
    assert_eq!(scores["data"]["basis"]["human_reviews"], 1);
    let verified = app.call("verify_agent", json!({ "agent_id": subject.agent_id }));
    assert_eq!(verified["data"]["trust_score"], 50);
}

#[test]
fn a_paused_agent_still_reads_its_standing_but_cannot_write() {
    let app = TestApp::start();
    let (owner, agent) = linked(&app, "pause-read@example.org", "Paused Reader");
    let you = owner.get("/you");
    let paused = owner.post(
        "/you/agents",
        &[
            ("csrf", &crate::app::hidden(&you.text, "csrf")),
            ("agent_id", &agent.agent_id),
            ("action", "pause"),
        ],
    );
    assert_eq!(paused.status, 303);
    let read = signed_read(&app, &agent, "get_standing", &json!({}));
    assert_eq!(read["ok"], true, "{read}");
    let write = rename(&app, &agent, "Paused Writer");
    assert_eq!(write["error"]["code"], "forbidden");
    assert!(
        write["error"]["message"]
            .as_str()
            .unwrap()
            .contains("paused")
    );
}
