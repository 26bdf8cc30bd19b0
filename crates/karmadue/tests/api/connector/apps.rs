//! *You → Connected apps* and the per-connection limit.

use super::agents::whoami;
use super::*;

#[test]
fn removing_a_connected_app_revokes_every_token_at_once() {
    let app = TestApp::start();
    let client_id = client(&app);
    let browser = person(&app, "maya@example.org");
    let location = decide(&app, &browser, &client_id, "approve", &["listings"]);
    let code = param(&location, "code").unwrap();
    let tokens = exchange(&app, &client_id, &code).json();
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(
        tokens["scope"], "kd.discovery.read kd.evidence.read kd.listings.write",
        "outcomes switched off, listings on"
    );
    let you = browser.get("/you");
    assert!(you.text.contains("href=\"/you/apps\""));
    let page = browser.get("/you/apps");
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains("Claude"));
    assert!(page.text.contains("kd.listings.write"));
    // A permission not granted links to the screen that adds it; the app keeps its connection
    // (docs/decisions.md 430).
    let agent = whoami(&app, access)["agent_id"]
        .as_str()
        .unwrap()
        .to_owned();
    for scope in ["kd.outcomes.write", "kd.proposals.write"] {
        let link = format!("href=\"/oauth/add-permission?agent={agent}&amp;scope={scope}\"");
        assert!(page.text.contains(&link), "{link}\n{}", page.text);
        assert!(page.text.contains(&format!("Add {scope}")));
    }
    assert!(!page.text.contains("Add kd.listings.write"), "held already");
    assert!(!page.text.contains("Add kd.discovery.read"), "always held");
    assert!(
        page.text
            .contains("To give an app one more permission, follow its Add link")
    );
    assert!(
        !page
            .text
            .contains("To change an app's permissions, remove it")
    );
    let connection_id = hidden(&page.text, "connection_id");
    let csrf = hidden(&page.text, "csrf");

    // Someone else cannot remove it.
    let other = person(&app, "omar@example.org");
    let other_csrf = hidden(&other.get("/you").text, "csrf");
    let refused = other.post(
        "/you/apps",
        &[("csrf", &other_csrf), ("connection_id", &connection_id)],
    );
    assert_eq!(refused.status, 400);
    assert_eq!(
        rpc(&app, CONNECTOR, access, "tools/list", json!({})).status,
        200
    );

    let removed = browser.post(
        "/you/apps",
        &[("csrf", &csrf), ("connection_id", &connection_id)],
    );
    assert_eq!(removed.status, 303, "{}", removed.text);
    assert_eq!(
        rpc(&app, CONNECTOR, access, "tools/list", json!({})).status,
        401
    );
    let refreshed = refresh(&app, &client_id, tokens["refresh_token"].as_str().unwrap());
    assert_eq!(refreshed.json()["error"], "invalid_grant");
    assert!(!browser.get("/you/apps").text.contains("connection_id"));
}

#[test]
fn a_connection_makes_60_requests_a_minute() {
    let app = TestApp::start();
    let (_, tokens) = connected(&app, "maya@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    for _ in 0..60 {
        assert_eq!(rpc(&app, "/mcp", access, "ping", json!({})).status, 200);
    }
    let limited = rpc(&app, CONNECTOR, access, "tools/list", json!({}));
    assert_eq!(limited.status, 429, "{}", limited.text);
    let retry: u64 = limited.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry));
    assert_eq!(limited.json()["error"]["data"]["code"], "rate_limited");
    // Another connection has its own minute.
    let (_, other) = connected(&app, "omar@example.org");
    let other_access = other["access_token"].as_str().unwrap();
    assert_eq!(
        rpc(&app, CONNECTOR, other_access, "ping", json!({})).status,
        200
    );
    app.clock.advance_ms(60_000);
    assert_eq!(rpc(&app, CONNECTOR, access, "ping", json!({})).status, 200);
}
