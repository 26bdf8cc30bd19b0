//! The claim page and the roster page the `claimUrl`s lead to (decision 330).

use super::*;
use crate::app::urlencode;

fn post_json(app: &TestApp, path: &str, body: &serde_json::Value) -> serde_json::Value {
    let body = body.to_string();
    let reply = app.request(
        "POST",
        &format!("/linkdbots/api/v1{path}"),
        Some(body.as_bytes()),
        &[("content-type", "application/json")],
    );
    assert_eq!(reply.status, 201, "{}", reply.text);
    reply.json()
}

/// The path and query of a `claimUrl`.
fn path_of(app: &TestApp, claim_url: &str) -> String {
    let public_url = app.hub.config.public_url.trim_end_matches('/');
    claim_url.strip_prefix(public_url).unwrap().to_owned()
}

#[test]
fn linkdbots_claim_page_shows_what_the_agent_supplied_and_adopts_it() {
    let app = TestApp::start();
    let registered = post_json(
        &app,
        "/agents/register",
        &json!({ "name": "Miso", "bio": "Reviews <i>diffs</i>.", "engine": "e", "model": "m", "host": "h" }),
    );
    let code = registered["claimCode"].as_str().unwrap();
    let path = path_of(&app, registered["claimUrl"].as_str().unwrap());
    assert_eq!(path, format!("/linkdbots/claim?code={code}"));
    let key = registered["pendingAgentKey"].as_str().unwrap();
    // A visitor signs in and comes back to the claim page.
    assert_see_other(
        &app.browser().get(&path),
        &format!("/signin?next={}", urlencode(&path)),
    );
    let cleo = person(&app, "cleo@example.org", "Cleo Claimer");
    let page = cleo.page(&path);
    for shown in [
        "<h1>Adopt an agent</h1>",
        "<strong>Miso</strong>",
        "Reviews &lt;i&gt;diffs&lt;/i&gt;.",
        "<code>miso</code>",
        ">Adopt this agent<",
    ] {
        assert!(page.text.contains(shown), "{shown}: {}", page.text);
    }
    let unknown = cleo.browser.get("/linkdbots/claim?code=NOPE");
    assert_eq!(unknown.status, 404, "{}", unknown.text);
    assert!(
        unknown.text.contains("this claim link is not valid"),
        "{}",
        unknown.text
    );
    cleo.forged(&path, &[("code", code)]);
    assert_eq!(keyed(&app, "GET", "/agents/me", key, "").status, 401);
    let adopted = cleo.post(&path, &[("code", code)]);
    assert_see_other(&adopted, &format!("{DASH_AGENTS}?done=claimed"));
    let me = keyed(&app, "GET", "/agents/me", key, "");
    assert_eq!(me.status, 200, "{}", me.text);
    assert_eq!(me.json()["bio"], "Reviews <i>diffs</i>.");
    assert!(
        cleo.page(&format!("{DASH_AGENTS}?done=claimed"))
            .text
            .contains("The agent is yours and active.")
    );
    // Used: the page and the form are a 404 that says so.
    assert_eq!(cleo.browser.get(&path).status, 404);
    let csrf = cleo.browser.csrf(DASH_AGENTS);
    let again = cleo.browser.post(&path, &[("csrf", &csrf), ("code", code)]);
    assert_eq!(again.status, 404, "{}", again.text);
    assert!(
        again.text.contains("this claim link is not valid"),
        "{}",
        again.text
    );
}

#[test]
fn linkdbots_roster_page_shows_every_bot_and_team_and_approves_them_all() {
    let app = TestApp::start();
    let answer = post_json(
        &app,
        "/connect",
        &json!({
            "host": "openmausbot",
            "agents": [
                { "name": "Miso", "bio": "Reviews diffs.", "engine": "e", "model": "m" },
                { "name": "Dashi", "engine": "e", "model": "m" },
            ],
            "teams": [{ "name": "Kitchen", "members": ["Miso", "Dashi"] }],
        }),
    );
    let code = answer["claimCode"].as_str().unwrap();
    let path = path_of(&app, answer["claimUrl"].as_str().unwrap());
    assert_eq!(path, format!("/linkdbots/connect?code={code}"));
    let key = answer["agents"][1]["pendingAgentKey"].as_str().unwrap();
    assert_see_other(
        &app.browser().get(&path),
        &format!("/signin?next={}", urlencode(&path)),
    );
    let cleo = person(&app, "cleo@example.org", "Cleo Claimer");
    let page = cleo.page(&path);
    for shown in [
        "<h1>Approve a roster</h1>",
        "<code>openmausbot</code> reports 2 agents",
        "<strong>Miso</strong>",
        "Reviews diffs.",
        "<strong>Dashi</strong>",
        "No bio.",
        "Kitchen: <code>miso</code>, <code>dashi</code>",
        ">Approve the whole roster<",
    ] {
        assert!(page.text.contains(shown), "{shown}: {}", page.text);
    }
    cleo.forged(&path, &[("code", code)]);
    assert_eq!(keyed(&app, "GET", "/agents/me", key, "").status, 401);
    let approved = cleo.post(&path, &[("code", code)]);
    assert_see_other(&approved, &format!("{DASH_AGENTS}?done=roster"));
    let me = keyed(&app, "GET", "/agents/me", key, "");
    assert_eq!(me.status, 200, "{}", me.text);
    assert_eq!(me.json()["teams"][0]["name"], "Kitchen");
    let agents = cleo.page(DASH_AGENTS);
    assert!(
        agents.text.contains("Miso <code>miso</code>")
            && agents.text.contains("Dashi <code>dashi</code>")
    );
    assert_eq!(cleo.browser.get(&path).status, 404);
}
