//! Submissions that are not graded, the daily limits and caps, concurrent submissions, the
//! technical bonus, and evidence that cites every listing.

use super::*;

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "a table of refusals against one prepared state, each checked to change nothing"
)]
fn unusable_submissions_are_not_graded_do_not_count_and_write_nothing() {
    let app = TestApp::with_catalog();
    let agent = newcomer(&app, "Sloppy Submitter");
    let attempt = read_attempt(&app, &agent);
    let right = attempt.right_answer();
    let choice = right["choice"].clone();
    let evidence = right["evidence"].clone();
    let before = app.log_len();
    let id = &attempt.attempt_id;
    let cases: Vec<(Value, &str)> = vec![
        (json!({ "attempt_id": id }), "choice"),
        (
            json!({ "attempt_id": id, "answer": { "evidence": evidence } }),
            "choice",
        ),
        (
            json!({ "attempt_id": id, "answer": { "choice": "  ", "evidence": evidence } }),
            "answer.choice",
        ),
        (
            json!({ "attempt_id": id, "answer": { "choice": choice } }),
            "evidence",
        ),
        (
            json!({ "attempt_id": id, "choice": choice, "evidence": "too short, 23 chars...." }),
            "evidence",
        ),
        (
            json!({ "attempt_id": id, "choice": choice, "evidence": evidence, "actions": "read" }),
            "actions",
        ),
        (
            json!({ "attempt_id": id, "answer": { "choice": choice, "evidence": evidence, "actions": { "read": true } } }),
            "answer.actions",
        ),
        (
            json!({ "attempt_id": id, "answer": { "choice": choice, "evidence": evidence, "actions": ["read", 7] } }),
            "answer.actions",
        ),
        (
            json!({ "attempt_id": id, "answer": { "choice": choice, "evidence": evidence, "note": "x" } }),
            "answer.note",
        ),
        (json!({ "attempt_id": id, "answer": "read it" }), "answer"),
        (
            json!({ "attempt_id": id, "answer": { "choice": choice, "evidence": evidence }, "choice": "kd:res:npm:left-pad" }),
            "choice",
        ),
        (
            json!({ "attempt_id": id, "choice": "kdl_adm_0000000000000000", "evidence": evidence }),
            "choice",
        ),
    ];
    for (mut arguments, field) in cases {
        arguments["agent_id"] = json!(agent.agent_id);
        let reply = signed(&app, &agent, "submit_admission_test", arguments.clone());
        assert_eq!(error_code(&reply), "validation", "{arguments}: {reply}");
        assert_eq!(reply["error"]["field"], field, "{arguments}: {reply}");
        assert_eq!(app.log_len(), before, "{arguments}");
    }
    // None of them was graded: the attempt is still open and the count is still 0.
    let graded = submit(&app, &agent, &attempt.attempt_id, right.clone());
    assert_eq!(graded["data"]["result"], "passed", "{graded}");
    assert_eq!(graded["data"]["graded_last_24h"], 1);

    // One grade per attempt.
    let before = app.log_len();
    let again = submit(&app, &agent, &attempt.attempt_id, right);
    assert_eq!(error_code(&again), "not_found", "{again}");
    assert_eq!(again["error"]["attempt_status"], "graded");
    assert_eq!(app.log_len(), before);

    // An attempt expires after an hour; someone else's attempt is not found.
    let late = read_attempt(&app, &agent);
    app.clock.advance_ms(3_600_000);
    let before = app.log_len();
    let expired = submit(&app, &agent, &late.attempt_id, late.right_answer());
    assert_eq!(error_code(&expired), "not_found", "{expired}");
    assert_eq!(expired["error"]["attempt_status"], "expired");
    assert_eq!(app.log_len(), before);
    let other = newcomer(&app, "Attempt Thief");
    let fresh = read_attempt(&app, &agent);
    let before = app.log_len();
    let stolen = submit(&app, &other, &fresh.attempt_id, fresh.right_answer());
    assert_eq!(error_code(&stolen), "not_found", "{stolen}");
    assert_eq!(stolen["error"]["field"], "attempt_id");
    assert_eq!(app.log_len(), before);
}

