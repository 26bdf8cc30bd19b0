//! Verification help refusals: fields named, nothing written, the daily ask limit.

use super::*;

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "a table of refusals against one prepared state, each checked to change nothing"
)]
fn verification_refusals_name_the_field_and_write_nothing() {
    let app = TestApp::start();
    let requester = app.register("strict asker");
    app.admit(&requester);
    let subject = app.register("strict subject");
    let stranger = app.register("strict stranger");
    let good = ask_args(&app, &requester, &subject, "peer-reviewed");
    let before = snapshot(&app);
    let with = |key: &str, value: Value| {
        let mut args = good.clone();
        args[key] = value;
        app.signed(&requester, "post_verification_ask", args)
    };
    for (key, value, expected_code, expected_field) in [
        ("deadline", json!("next tuesday"), "validation", "deadline"),
        (
            "deadline",
            json!(deadline(&app, -1000)),
            "validation",
            "deadline",
        ),
        (
            "deadline",
            json!(deadline(&app, 31 * DAY_MS)),
            "validation",
            "deadline",
        ),
        (
            "passport_id",
            json!("kdp_000000000000000000000000"),
            "validation",
            "passport_id",
        ),
        (
            "subject_agent_id",
            json!("kd_000000000000"),
            "not_found",
            "subject_agent_id",
        ),
        (
            "subject_agent_id",
            json!("someone"),
            "validation",
            "subject_agent_id",
        ),
        ("stamp", json!("gold-star"), "validation", "stamp"),
        (
            "criteria",
            json!("x".repeat(2001)),
            "validation",
            "criteria",
        ),
        ("criteria", json!("   "), "validation", "criteria"),
        (
            "reward_note",
            json!("x".repeat(201)),
            "validation",
            "reward_note",
        ),
    ] {
        let reply = with(key, value);
        assert_eq!(
            (code(&reply), field(&reply)),
            (expected_code.to_owned(), expected_field.to_owned()),
            "{key}: {reply}"
        );
    }
    // Unsigned, naming the registered requester: signature_required (decision 256).
    let unsigned = app.call("post_verification_ask", good.clone());
    assert_eq!(code(&unsigned), "signature_required");
    assert_eq!(snapshot(&app), before);

    let ask_id = post(&app, &requester, &subject, "peer-reviewed");
    let before = snapshot(&app);
    let duplicate = app.signed(&requester, "post_verification_ask", good.clone());
    assert_eq!(
        (code(&duplicate), duplicate["error"]["ask_id"].as_str()),
        ("validation".into(), Some(ask_id.as_str()))
    );
    assert_eq!(snapshot(&app), before);
    let unknown = accept(&app, &stranger, "kdva_000000000000000000000000");
    assert_eq!(
        (code(&unknown), field(&unknown)),
        ("not_found".into(), "ask_id".into())
    );
    let not_taken = submit(&app, &stranger, &ask_id, "met");
    assert_eq!(not_taken["error"]["reason"], "not_reviewer");
    let not_submitted = resolve(&app, &requester, &ask_id, "accept");
    assert_eq!(
        (code(&not_submitted), field(&not_submitted)),
        ("validation".into(), "ask_id".into())
    );
    ok(&accept(&app, &stranger, &ask_id));
    let before = snapshot(&app);
    let bad_result = app.signed(
        &stranger,
        "submit_verification",
        json!({ "agent_id": stranger.agent_id, "ask_id": ask_id, "result": "maybe", "evidence_ref": "https://example.org/x" }),
    );
    assert_eq!(field(&bad_result), "result");
    let bad_link = app.signed(
        &stranger,
        "submit_verification",
        json!({ "agent_id": stranger.agent_id, "ask_id": ask_id, "result": "met", "evidence_link": "javascript:alert(1)" }),
    );
    assert_eq!(
        (code(&bad_link), field(&bad_link)),
        ("validation".into(), "evidence_link".into())
    );
    let long_note = app.signed(
        &stranger,
        "submit_verification",
        json!({ "agent_id": stranger.agent_id, "ask_id": ask_id, "result": "met", "evidence_ref": "https://example.org/x", "note": "n".repeat(1001) }),
    );
    assert_eq!(field(&long_note), "note");
    ok(&submit(&app, &stranger, &ask_id, "met"));
    let before_resolve = snapshot(&app);
    let not_requester = resolve(&app, &stranger, &ask_id, "accept");
    assert_eq!(
        (
            code(&not_requester),
            not_requester["error"]["reason"].as_str()
        ),
        ("forbidden".into(), Some("not_requester"))
    );
    let bad_decision = resolve(&app, &requester, &ask_id, "maybe");
    assert_eq!(field(&bad_decision), "decision");
    assert_eq!(snapshot(&app), before_resolve);
    assert_ne!(before, before_resolve);
}

#[test]
fn an_agent_posts_at_most_ten_asks_a_day_and_evidence_links_are_plain_https() {
    let app = TestApp::start();
    let requester = app.register("Busy Requester");
    app.admit(&requester);
    let subjects: Vec<Agent> = [
        "Marigold",
        "Quartzite",
        "Obsidian",
        "Tamarind",
        "Velvetleaf",
        "Cinnabar",
        "Hollyhock",
        "Wisteria",
        "Zinfandel",
        "Pumpernickel",
        "Gooseberry",
    ]
    .iter()
    .map(|name| app.register(name))
    .collect();
    for subject in &subjects[..10] {
        post(&app, &requester, subject, "peer-reviewed");
    }
    let before = snapshot(&app);
    let eleventh = app.signed(
        &requester,
        "post_verification_ask",
        ask_args(&app, &requester, &subjects[10], "peer-reviewed"),
    );
    assert_eq!(code(&eleventh), "rate_limited", "{eleventh}");
    assert_eq!(eleventh["error"]["retry_after_s"], 86_400);
    assert_eq!(snapshot(&app), before);

    let reviewer = app.register("Link Checker");
    app.clock.advance_ms(DAY_MS);
    let ask_id = post(&app, &requester, &subjects[10], "peer-reviewed");
    assert_eq!(
        ok(&accept(&app, &reviewer, &ask_id))["ask"]["status"],
        "accepted"
    );
    let before = snapshot(&app);
    for bad in [
        "http://example.org/review",
        "https://example.org/\"><script>alert(1)</script>",
        "https://example.org/a b",
        "https://exämple.org/review",
    ] {
        let reply = app.signed(
            &reviewer,
            "submit_verification",
            json!({ "agent_id": reviewer.agent_id, "ask_id": ask_id, "result": "met", "evidence_ref": bad }),
        );
        assert_eq!(
            (code(&reply), field(&reply)),
            ("validation".into(), "evidence_ref".into()),
            "{bad}"
        );
    }
    assert_eq!(snapshot(&app), before);
}
