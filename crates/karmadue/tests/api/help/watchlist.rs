//! Watchlists: `quick_watch`, `set_watchlist` and the daily job that mails the changes.

use super::*;

// ---- quick_watch and set_watchlist -----------------------------------------------------------

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario: each step acts on the state the step before it left"
)]
fn quick_watch_answers_up_to_ten_tools_from_the_records_and_stores_nothing() {
    let app = TestApp::start();
    let publisher = app.register("watch publisher");
    let alpha = listed(&app, &publisher, "alpha");
    let before = snapshot(&app);

    let reply = app.call(
        "quick_watch",
        json!({ "tools": [alpha, "https://github.com/watch-tests/alpha", "npm:not-listed-anywhere"] }),
    );
    let data = ok(&reply);
    assert_eq!(data["stored"], false);
    assert_eq!(
        (data["count"].as_i64(), data["listed"].as_i64()),
        (Some(3), Some(2))
    );
    let first = &data["items"][0];
    assert_eq!(first["status"], "listed");
    assert_eq!(first["resource_id"], alpha.as_str());
    assert_eq!(first["archived_upstream"], false);
    assert_eq!(first["risky"], false);
    assert_eq!(first["outcome_reports"]["broke"], 0);
    assert_eq!(first["title"], Value::Null, "third-party text is lifted");
    let items = reply["untrusted_content"]["items"].as_array().unwrap();
    assert!(
        items
            .iter()
            .any(|item| item["id"] == alpha.as_str() && item["field"] == "title"),
        "{reply}"
    );
    assert_eq!(data["items"][1]["matched_by"], "github_repo");
    assert_eq!(data["items"][2]["status"], "not_listed");
    assert_eq!(data["items"][2]["resource_id"], Value::Null);
    assert_eq!(snapshot(&app), before, "a quick watch stores nothing");

    // A broke report after use shows in the next answer.
    let user = app.register("watch user");
    let receipt = receipt_for(&app, &user, &alpha);
    ok(&app.signed(
        &user,
        "report_outcome",
        json!({ "agent_id": user.agent_id, "receipt_id": receipt, "result": "broke" }),
    ));
    let after_report = snapshot(&app);
    let data = ok(&app.call("quick_watch", json!({ "tools": [alpha] })));
    assert_eq!(data["items"][0]["outcome_reports"]["broke"], 1);
    // The user has no owner: its report is counted, but as no owner (decision 255).
    assert_eq!(data["items"][0]["reliability_reports"]["reports"], 1);
    assert_eq!(data["items"][0]["reliability_reports"]["owners"], 0);
    assert_eq!(snapshot(&app), after_report, "a quick watch stores nothing");

    // Refusals: over 10, none, a non-string, a malformed target. Nothing is written.
    let eleven: Vec<String> = (0..11).map(|i| format!("npm:tool-{i}")).collect();
    let over = app.call("quick_watch", json!({ "tools": eleven }));
    assert_eq!(
        (code(&over), field(&over)),
        ("validation".into(), "tools".into())
    );
    assert!(
        over["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 10"),
        "{over}"
    );
    let none = app.call("quick_watch", json!({ "tools": [] }));
    assert_eq!(code(&none), "validation");
    let number = app.call("quick_watch", json!({ "tools": [alpha, 5] }));
    assert_eq!(field(&number), "tools[1]");
    let malformed = app.call("quick_watch", json!({ "tools": ["not a target"] }));
    assert_eq!(
        (code(&malformed), field(&malformed)),
        ("validation".into(), "tools[0]".into())
    );
    let missing = app.call("quick_watch", json!({}));
    assert_eq!(
        (code(&missing), field(&missing)),
        ("validation".into(), "tools".into())
    );
    assert_eq!(snapshot(&app), after_report);

    // Ten is the most, and it works over REST too.
    let ten: Vec<String> = (0..10).map(|i| format!("npm:tool-{i}")).collect();
    let (status, body) = app.rest("quick_watch", &json!({ "tools": ten }).to_string(), &[]);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["not_listed"], 10);
    let (status, body) = app.rest("quick_watch", &json!({ "tools": eleven }).to_string(), &[]);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("validation"))
    );
    assert_eq!(snapshot(&app), after_report);
}

