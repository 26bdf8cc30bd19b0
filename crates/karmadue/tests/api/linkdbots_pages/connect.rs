//! `/linkdbots/dashboard/connect`: mint a pairing code, shown once (decision 331).

use super::*;

#[test]
fn linkdbots_connect_page_mints_a_code_shown_once_with_the_install_command() {
    let app = TestApp::start();
    let ada = person(&app, "ada@example.org", "Ada Owner");
    let form = ada.page(DASH_CONNECT);
    assert!(
        form.text.contains("<h1>Connect an agent</h1>"),
        "{}",
        form.text
    );
    assert!(form.text.contains("name=\"name\""), "{}", form.text);
    assert!(form.text.contains("value=\"Ada Owner\""), "{}", form.text);
    assert!(
        form.text.contains("Codes left today: 10 of 10."),
        "{}",
        form.text
    );
    assert!(!form.text.contains("class=\"code\""), "{}", form.text);
    // The dashboard's own links, and no link to pages this branch does not build.
    for link in [
        DASH_CONNECT,
        DASH_QUEUE,
        DASH_AGENTS,
        DASH_HOST_KEYS,
        DASH_TEAMS,
    ] {
        assert!(form.text.contains(&format!("href=\"{link}\"")), "{link}");
    }

    let minted = ada.post(DASH_CONNECT, &[("name", "Miso <the reviewer>")]);
    assert_eq!(minted.status, 200, "{}", minted.text);
    let code = shown_code(&minted.text);
    assert!(
        code.len() == 8
            && code
                .bytes()
                .all(|b| b"ABCDEFGHJKMNPQRSTUVWXYZ23456789".contains(&b)),
        "{code}"
    );
    let command = format!(
        "claude mcp add linkdbots -e LINKDBOTS_PAIRING_CODE={code} -e LINKDBOTS_API_URL={}/linkdbots/api/v1 -e LINKDBOTS_ENGINE=claude-code -e LINKDBOTS_HOST=claude-code -- karmadue linkdbots-mcp",
        app.base
    );
    assert!(!minted.text.contains("npx"), "no package from npm");
    assert!(minted.text.contains(&command), "{}", minted.text);
    assert!(
        minted.text.contains(&format!(
            "&quot;LINKDBOTS_PAIRING_CODE&quot;: &quot;{code}&quot;"
        )),
        "{}",
        minted.text
    );
    assert!(
        minted.text.contains("&quot;mcpServers&quot;"),
        "{}",
        minted.text
    );
    assert!(minted.text.contains("(15 minutes)"), "{}", minted.text);
    assert!(
        minted.text.contains("Codes left today: 9 of 10."),
        "{}",
        minted.text
    );
    assert!(
        minted.text.contains("value=\"Miso &lt;the reviewer&gt;\""),
        "{}",
        minted.text
    );
    // Shown once: the page read again does not carry it.
    assert!(!ada.page(DASH_CONNECT).text.contains(&code));

    // The code works once, and the profile carries the name the person typed.
    redeems_once(&app, &code, "Miso <the reviewer>");
}

/// `code` pairs a profile named `name`, once.
fn redeems_once(app: &TestApp, code: &str, name: &str) {
    let body = json!({ "code": code, "engine": "e", "model": "m", "host": "h" }).to_string();
    let pair = || {
        app.request(
            "POST",
            "/linkdbots/api/v1/pair",
            Some(body.as_bytes()),
            &[("content-type", "application/json")],
        )
    };
    let paired = pair();
    assert_eq!(paired.status, 201, "{}", paired.text);
    let agent_id = paired.json()["agentId"].as_str().unwrap().to_owned();
    let profile = app.request(
        "GET",
        &format!("/linkdbots/api/v1/agents/{agent_id}/profile"),
        None,
        &[],
    );
    assert_eq!(profile.json()["name"], name);
    assert_eq!(pair().status, 403);
}

#[test]
fn linkdbots_connect_page_refuses_a_bad_name_the_eleventh_code_and_a_forged_form() {
    let app = TestApp::start();
    let ada = person(&app, "ada@example.org", "Ada Owner");
    for name in ["", "   ", &"n".repeat(61)] {
        let refused = ada.post(DASH_CONNECT, &[("name", name)]);
        assert_eq!(refused.status, 400, "{}", refused.text);
        assert!(
            refused.text.contains("the name must be 1 to 60 characters"),
            "{}",
            refused.text
        );
        assert!(!refused.text.contains("class=\"code\""), "{}", refused.text);
    }
    ada.forged(DASH_CONNECT, &[("name", "Miso")]);
    assert_eq!(codes(&app), 0);
    for left in (0..10).rev() {
        let minted = ada.post(DASH_CONNECT, &[("name", "Miso")]);
        assert_eq!(minted.status, 200, "{}", minted.text);
        assert!(
            minted
                .text
                .contains(&format!("Codes left today: {left} of 10."))
        );
    }
    let eleventh = ada.post(DASH_CONNECT, &[("name", "Miso")]);
    assert_eq!(eleventh.status, 429, "{}", eleventh.text);
    assert!(
        eleventh
            .text
            .contains("10 pairing codes a day: this account has minted them all today"),
        "{}",
        eleventh.text
    );
    assert!(eleventh.text.contains("Codes left today: 0 of 10."));
    assert!(!eleventh.text.contains("class=\"code\""));
    assert_eq!(codes(&app), 10);
}
