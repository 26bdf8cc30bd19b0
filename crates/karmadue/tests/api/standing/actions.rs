//! The daily action quota of owner-linked agents.

use super::*;

#[test]
fn an_owner_linked_agent_has_a_daily_action_quota_that_refused_calls_and_reads_do_not_use() {
    let app = TestApp::start();
    let (_browser, agent) = linked(&app, "quota@example.com", "Quota Agent");
    // connect_with_code was before the person approved: not the person's allowance.
    let linked_reply = rename(&app, &agent, "Quota Agent One");
    assert_eq!(linked_reply["ok"], true, "{linked_reply}");
    assert_eq!(linked_reply["quota"]["actions_per_day"], 40);
    assert_eq!(linked_reply["quota"]["used_last_24h"], 1);
    assert_eq!(linked_reply["quota"]["remaining"], 39);
    assert_eq!(linked_reply["quota"]["window"], "rolling 24 hours");
    assert!(
        linked_reply["quota"]["what_counts"]
            .as_str()
            .unwrap()
            .contains("refused")
    );

    // Lower the owner's limit to 3 to reach it quickly.
    set_actions_per_day(&app, &agent, 3);
    // A refused call and reads do not count.
    let refused = rename(&app, &agent, "");
    assert_eq!(refused["ok"], false);
    let _ = signed_read(&app, &agent, "get_standing", &json!({}));
    assert_eq!(
        rename(&app, &agent, "Quota Agent Two")["quota"]["used_last_24h"],
        2
    );
    app.clock.advance_ms(3_600_000);
    assert_eq!(
        rename(&app, &agent, "Quota Agent Three")["quota"]["remaining"],
        0
    );
    let before = app.log_len();
    let limited = rename(&app, &agent, "Quota Agent Four");
    assert_eq!(limited["error"]["code"], "rate_limited", "{limited}");
    assert_eq!(limited["quota"]["remaining"], 0);
    // The first action leaves the window 23 hours from now.
    assert_eq!(limited["error"]["retry_after_s"], 23 * 3600);
    assert_eq!(app.log_len(), before, "a refused action records nothing");
    let standing = app.call("get_standing", json!({ "subject_id": agent.agent_id }));
    assert_eq!(standing["data"]["quota"]["used_last_24h"], 3);
    assert_eq!(standing["data"]["owner_linked"], true);
    // 24 hours after the first three, only the fourth is still in the window.
    app.clock.advance_ms(23 * 3_600_000);
    let again = rename(&app, &agent, "Quota Agent Five");
    assert_eq!(again["ok"], true, "{again}");
    assert_eq!(again["quota"]["used_last_24h"], 2);
}

#[test]
fn concurrent_writes_never_exceed_the_daily_actions() {
    let app = std::sync::Arc::new(TestApp::start());
    let (_browser, agent) = linked(&app, "race@example.com", "Racing Agent");
    set_actions_per_day(&app, &agent, 5);
    let agent = std::sync::Arc::new(agent);
    let threads: Vec<_> = (0..12)
        .map(|index| {
            let app = std::sync::Arc::clone(&app);
            let agent = std::sync::Arc::clone(&agent);
            std::thread::spawn(move || {
                rename(&app, &agent, &format!("Racer Number {index}"))["ok"] == true
            })
        })
        .collect();
    let admitted = threads
        .into_iter()
        .map(|thread| thread.join().unwrap())
        .filter(|ok| *ok)
        .count();
    assert_eq!(admitted, 5);
    let standing = app.call("get_standing", json!({ "agent_id": agent.handle }));
    assert_eq!(standing["data"]["quota"]["used_last_24h"], 5);
}

#[test]
fn reads_refusals_and_recovery_tools_stay_open_when_the_daily_actions_are_used_up() {
    let app = TestApp::start();
    let (_owner, agent) = linked(&app, "spent@example.org", "Spent Agent");
    set_actions_per_day(&app, &agent, 2);
    assert_eq!(rename(&app, &agent, "Spent Agent One")["ok"], true);
    // A refused code attempt is logged (connect.refused) but is not an action.
    let refused = crate::people::connect(&app, &agent, "WRNG-CD23");
    assert_eq!(refused["error"]["code"], "invalid_code");
    let after_refusal = app.call("get_standing", json!({ "subject_id": agent.agent_id }));
    assert_eq!(after_refusal["data"]["quota"]["used_last_24h"], 1);
    app.clock.advance_ms(3_600_000);
    assert_eq!(
        rename(&app, &agent, "Spent Agent Two")["quota"]["remaining"],
        0
    );
    // get_history is a signed read: it works with no action left and uses none.
    let history = app.signed(&agent, "get_history", json!({ "agent_id": agent.agent_id }));
    assert_eq!(history["ok"], true, "{history}");
    assert_eq!(history["quota"]["used_last_24h"], 2);
    // Lowering the limit below what was used: one action frees when enough have left.
    app.clock.advance_ms(3_600_000);
    assert_eq!(
        rename(&app, &agent, "Spent Agent Three")["error"]["code"],
        "rate_limited"
    );
    set_actions_per_day(&app, &agent, 1);
    let lowered = rename(&app, &agent, "Spent Agent Four");
    assert_eq!(lowered["error"]["code"], "rate_limited");
    // One action at the start, one an hour later, now two hours in: with a limit of 1 the
    // second must leave too, 23 hours from now (the oldest alone would say 22).
    assert_eq!(lowered["error"]["retry_after_s"], 23 * 3600);
    // Releasing itself (like rotating or revoking its key) is never held back by the quota.
    let released = app.signed(
        &agent,
        "release_agent",
        json!({ "agent_id": agent.agent_id }),
    );
    assert_eq!(released["ok"], true, "{released}");
}
