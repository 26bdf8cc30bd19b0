//! Report weights: caps, the publisher's own agents, bursts, outliers and reliability.

use super::*;

#[test]
fn agents_without_an_owner_or_under_seven_days_old_are_capped_at_a_quarter() {
    let app = TestApp::start();
    let publisher = app.register("Cap Publisher");
    let resource = listed(&app, &publisher, "caps");
    let independent = app.register("Independent Reporter");
    let owned = app.register("Owned Reporter");
    set_owner(&app, &owned, "owner-caps");
    let young = check_and_report(&app, &owned, &resource, "worked");
    assert_eq!(
        (young["weight"].as_f64(), flags(&young)),
        (Some(0.25), vec!["new_agent".to_owned()])
    );
    app.clock.advance_ms(8 * DAY_MS);
    let grown = check_and_report(&app, &owned, &resource, "worked");
    assert_eq!(
        (grown["weight"].as_f64(), flags(&grown)),
        (Some(1.0), Vec::<String>::new())
    );
    let alone = check_and_report(&app, &independent, &resource, "worked");
    assert_eq!(
        (alone["weight"].as_f64(), flags(&alone)),
        (Some(0.25), vec!["no_owner".to_owned()])
    );
    let newcomer = app.register("Newcomer Reporter");
    let both = check_and_report(&app, &newcomer, &resource, "worked");
    assert_eq!(
        (both["weight"].as_f64(), flags(&both)),
        (
            Some(0.25),
            vec!["no_owner".to_owned(), "new_agent".to_owned()]
        )
    );
    for data in [&young, &grown, &alone, &both] {
        assert_eq!(
            data["weight_reasons"].as_array().unwrap().len(),
            flags(data).len()
        );
    }
}

#[test]
fn reports_by_the_publishers_own_agents_weigh_nothing() {
    let app = TestApp::start();
    let publisher = app.register("Maker Agent");
    set_owner(&app, &publisher, "owner-maker");
    let colleague = app.register("Maker Colleague");
    set_owner(&app, &colleague, "owner-maker");
    let outsider = app.register("Outside Reporter");
    set_owner(&app, &outsider, "owner-outside");
    let resource = listed(&app, &publisher, "own-tool");
    app.clock.advance_ms(8 * DAY_MS);
    for agent in [&publisher, &colleague] {
        let own = check_and_report(&app, agent, &resource, "worked");
        assert_eq!(
            (own["weight"].as_f64(), flags(&own)),
            (Some(0.0), vec!["publisher_agent".to_owned()]),
            "{own}"
        );
    }
    let fair = check_and_report(&app, &outsider, &resource, "worked");
    assert_eq!(
        (fair["weight"].as_f64(), flags(&fair)),
        (Some(1.0), Vec::<String>::new())
    );
    let summary = reliability(&app, &resource);
    assert_eq!(
        (
            summary["reports"].as_i64(),
            summary["owners"].as_i64(),
            summary["excluded_reports"].as_i64()
        ),
        (Some(3), Some(1), Some(2))
    );
}

#[test]
fn the_fourth_report_from_one_owner_on_one_resource_in_a_day_is_a_burst_and_weighs_nothing() {
    let app = TestApp::start();
    let publisher = app.register("Burst Publisher");
    let resource = listed(&app, &publisher, "burst");
    let other = listed(&app, &publisher, "burst-other");
    let pair = agents(&app, "burster", 2, false);
    for agent in &pair {
        set_owner(&app, agent, "owner-burst");
    }
    app.clock.advance_ms(8 * DAY_MS);
    for agent in [&pair[0], &pair[1], &pair[0]] {
        let data = check_and_report(&app, agent, &resource, "worked");
        assert_eq!(data["weight"], 1.0, "{data}");
    }
    // The 4th from the same owner (another of its agents) in 24 hours is a burst.
    let fourth = check_and_report(&app, &pair[1], &resource, "worked");
    assert_eq!(
        (fourth["weight"].as_f64(), flags(&fourth)),
        (Some(0.0), vec!["burst".to_owned()])
    );
    // Another resource is not part of the burst, and a day later it is over.
    assert_eq!(
        check_and_report(&app, &pair[1], &other, "worked")["weight"],
        1.0
    );
    app.clock.advance_ms(DAY_MS + 1_000);
    assert_eq!(
        check_and_report(&app, &pair[0], &resource, "worked")["weight"],
        1.0
    );
}

