//! The token endpoint (codes, PKCE, refresh rotation, reuse, the grace window) and RFC 7009
//! revocation.

use super::*;

fn tools_list_status(app: &TestApp, token: &str) -> u16 {
    rpc(app, CONNECTOR, token, "tools/list", json!({})).status
}

#[test]
fn a_code_gives_tokens_once_and_a_second_use_revokes_them() {
    let app = TestApp::start();
    let (client_id, code) = code(&app, "maya@example.org");
    let reply = exchange(&app, &client_id, &code);
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    let tokens = reply.json();
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 3600);
    assert_eq!(
        tokens["scope"],
        "kd.discovery.read kd.evidence.read kd.outcomes.write"
    );
    let access = tokens["access_token"].as_str().unwrap();
    assert!(access.starts_with("kdoa_"));
    assert!(
        tokens["refresh_token"]
            .as_str()
            .unwrap()
            .starts_with("kdor_")
    );
    assert_eq!(tools_list_status(&app, access), 200);

    let again = exchange(&app, &client_id, &code);
    assert_eq!(again.status, 400);
    assert_eq!(again.json()["error"], "invalid_grant");
    assert_eq!(again.header("cache-control"), Some("no-store"));
    assert_eq!(
        tools_list_status(&app, access),
        401,
        "the first tokens are revoked"
    );

    // Tokens are kept only as hashes.
    let stored = app.events_text();
    assert!(!stored.contains(access));
    let hub = &app.hub;
    let access_owned = access.to_owned();
    let found: i64 = hub
        .store
        .read_blocking(move |conn| -> Result<i64, kd_core::store::StoreError> {
            Ok(conn.query_row(
                "SELECT COUNT(*) FROM oauth_tokens WHERE token_sha256 = ?1",
                [access_owned.as_str()],
                |row| row.get(0),
            )?)
        })
        .unwrap();
    assert_eq!(found, 0);
}

#[test]
fn a_code_needs_its_verifier_redirect_client_and_time() {
    let app = TestApp::start();
    let (client_id, code) = code(&app, "maya@example.org");
    let base = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("client_id", client_id.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ];
    let with = |key: &str, value: &'static str| {
        base.iter()
            .map(|(k, v)| (*k, if *k == key { value } else { *v }))
            .collect::<Vec<_>>()
    };
    for (key, value) in [
        (
            "code_verifier",
            "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXX",
        ),
        ("code_verifier", "short"),
        ("redirect_uri", "https://claude.ai/other"),
        ("client_id", "kdcl_someoneelse"),
    ] {
        let reply = token(&app, &with(key, value));
        assert_eq!(reply.status, 400, "{key}={value}");
        assert_eq!(reply.json()["error"], "invalid_grant", "{key}={value}");
    }
    let missing = token(&app, &base[..4]);
    assert_eq!(missing.json()["error"], "invalid_request");
    let unsupported = token(&app, &with("grant_type", "password"));
    assert_eq!(unsupported.json()["error"], "unsupported_grant_type");
    // The refusals did not spend the code; ten minutes later it is dead.
    app.clock.advance_ms(10 * 60 * 1000 + 1);
    let late = exchange(&app, &client_id, &code);
    assert_eq!(late.json()["error"], "invalid_grant");
    assert!(
        late.json()["error_description"]
            .as_str()
            .unwrap()
            .contains("expired")
    );
}

#[test]
fn the_token_endpoint_takes_json_too() {
    let app = TestApp::start();
    let (client_id, code) = code(&app, "maya@example.org");
    let body = json!({
        "grant_type": "authorization_code",
        "code": code,
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_verifier": VERIFIER,
        "resource": format!("{}/mcp/", app.base),
    });
    let reply = app.request(
        "POST",
        "/functions/v1/mcp/oauth/token",
        Some(body.to_string().as_bytes()),
        &[("content-type", "application/json")],
    );
    assert_eq!(reply.status, 200, "{}", reply.text);
}

#[test]
fn refresh_rotates_and_a_reuse_after_the_grace_window_revokes_the_connection() {
    let app = TestApp::start();
    let (client_id, first) = connected(&app, "maya@example.org");
    let old_refresh = first["refresh_token"].as_str().unwrap();
    let rotated = refresh(&app, &client_id, old_refresh);
    assert_eq!(rotated.status, 200, "{}", rotated.text);
    assert_eq!(rotated.header("cache-control"), Some("no-store"));
    let second = rotated.json();
    assert_ne!(second["refresh_token"], first["refresh_token"]);
    assert_eq!(second["expires_in"], 3600);
    // A parallel refresh with the old token within 30 seconds still works.
    app.clock.advance_ms(10_000);
    let parallel = refresh(&app, &client_id, old_refresh);
    assert_eq!(parallel.status, 200, "{}", parallel.text);
    // After the window, the reuse revokes the whole connection.
    app.clock.advance_ms(30_000);
    let reused = refresh(&app, &client_id, old_refresh);
    assert_eq!(reused.status, 400);
    assert_eq!(reused.json()["error"], "invalid_grant");
    for tokens in [&first, &second, &parallel.json()] {
        let access = tokens["access_token"].as_str().unwrap();
        assert_eq!(tools_list_status(&app, access), 401);
    }
    let newest = second["refresh_token"].as_str().unwrap();
    assert_eq!(refresh(&app, &client_id, newest).status, 400);
}

