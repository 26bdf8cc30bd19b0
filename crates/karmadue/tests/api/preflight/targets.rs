//! Target resolution: GitHub, npm and image forms, refusals, demo and archived records.

use super::*;

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario: each step acts on the state the step before it left"
)]
fn a_real_github_target_answers_the_record_its_evidence_and_a_signed_receipt() {
    let app = TestApp::with_catalog();
    let before = app.log_len();
    let reply = app.call(
        "check_before_acting",
        json!({ "target": "https://github.com/modelcontextprotocol/servers", "intended_action": "clone" }),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    let data = &reply["data"];
    assert_eq!(data["resource"]["resource_id"], SERVERS);
    assert_eq!(data["resolved"]["matched_by"], "github_repo");
    assert_eq!(data["intended_action"], "clone");
    assert_eq!(data["counts_as_verification"], false);
    assert!(
        data["claims"]
            .as_array()
            .unwrap()
            .iter()
            .all(|claim| claim["counts_as_verification"] == false)
    );
    assert!(
        data["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|warning| warning["code"] == "not_checked")
    );
    let limits = data["does_not_prove"].as_array().unwrap();
    assert!(
        limits.len() >= 3 && limits.iter().all(Value::is_string),
        "{limits:?}"
    );
    assert!(data.get("reliability_reports").is_none(), "no reports yet");
    // Third-party text is lifted out of data.
    assert_eq!(data["resource"]["title"], Value::Null);
    let items = reply["untrusted_content"]["items"].as_array().unwrap();
    assert!(
        items
            .iter()
            .any(|item| item["id"] == SERVERS && item["field"] == "title"),
        "{items:?}"
    );

    let receipt = &data["receipt"];
    let receipt_id = receipt["receipt_id"].as_str().unwrap();
    assert!(
        receipt_id.starts_with("kdr_") && receipt_id.len() == 28,
        "{receipt_id}"
    );
    assert_eq!(receipt["recipe"], "kd-receipt-v1");
    assert_eq!(receipt["target"]["kd_resource_id"], SERVERS);
    assert_eq!(receipt["agent_id"], Value::Null);
    assert_eq!(receipt["reportable"], false);
    let issued = receipt["issued_at_unix"].as_i64().unwrap();
    assert_eq!(issued, app.clock.now_unix());
    assert_eq!(
        receipt["issued_at"],
        kd_core::clock::rfc3339_ms(issued * 1000)
    );
    assert_eq!(
        receipt["expires_at"],
        kd_core::clock::rfc3339_ms((issued + 14 * 24 * 3600) * 1000)
    );
    let rebuilt = [
        "kd-receipt-v1",
        receipt_id,
        SERVERS,
        receipt["target"]["version"].as_str().unwrap_or(""),
        receipt["target"]["commit"].as_str().unwrap_or(""),
        &issued.to_string(),
        "",
    ]
    .join("\n");
    assert_eq!(receipt["signed_text"], rebuilt.as_str());
    let key = published_key(&app);
    assert!(verifies(
        &key,
        &rebuilt,
        receipt["signature"].as_str().unwrap()
    ));
    assert!(!verifies(
        &key,
        &rebuilt.replace("kd-receipt-v1", "kd-receipt-v2"),
        receipt["signature"].as_str().unwrap()
    ));
    assert_eq!(
        app.log_len(),
        before,
        "a check is a read: the log does not grow"
    );
}

#[test]
fn github_targets_ignore_case_slashes_and_git_suffixes_and_resolve_tree_folders() {
    let app = TestApp::with_catalog();
    for target in [
        json!("https://github.com/ModelContextProtocol/Servers"),
        json!("https://github.com/modelcontextprotocol/servers/"),
        json!("https://github.com/modelcontextprotocol/servers.git"),
        json!("github.com/modelcontextprotocol/servers"),
        json!("kd:res:github:modelcontextprotocol/servers"),
        json!({ "github_repo": "modelcontextprotocol/servers" }),
        json!({ "url": "https://github.com/modelcontextprotocol/servers" }),
        json!({ "kd_resource_id": SERVERS }),
    ] {
        assert_eq!(resolved(&app, target), SERVERS);
    }
    assert_eq!(
        resolved(
            &app,
            json!("https://github.com/modelcontextprotocol/servers/tree/main/src/filesystem/")
        ),
        "kd:res:github:modelcontextprotocol/servers/src/filesystem"
    );
    assert_eq!(
        resolved(
            &app,
            json!({ "github_repo": "modelcontextprotocol/servers/src/fetch" })
        ),
        "kd:res:github:modelcontextprotocol/servers/src/fetch"
    );
    // An id with capitals upstream is found from a lowercase URL.
    assert_eq!(
        resolved(
            &app,
            json!("https://github.com/adfin-engineering/mcp-server-adfin")
        ),
        "kd:res:github:Adfin-Engineering/mcp-server-adfin"
    );
    // A folder without a record of its own falls back to the repository, and says so.
    let folder = app.call(
        "check_before_acting",
        json!({ "target": "https://github.com/modelcontextprotocol/servers/tree/main/no/such/folder" }),
    );
    assert_eq!(folder["data"]["resolved"]["kd_resource_id"], SERVERS);
    assert!(
        folder["data"]["resolved"]["note"]
            .as_str()
            .unwrap()
            .contains("repository")
    );
}

#[test]
fn npm_targets_and_package_page_urls_on_any_host_resolve_to_the_npm_record() {
    let app = TestApp::with_catalog();
    for target in [
        "npm:0nmcp",
        "https://packages.example/package/0nmcp",
        "kd:res:npm:0nmcp",
    ] {
        assert_eq!(
            resolved(&app, json!(target)),
            "kd:res:npm:0nmcp",
            "{target}"
        );
    }
    for target in [
        "npm:@21st-dev/magic",
        "https://packages.example/package/@21st-dev/magic",
        "https://other.example/package/%4021st-dev%2Fmagic/v/0.2.3",
    ] {
        assert_eq!(
            resolved(&app, json!(target)),
            "kd:res:npm:@21st-dev/magic",
            "{target}"
        );
    }
}

#[test]
fn image_ids_match_registry_package_ids_in_every_accepted_form() {
    let app = TestApp::start();
    let now = app.clock.now_ms();
    app.writes_behind_the_log("catalog rows stored directly, without their import events");
    let conn = db(&app);
    for (slug, package_id) in [
        ("fetch", "docker.io/mcp/fetch:1.0.0"),
        ("ghcr-tool", "ghcr.io/acme/tool"),
        ("quay-tool", "quay.io/acme/tool"),
    ] {
        let (mut resource, claims) = kd_karmadue::catalog::import::parse_row(
            &json!({ "id": format!("kd:res:npm:{slug}"), "locator": format!("npm:{slug}"), "title": slug, "version": "1.0.0" }).to_string(),
            now,
        )
        .unwrap();
        resource.package_ids = vec![package_id.to_owned()];
        kd_karmadue::catalog::model::store_resource(&conn, &resource, &claims, now).unwrap();
    }
    for target in [
        "docker:mcp/fetch",
        "docker:mcp/fetch:latest",
        "hub.docker.com/r/mcp/fetch",
        "https://hub.docker.com/r/mcp/fetch/",
        "docker.io/mcp/fetch",
        "https://docker.io/mcp/fetch@sha256:0123",
    ] {
        let reply = app.call("check_before_acting", json!({ "target": target }));
        assert_eq!(
            reply["data"]["resolved"]["kd_resource_id"], "kd:res:npm:fetch",
            "{target}: {reply}"
        );
        assert_eq!(reply["data"]["resolved"]["matched_by"], "package_id");
    }
    assert_eq!(
        resolved(&app, json!("ghcr.io/Acme/Tool:2")),
        "kd:res:npm:ghcr-tool"
    );
    assert_eq!(
        resolved(&app, json!("quay.io/acme/tool")),
        "kd:res:npm:quay-tool"
    );
    let missing = app.call(
        "check_before_acting",
        json!({ "target": "docker:someone/else" }),
    );
    assert_eq!(error_of(&missing), ("not_found".into(), "target".into()));
    let shapeless = app.call(
        "check_before_acting",
        json!({ "target": "https://hub.docker.com/u/someone" }),
    );
    assert_eq!(
        shapeless["error"]["message"],
        "A Docker Hub target looks like hub.docker.com/r/<owner>/<image>",
        "{shapeless}"
    );
}

#[test]
fn resource_id_is_refused_with_a_message_that_points_to_target() {
    let app = TestApp::with_catalog();
    let reply = app.call("check_before_acting", json!({ "resource_id": SERVERS }));
    assert_eq!(
        error_of(&reply),
        ("validation".into(), "resource_id".into())
    );
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("pass the resource as target"),
        "{reply}"
    );
    let inside = app.call(
        "check_before_acting",
        json!({ "target": { "resource_id": SERVERS } }),
    );
    assert_eq!(
        error_of(&inside),
        ("validation".into(), "target.resource_id".into())
    );
    assert!(
        inside["error"]["message"]
            .as_str()
            .unwrap()
            .contains("kd_resource_id")
    );
}

#[test]
fn a_missing_or_malformed_target_or_action_is_refused_naming_the_field_and_writes_nothing() {
    let app = TestApp::with_catalog();
    let before = app.log_len();
    let receipts_before: i64 = db(&app)
        .query_row("SELECT COUNT(*) FROM receipts", [], |row| row.get(0))
        .unwrap();
    for (arguments, field) in [
        (json!({}), "target"),
        (json!({ "target": "" }), "target"),
        (json!({ "target": "   " }), "target"),
        (json!({ "target": 5 }), "target"),
        (json!({ "target": "some words" }), "target"),
        (json!({ "target": {} }), "target"),
        (
            json!({ "target": { "url": "https://a.example", "github_repo": "a/b" } }),
            "target",
        ),
        (
            json!({ "target": { "github_repo": 7 } }),
            "target.github_repo",
        ),
        (
            json!({ "target": { "kd_resource_id": "servers" } }),
            "target.kd_resource_id",
        ),
        (json!({ "target": { "url": "npm:x" } }), "target.url"),
        (
            json!({ "target": SERVERS, "intended_action": "destroy" }),
            "intended_action",
        ),
        (json!({ "target": SERVERS, "action": "delete" }), "action"),
        (
            json!({ "target": SERVERS, "intended_action": "clone", "action": "pay" }),
            "action",
        ),
        (
            json!({ "target": SERVERS, "include_demo": "yes" }),
            "include_demo",
        ),
    ] {
        let reply = app.call("check_before_acting", arguments.clone());
        assert_eq!(
            error_of(&reply),
            ("validation".into(), field.into()),
            "{arguments}"
        );
    }
    let receipts_after: i64 = db(&app)
        .query_row("SELECT COUNT(*) FROM receipts", [], |row| row.get(0))
        .unwrap();
    assert_eq!((app.log_len(), receipts_after), (before, receipts_before));
    // The alias works on its own, and both names may carry the same value.
    let alias = app.call(
        "check_before_acting",
        json!({ "target": SERVERS, "action": "install_connector" }),
    );
    assert_eq!(
        alias["data"]["intended_action"], "install_connector",
        "{alias}"
    );
    let both = app.call(
        "check_before_acting",
        json!({ "target": SERVERS, "action": "pay", "intended_action": "pay" }),
    );
    assert_eq!(both["data"]["intended_action"], "pay");
    assert!(
        both["data"]["does_not_prove"]
            .as_array()
            .unwrap()
            .iter()
            .any(|line| line.as_str().unwrap().contains("payment"))
    );
}

#[test]
fn a_target_matching_only_a_demo_record_is_not_found_unless_include_demo_and_never_gets_a_receipt()
{
    let app = TestApp::with_catalog();
    for target in [
        "kd:res:demo:calendar-connector",
        "https://github.com/karmadue-demo/calendar-connector",
    ] {
        let hidden = app.call("check_before_acting", json!({ "target": target }));
        assert_eq!(
            error_of(&hidden),
            ("not_found".into(), "target".into()),
            "{target}"
        );
        assert_eq!(hidden["error"]["demo_available"], true);
        let shown = app.call(
            "check_before_acting",
            json!({ "target": target, "include_demo": true }),
        );
        assert_eq!(shown["ok"], true, "{shown}");
        assert_eq!(shown["data"]["label"], "DEMO");
        assert_eq!(shown["data"]["demo"], true);
        assert_eq!(shown["data"]["counts_as_verification"], false);
        assert_eq!(shown["data"]["receipt"], Value::Null);
        assert!(
            shown["data"]["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|warning| warning["code"] == "demo_record")
        );
    }
    let receipts: i64 = db(&app)
        .query_row("SELECT COUNT(*) FROM receipts", [], |row| row.get(0))
        .unwrap();
    assert_eq!(receipts, 0);
}

#[test]
fn a_target_nothing_matches_is_not_found_naming_target() {
    let app = TestApp::with_catalog();
    for target in [
        "https://github.com/nobody-here/nothing-here",
        "npm:no-such-package-here-at-all",
        "https://example.com/tool",
        "kd:res:npm:nope-nope",
    ] {
        let reply = app.call("check_before_acting", json!({ "target": target }));
        assert_eq!(
            error_of(&reply),
            ("not_found".into(), "target".into()),
            "{target}"
        );
        assert!(reply["error"].get("demo_available").is_none());
    }
}

#[test]
fn an_archived_repository_warns_archived_upstream() {
    let app = TestApp::with_catalog();
    let reply = app.call(
        "check_before_acting",
        json!({ "target": "https://github.com/modelcontextprotocol/servers-archived/tree/main/src/postgres" }),
    );
    assert_eq!(
        reply["data"]["resolved"]["kd_resource_id"],
        "kd:res:github:modelcontextprotocol/servers-archived/src/postgres",
        "{reply}"
    );
    let warnings = reply["data"]["warnings"].as_array().unwrap();
    let archived = warnings
        .iter()
        .find(|warning| warning["code"] == "archived_upstream")
        .unwrap();
    assert!(archived["message"].as_str().unwrap().contains("archived"));
}
