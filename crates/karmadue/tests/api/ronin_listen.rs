//! Ronin on a listen address of its own (`--ronin-listen`), served at its root exactly as its
//! document shows it, and on a mount of the operator's choosing (`--ronin-mount`): spec
//! README, "How the hosted addresses map onto one self-hosted hub"; docs/decisions.md
//! 388-391.

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::Digest as _;

use crate::app::{Reply, START_MS, TestApp};

const ALICE: [u8; 32] = [0x11; 32];
const BOB: [u8; 32] = [0x22; 32];
const NOTES: &[u8] = b"city,visits\nLisbon,3\nOslo,5\n";

fn now_s() -> u64 {
    u64::try_from(START_MS / 1000).unwrap()
}

fn key(secret: &[u8; 32]) -> String {
    kd_protocol::nostr::public_key_hex(secret).unwrap()
}

fn signed(secret: &[u8; 32], kind: u16, tags: &[&[&str]], content: &Value) -> String {
    let content = match content {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let tags = tags
        .iter()
        .map(|tag| tag.iter().map(|part| (*part).to_owned()).collect())
        .collect();
    kd_protocol::nostr::sign_event(secret, now_s(), kind, tags, content, &[0; 32])
        .unwrap()
        .to_json_text()
}

/// A NIP-98 `Authorization` for a POST of `body` to `url`.
fn nip98_post(secret: &[u8; 32], url: &str, body: &[u8], nonce: &str) -> String {
    let payload = hex::encode(sha2::Sha256::digest(body));
    let event = signed(
        secret,
        27235,
        &[
            &["u", url],
            &["method", "POST"],
            &["nonce", nonce],
            &["payload", &payload],
        ],
        &Value::String(String::new()),
    );
    format!(
        "Nostr {}",
        base64::engine::general_purpose::STANDARD.encode(event)
    )
}

/// POSTs events (one, or a JSON array's text) to `api`'s events door.
fn post_events(app: &TestApp, api: &str, events: &str) -> Reply {
    app.request_to(
        &format!("{api}/events"),
        "POST",
        Some(events.as_bytes()),
        &[("content-type", "application/json")],
    )
}

/// Uploads [`NOTES`] as Bob to `api` with a token naming `signed_url`.
fn upload(app: &TestApp, api: &str, signed_url: &str, nonce: &str) -> Reply {
    let auth = nip98_post(&BOB, signed_url, NOTES, nonce);
    app.request_to(
        &format!("{api}/artifacts"),
        "POST",
        Some(NOTES),
        &[("content-type", "text/csv"), ("authorization", &auth)],
    )
}

/// Alice and Bob registered, Bob's notes uploaded and attached to his WANTED listing, Alice's
/// offer on it; Ronin's API at `api` (an absolute URL), which NIP-98 tokens name. Returns the
/// notes' hash and the task (the offer's id).
fn market(app: &TestApp, api: &str) -> (String, String) {
    let profiles = format!(
        "[{},{}]",
        signed(&ALICE, 0, &[], &json!({"name": "Alice"})),
        signed(&BOB, 0, &[], &json!({"name": "Bob"}))
    );
    let registered = post_events(app, api, &profiles);
    assert_eq!(registered.status, 200, "{}", registered.text);
    let stored = upload(app, api, &format!("{api}/artifacts"), "n-ok");
    assert_eq!(stored.status, 200, "{}", stored.text);
    let hash = stored.json()["hash"].as_str().unwrap().to_owned();
    let wanted = json!({
        "title": "Tally my notes",
        "type": "wanted",
        "inputs": [{ "hash": hash, "name": "notes.csv" }],
    });
    let listed = post_events(app, api, &signed(&BOB, 31100, &[&["d", "tally"]], &wanted));
    assert_eq!(listed.status, 200, "{}", listed.text);
    let bob = key(&BOB);
    let address = format!("31100:{bob}:tally");
    let offer = signed(
        &ALICE,
        1100,
        &[&["a", &address], &["p", &bob]],
        &json!({"scope": "I will tally your notes.", "price": 1, "currency": "USDC"}),
    );
    let offered = post_events(app, api, &offer);
    assert_eq!(offered.status, 200, "{}", offered.text);
    let task = offered.json()["id"].as_str().unwrap().to_owned();
    (hash, task)
}

/// The API's base URL answers its index, with the paths as this address serves them
/// (decision 431).
fn serves_its_index_at_the_root(app: &TestApp, api: &str) {
    let index = app.request_to(api, "GET", None, &[]);
    assert_eq!(index.status, 200, "{}", index.text);
    let index = index.json();
    assert_eq!(index["contract"], "/AGENTS.md");
    assert!(
        index["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .any(|door| door["method"] == "GET" && door["path"] == "/api/v1/health"),
        "{index}"
    );
}

#[test]
fn ronin_on_its_own_address_is_served_at_the_root_and_only_there() {
    let app = TestApp::start_with(|config| {
        config.ronin_listen = Some("127.0.0.1:0".parse().unwrap());
    });
    let ronin = app.hub.ronin.own_url.clone().unwrap();
    assert!(ronin.starts_with("http://127.0.0.1:") && ronin != app.base);
    assert_eq!(app.hub.ronin.base_url(), ronin);
    let api = format!("{ronin}/api/v1");

    // Reads at the root, as the document shows them.
    let health = app.request_to(&format!("{api}/health"), "GET", None, &[]);
    assert_eq!((health.status, health.json()), (200, json!({"ok": true})));
    serves_its_index_at_the_root(&app, &api);

    // A token naming the main address's URL (the mount's) is refused, and nothing is written.
    let log_before = app.log_len();
    let old_url = format!("{}/ronin/api/v1/artifacts", app.base);
    let refused = upload(&app, &api, &old_url, "n-old");
    assert_eq!(refused.status, 401, "{}", refused.text);
    assert!(refused.text.contains("unauthorized"), "{}", refused.text);
    assert_eq!(app.log_len(), log_before);

    let (hash, task) = market(&app, &api);
    let agent = app.request_to(&format!("{api}/agents/{}", key(&BOB)), "GET", None, &[]);
    assert_eq!(agent.status, 200, "{}", agent.text);
    let agent = agent.json();
    assert_eq!(agent["agent"]["pubkey"], key(&BOB).as_str());
    assert_eq!(
        agent["agent"]["listings"][0]["attachments"][0]["url"],
        json!(format!("/api/v1/artifacts/{hash}"))
    );

    // The task view's file URL is the document's, relative to Ronin's public URL, where the
    // file is.
    let view = app.request_to(
        &format!("{api}/tasks/{task}?as={}", key(&ALICE)),
        "GET",
        None,
        &[],
    );
    assert_eq!(view.status, 200, "{}", view.text);
    let url = view.json()["task"]["attachments"][0]["url"].clone();
    assert_eq!(
        url,
        json!(format!("/api/v1/artifacts/{hash}")),
        "{}",
        view.text
    );
    let file = app.request_to(
        &format!("{ronin}{}", url.as_str().unwrap()),
        "GET",
        None,
        &[],
    );
    assert_eq!((file.status, file.text.as_bytes()), (200, NOTES));

    // The texts and the front page name Ronin's URL, never the main address's mount.
    let door = app.request_to(&format!("{ronin}/q"), "GET", None, &[]);
    assert_eq!(door.status, 200);
    assert!(
        door.text.contains(&format!("{ronin}/AGENTS.md")),
        "{}",
        door.text
    );
    assert!(!door.text.contains("/ronin/"), "{}", door.text);
    let front = app.request_to(&format!("{ronin}/"), "GET", None, &[]);
    assert_eq!(front.status, 200);
    assert!(front.text.contains(&format!("data-public-api=\"{api}\"")));
    assert!(front.text.contains("data-api=\"/api/v1\""));
    assert!(front.text.contains(&format!("href=\"{}/\"", app.base)));

    // The main address no longer mounts Ronin; its front page and docs point at Ronin's URL.
    for path in ["/ronin/api/v1/health", "/ronin/q", "/ronin"] {
        assert_eq!(app.request("GET", path, None, &[]).status, 404, "{path}");
    }
    let home = app.request("GET", "/", None, &[]);
    assert!(home.text.contains(&format!("href=\"{ronin}/q\"")));
    let doc = app.request("GET", "/functions/v1/docs/docs/ronin.md", None, &[]);
    assert!(doc.text.contains(&format!("`{api}`")), "{}", doc.text);
    let openapi = app
        .request("GET", "/functions/v1/public-api/openapi.json", None, &[])
        .json();
    assert_eq!(
        openapi["paths"]["/api/v1/events"]["servers"],
        json!([{ "url": ronin }])
    );
    assert!(openapi["paths"].get("/ronin/api/v1/events").is_none());
}

#[test]
fn ronin_on_another_mount_names_it_everywhere() {
    let app = TestApp::start_with(|config| config.ronin_mount = "/hire".to_owned());
    let api = format!("{}/hire/api/v1", app.base);
    assert_eq!(app.hub.ronin.base_url(), format!("{}/hire", app.base));
    let (hash, task) = market(&app, &api);
    let view = app.request_to(
        &format!("{api}/tasks/{task}?as={}", key(&ALICE)),
        "GET",
        None,
        &[],
    );
    assert_eq!(
        view.json()["task"]["attachments"][0]["url"],
        json!(format!("/hire/api/v1/artifacts/{hash}")),
        "{}",
        view.text
    );
    let door = app.request("GET", "/hire/q", None, &[]);
    assert!(door.text.contains(&format!("{}/hire/AGENTS.md", app.base)));
    let front = app.request("GET", "/hire", None, &[]);
    assert!(
        front.text.contains("src=\"/hire/work.js\""),
        "{}",
        front.text
    );
    assert_eq!(
        app.request("GET", "/ronin/api/v1/health", None, &[]).status,
        404
    );
    let home = app.request("GET", "/", None, &[]);
    assert!(home.text.contains("href=\"/hire/q\""));
    let openapi = app
        .request("GET", "/functions/v1/public-api/openapi.json", None, &[])
        .json();
    assert!(openapi["paths"].get("/hire/api/v1/events").is_some());
}

#[test]
fn a_mount_that_is_not_a_path_is_refused_at_start() {
    // The hub's own roots too: /mcp collided with the connector's alias and panicked.
    for mount in [
        "ronin",
        "/ronin/",
        "/",
        "",
        "/mcp",
        "/functions/v1/mcp",
        "/OAuth",
        "/.well-known",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut config = kd_core::config::Config::new(
            "127.0.0.1:0".parse().unwrap(),
            dir.path().join("data"),
            None,
        );
        config.ronin_mount = mount.to_owned();
        let refused = kd_karmadue::open(
            config,
            std::sync::Arc::new(kd_core::clock::ManualClock::new(START_MS)),
            std::sync::Arc::new(kd_core::random::SeededRandom::new(7)),
        );
        let error = refused.err().map(|error| error.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|text| text.starts_with("--ronin-mount: ")),
            "{mount:?}: {error:?}"
        );
        // Nothing was made.
        assert!(!dir.path().join("data").exists(), "{mount:?}");
    }
}

/// Every route of the hub (Ronin's aside) starts with one of `HUB_PATH_ROOTS`, so the mount
/// check cannot fall behind a new route.
#[test]
fn the_hub_path_roots_cover_every_hub_route() {
    let app = crate::app::TestApp::start();
    let mount = app.hub.ronin.mount.clone();
    for path in kd_karmadue::http::route_paths(&app.hub) {
        if path.starts_with(&format!("{mount}/")) || path == mount || path == "/" {
            continue;
        }
        let first = path
            .trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or_default();
        assert!(
            kd_core::config::HUB_PATH_ROOTS.contains(&first),
            "{path}: add /{first} to HUB_PATH_ROOTS"
        );
    }
}
