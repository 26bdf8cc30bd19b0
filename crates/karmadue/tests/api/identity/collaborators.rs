//! find_collaborators (spec "find_collaborators"; docs/decisions.md 413): agents with recorded
//! work in a skill or a published offer, people counted and never listed, nonsense matching
//! nothing, refusals before anything.

use serde_json::{Value, json};

use crate::app::TestApp;

fn find(app: &TestApp, arguments: Value) -> Value {
    let reply = app.call("find_collaborators", arguments);
    assert_eq!(reply["ok"], true, "{reply}");
    reply
}

fn handles(reply: &Value) -> Vec<String> {
    reply["data"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["handle"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn bad_questions_are_refused_naming_the_field_and_nonsense_matches_nothing() {
    let app = TestApp::start();
    let before = app.log_len();
    for (arguments, field) in [
        (json!({}), "skill"),
        (json!({ "skill": "x".repeat(65) }), "skill"),
        (json!({ "skill": "tools\u{7}" }), "skill"),
        (json!({ "need": "word ".repeat(101) }), "need"),
        (json!({ "skill": "tools", "limit": 3 }), "limit"),
    ] {
        let reply = app.call("find_collaborators", arguments.clone());
        assert_eq!(reply["error"]["code"], "validation", "{arguments}: {reply}");
        assert_eq!(reply["error"]["field"], field, "{arguments}: {reply}");
    }
    let nonsense = find(&app, json!({ "skill": "qzxv wvkq" }));
    assert_eq!(nonsense["data"]["matched"], false);
    assert_eq!(nonsense["data"]["note"], "Nothing matched.");
    assert_eq!(nonsense["data"]["candidates"], json!([]));
    assert_eq!(nonsense["data"]["skill_key"], Value::Null);
    assert_eq!(nonsense["data"]["human_pool"]["reviewers"], 0);
    assert_eq!(app.log_len(), before);
}

/// An agent with one accepted answer in the tools topic.
fn skilled_helper(app: &TestApp) -> crate::app::Agent {
    let asker = crate::forum::poster(app, "Collab Forum Asker");
    let helper = crate::forum::poster(app, "Collab Skilled Helper");
    let thread = crate::forum::open_thread(app, &asker, "Which MCP runner is stable?", "body");
    let answer = crate::forum::reply_to(
        app,
        &helper,
        thread["thread_id"].as_str().unwrap(),
        "this one",
    );
    let accepted = app.signed(
        &asker,
        "mark_accepted",
        json!({ "agent_id": asker.agent_id, "post_id": answer["post_id"] }),
    );
    assert_eq!(accepted["ok"], true, "{accepted}");
    helper
}

/// An agent whose person published its offer to summarise PDFs.
fn published_offer(app: &TestApp) -> crate::app::Agent {
    let (_, token, offering) =
        crate::people::linked(app, "collab-owner@example.org", "Collab PDF Agent");
    let (status, offer) = app.rest(
        "offer_capability",
        &json!({ "agent_id": offering.agent_id, "title": "Summarise PDF reports", "description": "Careful summaries of long reports <b>fast</b>" }).to_string(),
        &[("authorization", &format!("Bearer {token}"))],
    );
    assert_eq!(
        (status, offer["data"]["status"].clone()),
        (200, json!("published")),
        "{offer}"
    );
    offering
}

#[test]
fn recorded_work_and_published_offers_match_and_people_are_only_counted() {
    let app = TestApp::start();
    let helper = skilled_helper(&app);
    let offering = published_offer(&app);

    let skilled = find(&app, json!({ "skill": "Forum.Tools" }));
    assert_eq!(handles(&skilled), vec![helper.handle.clone()], "{skilled}");
    let row = &skilled["data"]["candidates"][0];
    assert_eq!(
        (row["matched_by"].clone(), row["skill_score"].clone()),
        (json!(["skill"]), json!(2))
    );
    assert_eq!(skilled["data"]["skill_key"], "forum.tools");
    assert_eq!(skilled["data"]["note"], "1 agent matched.");

    // Every word of skill and need must be in the offer; its text comes back as data only.
    let offered = find(
        &app,
        json!({ "skill": "summarise", "need": "long PDF reports" }),
    );
    assert_eq!(
        handles(&offered),
        vec![offering.handle.clone()],
        "{offered}"
    );
    let row = &offered["data"]["candidates"][0];
    assert_eq!(
        (row["matched_by"].clone(), row["skill_score"].clone()),
        (json!(["offer"]), Value::Null)
    );
    assert_eq!(row["offer_title"], Value::Null);
    let items = offered["untrusted_content"]["items"].as_array().unwrap();
    assert!(
        items.iter().any(|item| item["id"] == row["offer_id"]
            && item["field"] == "offer_title"
            && item["text"] == "Summarise PDF reports"),
        "{offered}"
    );
    assert_eq!(
        find(&app, json!({ "need": "summarise spreadsheets" }))["data"]["matched"],
        false
    );

    // A revoked agent is no collaborator.
    let revoked = app.signed(
        &helper,
        "revoke_agent",
        json!({ "agent_id": helper.agent_id }),
    );
    assert_eq!(revoked["ok"], true, "{revoked}");
    let after = find(&app, json!({ "skill": "tools" }));
    assert_eq!(after["data"]["matched"], false, "{after}");
    // People who review agents' work are counted, never named.
    assert_eq!(after["data"]["human_pool"]["reviewers"], 0);
    let reviewer = format!(
        "person:{}",
        crate::standing::person_id(&app, "collab-owner@example.org")
    );
    crate::standing::review_stamp(
        &app,
        &offering,
        &reviewer,
        kd_karmadue::standing::stamps::HUMAN_REVIEWED,
        1,
    );
    let before = app.log_len();
    let after = find(&app, json!({ "skill": "tools" }));
    assert_eq!(after["data"]["human_pool"]["reviewers"], 1);
    let text = after.to_string();
    assert!(
        text.contains("post_verification_ask") && !text.contains("collab-owner@example.org"),
        "{text}"
    );
    assert_eq!(app.log_len(), before);
}
