//! Metadata, the 401 challenge, registration and /oauth/authorize.

use super::*;

#[test]
fn metadata_documents_name_one_issuer_and_the_connector_resource() {
    let app = TestApp::start();
    let issuer = app.base.clone();
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
        "/functions/v1/mcp/.well-known/oauth-authorization-server",
    ] {
        let reply = app.request("GET", path, None, &[]);
        assert_eq!(reply.status, 200, "{path}");
        let doc = reply.json();
        assert_eq!(doc["issuer"], issuer.as_str(), "{path}");
        assert_eq!(doc["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(doc["authorization_response_iss_parameter_supported"], true);
        assert_eq!(doc["client_id_metadata_document_supported"], true);
        assert_eq!(
            doc["authorization_endpoint"],
            format!("{issuer}/oauth/authorize")
        );
        assert_eq!(
            doc["token_endpoint"],
            format!("{issuer}/functions/v1/mcp/oauth/token")
        );
        assert_eq!(
            doc["registration_endpoint"],
            format!("{issuer}/functions/v1/mcp/oauth/register")
        );
        assert_eq!(
            doc["revocation_endpoint"],
            format!("{issuer}/functions/v1/mcp/oauth/revoke")
        );
        assert_eq!(
            doc["token_endpoint_auth_methods_supported"],
            json!(["none"])
        );
    }
    for (path, resource) in [
        (
            "/functions/v1/mcp/.well-known/oauth-protected-resource",
            format!("{issuer}{CONNECTOR}"),
        ),
        (
            "/.well-known/oauth-protected-resource/functions/v1/mcp/connector",
            format!("{issuer}{CONNECTOR}"),
        ),
        (
            "/.well-known/oauth-protected-resource/mcp",
            format!("{issuer}/mcp"),
        ),
        ("/.well-known/oauth-protected-resource", issuer.clone()),
    ] {
        let reply = app.request("GET", path, None, &[]);
        assert_eq!(reply.status, 200, "{path}");
        let doc = reply.json();
        assert_eq!(doc["resource"], resource.as_str(), "{path}");
        assert_eq!(doc["authorization_servers"], json!([issuer]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
        assert!(
            doc["scopes_supported"]
                .as_array()
                .unwrap()
                .contains(&json!("kd.outcomes.write"))
        );
    }
}

#[test]
fn the_connector_without_a_token_answers_401_with_the_challenge() {
    let app = TestApp::start();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }).to_string();
    for (path, metadata) in [
        (
            CONNECTOR,
            format!(
                "{}/functions/v1/mcp/.well-known/oauth-protected-resource",
                app.base
            ),
        ),
        (
            "/mcp",
            format!("{}/.well-known/oauth-protected-resource/mcp", app.base),
        ),
    ] {
        let reply = app.request(
            "POST",
            path,
            Some(body.as_bytes()),
            &[("content-type", "application/json")],
        );
        assert_eq!(reply.status, 401, "{path}");
        let challenge = reply.header("www-authenticate").unwrap();
        assert!(
            challenge.starts_with(&format!("Bearer resource_metadata=\"{metadata}\"")),
            "{challenge}"
        );
        assert!(
            challenge.contains("scope=\"kd.discovery.read kd.evidence.read\""),
            "{challenge}"
        );
        assert!(!challenge.contains("invalid_token"));
        let garbage = rpc(&app, path, "kdoa_nothing", "tools/list", json!({}));
        assert_eq!(garbage.status, 401);
        assert!(
            garbage
                .header("www-authenticate")
                .unwrap()
                .contains("error=\"invalid_token\"")
        );
    }
}

#[test]
fn registration_makes_public_clients_and_refuses_bad_redirects() {
    let app = TestApp::start();
    let (status, body) = register(
        &app,
        &json!({
            "client_name": "Claude",
            "redirect_uris": [REDIRECT, "http://localhost/callback", "http://127.0.0.1:33418/cb"],
            "token_endpoint_auth_method": "client_secret_post",
            "grant_types": ["authorization_code", "refresh_token"],
        }),
    );
    assert_eq!(status, 201, "{body}");
    assert!(body["client_id"].as_str().unwrap().starts_with("kdcl_"));
    assert!(body["client_id_issued_at"].as_i64().unwrap() > 0);
    assert_eq!(body["token_endpoint_auth_method"], "none");
    assert!(body.get("client_secret").is_none());
    assert_eq!(body["redirect_uris"][1], "http://localhost/callback");
    for bad in [
        "http://example.com/callback",
        "javascript:alert(1)",
        "data:text/html,hi",
        "https://example.com/cb#fragment",
        "myapp://callback",
    ] {
        let (status, body) = register(&app, &json!({ "redirect_uris": [bad] }));
        assert_eq!(status, 400, "{bad}");
        assert_eq!(body["error"], "invalid_redirect_uri", "{bad}");
    }
    let (status, body) = register(&app, &json!({ "redirect_uris": [] }));
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_redirect_uri"))
    );
    let (status, body) = register(
        &app,
        &json!({ "redirect_uris": [REDIRECT], "grant_types": ["client_credentials"] }),
    );
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_client_metadata"))
    );
}

