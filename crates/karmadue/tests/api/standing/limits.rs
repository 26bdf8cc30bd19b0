//! Per-minute limits for anonymous callers and per tool, and stamps gating tools.

use super::*;

#[test]
fn anonymous_reads_stop_at_thirty_a_minute_per_address_until_the_window_moves() {
    let app = strict();
    let before = app.log_len();
    for index in 0..30 {
        let reply = app.call(
            "get_resource",
            json!({ "resource_id": format!("kd:res:npm:n{index}") }),
        );
        assert_ne!(
            reply["error"]["code"], "rate_limited",
            "call {index}: {reply}"
        );
    }
    let limited = app.call("get_resource", json!({ "resource_id": "kd:res:npm:x" }));
    assert_eq!(limited["error"]["code"], "rate_limited", "{limited}");
    assert_eq!(limited["error"]["retry_after_s"], 60);
    // REST: 429 with Retry-After.
    let reply = app.request(
        "POST",
        "/functions/v1/public-api/v1/tools/get_resource",
        Some(br#"{"resource_id":"kd:res:npm:x"}"#),
        &[("content-type", "application/json")],
    );
    assert_eq!(reply.status, 429);
    assert_eq!(reply.header("retry-after"), Some("60"));
    assert_eq!(reply.json()["error"]["code"], "rate_limited");
    // A registered agent has its own allowance.
    let agent_before = app.log_len();
    assert_eq!(agent_before, before, "reads and refusals wrote nothing");
    app.clock.advance_ms(59_999);
    assert_eq!(
        app.call("get_resource", json!({ "resource_id": "kd:res:npm:x" }))["error"]["code"],
        "rate_limited"
    );
    app.clock.advance_ms(1);
    assert_eq!(
        app.call("get_resource", json!({ "resource_id": "kd:res:npm:x" }))["error"]["code"],
        "not_found"
    );
}

#[test]
fn anonymous_writes_stop_at_ten_a_minute_and_concurrent_reads_never_over_admit() {
    let app = strict();
    for index in 0..10 {
        let reply = app.call(
            "register_agent",
            json!({ "name": format!("Nobody {index}"), "public_key": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "challenge_id": "kdc_missing", "signature": "AA", "platform": "t" }),
        );
        assert_ne!(reply["error"]["code"], "rate_limited", "{reply}");
    }
    let limited = app.call(
        "register_agent",
        json!({ "name": "Nobody X", "public_key": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "challenge_id": "kdc_missing", "signature": "AA", "platform": "t" }),
    );
    assert_eq!(limited["error"]["code"], "rate_limited", "{limited}");
    assert!(
        limited["error"]["message"]
            .as_str()
            .unwrap()
            .contains("10 writes")
    );

    // 60 reads at once from one address: exactly 30 get through.
    let app = std::sync::Arc::new(strict());
    let threads: Vec<_> = (0..6)
        .map(|_| {
            let app = std::sync::Arc::clone(&app);
            std::thread::spawn(move || {
                (0..10)
                    .filter(|_| {
                        app.call("get_resource", json!({ "resource_id": "kd:res:npm:x" }))["error"]
                            ["code"]
                            != "rate_limited"
                    })
                    .count()
            })
        })
        .collect();
    let admitted: usize = threads
        .into_iter()
        .map(|thread| thread.join().unwrap())
        .sum();
    assert_eq!(admitted, 30);
}

#[test]
fn each_read_tool_has_its_own_limit_per_caller() {
    let app = strict();
    let agent = app.register("Busy Searcher");
    for index in 0..40 {
        let reply = signed_read(
            &app,
            &agent,
            "discover_resources",
            &json!({ "need": format!("thing {index}") }),
        );
        assert_eq!(reply["ok"], true, "call {index}: {reply}");
    }
    let limited = signed_read(
        &app,
        &agent,
        "discover_resources",
        &json!({ "need": "one more" }),
    );
    assert_eq!(limited["error"]["code"], "rate_limited");
    assert!(
        limited["error"]["message"]
            .as_str()
            .unwrap()
            .contains("discover_resources allows 40 calls a minute"),
        "{limited}"
    );
    // Other reads still fit in the registered tier's 60.
    let other = signed_read(&app, &agent, "get_standing", &json!({}));
    assert_eq!(other["ok"], true, "{other}");
}

#[test]
fn a_gated_tool_without_its_stamp_is_refused_naming_how_to_get_it_and_records_nothing() {
    // The gate reads the table: put verify_agent behind admission and get_resource behind a
    // passport to exercise both refusals.
    let app = TestApp::start_with(|config| {
        // The table as served (its unlocks filled from the tools' declarations), extended.
        let mut tiers = kd_karmadue::hub::default_access_tiers().scaled(1000);
        for (tier, tool) in [(1, "get_resource"), (2, "verify_agent")] {
            tiers.tiers[tier]
                .unlocks
                .as_mut()
                .unwrap()
                .push(tool.into());
        }
        config.access_tiers = tiers;
    });
    let agent = app.register("Gated Agent");
    let before = app.log_len();
    let anonymous = app.call("get_resource", json!({ "resource_id": "kd:res:npm:x" }));
    assert_eq!(
        anonymous["error"]["code"], "identity_required",
        "{anonymous}"
    );
    assert_eq!(anonymous["error"]["missing_stamp"], "passport");
    assert_eq!(anonymous["error"]["required_tier"], "registered");
    assert!(anonymous["error"]["how_to_get"][0].is_string());

    let stamp = signed_read(
        &app,
        &agent,
        "verify_agent",
        &json!({ "agent_id": agent.agent_id }),
    );
    assert_eq!(stamp["error"]["code"], "stamp_required", "{stamp}");
    assert_eq!(stamp["error"]["missing_stamp"], "admission-passed");
    assert_eq!(stamp["error"]["required_tier"], "admission_passed");
    assert!(
        stamp["error"]["how_to_get"][0]
            .as_str()
            .unwrap()
            .contains("start_admission_test")
    );
    let (status, _) = app.rest(
        "verify_agent",
        &json!({ "agent_id": agent.agent_id }).to_string(),
        &[],
    );
    // Naming a registered agent unsigned: signature_required, 401 as well (decision 256).
    assert_eq!(status, 401, "signature_required over REST");
    assert_eq!(app.log_len(), before);

    // With a live admission-passed stamp the gate opens; when it lapses it closes again.
    stamp_admission(&app, &agent, 90);
    let open = signed_read(
        &app,
        &agent,
        "verify_agent",
        &json!({ "agent_id": agent.agent_id }),
    );
    assert_eq!(open["ok"], true, "{open}");
    assert_eq!(open["tier"]["tier"], "admission_passed");
    assert_eq!(open["next_unlock"]["missing_stamp"], "owner-link");
    app.clock.advance_ms(90 * 86_400_000);
    let lapsed = signed_read(
        &app,
        &agent,
        "verify_agent",
        &json!({ "agent_id": agent.agent_id }),
    );
    assert_eq!(lapsed["error"]["code"], "stamp_required");
}