#[test]
fn graded_submissions_are_limited_to_five_a_day_and_starts_to_twenty() {
    let app = TestApp::with_catalog();
    let agent = newcomer(&app, "Daily Limit");
    let first_graded = app.clock.now_ms();
    for round in 0..5 {
        let attempt = read_attempt(&app, &agent);
        let decoy = attempt.decoys()[0].clone();
        let reply = submit(
            &app,
            &agent,
            &attempt.attempt_id,
            json!({ "choice": decoy.listing_id, "evidence": "I picked this one on a hunch, sorry." }),
        );
        assert_eq!(reply["data"]["result"], "failed", "{reply}");
        assert_eq!(reply["data"]["graded_last_24h"], round + 1);
    }
    let sixth = read_attempt(&app, &agent);
    assert_eq!(sixth.reply["data"]["graded_last_24h"], 5);
    let before = app.log_len();
    let limited = submit(&app, &agent, &sixth.attempt_id, sixth.right_answer());
    assert_eq!(error_code(&limited), "rate_limited", "{limited}");
    let retry = limited["error"]["retry_after_s"].as_i64().unwrap();
    assert!(retry > 0 && retry <= 86_400, "{retry}");
    assert_eq!(app.log_len(), before);
    // The window rolls: a day after the first graded submission, grading works again.
    app.clock.set_ms(first_graded + DAY_MS + 60_000);
    let passed = pass(&app, &agent);
    assert!(passed["data"]["graded_last_24h"].as_i64().unwrap() <= 5);

    // Starting is capped too: 20 attempts a rolling day.
    let starter = newcomer(&app, "Eager Starter");
    for _ in 0..20 {
        start(&app, &starter);
    }
    let before = app.log_len();
    let refused = signed(
        &app,
        &starter,
        "start_admission_test",
        json!({ "agent_id": starter.agent_id }),
    );
    assert_eq!(error_code(&refused), "rate_limited", "{refused}");
    assert!(refused["error"]["retry_after_s"].as_i64().unwrap() > 0);
    assert_eq!(app.log_len(), before);
}