#[test]
fn authorize_sends_a_visitor_to_sign_in_and_back_to_the_consent_screen() {
    let app = TestApp::start();
    let client_id = client(&app);
    // The person has an account but is not signed in here.
    person(&app, "maya@example.org");
    let visitor = app.browser();
    let path = authorize_path(&app, &client_id);
    let reply = visitor.get(&path);
    assert_eq!(reply.status, 303);
    let signin = reply.header("location").unwrap().to_owned();
    assert_eq!(signin, format!("/signin?next={}", encode(&path)));
    let page = visitor.get(&signin);
    assert_eq!(page.status, 200);
    let csrf = hidden(&page.text, "csrf");
    let signed = visitor.post(
        "/signin",
        &[
            ("csrf", &csrf),
            ("email", "maya@example.org"),
            ("password", PASSWORD),
            ("next", &path),
        ],
    );
    assert_eq!(signed.status, 303, "{}", signed.text);
    assert_eq!(signed.header("location"), Some(path.as_str()));
    // Somewhere else is never followed.
    let other = app.browser();
    let page = other.get("/signin?next=https%3A%2F%2Fevil.example%2F");
    let csrf = hidden(&page.text, "csrf");
    let signed = other.post(
        "/signin",
        &[
            ("csrf", &csrf),
            ("email", "maya@example.org"),
            ("password", PASSWORD),
            ("next", "https://evil.example/"),
        ],
    );
    assert_eq!(signed.header("location"), Some("/you"));

    let screen = visitor.get(&path);
    assert_eq!(screen.status, 200, "{}", screen.text);
    for line in [
        "kd.discovery.read",
        "kd.evidence.read",
        "Inbox",
        "$0",
        "Actions a day: up to 40",
        "name=\"outcomes\" value=\"on\" checked",
        "name=\"listings\" value=\"on\">",
        "name=\"proposals\" value=\"on\">",
        "claude.ai",
    ] {
        assert!(screen.text.contains(line), "{line}: {}", screen.text);
    }
}

#[test]
fn consent_redirects_carry_iss_and_state_and_bad_requests_are_not_redirected() {
    let app = TestApp::start();
    let client_id = client(&app);
    let browser = person(&app, "maya@example.org");
    let approved = decide(&app, &browser, &client_id, "approve", &["outcomes"]);
    assert!(
        approved.starts_with(&format!("{REDIRECT}?code=kdoc_")),
        "{approved}"
    );
    assert_eq!(param(&approved, "state").as_deref(), Some("xyz"));
    assert_eq!(param(&approved, "iss").as_deref(), Some(app.base.as_str()));
    let denied = decide(&app, &browser, &client_id, "deny", &[]);
    assert_eq!(param(&denied, "error").as_deref(), Some("access_denied"));
    assert_eq!(param(&denied, "iss").as_deref(), Some(app.base.as_str()));
    assert_eq!(param(&denied, "state").as_deref(), Some("xyz"));
    assert!(param(&denied, "code").is_none());

    // PKCE plain: back to the client with invalid_request and iss.
    let plain = authorize_path(&app, &client_id).replace("S256", "plain");
    let reply = browser.get(&plain);
    assert_eq!(reply.status, 303);
    let location = reply.header("location").unwrap();
    assert_eq!(param(location, "error").as_deref(), Some("invalid_request"));
    assert_eq!(param(location, "iss").as_deref(), Some(app.base.as_str()));
    // Another resource: invalid_target.
    let elsewhere = authorize_path(&app, &client_id).replace(
        &encode(&format!("{}{CONNECTOR}", app.base)),
        "https%3A%2F%2Fother.example%2Fmcp",
    );
    let location = browser
        .get(&elsewhere)
        .header("location")
        .unwrap()
        .to_owned();
    assert_eq!(param(&location, "error").as_deref(), Some("invalid_target"));
    // Unknown client or unregistered redirect: shown, never redirected.
    for path in [
        authorize_path(&app, "kdcl_unknown"),
        authorize_path(&app, &client_id)
            .replace(&encode(REDIRECT), "https%3A%2F%2Fevil.example%2Fcb"),
    ] {
        let reply = browser.get(&path);
        assert_eq!(reply.status, 400, "{path}");
        assert!(reply.header("location").is_none());
    }
}

#[test]
fn the_oauth_documents_and_endpoints_answer_cors_preflights_without_auth() {
    let app = TestApp::start();
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource/mcp",
        "/functions/v1/mcp/oauth/register",
        "/functions/v1/mcp/oauth/token",
        "/functions/v1/mcp/oauth/revoke",
    ] {
        let reply = app.request(
            "OPTIONS",
            path,
            None,
            &[
                ("origin", "https://inspector.example"),
                ("access-control-request-method", "POST"),
            ],
        );
        assert_eq!(reply.status, 204, "{path}");
        assert_eq!(reply.header("access-control-allow-origin"), Some("*"));
        assert!(
            reply
                .header("access-control-allow-headers")
                .unwrap()
                .contains("Authorization")
        );
    }
    let document = app.request("GET", "/.well-known/oauth-authorization-server", None, &[]);
    assert_eq!(document.header("access-control-allow-origin"), Some("*"));
}
