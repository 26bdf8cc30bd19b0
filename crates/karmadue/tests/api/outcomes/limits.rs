//! Report limits per agent, per receipt and per owner, also under concurrency.

use super::*;

#[test]
fn an_agent_may_report_ten_times_a_minute_and_thirty_times_a_day() {
    let app = TestApp::start();
    let publisher = app.register("Limit Publisher");
    let resource = listed(&app, &publisher, "limits");
    let agent = app.register("Busy Reporter");
    let limited = |expected: &str| {
        let receipt_id = receipt_for(&app, &agent, &resource);
        let before = app.log_len();
        let reply = report(&app, &agent, &receipt_id, "worked");
        assert_eq!(code(&reply), "rate_limited");
        assert_eq!(reply["error"]["limit"], expected);
        assert_eq!(app.log_len(), before);
        reply["error"]["retry_after_s"].as_i64().unwrap()
    };
    for _ in 0..3 {
        for _ in 0..10 {
            check_and_report(&app, &agent, &resource, "worked");
        }
        let retry = limited("10 reports a minute per agent");
        assert!((1..=60).contains(&retry), "{retry}");
        app.clock.advance_ms(61_000);
    }
    // 30 in the last 24 hours: the day limit, until the first report is a day old.
    let retry = limited("30 reports a day per agent");
    assert_eq!(retry, 24 * 3600 - 3 * 61);
    app.clock.advance_ms(DAY_MS - 3 * 61_000);
    assert_eq!(
        check_and_report(&app, &agent, &resource, "worked")["result"],
        "worked"
    );
}

#[test]
fn concurrent_reports_never_pass_the_per_agent_minute_limit() {
    let app = TestApp::start();
    let publisher = app.register("Race Publisher");
    let resource = listed(&app, &publisher, "race");
    let agent = app.register("Racing Reporter");
    let receipts: Vec<String> = (0..24)
        .map(|_| receipt_for(&app, &agent, &resource))
        .collect();
    let before = app.log_len();
    let replies: Vec<Value> = std::thread::scope(|scope| {
        let handles: Vec<_> = receipts
            .iter()
            .map(|receipt_id| scope.spawn(|| report(&app, &agent, receipt_id, "worked")))
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .collect()
    });
    let admitted = replies.iter().filter(|reply| reply["ok"] == true).count();
    assert_eq!(admitted, 10, "{replies:?}");
    assert!(
        replies
            .iter()
            .filter(|reply| reply["ok"] == false)
            .all(|reply| reply["error"]["code"] == "rate_limited")
    );
    assert_eq!(app.log_len(), before + 10);
    let stored: i64 = db(&app)
        .query_row("SELECT COUNT(*) FROM outcome_reports", [], |row| row.get(0))
        .unwrap();
    assert_eq!(stored, 10);
}

#[test]
fn concurrent_reports_on_one_receipt_admit_exactly_one() {
    let app = TestApp::start();
    let publisher = app.register("Single Publisher");
    let resource = listed(&app, &publisher, "single");
    let agent = app.register("Single Reporter");
    let receipt_id = receipt_for(&app, &agent, &resource);
    let replies: Vec<Value> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| scope.spawn(|| report(&app, &agent, &receipt_id, "worked")))
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .collect()
    });
    assert_eq!(
        replies.iter().filter(|reply| reply["ok"] == true).count(),
        1,
        "{replies:?}"
    );
    assert!(
        replies
            .iter()
            .filter(|reply| reply["ok"] == false)
            .all(|reply| reply["error"]["code"] == "already_reported")
    );
}

#[test]
fn an_owner_may_report_a_hundred_times_a_day_across_its_agents_even_concurrently() {
    let app = TestApp::start();
    let publisher = app.register("Owner Publisher");
    let resource = listed(&app, &publisher, "owner-limit");
    let team = agents(&app, "teammate", 5, false);
    for agent in &team {
        set_owner(&app, agent, "owner-busy");
    }
    // Three agents make 30 reports each (10 a minute).
    for agent in &team[..3] {
        for _ in 0..3 {
            for _ in 0..10 {
                check_and_report(&app, agent, &resource, "worked");
            }
            app.clock.advance_ms(61_000);
        }
    }
    // The last two race 20 reports at once; only 10 more fit under 100 a day per owner.
    let receipts: Vec<(usize, String)> = (3..5)
        .flat_map(|index| (0..10).map(move |_| index))
        .map(|index| (index, receipt_for(&app, &team[index], &resource)))
        .collect();
    let before = app.log_len();
    let replies: Vec<Value> = std::thread::scope(|scope| {
        let handles: Vec<_> = receipts
            .iter()
            .map(|(index, receipt_id)| {
                scope.spawn(|| report(&app, &team[*index], receipt_id, "worked"))
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .collect()
    });
    assert_eq!(
        replies.iter().filter(|reply| reply["ok"] == true).count(),
        10,
        "{replies:?}"
    );
    let refused: Vec<&Value> = replies
        .iter()
        .filter(|reply| reply["ok"] == false)
        .collect();
    assert!(
        refused
            .iter()
            .all(|reply| reply["error"]["code"] == "rate_limited"
                && reply["error"]["limit"] == "100 reports a day per owner")
    );
    assert_eq!(app.log_len(), before + 10);
    let stored: i64 = db(&app)
        .query_row(
            "SELECT COUNT(*) FROM outcome_reports WHERE owner_key = 'owner-busy'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(stored, 100);
}
