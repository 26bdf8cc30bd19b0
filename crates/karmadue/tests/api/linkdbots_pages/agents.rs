//! `/linkdbots/dashboard/agents`: status, key state, budgets; pause, unpause, rotate, revoke,
//! lower a budget (decisions 323, 331).

use super::*;

fn me(app: &TestApp, key: &str) -> u16 {
    keyed(app, "GET", "/agents/me", key, "").status
}

fn limits(app: &TestApp) -> i64 {
    count(app, "linkdbots_budget_limits")
}

#[test]
fn linkdbots_agents_page_shows_each_agent_and_pauses_unpauses_and_lowers_budgets() {
    let app = TestApp::start();
    let ada = person(&app, "ada@example.org", "Ada Owner");
    let stan = person(&app, "stan@example.org", "Stan Stranger");
    assert!(ada.page(DASH_AGENTS).text.contains("No agents yet."));
    let (agent_id, key) = paired(&app, &ada, "Miso");
    let page = ada.page(DASH_AGENTS);
    for shown in [
        "Miso <code>miso</code>",
        "Status: <strong class=\"status\">active</strong>",
        "Key: <span class=\"key\">works</span>",
        &format!("name=\"agent_id\" value=\"{agent_id}\""),
        "name=\"budget\" value=\"cards\"",
        "name=\"limit\" min=\"0\" max=\"5\" value=\"5\"",
        ">Pause<",
        ">Rotate key<",
        ">Revoke key<",
    ] {
        assert!(page.text.contains(shown), "{shown}: {}", page.text);
    }
    assert!(!page.text.contains(&kd_linkdbots::sha256_hex(&key)));
    assert!(!page.text.contains(&key));
    // Not theirs: 404 and nothing changes; forged: 403.
    let theirs = stan.post(DASH_AGENTS, &[("agent_id", &agent_id), ("action", "pause")]);
    assert_eq!(theirs.status, 404, "{}", theirs.text);
    ada.forged(DASH_AGENTS, &[("agent_id", &agent_id), ("action", "pause")]);
    assert_eq!(me(&app, &key), 200);

    let paused = ada.post(DASH_AGENTS, &[("agent_id", &agent_id), ("action", "pause")]);
    assert_see_other(&paused, &format!("{DASH_AGENTS}?done=paused"));
    assert_eq!(me(&app, &key), 401);
    let page = ada.page(&format!("{DASH_AGENTS}?done=paused"));
    assert!(
        page.text
            .contains("Paused: its key is refused until you unpause it.")
    );
    assert!(
        page.text.contains("refused until you unpause"),
        "{}",
        page.text
    );
    assert!(page.text.contains(">Unpause<"), "{}", page.text);
    let twice = ada.post(DASH_AGENTS, &[("agent_id", &agent_id), ("action", "pause")]);
    assert_eq!(twice.status, 409, "{}", twice.text);
    let unpaused = ada.post(
        DASH_AGENTS,
        &[("agent_id", &agent_id), ("action", "unpause")],
    );
    assert_see_other(&unpaused, &format!("{DASH_AGENTS}?done=unpaused"));
    assert_eq!(me(&app, &key), 200);
}

#[test]
fn linkdbots_agents_page_lowers_a_budget_and_refuses_a_bad_limit() {
    let app = TestApp::start();
    let ada = person(&app, "ada@example.org", "Ada Owner");
    let (agent_id, key) = paired(&app, &ada, "Miso");
    // Budgets: above the default, below 0, not a number or an unknown action change nothing.
    for (budget, limit) in [
        ("cards", "6"),
        ("cards", "-1"),
        ("cards", "two"),
        ("naps", "1"),
    ] {
        let refused = ada.post(
            DASH_AGENTS,
            &[
                ("agent_id", &agent_id),
                ("action", "budget"),
                ("budget", budget),
                ("limit", limit),
            ],
        );
        assert_eq!(refused.status, 400, "{budget} {limit}: {}", refused.text);
        assert!(refused.text.contains("class=\"error\""), "{}", refused.text);
    }
    assert_eq!(limits(&app), 0);
    let lowered = ada.post(
        DASH_AGENTS,
        &[
            ("agent_id", &agent_id),
            ("action", "budget"),
            ("budget", "cards"),
            ("limit", "2"),
        ],
    );
    assert_see_other(&lowered, &format!("{DASH_AGENTS}?done=budget"));
    assert!(
        ada.page(DASH_AGENTS)
            .text
            .contains("name=\"limit\" min=\"0\" max=\"5\" value=\"2\"")
    );
    let budget = keyed(&app, "GET", "/budget", &key, "");
    assert_eq!(
        budget.json()["actions"]["cards"]["limit"],
        2,
        "{}",
        budget.text
    );
    let unknown = ada.post(DASH_AGENTS, &[("agent_id", &agent_id), ("action", "nap")]);
    assert_eq!(unknown.status, 400, "{}", unknown.text);
}

#[test]
fn linkdbots_agents_page_rotates_a_key_shown_once_and_revokes_for_good() {
    let app = TestApp::start();
    let ada = person(&app, "ada@example.org", "Ada Owner");
    let (agent_id, key) = paired(&app, &ada, "Miso");
    let rotated = ada.post(
        DASH_AGENTS,
        &[("agent_id", &agent_id), ("action", "rotate")],
    );
    assert_eq!(rotated.status, 200, "{}", rotated.text);
    let new_key = shown_code(&rotated.text);
    assert!(
        new_key.starts_with("lkb_agent_") && new_key != key,
        "{new_key}"
    );
    assert!(rotated.text.contains("The old key stopped working."));
    assert!(!rotated.text.contains(&kd_linkdbots::sha256_hex(&new_key)));
    assert_eq!(me(&app, &key), 401);
    assert_eq!(me(&app, &new_key), 200);
    assert!(!ada.page(DASH_AGENTS).text.contains(&new_key));

    let revoked = ada.post(
        DASH_AGENTS,
        &[("agent_id", &agent_id), ("action", "revoke")],
    );
    assert_see_other(&revoked, &format!("{DASH_AGENTS}?done=revoked"));
    assert_eq!(me(&app, &new_key), 401);
    let page = ada.page(&format!("{DASH_AGENTS}?done=revoked"));
    assert!(
        page.text
            .contains("Key: <span class=\"key\">revoked for good</span>"),
        "{}",
        page.text
    );
    assert!(!page.text.contains(">Unpause<") && !page.text.contains(">Rotate key<"));
    for action in ["unpause", "rotate", "revoke"] {
        let refused = ada.post(DASH_AGENTS, &[("agent_id", &agent_id), ("action", action)]);
        assert_eq!(refused.status, 409, "{action}: {}", refused.text);
        assert!(
            refused.text.contains("was revoked for good") || refused.text.contains("cannot become")
        );
    }
    assert_eq!(me(&app, &new_key), 401);
}
