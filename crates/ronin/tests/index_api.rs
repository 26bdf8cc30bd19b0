//! The skill index (section 6d): `GET /api/v1/index?q=&level=&source=`, `/index/<hash>` and
//! `/index/stats` over the bundled snapshot. The expected counts are facts of the snapshot
//! (`data/catalog/skills-index.jsonl.gz`, counted with Python's gzip and json).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use serde_json::Value;

use common::Hub;

/// algorithmic-art's SKILL.md in anthropics/skills, the snapshot's first row.
const ART: &str = "3bc4092c09804853186524c826bc0621b940bb6122c05b84496dff95388e6eef";
/// docx's SKILL.md, the same file in anthropics/skills and K-Dense-AI/claude-scientific-skills.
const DOCX: &str = "cfbabd72b1aec7dfaad988fb6e5e16b27dc744b9a00cae15db9045e95f53903e";

async fn listed(hub: &Hub, query: &str) -> Value {
    let (status, body) = hub.call("GET", &format!("/api/v1/index{query}"), "").await;
    assert_eq!(status, StatusCode::OK, "{query}: {body}");
    body
}

fn names(body: &Value) -> Vec<&str> {
    body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn the_index_lists_the_snapshot_with_its_source_links_and_no_grade_it_did_not_earn() {
    let hub = common::hub();
    let all = listed(&hub, "").await;
    assert_eq!(
        (all["total"].as_u64(), all["offset"].as_i64()),
        (Some(976), Some(0))
    );
    let first = &all["entries"][0];
    assert_eq!(first["hash"], ART);
    assert_eq!(first["name"], "algorithmic-art");
    assert_eq!(first["source"], "anthropic");
    assert_eq!(
        first["raw_url"],
        "https://raw.githubusercontent.com/anthropics/skills/9d2f1ae187231d8199c64b5b762e1bdf2244733d/skills/algorithmic-art/SKILL.md"
    );
    assert_eq!(
        first["url"],
        "https://github.com/anthropics/skills/blob/9d2f1ae187231d8199c64b5b762e1bdf2244733d/skills/algorithmic-art/SKILL.md"
    );
    assert_eq!(first["license"], "Complete terms in LICENSE.txt");
    assert_eq!(first["license_file_kind"], "Apache-2.0");
    assert_eq!(first["bytes"], 19769);
    // The hub never read the text: unscanned, never "clean".
    assert_eq!(first["scan"]["level"], "unscanned");
    assert_eq!(listed(&hub, "?level=clean").await["total"], 0);
    assert_eq!(listed(&hub, "?level=unscanned").await["total"], 976);
    assert_eq!(listed(&hub, "?hide_flagged=1").await["total"], 976);

    // Sources: anthropics/* (18 + 212 + 31) and the other eight repositories on GitHub.
    assert_eq!(listed(&hub, "?source=anthropic").await["total"], 261);
    assert_eq!(listed(&hub, "?source=github").await["total"], 715);
    assert_eq!(listed(&hub, "?source=clawhub").await["total"], 0);

    // q: case-insensitive, over name, repository and path.
    let brand = listed(&hub, "?q=BRAND-guidelines").await;
    assert_eq!(names(&brand), ["brand-guidelines"]);
    assert_eq!(listed(&hub, "?q=trailofbits").await["total"], 80);
    // A file without a front-matter name is named by its folder.
    let unnamed = listed(&hub, "?q=studioweb/uipath-feedback/").await;
    assert_eq!(names(&unnamed), ["uipath-feedback"]);

    // Pages.
    let page = listed(&hub, "?limit=2&offset=1").await;
    assert_eq!(page["entries"].as_array().unwrap().len(), 2);
    assert_eq!(page["entries"][0]["hash"], all["entries"][1]["hash"]);
    assert_eq!(page["total"], 976);
}

#[tokio::test]
async fn an_entry_by_hash_names_every_place_the_file_is_and_stats_count_the_snapshot() {
    let hub = common::hub();
    let (status, art) = hub.call("GET", &format!("/api/v1/index/{ART}"), "").await;
    assert_eq!(status, StatusCode::OK, "{art}");
    assert_eq!(names(&art), ["algorithmic-art"]);
    let (status, docx) = hub.call("GET", &format!("/api/v1/index/{DOCX}"), "").await;
    assert_eq!(status, StatusCode::OK, "{docx}");
    let repos: Vec<&str> = docx["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["repo"].as_str().unwrap())
        .collect();
    assert_eq!(
        repos,
        ["anthropics/skills", "K-Dense-AI/claude-scientific-skills"]
    );

    let (status, stats) = hub.call("GET", "/api/v1/index/stats", "").await;
    assert_eq!(status, StatusCode::OK, "{stats}");
    assert_eq!(stats["total"], 976);
    assert_eq!(stats["distinct_hashes"], 970);
    assert_eq!(stats["by_source"]["anthropic"], 261);
    assert_eq!(stats["by_source"]["github"], 715);
    assert_eq!(stats["by_source"]["clawhub"], 0);
    assert_eq!(stats["by_level"]["unscanned"], 976);
    assert_eq!(stats["by_level"]["clean"], 0);
    assert_eq!(stats["by_repo"]["github/awesome-copilot"], 419);
    assert_eq!(stats["by_license_file_kind"]["MIT"], 664);
}

#[tokio::test]
async fn bad_index_queries_are_refused_with_why() {
    let hub = common::hub();
    let long = "a".repeat(201);
    for (path, says) in [
        ("/api/v1/index?level=safe", "level must be one of"),
        ("/api/v1/index?source=npm", "source must be one of"),
        (
            "/api/v1/index?hide_flagged=yes",
            "hide_flagged must be one of",
        ),
        ("/api/v1/index?limit=0", "limit must be"),
        ("/api/v1/index?offset=-1", "offset must be"),
        ("/api/v1/index?sort=name", "the index takes"),
        (&format!("/api/v1/index?q={long}"), "q must be at most 200"),
        (
            &format!("/api/v1/index/{}", ART.to_uppercase()),
            "64 lowercase hex",
        ),
        ("/api/v1/index/abc", "64 lowercase hex"),
    ] {
        let (status, body) = hub.call("GET", path, "").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        let error = body["error"].as_str().unwrap();
        assert!(
            error.starts_with("invalid: ") && error.contains(says),
            "{path}: {body}"
        );
        assert_eq!(body["ok"], false);
    }
    let (status, body) = hub
        .call("GET", &format!("/api/v1/index/{}", "0".repeat(64)), "")
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["error"], "error: not found");
}
