//! The You page: the consent screen, capability offers, preferences and actions a day.

use super::*;

#[test]
fn the_consent_screen_lists_each_permission_and_sets_the_actions_a_day() {
    let app = TestApp::start();
    let person = app.browser();
    person.sign_up("consent@example.org", "Cora Consent", PASSWORD);
    let agent = app.register("Consent Agent");
    let code = mint(&person);
    assert_eq!(connect(&app, &agent, &code)["ok"], true);
    let you = person.get("/you");
    let request_id = hidden(&you.text, "request_id");
    assert!(
        you.text
            .contains(&format!("/oauth/consent?request_id={request_id}"))
    );

    let screen = person.get(&format!("/oauth/consent?request_id={request_id}"));
    assert_eq!(screen.status, 200, "{}", screen.text);
    for line in [
        "kd.discovery.read, kd.evidence.read",
        "private Inbox",
        "$0 a day and $0 per action",
        "cannot spend money",
        "name=\"actions_per_day\"",
        "value=\"40\"",
    ] {
        assert!(screen.text.contains(line), "{line}");
    }
    let csrf = hidden(&screen.text, "csrf");
    let before = app.log_len();
    for bad in ["0", "201", "many", ""] {
        let refused = person.post(
            "/oauth/consent",
            &[
                ("csrf", &csrf),
                ("request_id", &request_id),
                ("actions_per_day", bad),
                ("decision", "approve"),
            ],
        );
        assert_eq!(refused.status, 400, "{bad}");
        assert!(refused.text.contains("from 1 to 200"));
    }
    assert_eq!(app.log_len(), before, "a refused consent changes nothing");
    assert_eq!(verify(&app, &agent)["owner_linked"], false);

    // Another person cannot open or decide it; a visitor is sent to sign in.
    let other = app.browser();
    other.sign_up("other@example.org", "Otto Other", PASSWORD);
    assert_eq!(
        other
            .get(&format!("/oauth/consent?request_id={request_id}"))
            .status,
        404
    );
    assert_eq!(
        app.browser()
            .get(&format!("/oauth/consent?request_id={request_id}"))
            .status,
        303
    );

    let approved = person.post(
        "/oauth/consent",
        &[
            ("csrf", &csrf),
            ("request_id", &request_id),
            ("actions_per_day", "25"),
            ("decision", "approve"),
        ],
    );
    assert_eq!(approved.status, 303, "{}", approved.text);
    let verified = verify(&app, &agent);
    assert_eq!(verified["owner_linked"], true);
    assert_eq!(verified["current"]["limits"]["actions_per_day"], 25);
    assert_eq!(verified["current"]["limits"]["spend_usd_per_day"], 0);
    let standing = app.call("get_standing", json!({ "subject_id": agent.agent_id }));
    assert_eq!(standing["data"]["quota"]["actions_per_day"], 25);
    // Decided: the screen is gone.
    assert_eq!(
        person
            .get(&format!("/oauth/consent?request_id={request_id}"))
            .status,
        404
    );
}

#[test]
fn the_you_page_publishes_a_first_capability_offer_and_shows_stored_preferences_as_data() {
    let app = TestApp::start();
    let (owner, _token, agent) = linked(&app, "offers@example.org", "Offering Agent");
    let offer = app.signed(
        &agent,
        "offer_capability",
        json!({ "agent_id": agent.agent_id, "title": "I <b>summarise</b> PDFs", "description": "Fast and careful" }),
    );
    assert_eq!(offer["ok"], true, "{offer}");
    assert_eq!(offer["data"]["status"], "pending_owner");
    let prefs = app.signed(
        &agent,
        "update_preferences",
        json!({ "agent_id": agent.agent_id, "preferences": { "digest": "<script>daily</script>" } }),
    );
    assert_eq!(prefs["ok"], true, "{prefs}");

    let you = owner.get("/you");
    assert!(
        you.text.contains("I &lt;b&gt;summarise&lt;/b&gt; PDFs"),
        "{}",
        you.text
    );
    assert!(you.text.contains("&lt;script&gt;daily&lt;/script&gt;"));
    assert!(!you.text.contains("<script>"));
    let offer_id = hidden(&you.text, "offer_id");
    let csrf = hidden(&you.text, "csrf");
    let stranger = app.browser();
    stranger.sign_up("stranger@example.org", "Stan Stranger", PASSWORD);
    let page = stranger.get("/you");
    let before = app.log_len();
    let bad = owner.post(
        "/you/offers",
        &[
            ("csrf", &csrf),
            ("offer_id", &offer_id),
            ("decision", "maybe"),
        ],
    );
    assert_eq!(bad.status, 400);
    let refused = stranger.post(
        "/you/offers",
        &[
            ("csrf", &hidden(&page.text, "csrf")),
            ("offer_id", &offer_id),
            ("decision", "approve"),
        ],
    );
    assert_eq!(
        refused.status, 404,
        "another person's offer is not theirs to publish"
    );
    assert_eq!(app.log_len(), before);

    let published = owner.post(
        "/you/offers",
        &[
            ("csrf", &csrf),
            ("offer_id", &offer_id),
            ("decision", "approve"),
        ],
    );
    assert_eq!(published.status, 303);
    assert!(app.events_text().contains("capability.offer_published"));
    assert!(
        !owner
            .get("/you")
            .text
            .contains("Capability offers to publish")
    );
    // After the first publish, the agent's offers publish directly.
    let second = app.signed(
        &agent,
        "offer_capability",
        json!({ "agent_id": agent.agent_id, "title": "I also translate" }),
    );
    assert_eq!(second["data"]["status"], "published", "{second}");
}

#[test]
fn a_person_changes_the_actions_a_day_of_a_linked_agent_on_the_you_page() {
    let app = TestApp::start();
    let (owner, _token, agent) = linked(&app, "limits@example.org", "Limited Agent");
    let you = owner.get("/you");
    assert!(you.text.contains("name=\"actions_per_day\""));
    assert!(you.text.contains("value=\"40\""));
    let csrf = hidden(&you.text, "csrf");
    let before = app.log_len();
    for bad in ["0", "201", "lots"] {
        let refused = owner.post(
            "/you/agents",
            &[
                ("csrf", &csrf),
                ("agent_id", &agent.agent_id),
                ("action", "limit"),
                ("actions_per_day", bad),
            ],
        );
        assert_eq!(refused.status, 400, "{bad}");
    }
    let stranger = app.browser();
    stranger.sign_up("limits-stranger@example.org", "Sid Stranger", PASSWORD);
    let page = stranger.get("/you");
    let before_stranger = app.log_len();
    let refused = stranger.post(
        "/you/agents",
        &[
            ("csrf", &hidden(&page.text, "csrf")),
            ("agent_id", &agent.agent_id),
            ("action", "limit"),
            ("actions_per_day", "200"),
        ],
    );
    assert_eq!(refused.status, 404);
    assert_eq!(app.log_len(), before_stranger);
    assert_eq!(
        before_stranger,
        before + 1,
        "only the stranger's sign-up was recorded"
    );

    let changed = owner.post(
        "/you/agents",
        &[
            ("csrf", &csrf),
            ("agent_id", &agent.agent_id),
            ("action", "limit"),
            ("actions_per_day", "120"),
        ],
    );
    assert_eq!(changed.status, 303);
    assert_eq!(
        verify(&app, &agent)["current"]["limits"]["actions_per_day"],
        120
    );
    assert!(app.events_text().contains("owner.grant_changed"));
    assert!(owner.get("/you").text.contains("value=\"120\""));
}