#[test]
fn set_watchlist_saves_up_to_200_tools_and_refuses_201_or_a_repeated_record_without_writing() {
    let app = TestApp::start();
    let publisher = app.register("list publisher");
    let alpha = listed(&app, &publisher, "alpha");
    let agent = app.register("list keeper");

    let mut tools: Vec<String> = (0..199).map(|i| format!("npm:watch-test-{i}")).collect();
    tools.insert(0, alpha.clone());
    let before = app.log_len();
    let data = ok(&app.signed(
        &agent,
        "set_watchlist",
        json!({ "agent_id": agent.agent_id, "tools": tools }),
    ));
    assert_eq!(data["count"], 200);
    assert_eq!(
        (data["listed"].as_i64(), data["not_listed"].as_i64()),
        (Some(1), Some(199))
    );
    assert_eq!(data["items"][0]["resource_id"], alpha.as_str());
    assert_eq!(data["alerts_to"], "history");
    assert_eq!(app.log_len(), before + 1);
    assert_eq!(rows(&app, "watchlist_items"), 200);
    let event = events_of(&app, "watchlist.set").pop().unwrap();
    assert_eq!(event["items"], 200);
    assert!(
        !app.events_text().contains("watch-test-7"),
        "the targets' text stays out of the log"
    );

    let saved = snapshot(&app);
    let mut over = tools.clone();
    over.push("npm:one-too-many".into());
    let refused = app.signed(
        &agent,
        "set_watchlist",
        json!({ "agent_id": agent.agent_id, "tools": over }),
    );
    assert_eq!(
        (code(&refused), field(&refused)),
        ("validation".into(), "tools".into())
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 200")
    );
    assert_eq!(snapshot(&app), saved);

    let repeated = app.signed(
        &agent,
        "set_watchlist",
        json!({ "agent_id": agent.agent_id, "tools": [alpha, "npm:x", "https://github.com/watch-tests/alpha"] }),
    );
    assert_eq!(
        (code(&repeated), field(&repeated)),
        ("validation".into(), "tools[2]".into())
    );
    let malformed = app.signed(
        &agent,
        "set_watchlist",
        json!({ "agent_id": agent.agent_id, "tools": ["npm:x", "ftp://nowhere"] }),
    );
    assert_eq!(
        (code(&malformed), field(&malformed)),
        ("validation".into(), "tools[1]".into())
    );
    let unsigned = app.call(
        "set_watchlist",
        json!({ "agent_id": agent.agent_id, "tools": [alpha] }),
    );
    // No proof at all on a gated tool, naming a registered agent: it only forgot to sign
    // (decision 256).
    assert_eq!(code(&unsigned), "signature_required");
    assert_eq!(snapshot(&app), saved);

    // [] clears it.
    let cleared = ok(&app.signed(
        &agent,
        "set_watchlist",
        json!({ "agent_id": agent.agent_id, "tools": [] }),
    ));
    assert_eq!(cleared["count"], 0);
    assert_eq!(rows(&app, "watchlist_items"), 0);
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario: each step acts on the state the step before it left"
)]
fn the_daily_job_mails_an_owner_linked_agents_person_once_per_change_and_records_it_for_others() {
    let app = TestApp::start();
    let publisher = app.register("daily publisher");
    let beta = listed(&app, &publisher, "beta");
    let gamma = listed(&app, &publisher, "gamma");
    let (browser, _person_id) = person(&app, "owner@example.org");
    let linked = app.register("linked watcher");
    link(&app, &browser, &linked);
    let loner = app.register("lone watcher");
    for agent in [&linked, &loner] {
        let data = ok(&app.signed(
            agent,
            "set_watchlist",
            json!({ "agent_id": agent.agent_id, "tools": [beta, gamma, "npm:appears-later"] }),
        ));
        assert_eq!(data["listed"], 2);
    }

    // Nothing changed since the lists were set: nothing is sent or recorded.
    let quiet = snapshot(&app);
    let report = daily(&app);
    assert_eq!((report.alerted, report.mailed), (0, 0));
    assert_eq!(snapshot(&app), quiet);

    // Changes: a broke report on beta, gamma archived upstream (as a re-import records it).
    let user = app.register("daily user");
    let receipt = receipt_for(&app, &user, &beta);
    ok(&app.signed(
        &user,
        "report_outcome",
        json!({ "agent_id": user.agent_id, "receipt_id": receipt, "result": "broke" }),
    ));
    app.writes_behind_the_log("an upstream archive flag set as a re-import would set it");
    db(&app)
        .execute(
            "UPDATE resources SET archived = 1 WHERE resource_id = ?1",
            [&gamma],
        )
        .unwrap();
    // Saving the same list again does not hide the change.
    ok(&app.signed(
        &linked,
        "set_watchlist",
        json!({ "agent_id": linked.agent_id, "tools": [beta, gamma, "npm:appears-later"] }),
    ));

    // Same UTC day: the lists were already checked today, so nothing is sent.
    let report = daily(&app);
    assert_eq!((report.checked, report.mailed), (0, 0));
    assert!(outbox(&app).is_empty());

    // The next day: one mail to the linked agent's person; the loner's alert is in its history.
    app.clock.advance_ms(DAY_MS);
    let report = daily(&app);
    assert_eq!((report.checked, report.alerted, report.mailed), (2, 2, 1));
    let mails = outbox(&app);
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].to_email, "owner@example.org");
    assert!(
        mails[0].subject.contains(&linked.handle),
        "{}",
        mails[0].subject
    );
    assert!(
        mails[0]
            .body
            .contains(&format!("{beta}: 1 new \"broke\" report"))
            && mails[0]
                .body
                .contains(&format!("{gamma}: archived upstream")),
        "{}",
        mails[0].body
    );
    assert!(
        !mails[0].body.contains("Ignore previous"),
        "no third-party text"
    );
    let alerts = events_of(&app, "watchlist.alerted");
    assert_eq!(alerts.len(), 2);
    let to_history = alerts
        .iter()
        .find(|alert| alert["agent_id"] == loner.agent_id.as_str())
        .unwrap();
    assert_eq!(to_history["delivered_to"], "history");
    let changes: Vec<&str> = to_history["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| change["change"].as_str().unwrap())
        .collect();
    assert_eq!(changes, ["broke_reports", "archived_upstream"]);
    let history = ok(&app.signed(&loner, "get_history", json!({ "agent_id": loner.agent_id })));
    assert_eq!(
        history["events"][0]["kind"], "watchlist.alerted",
        "{history}"
    );

    // Run twice the same day: nothing twice. A day with no change: nothing.
    let after = snapshot(&app);
    assert_eq!(daily(&app).checked, 0);
    app.clock.advance_ms(DAY_MS);
    let report = daily(&app);
    assert_eq!((report.checked, report.alerted), (2, 0));
    assert_eq!(snapshot(&app), after);

    // A target that was not listed is news when its record appears.
    ok(&app.signed(
        &publisher,
        "register_resource",
        json!({ "agent_id": publisher.agent_id, "locator": "npm:appears-later", "title": "Later" }),
    ));
    app.clock.advance_ms(DAY_MS);
    assert_eq!(daily(&app).mailed, 1);
    let mails = outbox(&app);
    assert_eq!(mails.len(), 2);
    assert!(
        mails[1]
            .body
            .contains("kd:res:npm:appears-later: now has a KarmaDue record"),
        "{}",
        mails[1].body
    );
    // The log names the item by its place in the list, never by the text the agent saved.
    let appeared = events_of(&app, "watchlist.alerted")
        .into_iter()
        .find(|alert| alert["changes"][0]["change"] == "now_listed")
        .unwrap();
    assert_eq!(appeared["changes"][0]["position"], 2);
    assert!(appeared["changes"][0].get("target").is_none());
    app.assert_chain_ok();
}