#[test]
fn access_tokens_last_an_hour() {
    let app = TestApp::start();
    let (client_id, tokens) = connected(&app, "maya@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    app.clock.advance_ms(3600 * 1000 - 1);
    assert_eq!(tools_list_status(&app, access), 200);
    app.clock.advance_ms(1);
    assert_eq!(tools_list_status(&app, access), 401);
    let fresh = refresh(&app, &client_id, tokens["refresh_token"].as_str().unwrap());
    assert_eq!(fresh.status, 200);
}

pub(super) fn revoke(app: &TestApp, token: &str) -> u16 {
    let body = format!("token={}&token_type_hint=refresh_token", encode(token));
    app.request(
        "POST",
        "/functions/v1/mcp/oauth/revoke",
        Some(body.as_bytes()),
        &[("content-type", "application/x-www-form-urlencoded")],
    )
    .status
}

#[test]
fn revocation_answers_200_and_a_refresh_token_takes_its_connection() {
    let app = TestApp::start();
    assert_eq!(revoke(&app, "garbage"), 200);
    assert_eq!(revoke(&app, "kdor_unknown"), 200);
    let (client_id, tokens) = connected(&app, "maya@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    let refresh_token = tokens["refresh_token"].as_str().unwrap();
    assert_eq!(revoke(&app, refresh_token), 200);
    assert_eq!(tools_list_status(&app, access), 401, "the cascade");
    assert_eq!(refresh(&app, &client_id, refresh_token).status, 400);
    assert_eq!(revoke(&app, refresh_token), 200, "again: still 200");

    // An access token revokes only itself.
    let (client_id, tokens) = connected(&app, "omar@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(revoke(&app, access), 200);
    assert_eq!(tools_list_status(&app, access), 401);
    let fresh = refresh(&app, &client_id, tokens["refresh_token"].as_str().unwrap());
    assert_eq!(fresh.status, 200, "{}", fresh.text);
}

#[test]
fn a_refresh_may_ask_only_for_granted_scopes_and_a_refused_one_spends_nothing() {
    let app = TestApp::start();
    let (client_id, first) = connected(&app, "maya@example.org");
    let granted = first["scope"].as_str().unwrap().to_owned();
    let refresh_token = first["refresh_token"].as_str().unwrap();
    let ask = |scope: &str, token: &str| token_call(&app, &client_id, token, scope);
    // A scope the person never approved: invalid_scope, and the token still works.
    let beyond = ask("kd.discovery.read kd.listings.write", refresh_token);
    assert_eq!(beyond.status, 400, "{}", beyond.text);
    assert_eq!(beyond.json()["error"], "invalid_scope");
    assert!(
        beyond.json()["error_description"]
            .as_str()
            .unwrap()
            .starts_with("kd.listings.write was not granted"),
        "{}",
        beyond.text
    );
    // A narrower ask is answered with the connection's scope, which the answer states.
    let narrower = ask("kd.discovery.read", refresh_token);
    assert_eq!(narrower.status, 200, "{}", narrower.text);
    assert_eq!(narrower.json()["scope"], granted.as_str());
}

fn token_call(app: &TestApp, client_id: &str, refresh_token: &str, scope: &str) -> Reply {
    token(
        app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", client_id),
            ("scope", scope),
        ],
    )
}

#[test]
fn other_methods_on_the_oauth_endpoints_are_405_with_allow_and_an_oauth_error() {
    let app = TestApp::start();
    for path in [
        "/functions/v1/mcp/oauth/register",
        "/functions/v1/mcp/oauth/token",
        "/functions/v1/mcp/oauth/revoke",
    ] {
        for method in ["GET", "PUT", "DELETE"] {
            let reply = app.request(method, path, None, &[]);
            assert_eq!(reply.status, 405, "{method} {path}");
            assert_eq!(
                reply.header("allow"),
                Some("POST, OPTIONS"),
                "{method} {path}"
            );
            assert_eq!(reply.json()["error"], "invalid_request", "{method} {path}");
        }
    }
}

#[test]
fn no_code_verifier_token_or_password_reaches_an_event() {
    let app = TestApp::start();
    let (client_id, code) = code(&app, "maya@example.org");
    let first = exchange(&app, &client_id, &code).json();
    let rotated = refresh(&app, &client_id, first["refresh_token"].as_str().unwrap()).json();
    let access = rotated["access_token"].as_str().unwrap();
    let written = surface::call(
        &app,
        CONNECTOR,
        access,
        "notify_human_of_finding",
        json!({ "title": "t", "why": "w", "evidence_ref": "https://example.com/x" }),
    );
    assert_eq!(written["ok"], true, "{written}");
    assert_eq!(
        revoke(&app, rotated["refresh_token"].as_str().unwrap()),
        200
    );
    let secrets = [
        code.as_str(),
        VERIFIER,
        PASSWORD,
        first["access_token"].as_str().unwrap(),
        first["refresh_token"].as_str().unwrap(),
        access,
        rotated["refresh_token"].as_str().unwrap(),
    ];
    let rows = app
        .hub
        .store
        .read_blocking(|conn| kd_core::eventlog::rows_after(conn, 0, 10_000))
        .unwrap();
    let kinds: Vec<&str> = rows.iter().map(|row| row.kind.as_str()).collect();
    assert!(kinds.contains(&"agent.connected"), "{kinds:?}");
    for row in &rows {
        let text = format!("{} {} {} {}", row.kind, row.actor, row.subject, row.payload);
        for secret in secrets {
            assert!(!text.contains(secret), "a secret in {}: {text}", row.kind);
        }
    }
}
