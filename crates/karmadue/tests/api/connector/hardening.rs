//! What a fresh tester found at the connector's edges, fixed (decision 347): registration's
//! limits and words, loopback hosts in any case, and an access token on the REST endpoint.

use super::*;

#[test]
fn registration_refuses_long_non_ascii_uris_and_invisible_names_in_plain_words() {
    let app = TestApp::start();
    let long = format!("https://example.com/{}", "a".repeat(2_000));
    for (body, code) in [
        (json!({ "redirect_uris": [long] }), "invalid_redirect_uri"),
        (
            json!({ "redirect_uris": ["https://bücher.example/cb"] }),
            "invalid_redirect_uri",
        ),
        (
            json!({ "redirect_uris": [REDIRECT], "client_name": "Cla\u{200b}ude" }),
            "invalid_client_metadata",
        ),
        (
            json!({ "redirect_uris": [REDIRECT], "client_name": "\u{202e}edualC" }),
            "invalid_client_metadata",
        ),
        (json!({ "redirect_uris": 5 }), "invalid_client_metadata"),
    ] {
        let (status, answer) = register(&app, &body);
        assert_eq!(
            (status, answer["error"].as_str()),
            (400, Some(code)),
            "{body}: {answer}"
        );
        let words = answer["error_description"].as_str().unwrap();
        for framework in ["struct", "Failed to deserialize", "target type"] {
            assert!(!words.contains(framework), "{words}");
        }
    }
    // The punycode form of the same host is fine; so is a loopback host in capitals.
    for uri in [
        "https://xn--bcher-kva.example/cb",
        "http://LOCALHOST:4000/cb",
    ] {
        let (status, answer) = register(&app, &json!({ "redirect_uris": [uri] }));
        assert_eq!(status, 201, "{uri}: {answer}");
    }
}

#[test]
fn an_address_registers_ten_clients_a_minute_and_the_eleventh_waits() {
    let app = TestApp::start();
    // Refused registrations take no slot.
    for _ in 0..12 {
        let (status, _) = register(&app, &json!({ "redirect_uris": ["myapp://cb"] }));
        assert_eq!(status, 400);
    }
    for n in 0..10 {
        let (status, answer) = register(&app, &json!({ "redirect_uris": [REDIRECT] }));
        assert_eq!(status, 201, "registration {n}: {answer}");
    }
    let reply = app.request(
        "POST",
        "/functions/v1/mcp/oauth/register",
        Some(
            json!({ "redirect_uris": [REDIRECT] })
                .to_string()
                .as_bytes(),
        ),
        &[("content-type", "application/json")],
    );
    assert_eq!(reply.status, 429, "{}", reply.text);
    assert_eq!(reply.json()["error"], "rate_limited");
    let wait: u64 = reply.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
}

#[test]
fn a_loopback_redirect_in_capitals_matches_on_any_port() {
    let app = TestApp::start();
    let (status, answer) = register(
        &app,
        &json!({ "redirect_uris": ["http://LOCALHOST/callback"] }),
    );
    assert_eq!(status, 201, "{answer}");
    let client_id = answer["client_id"].as_str().unwrap();
    let browser = person(&app, "maya@example.org");
    let path = format!(
        "/oauth/authorize?response_type=code&client_id={client_id}&redirect_uri={}&state=xyz&code_challenge={CHALLENGE}&code_challenge_method=S256",
        encode("http://localhost:51234/callback")
    );
    let reply = browser.get(&path);
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(
        reply.text.contains("<form"),
        "the consent screen: {}",
        reply.text
    );
}

#[test]
fn an_oauth_token_on_the_rest_endpoint_is_wrong_endpoint() {
    let app = TestApp::start();
    let (_, tokens) = connected(&app, "maya@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    let before = app.log_len();
    let bearer = format!("Bearer {access}");
    for (method, path, body) in [
        (
            "POST",
            "/functions/v1/public-api/v1/tools/discover_resources",
            Some(r#"{"need":"calendar"}"#),
        ),
        ("GET", "/functions/v1/public-api/v1/verify/kda_nobody", None),
    ] {
        let reply = app.request(
            method,
            path,
            body.map(str::as_bytes),
            &[
                ("content-type", "application/json"),
                ("authorization", &bearer),
            ],
        );
        let answer = reply.json();
        assert_eq!(
            answer["error"]["code"], "wrong_endpoint",
            "{path}: {answer}"
        );
        assert_eq!(
            answer["error"]["connector_url"],
            format!("{}{CONNECTOR}", app.base)
        );
    }
    assert_eq!(app.log_len(), before);
}

#[test]
fn the_authorize_page_reads_scopes_caps_state_and_explains_a_repeated_parameter() {
    let app = TestApp::start();
    let client_id = client(&app);
    let browser = person(&app, "maya@example.org");
    let base = authorize_path(&app, &client_id);
    // Asked for listings: that switch starts on too (outcomes is on by default).
    let reply = browser.get(&format!("{base}&scope={}", encode("kd.listings.write")));
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(
        reply.text.contains(r#"name="listings" value="on" checked"#),
        "{}",
        reply.text
    );
    assert!(reply.text.contains(r#"name="outcomes" value="on" checked"#));
    // No scope: the defaults (outcomes on).
    let reply = browser.get(&base);
    assert!(reply.text.contains(r#"name="outcomes" value="on" checked"#));
    assert!(!reply.text.contains(r#"name="listings" value="on" checked"#));
    // A state too long to send back, and a repeated parameter: a page, never a redirect.
    let long = browser.get(&base.replace("state=xyz", &format!("state={}", "s".repeat(1_001))));
    assert_eq!(long.status, 400, "{}", long.text);
    assert!(long.header("location").is_none());
    assert!(
        long.text.contains("state is at most 1,000 characters"),
        "{}",
        long.text
    );
    let repeated = browser.get(&format!("{base}&client_id=kdcl_other"));
    assert_eq!(repeated.status, 400, "{}", repeated.text);
    assert!(repeated.header("location").is_none());
    assert!(
        repeated
            .header("content-type")
            .unwrap()
            .starts_with("text/html"),
        "{:?}",
        repeated.headers
    );
    assert!(
        repeated.text.contains("cannot be read"),
        "{}",
        repeated.text
    );
}
