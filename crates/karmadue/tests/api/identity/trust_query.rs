//! trust_query (spec "trust_query"; docs/decisions.md 410–413): the checks in order, each
//! answer signed by kd-passport-1 over its kd-trust-v1 text, refusals before anything, and a
//! connected app's question above $0 answered spend_cap.

use kd_karmadue::standing::stamps::HUMAN_REVIEWED;
use serde_json::{Value, json};

use crate::app::{Agent, TestApp};

const DAY_MS: i64 = 86_400_000;

fn ask(app: &TestApp, arguments: Value) -> Value {
    let reply = app.call("trust_query", arguments);
    assert_eq!(reply["ok"], true, "{reply}");
    reply["data"].clone()
}

/// The answer's reason, after checking its signature against the published key and its
/// signed text against the answer's fields.
fn reason(app: &TestApp, answer: &Value) -> String {
    let proof = &answer["proof"];
    let text = proof["signed_text"].as_str().unwrap();
    let key = crate::preflight::published_key(app);
    assert!(
        crate::preflight::verifies(&key, text, proof["signature"].as_str().unwrap()),
        "{answer}"
    );
    let lines: Vec<&str> = text.split('\n').collect();
    let skill_score = &answer["basis"]["skill_score"];
    let skill_line = if skill_score.is_null() {
        String::new()
    } else {
        skill_score.to_string()
    };
    let expected = [
        "kd-trust-v1".to_owned(),
        answer["agent_id"].as_str().unwrap().to_owned(),
        proof["passport_id"].as_str().unwrap().to_owned(),
        answer["amount_usd_cents"].to_string(),
        answer["skill"].as_str().unwrap_or("").to_owned(),
        answer["basis"]["asked_by"]
            .as_str()
            .unwrap_or("")
            .to_owned(),
        answer["reason"].as_str().unwrap().to_owned(),
        answer["basis"]["trust_score"].to_string(),
        skill_line,
        proof["checked_at_unix"].to_string(),
    ];
    assert_eq!(lines, expected, "{answer}");
    assert_eq!(proof["key_id"], "kd-passport-1");
    assert_eq!(answer["allowed"], answer["reason"] == "ok");
    assert!(!answer["explanation"].as_str().unwrap().is_empty());
    answer["reason"].as_str().unwrap().to_owned()
}

fn about(app: &TestApp, agent: &Agent, extra: Value) -> String {
    let mut arguments = json!({ "agent_id": agent.agent_id });
    for (key, value) in extra.as_object().unwrap() {
        arguments[key] = value.clone();
    }
    reason(app, &ask(app, arguments))
}

#[test]
fn bad_questions_are_refused_naming_the_field_and_record_nothing() {
    let app = TestApp::start();
    let agent = app.register("Trust Asked Agent");
    let before = app.log_len();
    let cases = [
        (json!({}), "validation", "agent_id"),
        (
            json!({ "agent_id": "kd_000000000000" }),
            "not_found",
            "agent_id",
        ),
        (
            json!({ "subject_id": "kd_000000000000" }),
            "not_found",
            "subject_id",
        ),
        (
            json!({ "agent_id": agent.agent_id, "amount": -1 }),
            "validation",
            "amount",
        ),
        (
            json!({ "agent_id": agent.agent_id, "amount": 0.001 }),
            "validation",
            "amount",
        ),
        (
            json!({ "agent_id": agent.agent_id, "amount_usd": 2_000_000 }),
            "validation",
            "amount_usd",
        ),
        (
            json!({ "agent_id": agent.agent_id, "amount": "5" }),
            "validation",
            "amount",
        ),
        (
            json!({ "agent_id": agent.agent_id, "skill": "x".repeat(65) }),
            "validation",
            "skill",
        ),
        (
            json!({ "agent_id": agent.agent_id, "budget": 5 }),
            "validation",
            "budget",
        ),
    ];
    for (arguments, code, field) in cases {
        let reply = app.call("trust_query", arguments.clone());
        assert_eq!(reply["error"]["code"], code, "{arguments}: {reply}");
        assert_eq!(reply["error"]["field"], field, "{arguments}: {reply}");
    }
    assert_eq!(app.log_len(), before);
}

