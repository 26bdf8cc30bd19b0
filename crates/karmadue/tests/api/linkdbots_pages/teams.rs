//! `/linkdbots/dashboard/teams`: orgs, teams, adding and removing agents (decisions 324, 334).

use super::*;

fn members(app: &TestApp, team_id: &str) -> serde_json::Value {
    let path = format!("/linkdbots/api/v1/teams/{team_id}");
    let team = app.request("GET", &path, None, &[]);
    assert_eq!(team.status, 200, "{}", team.text);
    team.json()["members"].clone()
}

/// Posts the teams form `action` with `fields`.
fn act(person: &Person<'_>, action: &str, fields: &[(&str, &str)]) -> Reply {
    let mut all = vec![("action", action)];
    all.extend_from_slice(fields);
    person.post(DASH_TEAMS, &all)
}

/// Posts `action` on (`team_id`, `agent_id`).
fn member(person: &Person<'_>, action: &str, team_id: &str, agent_id: &str) -> Reply {
    act(
        person,
        action,
        &[("team_id", team_id), ("agent_id", agent_id)],
    )
}

#[test]
fn linkdbots_teams_page_makes_orgs_and_teams_and_refuses_bad_ones() {
    let app = TestApp::start();
    let ada = person(&app, "ada@example.org", "Ada Owner");
    let stan = person(&app, "stan@example.org", "Stan Stranger");
    let page = ada.page(DASH_TEAMS);
    assert!(page.text.contains("No orgs yet.") && page.text.contains("No teams yet."));
    // Refusals store nothing: a bad handle, a bad name, an org not theirs, a forged form.
    let bad = act(&ada, "create_org", &[("handle", "Acme!"), ("name", "Acme")]);
    assert_eq!(bad.status, 400, "{}", bad.text);
    let words = "an org handle is 2 to 30 lowercase letters";
    assert!(bad.text.contains(words), "{}", bad.text);
    let unnamed = act(&ada, "create_team", &[("name", "")]);
    assert_eq!(unnamed.status, 400, "{}", unnamed.text);
    let unknown = act(&ada, "nap", &[]);
    assert_eq!(unknown.status, 400, "{}", unknown.text);
    let fields = [
        ("action", "create_org"),
        ("handle", "acme"),
        ("name", "Acme"),
    ];
    ada.forged(DASH_TEAMS, &fields);
    assert_eq!(count(&app, "linkdbots_orgs"), 0);

    let org = act(
        &ada,
        "create_org",
        &[("handle", "acme-labs"), ("name", "Acme Labs")],
    );
    assert_see_other(&org, &format!("{DASH_TEAMS}?done=org"));
    let spies = [("name", "Spies"), ("org", "acme-labs")];
    assert_eq!(act(&stan, "create_team", &spies).status, 404);
    let team = act(
        &ada,
        "create_team",
        &[("name", "Reviewers"), ("org", "acme-labs")],
    );
    assert_see_other(&team, &format!("{DASH_TEAMS}?done=team"));
    assert_eq!(count(&app, "linkdbots_teams"), 1);
    let page = ada.page(&format!("{DASH_TEAMS}?done=team"));
    for shown in [
        "The team is made.",
        "Reviewers in <code>acme-labs</code>",
        "<option value=\"acme-labs\">Acme Labs</option>",
        "No agents in it yet.",
    ] {
        assert!(page.text.contains(shown), "{shown}: {}", page.text);
    }
    let org_row = app
        .hub
        .store
        .read_blocking(|conn| -> Result<_, kd_core::store::StoreError> {
            Ok(kd_linkdbots::teams_store::org_by_handle(conn, "acme-labs")?)
        })
        .unwrap()
        .unwrap();
    assert!(!page.text.contains(&org_row.id), "{}", page.text);
}

#[test]
fn linkdbots_teams_page_adds_and_removes_an_agent() {
    let app = TestApp::start();
    let ada = person(&app, "ada@example.org", "Ada Owner");
    let stan = person(&app, "stan@example.org", "Stan Stranger");
    let (agent_id, _) = paired(&app, &ada, "Miso");
    let made = act(&ada, "create_team", &[("name", "Reviewers")]);
    assert_see_other(&made, &format!("{DASH_TEAMS}?done=team"));
    let page = ada.page(DASH_TEAMS);
    let team_id = crate::app::hidden(&page.text, "team_id");
    assert!(team_id.starts_with("tm_"), "{team_id}");
    let option = format!("<option value=\"{agent_id}\">Miso (miso)</option>");
    assert!(page.text.contains(&option), "{}", page.text);

    // Adding: not theirs or forged changes nothing; then in, and not twice.
    assert_eq!(member(&stan, "add_agent", &team_id, &agent_id).status, 404);
    let fields = [
        ("action", "add_agent"),
        ("team_id", &team_id),
        ("agent_id", &agent_id),
    ];
    ada.forged(DASH_TEAMS, &fields);
    assert_eq!(members(&app, &team_id), json!([]));
    let added = member(&ada, "add_agent", &team_id, &agent_id);
    assert_see_other(&added, &format!("{DASH_TEAMS}?done=added"));
    assert_eq!(members(&app, &team_id)[0]["handle"], "miso");
    assert_eq!(member(&ada, "add_agent", &team_id, &agent_id).status, 409);
    let page = ada.page(DASH_TEAMS);
    assert!(page.text.contains(">Remove from team<"), "{}", page.text);
    assert!(!page.text.contains(&option), "{}", page.text);

    // Removing: not theirs or forged changes nothing; then out, and not twice.
    assert_eq!(
        member(&stan, "remove_agent", &team_id, &agent_id).status,
        404
    );
    let fields = [
        ("action", "remove_agent"),
        ("team_id", &team_id),
        ("agent_id", &agent_id),
    ];
    ada.forged(DASH_TEAMS, &fields);
    assert_eq!(members(&app, &team_id).as_array().unwrap().len(), 1);
    let removed = member(&ada, "remove_agent", &team_id, &agent_id);
    assert_see_other(&removed, &format!("{DASH_TEAMS}?done=removed"));
    assert_eq!(members(&app, &team_id), json!([]));
    let path = format!("/linkdbots/api/v1/agents/{agent_id}/profile");
    assert_eq!(
        app.request("GET", &path, None, &[]).json()["teams"],
        json!([])
    );
    let again = member(&ada, "remove_agent", &team_id, &agent_id);
    assert_eq!(again.status, 404, "{}", again.text);
    assert!(again.text.contains("in this team"), "{}", again.text);
    assert!(ada.page(DASH_TEAMS).text.contains(&option));
}
