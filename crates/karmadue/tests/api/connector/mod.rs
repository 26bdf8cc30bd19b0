//! The OAuth 2.1 connector (issue 12): the metadata documents, the 401 challenge, dynamic
//! client registration, /oauth/authorize with sign-in and the consent screen, the token
//! endpoint (codes, PKCE, refresh rotation and reuse), revocation, and the connector's MCP
//! surface.

use serde_json::{Value, json};

use crate::app::{Browser, Reply, TestApp, hidden, urlencode};

mod agents;
mod apps;
mod cimd;
mod cimd_tls;
mod flow;
mod hardening;
mod jobs;
mod permission;
mod surface;
mod tokens;

const PASSWORD: &str = "correct horse battery staple";
/// RFC 7636 Appendix B.
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const REDIRECT: &str = "https://claude.ai/api/mcp/auth_callback";
const CONNECTOR: &str = "/functions/v1/mcp/connector";

fn encode(text: &str) -> String {
    urlencode(text)
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' && index + 2 < bytes.len() + 1 {
            let hex = std::str::from_utf8(&bytes[index + 1..index + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            index += 3;
        } else {
            out.push(if bytes[index] == b'+' {
                b' '
            } else {
                bytes[index]
            });
            index += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// The query parameter `name` of a URL, decoded.
fn param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == name).then(|| decode(value))
    })
}

/// Registers a client with `redirect_uris`: (status, body).
fn register(app: &TestApp, body: &Value) -> (u16, Value) {
    let reply = app.request(
        "POST",
        "/functions/v1/mcp/oauth/register",
        Some(body.to_string().as_bytes()),
        &[("content-type", "application/json")],
    );
    (reply.status, reply.json())
}

/// A registered client's id.
fn client(app: &TestApp) -> String {
    let (status, body) = register(
        app,
        &json!({ "client_name": "Claude", "redirect_uris": [REDIRECT] }),
    );
    assert_eq!(status, 201, "{body}");
    body["client_id"].as_str().unwrap().to_owned()
}

/// The authorize path for `client_id` with the test challenge and `state=xyz`.
fn authorize_path(app: &TestApp, client_id: &str) -> String {
    format!(
        "/oauth/authorize?response_type=code&client_id={client_id}&redirect_uri={}&code_challenge={CHALLENGE}&code_challenge_method=S256&state=xyz&resource={}",
        encode(REDIRECT),
        encode(&format!("{}{CONNECTOR}", app.base))
    )
}

/// A signed-in person's browser.
fn person<'a>(app: &'a TestApp, email: &str) -> Browser<'a> {
    let browser = app.browser();
    browser.sign_up(email, "Maya", PASSWORD);
    browser
}

/// Approves (or denies) the consent screen of `client_id` with the switches given; returns
/// the redirect's Location.
fn decide(
    app: &TestApp,
    browser: &Browser<'_>,
    client_id: &str,
    decision: &str,
    switches: &[&str],
) -> String {
    let screen = browser.get(&authorize_path(app, client_id));
    assert_eq!(screen.status, 200, "{}", screen.text);
    let csrf = hidden(&screen.text, "csrf");
    let resource = format!("{}{CONNECTOR}", app.base);
    let mut fields = vec![
        ("csrf", csrf.as_str()),
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", REDIRECT),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
        ("state", "xyz"),
        ("resource", resource.as_str()),
        ("decision", decision),
    ];
    for switch in switches {
        fields.push((switch, "on"));
    }
    let reply = browser.post("/oauth/authorize", &fields);
    assert_eq!(reply.status, 303, "{}", reply.text);
    reply.header("location").unwrap().to_owned()
}

/// A fresh code for a new client approved by a new person: (client_id, code).
fn code(app: &TestApp, email: &str) -> (String, String) {
    let client_id = client(app);
    let browser = person(app, email);
    let location = decide(app, &browser, &client_id, "approve", &["outcomes"]);
    (client_id, param(&location, "code").unwrap())
}

/// POSTs form `fields` to the token endpoint.
fn token(app: &TestApp, fields: &[(&str, &str)]) -> Reply {
    let body = fields
        .iter()
        .map(|(key, value)| format!("{key}={}", encode(value)))
        .collect::<Vec<_>>()
        .join("&");
    app.request(
        "POST",
        "/functions/v1/mcp/oauth/token",
        Some(body.as_bytes()),
        &[("content-type", "application/x-www-form-urlencoded")],
    )
}

fn exchange(app: &TestApp, client_id: &str, code: &str) -> Reply {
    token(
        app,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("client_id", client_id),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
        ],
    )
}

fn refresh(app: &TestApp, client_id: &str, refresh_token: &str) -> Reply {
    token(
        app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", client_id),
        ],
    )
}

/// A connected app's tokens: (client_id, token response).
fn connected(app: &TestApp, email: &str) -> (String, Value) {
    let (client_id, code) = code(app, email);
    let reply = exchange(app, &client_id, &code);
    assert_eq!(reply.status, 200, "{}", reply.text);
    (client_id, reply.json())
}

/// A JSON-RPC request to `path` with `Authorization: Bearer token`.
fn rpc(app: &TestApp, path: &str, token: &str, method: &str, params: Value) -> Reply {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let bearer = format!("Bearer {token}");
    app.request(
        "POST",
        path,
        Some(body.to_string().as_bytes()),
        &[
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("authorization", &bearer),
        ],
    )
}