#[test]
fn concurrent_submissions_of_one_attempt_grade_it_once() {
    let app = TestApp::with_catalog();
    let agent = newcomer(&app, "Racing Submitter");
    let attempt = read_attempt(&app, &agent);
    let arguments = json!({
        "agent_id": agent.agent_id,
        "attempt_id": attempt.attempt_id,
        "answer": attempt.right_answer(),
    })
    .to_string();
    tick(&app);
    let requests: Vec<Vec<(String, String)>> = (0..6)
        .map(|_| {
            app.sign(
                &agent.key,
                "submit_admission_test",
                &agent.agent_id,
                &arguments,
                &fresh_nonce(),
            )
        })
        .collect();
    let before = app.log_len();
    let replies: Vec<Value> = std::thread::scope(|scope| {
        let handles: Vec<_> = requests
            .iter()
            .map(|headers| {
                let app = &app;
                let arguments = &arguments;
                scope.spawn(move || {
                    let borrowed: Vec<(&str, &str)> = headers
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect();
                    app.call_text("submit_admission_test", arguments, &borrowed)
                        .0
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .collect()
    });
    let passed = replies
        .iter()
        .filter(|reply| reply["data"]["result"] == "passed")
        .count();
    let graded_refusals = replies
        .iter()
        .filter(|reply| reply["error"]["attempt_status"] == "graded")
        .count();
    assert_eq!((passed, graded_refusals), (1, 5), "{replies:?}");
    assert_eq!(app.log_len(), before + 3);
    assert_eq!(rows(&app, "SELECT COUNT(*) FROM stamps"), 1);
    assert_eq!(rows(&app, "SELECT COUNT(*) FROM technical_bonuses"), 1);
}

#[test]
fn the_technical_bonus_counts_once_per_owner() {
    let app = TestApp::with_catalog();
    let browser = app.browser();
    browser.sign_up("owner@example.org", "Owner", PASSWORD);
    let first = newcomer(&app, "Owned First");
    let second = newcomer(&app, "Owned Second");
    link(&app, &browser, &first);
    link(&app, &browser, &second);

    assert_eq!(pass(&app, &first)["data"]["technical_bonus"], 2);
    let other = pass(&app, &second);
    assert_eq!(
        other["data"]["technical_bonus"], 0,
        "the owner already got it"
    );
    assert_eq!(
        other["data"]["stamp_issued"], true,
        "the stamp is per agent"
    );
    assert_eq!(scores(&app, &first)["technical_score"], 2);
    assert_eq!(scores(&app, &second)["technical_score"], 0);

    // An agent that passed unowned keeps its bonus until it joins an owner who had one.
    let loner = newcomer(&app, "Owned Later");
    assert_eq!(pass(&app, &loner)["data"]["technical_bonus"], 2);
    assert_eq!(scores(&app, &loner)["technical_score"], 2);
    link(&app, &browser, &loner);
    assert_eq!(scores(&app, &loner)["technical_score"], 0);
    assert_eq!(scores(&app, &first)["technical_score"], 2);
    for agent in [&first, &second, &loner] {
        assert_eq!(scores(&app, agent)["trust_score"], 0);
    }
}

#[test]
fn cards_offers_and_preferences_have_daily_caps_that_write_nothing_when_reached() {
    let app = TestApp::start();
    let agent = newcomer(&app, "Busy Card Giver");
    let cases: [(&str, Value, usize); 3] = [
        ("invite_agent", json!({ "agent_id": agent.agent_id }), 20),
        (
            "offer_capability",
            json!({ "agent_id": agent.agent_id, "title": "Summaries" }),
            10,
        ),
        (
            "update_preferences",
            json!({ "agent_id": agent.agent_id, "preferences": { "tone": "brief" } }),
            20,
        ),
    ];
    for (tool, arguments, cap) in cases {
        for _ in 0..cap {
            let reply = signed(&app, &agent, tool, arguments.clone());
            assert_eq!(reply["ok"], true, "{tool}: {reply}");
        }
        let before = app.log_len();
        let refused = signed(&app, &agent, tool, arguments);
        assert_eq!(error_code(&refused), "rate_limited", "{tool}: {refused}");
        let retry = refused["error"]["retry_after_s"].as_i64().unwrap();
        assert!(retry > 0 && retry <= 86_400, "{retry}");
        assert_eq!(app.log_len(), before, "{tool}");
    }
    // A day later each works again.
    app.clock.advance_ms(DAY_MS);
    let again = signed(
        &app,
        &agent,
        "invite_agent",
        json!({ "agent_id": agent.agent_id }),
    );
    assert_eq!(again["ok"], true, "{again}");
}

#[test]
fn evidence_that_cites_every_listing_at_once_is_a_guess_and_fails() {
    let app = TestApp::with_catalog();
    let agent = newcomer(&app, "Shotgun Citer");
    let attempt = read_attempt(&app, &agent);
    let suitable = attempt.suitable();
    // Every license and claim the agent could find, for all three listings.
    let everything: Vec<String> = attempt
        .listings
        .iter()
        .flat_map(|seen| {
            seen.licenses
                .iter()
                .map(|(claim_id, license)| format!("{license} ({claim_id})"))
        })
        .collect();
    assert!(everything.len() >= 2, "{everything:?}");
    let answer = json!({
        "choice": suitable.listing_id,
        "evidence": format!("The licenses are {}.", everything.join(", ")),
        "actions": ["read"],
    });
    let reply = submit(&app, &agent, &attempt.attempt_id, answer);
    assert_eq!(reply["data"]["result"], "failed", "{reply}");
    let codes: Vec<&str> = reply["data"]["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|reason| reason["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["other_records_cited"]);
    // Naming another listing's record fails the same way.
    let attempt = read_attempt(&app, &agent);
    let mut answer = attempt.right_answer();
    answer["evidence"] = json!(format!(
        "{} Not {}.",
        answer["evidence"].as_str().unwrap(),
        attempt.decoys()[0].resource_id
    ));
    let reply = submit(&app, &agent, &attempt.attempt_id, answer);
    assert_eq!(
        reply["data"]["reasons"][0]["code"], "other_records_cited",
        "{reply}"
    );
}
