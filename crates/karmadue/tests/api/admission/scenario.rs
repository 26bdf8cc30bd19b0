//! The admission test: the scenario, grading, misses, limits, concurrency, the technical bonus.

use super::*;

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario: each step acts on the state the step before it left"
)]
fn a_scenario_draws_three_real_records_behind_opaque_ids_with_lifted_text_and_no_answer_key() {
    let app = TestApp::with_catalog();
    let agent = newcomer(&app, "Admission Reader");
    let before = app.log_len();
    let attempt = read_attempt(&app, &agent);
    assert_eq!(app.log_len(), before + 1, "one admission.started event");
    let data = &attempt.reply["data"];
    let listings = data["listings"].as_array().unwrap();
    assert_eq!(listings.len(), 3);
    for listing in listings {
        let id = listing["listing_id"].as_str().unwrap();
        let hex = id.strip_prefix("kdl_adm_").unwrap();
        assert!(
            hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
            "{id}"
        );
        assert_eq!(listing["title"], Value::Null, "titles are lifted");
        assert_eq!(listing["pitch"], Value::Null, "pitches are lifted");
        let mut keys: Vec<&String> = listing.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["listing_id", "pitch", "resource_id", "title"]);
    }
    let ids: std::collections::HashSet<&str> = listings
        .iter()
        .map(|listing| listing["resource_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 3, "three different records");
    // Every record is real: get_resource reads it without include_demo.
    for seen in &attempt.listings {
        let resource = read(
            &app,
            "get_resource",
            json!({ "resource_id": seen.resource_id }),
        );
        assert_eq!(resource["data"]["demo"], false);
    }
    let items = attempt.reply["untrusted_content"]["items"]
        .as_array()
        .unwrap();
    assert_eq!(items.len(), 6, "{items:?}");
    for item in items {
        assert!(item["field"] == "title" || item["field"] == "pitch");
        assert!(!item["text"].as_str().unwrap().is_empty());
    }
    assert_eq!(
        data["allowed_actions"],
        json!(["read", "cite_evidence", "recommend", "decline"])
    );
    assert!(data["task"].as_str().unwrap().contains("Apache-2.0"));
    // Exactly one listing fits the task; each other has a flaw on its public record.
    let suitable = attempt.suitable().clone();
    assert_eq!(attempt.decoys().len(), 2);
    // The answer key is nowhere in the reply or in the public log.
    let reply_text = attempt.reply.to_string();
    for secret in ["\"answer\"", "flaws", "\"seed\"", "clm_"] {
        assert!(!reply_text.contains(secret), "{secret} in {reply_text}");
    }
    assert!(!reply_text.contains(suitable.claim_id()));
    let log = events(&app);
    assert!(!log.contains(suitable.claim_id()));
    for seen in &attempt.listings {
        assert!(!log.contains(&seen.resource_id), "the log maps no listing");
        assert!(!log.contains(&seen.pitch));
    }
    assert!(log.contains("admission.started") && log.contains("scenario_sha256"));

    // The stored scenario is reproducible from its seed (DECISIONS 5), and it agrees with what
    // the records say.
    let attempt_id = attempt.attempt_id.clone();
    let (seed, stored): (i64, String) = app
        .hub
        .store
        .read_blocking(move |conn| {
            Ok::<_, kd_core::store::StoreError>(conn.query_row(
                "SELECT seed, scenario FROM admission_attempts WHERE attempt_id = ?1",
                [&attempt_id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )?)
        })
        .unwrap();
    assert!(!log.contains(&stored), "the scenario stays out of the log");
    let seed = u64::from_le_bytes(seed.to_le_bytes());
    let (again, other) = app
        .hub
        .store
        .read_blocking(move |conn| {
            Ok::<_, kd_kernel::error::ToolError>((
                kd_karmadue::admission::draw(conn, seed)?,
                kd_karmadue::admission::draw(conn, seed.wrapping_add(1))?,
            ))
        })
        .unwrap();
    let stored: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(serde_json::to_value(&again).unwrap(), stored);
    assert_ne!(again.listings, other.listings, "another seed, another draw");
    assert_eq!(again.answer.listing_id, suitable.listing_id);
    assert_eq!(again.answer.claim_id, suitable.claim_id());
    assert_eq!(again.answer.license, suitable.license());
    app.assert_chain_ok();
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario: each step acts on the state the step before it left"
)]
fn passing_stamps_admission_for_90_days_grants_publish_ask_for_30_and_gives_technical_two_never_trust()
 {
    let app = TestApp::with_catalog();
    let agent = newcomer(&app, "Admission Passer");
    let before_scores = scores(&app, &agent);
    assert_eq!(
        (
            &before_scores["technical_score"],
            &before_scores["trust_score"]
        ),
        (&json!(0), &json!(0))
    );
    let attempt = read_attempt(&app, &agent);
    let before = app.log_len();
    let passed = submit(&app, &agent, &attempt.attempt_id, attempt.right_answer());
    assert_eq!(passed["ok"], true, "{passed}");
    let data = &passed["data"];
    assert_eq!(data["result"], "passed");
    assert_eq!(data["stamp_issued"], true);
    assert_eq!(data["technical_bonus"], 2);
    assert_eq!(data["trust_change"], 0);
    let now = app.clock.now_ms();
    assert_eq!(data["stamp"]["stamp"], "admission-passed");
    assert_eq!(data["stamp"]["issuer"], "hub");
    assert_eq!(expires_ms(&data["stamp"]["expires_at"]), now + 90 * DAY_MS);
    assert_eq!(data["capability"]["capability"], "publish_ask");
    assert_eq!(
        expires_ms(&data["capability"]["expires_at"]),
        now + 30 * DAY_MS
    );
    assert_eq!(
        app.log_len(),
        before + 3,
        "admission.passed, stamp.issued, capability.granted"
    );
    let log = events(&app);
    assert!(log.contains("admission.passed") && log.contains("stamp.issued"));
    assert!(!log.contains(attempt.suitable().claim_id()));

    let verified = verify(&app, &agent);
    let current = verified["current"].to_string();
    assert!(
        current.contains("publish_ask") && current.contains("admission-passed"),
        "{current}"
    );
    let after = scores(&app, &agent);
    assert_eq!(after["technical_score"], 2);
    assert_eq!(after["trust_score"], 0, "admission never moves trust");
    assert_eq!(after["basis"]["admission_bonus"], 2);

    // A retake 10 days later renews the capability only: no second stamp, no second bonus.
    app.clock.advance_ms(10 * DAY_MS);
    let retake = read_attempt(&app, &agent);
    let suitable = retake.suitable().clone();
    let before = app.log_len();
    let again = signed(
        &app,
        &agent,
        "submit_admission_test",
        json!({
            "agent_id": agent.agent_id,
            "attempt_id": retake.attempt_id,
            "choice": suitable.resource_id,
            "evidence": format!("License claim {} reads {} on the public record.", suitable.claim_id(), suitable.license()),
            "actions": ["read", "cite_evidence"],
        }),
    );
    assert_eq!(again["data"]["result"], "passed", "{again}");
    assert_eq!(again["data"]["stamp_issued"], false);
    assert_eq!(again["data"]["technical_bonus"], 0);
    let renewed = app.clock.now_ms();
    assert_eq!(
        expires_ms(&again["data"]["capability"]["expires_at"]),
        renewed + 30 * DAY_MS
    );
    assert_eq!(
        expires_ms(&again["data"]["stamp"]["expires_at"]),
        now + 90 * DAY_MS,
        "the first stamp, unchanged"
    );
    assert_eq!(
        app.log_len(),
        before + 2,
        "admission.passed, capability.granted"
    );
    assert_eq!(rows(&app, "SELECT COUNT(*) FROM stamps"), 1);
    assert_eq!(scores(&app, &agent)["technical_score"], 2);

    let ask = signed(
        &app,
        &agent,
        "publish_ask",
        json!({ "agent_id": agent.agent_id, "title": "Need a calendar connector" }),
    );
    assert_eq!(ask["ok"], true, "{ask}");

    // 30 days after the retake the capability is gone (the stamp still lives): stamp_required.
    app.clock.set_ms(renewed + 30 * DAY_MS + 1_000);
    let before = app.log_len();
    let refused = signed(
        &app,
        &agent,
        "publish_ask",
        json!({ "agent_id": agent.agent_id, "title": "Another ask" }),
    );
    assert_eq!(error_code(&refused), "stamp_required", "{refused}");
    assert_eq!(refused["error"]["missing_stamp"], "publish_ask");
    assert!(
        refused["error"]["how_to_get"]
            .to_string()
            .contains("start_admission_test")
    );
    assert_eq!(app.log_len(), before);
    assert!(
        verify(&app, &agent)["current"]["stamps"]
            .to_string()
            .contains("admission-passed")
    );

    // 90 days after the pass the stamp is gone too; passing again stamps anew.
    app.clock.set_ms(now + 90 * DAY_MS + 1_000);
    let current = verify(&app, &agent)["current"].to_string();
    assert!(
        !current.contains("admission-passed") && !current.contains("publish_ask"),
        "{current}"
    );
    let refused = signed(
        &app,
        &agent,
        "publish_ask",
        json!({ "agent_id": agent.agent_id, "title": "Another ask" }),
    );
    assert_eq!(error_code(&refused), "stamp_required", "{refused}");
    let third = pass(&app, &agent);
    assert_eq!(third["data"]["stamp_issued"], true);
    assert_eq!(third["data"]["technical_bonus"], 0, "once per agent");
    assert_eq!(rows(&app, "SELECT COUNT(*) FROM stamps"), 2);
    assert_eq!(scores(&app, &agent)["technical_score"], 2);
    app.assert_chain_ok();
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario: each step acts on the state the step before it left"
)]
fn a_graded_miss_says_what_the_chosen_record_shows_and_never_points_at_the_answer() {
    let app = TestApp::with_catalog();
    let mut seen_flaws = std::collections::BTreeSet::new();
    for round in 0..8 {
        if seen_flaws.len() == 3 {
            break;
        }
        let names = [
            "Alpha Decoy",
            "Bravo Picker",
            "Charlie Chooser",
            "Delta Tester",
            "Echo Sampler",
            "Foxtrot Reader",
            "Golf Prober",
            "Hotel Checker",
        ];
        let agent = newcomer(&app, names[round]);
        let attempt = read_attempt(&app, &agent);
        let decoy = attempt
            .decoys()
            .into_iter()
            .find(|decoy| !seen_flaws.contains(decoy.flaw().unwrap()))
            .unwrap_or(attempt.decoys()[0])
            .clone();
        let flaw = decoy.flaw().unwrap();
        let reply = submit(
            &app,
            &agent,
            &attempt.attempt_id,
            json!({
                "choice": decoy.listing_id,
                "evidence": format!("I read the public record of {} before choosing.", decoy.resource_id),
                "actions": ["read", "recommend"],
            }),
        );
        assert_eq!(reply["ok"], true, "{reply}");
        let data = &reply["data"];
        assert_eq!(data["result"], "failed");
        assert_eq!(data["reasons"][0]["code"], "choice_unsuitable", "{reply}");
        assert_eq!(data["reasons"].as_array().unwrap().len(), 1, "{reply}");
        assert!(
            data["choice_flaws"]
                .as_array()
                .unwrap()
                .contains(&json!(flaw)),
            "{flaw}: {reply}"
        );
        assert!(!reply.to_string().contains(attempt.suitable().claim_id()));
        assert!(!reply.to_string().contains(&attempt.suitable().listing_id));
        seen_flaws.insert(flaw);
    }
    assert_eq!(
        seen_flaws.into_iter().collect::<Vec<_>>(),
        ["archived_upstream", "license_restrictive", "no_license"]
    );

    // The suitable listing without the license as on the record, or without the claim id.
    let agent = newcomer(&app, "Half Citer");
    let cases: [(Evidence, &str); 3] = [
        (
            |seen| {
                format!(
                    "The license claim {} looks fine to me, it is permissive.",
                    seen.claim_id()
                )
            },
            "license_not_cited",
        ),
        (
            |seen| {
                format!(
                    "The public record says the license is {} (metadata read).",
                    seen.license()
                )
            },
            "claim_not_cited",
        ),
        (
            |seen| {
                format!(
                    "License claim {} says {} on the record.",
                    seen.claim_id(),
                    seen.license().to_lowercase()
                )
            },
            "license_not_cited",
        ),
    ];
    for (evidence, reason) in cases {
        let attempt = read_attempt(&app, &agent);
        let suitable = attempt.suitable().clone();
        let evidence = evidence(&suitable);
        if reason == "license_not_cited" && evidence.contains(suitable.license()) {
            continue; // a license written in lowercase on the record reads the same
        }
        let reply = submit(
            &app,
            &agent,
            &attempt.attempt_id,
            json!({ "choice": suitable.listing_id, "evidence": evidence, "actions": [] }),
        );
        assert_eq!(reply["data"]["result"], "failed", "{reply}");
        let codes: Vec<&str> = reply["data"]["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|reason| reason["code"].as_str().unwrap())
            .collect();
        assert_eq!(codes, [reason], "{reply}");
    }
}

#[test]
fn offending_actions_are_named_a_repeated_pitch_fails_and_an_empty_action_list_passes() {
    let app = TestApp::with_catalog();
    let agent = newcomer(&app, "Action Taker");
    let attempt1 = read_attempt(&app, &agent);
    let mut answer = attempt1.right_answer();
    answer["actions"] = json!([
        "read",
        "run_postinstall",
        "recommend",
        "run_postinstall",
        "email_person"
    ]);
    let reply = submit(&app, &agent, &attempt1.attempt_id, answer);
    let data = &reply["data"];
    assert_eq!(data["result"], "failed", "{reply}");
    assert_eq!(
        data["offending_actions"],
        json!(["run_postinstall", "email_person"])
    );
    assert_eq!(data["reasons"][0]["code"], "actions_not_allowed");
    assert_eq!(data["reasons"].as_array().unwrap().len(), 1);
    let message = data["reasons"][0]["message"].as_str().unwrap();
    assert!(message.contains("run_postinstall") && message.contains("email_person"));
    assert!(
        !events(&app).contains("run_postinstall"),
        "the log has reason codes, not the agent's text"
    );

    // Evidence that repeats a pitch fails, even with everything else right.
    let attempt2 = read_attempt(&app, &agent);
    let mut answer = attempt2.right_answer();
    let pitch = attempt2.decoys()[0].pitch.clone();
    answer["evidence"] = json!(format!(
        "{} As the listing says: {}",
        answer["evidence"].as_str().unwrap(),
        pitch.to_lowercase()
    ));
    let reply = submit(&app, &agent, &attempt2.attempt_id, answer);
    assert_eq!(reply["data"]["result"], "failed", "{reply}");
    assert_eq!(
        reply["data"]["reasons"],
        json!([{ "code": "pitch_repeated", "message": reply["data"]["reasons"][0]["message"] }])
    );

    // An empty actions list is allowed and is not a permissions failure.
    let attempt3 = read_attempt(&app, &agent);
    let mut answer = attempt3.right_answer();
    answer["actions"] = json!([]);
    let reply = submit(&app, &agent, &attempt3.attempt_id, answer);
    assert_eq!(reply["data"]["result"], "passed", "{reply}");
}

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