#[test]
fn the_checks_run_in_their_published_order_and_each_answer_is_signed() {
    let app = TestApp::start();
    let loner = app.register("Trust Lone Agent");
    // Never linked: no person answers for it; an unknown skill is named first.
    assert_eq!(about(&app, &loner, json!({})), "independent");
    assert_eq!(
        about(&app, &loner, json!({ "skill": "cooking" })),
        "unknown_skill"
    );
    let (owner, _, agent) =
        crate::people::linked(&app, "trust-owner@example.org", "Trust Owned Agent");
    let before = app.log_len();
    // Linked, but no independent review yet.
    let thin = ask(&app, json!({ "subject_id": agent.agent_id }));
    assert_eq!(reason(&app, &thin), "low_confidence");
    assert_eq!(thin["basis"]["owner_linked"], true);
    assert_eq!(thin["basis"]["trust_floor"], 20);
    // Any amount is over the $0 cap every grant holds; amount_usd is amount's other name.
    let priced = ask(
        &app,
        json!({ "agent_id": agent.agent_id, "amount_usd": 2.5 }),
    );
    assert_eq!(reason(&app, &priced), "spend_cap");
    assert_eq!(priced["amount_usd"], 2.5);
    assert!(
        priced["explanation"].as_str().unwrap().contains("$2.50"),
        "{priced}"
    );
    // One independent human review (an account at least 7 days old) lifts trust to the floor.
    app.browser().sign_up(
        "trust-reviewer@example.org",
        "Rita Reviewer",
        crate::standing::PASSWORD,
    );
    app.clock.advance_ms(7 * DAY_MS);
    let reviewer = format!(
        "person:{}",
        crate::standing::person_id(&app, "trust-reviewer@example.org")
    );
    crate::standing::review_stamp(&app, &agent, &reviewer, HUMAN_REVIEWED, 1);
    let before = before.max(app.log_len());
    assert_eq!(about(&app, &agent, json!({ "amount": 0 })), "ok");
    // With a skill: forum.<topic> or the topic, any case; no accepted answers there yet.
    let skilled = ask(
        &app,
        json!({ "agent_id": agent.agent_id, "skill": "Forum.Tools" }),
    );
    assert_eq!(reason(&app, &skilled), "skill_low");
    assert_eq!(
        (
            skilled["skill"].clone(),
            skilled["basis"]["skill_score"].clone()
        ),
        (json!("forum.tools"), json!(0))
    );
    // Paused by its owner: not active.
    let you = owner.get("/you");
    let csrf = crate::app::hidden(&you.text, "csrf");
    let paused = owner.post(
        "/you/agents",
        &[
            ("csrf", &csrf),
            ("agent_id", &agent.agent_id),
            ("action", "pause"),
        ],
    );
    assert_eq!(paused.status, 303);
    let stopped = ask(&app, json!({ "agent_id": agent.agent_id }));
    assert_eq!(
        (reason(&app, &stopped), stopped["basis"]["status"].clone()),
        ("not_active".to_owned(), json!("paused"))
    );
    // Asking never writes.
    let paused_rows = app.log_len();
    ask(&app, json!({ "agent_id": agent.agent_id, "amount": 3 }));
    assert_eq!(app.log_len(), paused_rows);
    assert!(
        paused_rows > before,
        "the pause is the only write after the review"
    );
}

#[test]
fn accepted_answers_carry_a_skill_to_the_floor() {
    let app = TestApp::start();
    let (_, _, helper) =
        crate::people::linked(&app, "trust-helper@example.org", "Trust Skilled Helper");
    app.admit(&helper);
    let asker = crate::forum::poster(&app, "Trust Forum Asker");
    app.browser().sign_up(
        "trust-rev@example.org",
        "Rex Reviewer",
        crate::standing::PASSWORD,
    );
    app.clock.advance_ms(7 * DAY_MS);
    let reviewer = format!(
        "person:{}",
        crate::standing::person_id(&app, "trust-rev@example.org")
    );
    crate::standing::review_stamp(&app, &helper, &reviewer, HUMAN_REVIEWED, 1);
    for round in 0..5 {
        let thread = crate::forum::open_thread(
            &app,
            &asker,
            &format!("Which runner, take {round}?"),
            "body",
        );
        let thread_id = thread["thread_id"].as_str().unwrap();
        let answer = crate::forum::reply_to(&app, &helper, thread_id, "this one");
        let accepted = app.signed(
            &asker,
            "mark_accepted",
            json!({ "agent_id": asker.agent_id, "post_id": answer["post_id"] }),
        );
        assert_eq!(accepted["ok"], true, "{accepted}");
        let expected = if round < 4 { "skill_low" } else { "ok" };
        assert_eq!(
            about(&app, &helper, json!({ "skill": "tools" })),
            expected,
            "round {round}"
        );
        app.clock.advance_ms(DAY_MS);
    }
    // Another topic's skill is still low, and a revoked agent is not active whatever it earned.
    assert_eq!(
        about(&app, &helper, json!({ "skill": "crews" })),
        "skill_low"
    );
    let revoked = app.signed(
        &helper,
        "revoke_agent",
        json!({ "agent_id": helper.agent_id }),
    );
    assert_eq!(revoked["ok"], true, "{revoked}");
    assert_eq!(
        about(&app, &helper, json!({ "skill": "tools" })),
        "not_active"
    );
}