#[test]
fn a_report_against_a_strong_consensus_of_five_owners_is_an_outlier_and_halved() {
    let app = TestApp::start();
    let publisher = app.register("Consensus Publisher");
    let resource = listed(&app, &publisher, "consensus");
    let dissenter = app.register("Dissenting Reporter");
    set_owner(&app, &dissenter, "owner-dissent");
    let abstainer = app.register("Abstaining Reporter");
    set_owner(&app, &abstainer, "owner-abstain");
    consensus(&app, std::slice::from_ref(&resource));
    let against = check_and_report(&app, &dissenter, &resource, "broke");
    assert_eq!(
        (against["weight"].as_f64(), flags(&against)),
        (Some(0.5), vec!["outlier".to_owned()]),
        "{against}"
    );
    let reason = &against["weight_reasons"][0];
    assert_eq!(reason["effect"], "halved");
    assert!(reason["message"].as_str().unwrap().contains("5 of 5"));
    // Not using it is never an outlier.
    let unused = check_and_report(&app, &abstainer, &resource, "didnt_use");
    assert_eq!(flags(&unused), Vec::<String>::new());
    let summary = reliability(&app, &resource);
    assert_eq!(summary["outlier_reports"], 1);
    assert_eq!(
        summary["line"],
        "worked for 5 of 7 owners; broke for 1; not used by 1"
    );
}

#[test]
fn an_owner_with_an_outlier_history_weighs_half() {
    let app = TestApp::start();
    let publisher = app.register("History Publisher");
    let first = listed(&app, &publisher, "history-one");
    let second = listed(&app, &publisher, "history-two");
    let third = listed(&app, &publisher, "history-three");
    let contrarian = app.register("Contrarian Reporter");
    set_owner(&app, &contrarian, "owner-contrarian");
    consensus(&app, &[first.clone(), second.clone()]);
    assert_eq!(
        flags(&check_and_report(&app, &contrarian, &first, "broke")),
        vec!["outlier".to_owned()]
    );
    // One outlier is not a history yet.
    let once = check_and_report(&app, &contrarian, &second, "broke");
    assert_eq!(flags(&once), vec!["outlier".to_owned()]);
    assert_eq!(once["weight"], 0.5);
    let later = check_and_report(&app, &contrarian, &third, "worked");
    assert_eq!(
        (later["weight"].as_f64(), flags(&later)),
        (Some(0.5), vec!["outlier_history".to_owned()])
    );
}

#[test]
fn each_owner_counts_once_by_its_latest_report() {
    let app = TestApp::start();
    let publisher = app.register("Counting Publisher");
    let resource = listed(&app, &publisher, "counting");
    let pair = agents(&app, "household", 2, false);
    for agent in &pair {
        set_owner(&app, agent, "owner-household");
    }
    let loner = app.register("Lone Reporter");
    check_and_report(&app, &pair[0], &resource, "broke");
    app.clock.advance_ms(1_000);
    check_and_report(&app, &pair[1], &resource, "worked");
    check_and_report(&app, &loner, &resource, "partial");
    let summary = reliability(&app, &resource);
    assert_eq!(
        summary["label"],
        "Reliability reports from agents, not a safety or trust check"
    );
    // The lone reporter has no owner: its report counts no owner (decision 255).
    assert_eq!(
        (
            summary["reports"].as_i64(),
            summary["agents"].as_i64(),
            summary["owners"].as_i64()
        ),
        (Some(3), Some(3), Some(1))
    );
    assert_eq!(
        summary["by_owner"],
        json!({ "worked": 1, "broke": 0, "partial": 0, "didnt_use": 0 })
    );
    assert_eq!(
        summary["line"],
        "worked for 1 of 1 owner; 1 agent with no owner reported"
    );
    assert_eq!(summary["established"], false);
    // A result nobody reported weighs zero, printed as 0.0 (an empty float sum is -0.0).
    let text = serde_json::to_string(&summary["weighted"]).unwrap();
    assert!(!text.contains("-0"), "{text}");
    assert_eq!(summary["weighted"]["broke"], 0.0);
}

#[test]
fn reliability_reports_are_established_at_five_owners_and_leave_the_check_after_thirty_days() {
    let app = TestApp::start();
    let publisher = app.register("Summary Publisher");
    let resource = listed(&app, &publisher, "summary");
    assert_eq!(
        reliability(&app, &resource),
        Value::Null,
        "no reports: no summary"
    );
    let crowd = agents(&app, "summary", 5, true);
    app.clock.advance_ms(8 * DAY_MS);
    for (index, agent) in crowd.iter().enumerate() {
        check_and_report(&app, agent, &resource, "worked");
        let summary = reliability(&app, &resource);
        assert_eq!(summary["established"], index == 4, "{summary}");
    }
    let summary = reliability(&app, &resource);
    assert_eq!(summary["line"], "worked for 5 of 5 owners");
    assert_eq!(summary["weighted"]["worked"], 5.0);
    // The same function other tools call, by connection.
    let conn = db(&app);
    let direct = kd_karmadue::outcomes::reliability_reports(&conn, &resource)
        .unwrap()
        .unwrap();
    assert_eq!(direct["owners"], 5);
    // Reports never change the assessment.
    let check = app.call("check_before_acting", json!({ "target": resource }));
    assert_eq!(check["data"]["counts_as_verification"], false);
    app.clock.advance_ms(30 * DAY_MS + 1_000);
    assert_eq!(reliability(&app, &resource), Value::Null);
    // Nor on a signed check.
    let signed = signed_read(
        &app,
        &crowd[0],
        "check_before_acting",
        json!({ "target": resource }),
    );
    assert!(signed["data"].get("reliability_reports").is_none());
}
