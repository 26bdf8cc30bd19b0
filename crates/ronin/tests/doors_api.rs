//! The texts and reference clients Ronin serves (spec 004's header `GET /q`, `GET /q/curl`,
//! section 1's `ronin.mjs` and `sign.mjs`, section 6a's doors): each answers 200 with its
//! content type, names this hub's own Ronin URL, and is the crate's file with only the
//! placeholders replaced.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use tower::ServiceExt;

use common::PUBLIC_URL;

/// Ronin's base URL on the test hub.
fn ronin_url() -> String {
    format!("{PUBLIC_URL}{}", kd_ronin::DEFAULT_MOUNT)
}

async fn get(hub: &common::Hub, path: &str) -> (StatusCode, String, String) {
    let response = hub
        .router
        .clone()
        .oneshot(Request::get(path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        content_type,
        String::from_utf8(bytes.to_vec()).unwrap(),
    )
}

/// The file as written in `crates/ronin/clients/`, read from disk (not through the crate).
fn on_disk(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("clients")
            .join(name),
    )
    .unwrap()
}

#[tokio::test]
async fn every_door_answers_its_text_with_its_content_type_and_this_hub_s_url() {
    let hub = common::hub();
    let expected = [
        ("/q", "text/markdown; charset=utf-8"),
        ("/q/curl", "text/markdown; charset=utf-8"),
        ("/AGENTS.md", "text/markdown; charset=utf-8"),
        ("/cursor/ronin.mdc", "text/markdown; charset=utf-8"),
        ("/skills/ronin-worker/", "text/markdown; charset=utf-8"),
        (
            "/skills/ronin-worker/SKILL.md",
            "text/markdown; charset=utf-8",
        ),
        ("/openclaw/SETUP.md", "text/markdown; charset=utf-8"),
        ("/openclaw/HEARTBEAT.md", "text/markdown; charset=utf-8"),
        ("/.well-known/mcp/server-card.json", "application/json"),
        ("/ronin.mjs", "text/javascript; charset=utf-8"),
        ("/sign.mjs", "text/javascript; charset=utf-8"),
        ("/ronin.py", "text/x-python; charset=utf-8"),
    ];
    for (path, content_type) in expected {
        let (status, served_type, text) = get(&hub, path).await;
        assert_eq!(
            (status, served_type.as_str()),
            (StatusCode::OK, content_type),
            "{path}"
        );
        assert!(text.contains(&ronin_url()), "{path} names {}", ronin_url());
        for placeholder in ["{{RONIN_URL}}", "{{HUB_URL}}", "{{VERSION}}"] {
            assert!(!text.contains(placeholder), "{path} keeps {placeholder}");
        }
    }
    // The folder path answers the SKILL.md itself, with its frontmatter.
    let folder = get(&hub, "/skills/ronin-worker/").await.2;
    assert_eq!(folder, get(&hub, "/skills/ronin-worker/SKILL.md").await.2);
    assert_eq!(folder, get(&hub, "/skills/ronin-worker").await.2);
    assert!(folder.starts_with("---\nname: ronin-worker\ndescription: "));
    assert!(
        get(&hub, "/cursor/ronin.mdc")
            .await
            .2
            .starts_with("---\ndescription: ")
    );
}

#[tokio::test]
async fn the_served_clients_are_the_crate_s_files_with_only_the_url_substituted() {
    let hub = common::hub();
    for (path, name) in [
        ("/ronin.mjs", "ronin.mjs"),
        ("/sign.mjs", "sign.mjs"),
        ("/ronin.py", "ronin.py"),
    ] {
        let written = on_disk(name);
        assert!(
            written.contains("{{RONIN_URL}}"),
            "{name} has the placeholder"
        );
        let served = get(&hub, path).await.2;
        assert_eq!(
            served,
            written.replace("{{RONIN_URL}}", &ronin_url()),
            "{path}"
        );
    }
    // The clients default to this hub's Ronin and let RONIN_URL override it.
    let mjs = get(&hub, "/ronin.mjs").await.2;
    assert!(mjs.contains(&format!("process.env.RONIN_URL || '{}'", ronin_url())));
    let py = get(&hub, "/ronin.py").await.2;
    assert!(py.contains(&format!(
        "os.environ.get(\"RONIN_URL\") or \"{}\"",
        ronin_url()
    )));
}

#[tokio::test]
async fn the_server_card_describes_only_the_hub_s_mcp_endpoints() {
    let hub = common::hub();
    let (_, _, text) = get(&hub, "/.well-known/mcp/server-card.json").await;
    let card: serde_json::Value = serde_json::from_str(&text).unwrap();
    let urls: Vec<&str> = card["remotes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|remote| remote["url"].as_str().unwrap())
        .collect();
    assert_eq!(
        urls,
        [
            format!("{PUBLIC_URL}/functions/v1/mcp"),
            format!("{PUBLIC_URL}/functions/v1/mcp/connector"),
        ]
    );
    assert_eq!(card["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        card["description"]
            .as_str()
            .unwrap()
            .contains("Ronin itself has no MCP endpoint")
    );
    // Every other text is the crate's file with the URLs and version filled in.
    for file in kd_ronin::clients::FILES {
        let served = get(&hub, file.path).await.2;
        let written = on_disk(file.name);
        assert_eq!(
            served,
            kd_ronin::clients::render(&written, &ronin_url(), PUBLIC_URL),
            "{}",
            file.path
        );
        assert_eq!(
            served,
            written
                .replace("{{RONIN_URL}}", &ronin_url())
                .replace("{{HUB_URL}}", PUBLIC_URL)
                .replace("{{VERSION}}", env!("CARGO_PKG_VERSION")),
            "{}",
            file.path
        );
    }
}

/// The API's base URL, which every text calls "the API", answers an index of its doors rather
/// than 404 (docs/decisions.md 431): the paths as this listener serves them, each with its
/// method and summary, the contract and the quick start.
#[tokio::test]
async fn the_api_base_url_answers_an_index_of_the_doors() {
    let hub = common::hub();
    let (status, content_type, text) = get(&hub, "/api/v1").await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(content_type, "application/json");
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["ok"], true);
    let mount = kd_ronin::DEFAULT_MOUNT;
    assert_eq!(body["contract"], format!("{mount}/AGENTS.md"));
    assert_eq!(body["quick_start"], format!("{mount}/q"));
    assert!(
        body["about"]
            .as_str()
            .unwrap()
            .contains(&format!("posted to {mount}/api/v1/events")),
        "{text}"
    );
    let endpoints = body["endpoints"].as_array().unwrap();
    let has = |method: &str, path: &str| {
        endpoints
            .iter()
            .any(|door| door["method"] == method && door["path"] == format!("{mount}{path}"))
    };
    for (method, path) in [
        ("GET", "/api/v1/health"),
        ("POST", "/api/v1/events"),
        ("GET", "/api/v1/listings"),
        ("GET", "/api/v1/me/wait"),
    ] {
        assert!(has(method, path), "{method} {path}: {text}");
    }
    assert!(endpoints.iter().all(|door| door["summary"].is_string()));
    // Every door of the route table is listed (the front page and texts included).
    let paths: std::collections::BTreeSet<&str> = endpoints
        .iter()
        .map(|door| door["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), kd_ronin::doors::route_paths().len(), "{text}");
}
