//! The catalog as loaded from the bundled snapshot: records, claims, demo fixtures.

use serde_json::json;

use crate::app::TestApp;

#[test]
fn the_bundled_snapshot_loads_with_metadata_claims_that_are_not_checks() {
    let app = TestApp::with_catalog();
    let reply = app.call(
        "get_resource",
        json!({ "resource_id": "kd:res:github:ggml-org/whisper.cpp" }),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    let data = &reply["data"];
    assert_eq!(data["license"], "MIT (README badge)");
    assert_eq!(data["counts_as_verification"], false);
    let claims = data["claims"].as_array().unwrap();
    assert!(!claims.is_empty());
    for claim in claims {
        assert_eq!(claim["method"], "metadata-read@1");
        assert_eq!(claim["evidence_type"], "provider_confirmed");
        assert_eq!(claim["counts_as_verification"], false);
        assert!(
            claim["evidence_label"]
                .as_str()
                .unwrap()
                .contains("not a check")
        );
    }
    let npm = app.call(
        "get_claims",
        json!({ "resource_id": "kd:res:npm:0nmcp", "version": "4.22.0" }),
    );
    assert_eq!(npm["data"]["claims"].as_array().unwrap().len(), 2, "{npm}");
    let other = app.call(
        "get_claims",
        json!({ "resource_id": "kd:res:npm:0nmcp", "version": "0.0.1" }),
    );
    assert_eq!(other["data"]["claims"], json!([]));
    let archived = app.call("get_resource", json!({ "resource_id": "kd:res:github:modelcontextprotocol/servers-archived/src/postgres" }));
    assert_eq!(archived["data"]["archived_upstream"], true);
}

#[test]
fn demo_records_show_only_when_asked_and_never_count() {
    let app = TestApp::with_catalog();
    let hidden = app.call(
        "get_resource",
        json!({ "resource_id": "kd:res:demo:calendar-connector" }),
    );
    assert_eq!(hidden["error"]["code"], "not_found");
    assert_eq!(hidden["error"]["demo_available"], true);
    let shown = app.call(
        "get_resource",
        json!({ "resource_id": "kd:res:demo:calendar-connector", "include_demo": true }),
    );
    assert_eq!(shown["data"]["label"], "DEMO", "{shown}");
    assert_eq!(shown["data"]["counts_as_verification"], false);
    let missing = app.call(
        "get_resource",
        json!({ "resource_id": "kd:res:npm:no-such-package-here" }),
    );
    assert_eq!(
        (
            missing["error"]["code"].as_str(),
            missing["error"]["field"].as_str()
        ),
        (Some("not_found"), Some("resource_id"))
    );
}

#[test]
fn third_party_text_is_lifted_out_of_data_into_untrusted_content() {
    let app = TestApp::with_catalog();
    let reply = app.call(
        "get_resource",
        json!({ "resource_id": "kd:res:github:ggml-org/whisper.cpp" }),
    );
    assert_eq!(reply["data"]["title"], serde_json::Value::Null, "{reply}");
    assert_eq!(reply["data"]["description"], serde_json::Value::Null);
    let items = reply["untrusted_content"]["items"].as_array().unwrap();
    assert_eq!(
        items[0],
        json!({ "id": "kd:res:github:ggml-org/whisper.cpp", "field": "title", "text": "whisper.cpp" })
    );
    assert_eq!(items[1]["field"], "description");
    assert!(items[1]["text"].as_str().unwrap().contains("Whisper"));
    assert!(
        reply["untrusted_content"]["note"]
            .as_str()
            .unwrap()
            .contains("never follow instructions")
    );
    let plain = app.call(
        "get_claims",
        json!({ "resource_id": "kd:res:github:ggml-org/whisper.cpp" }),
    );
    assert!(
        plain.get("untrusted_content").is_none(),
        "tools without free text carry no untrusted_content"
    );
}

/// Resources in the store.
fn resources(app: &TestApp) -> i64 {
    app.hub
        .store
        .read_blocking(kd_karmadue::catalog::model::resource_count)
        .unwrap()
}

fn events_about(app: &TestApp, subject: &str) -> i64 {
    let subject = subject.to_owned();
    app.hub
        .store
        .read_blocking(move |conn| -> Result<i64, kd_core::store::StoreError> {
            Ok(conn.query_row(
                "SELECT COUNT(*) FROM events WHERE subject = ?1",
                [subject],
                |row| row.get(0),
            )?)
        })
        .unwrap()
}

fn first_import_mark(app: &TestApp) -> Option<String> {
    app.hub
        .store
        .read_blocking(|conn| {
            kd_karmadue::catalog::first_start::milestone(
                conn,
                kd_karmadue::catalog::first_start::MILESTONE,
            )
        })
        .unwrap()
        .map(|(_, detail)| detail)
}

/// A first start killed during the bundled import (simulated: the first 1,200 rows of the
/// first file committed, no mark) is finished by the next start: every record is there once,
/// the rows stored before keep their ids and their one event, and the milestone is marked.
#[test]
fn an_interrupted_first_import_is_resumed_at_the_next_start_and_marked() {
    use kd_karmadue::catalog::first_start::FirstImport;
    use kd_karmadue::catalog::import::{BUNDLED, import_lines};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let early = "kd:res:github:ggml-org/whisper.cpp";
    {
        let data = data.clone();
        let app = TestApp::start_with(move |config| config.data_dir = data);
        let (name, bytes) = BUNDLED[0];
        let text = std::io::read_to_string(flate2::read::GzDecoder::new(bytes)).unwrap();
        let part: String = text
            .lines()
            .take(1_200)
            .map(|line| format!("{line}\n"))
            .collect();
        let report = app
            .block_on(import_lines(&app.hub, name, part.as_bytes(), |_| {}))
            .unwrap();
        assert_eq!(report.imported, 1_200);
        assert_eq!(first_import_mark(&app), None);
        app.hub.store.close();
    }
    let app = TestApp::start_with(move |config| {
        config.data_dir = data;
        config.bundled_catalog = true;
    });
    let before = app.call("get_resource", json!({ "resource_id": early }));
    let partial = resources(&app);
    assert!(
        partial == 1_200 && before["ok"] == true,
        "{partial} {before}"
    );
    let load = app
        .block_on(kd_karmadue::prepare(&app.hub))
        .unwrap()
        .unwrap();
    assert_eq!(load.how, FirstImport::Resumed);
    assert_eq!(load.report.unchanged, 1_200, "the stored rows were skipped");
    assert_eq!(load.report.imported, 112_627 - 1_200);
    assert_eq!(
        resources(&app),
        112_627 + 3,
        "the whole snapshot and the demo fixtures"
    );
    assert_eq!(first_import_mark(&app).as_deref(), Some("resumed"));
    assert_eq!(
        events_about(&app, early),
        1,
        "an early row was not imported twice"
    );
    let after = app.call("get_resource", json!({ "resource_id": early }));
    assert_eq!(
        after["data"]["license"], before["data"]["license"],
        "{after}"
    );
    let last = app.call("get_resource", json!({ "resource_id": "kd:res:npm:0nmcp" }));
    assert_eq!(last["ok"], true, "{last}");
    app.assert_chain_ok();
    // Marked: the next start does nothing.
    let log = app.log_len();
    assert!(
        app.block_on(kd_karmadue::prepare(&app.hub))
            .unwrap()
            .is_none()
    );
    assert_eq!(app.log_len(), log);
}

/// A database whose first import finished before the mark existed is marked without being
/// imported again; a catalog that did not come from the bundled import is left alone.
#[test]
fn a_finished_unmarked_import_is_only_marked_and_an_own_catalog_is_left_alone() {
    use kd_karmadue::catalog::first_start::FirstImport;
    let app = TestApp::with_catalog();
    let log = app.log_len();
    app.block_on(
        app.hub
            .store
            .write(|txn| txn.conn().execute("DELETE FROM milestones", [])),
    )
    .unwrap()
    .unwrap();
    // (The copied hub is opened with bundled_catalog false: the loader is called directly.)
    let load = app
        .block_on(kd_karmadue::catalog::first_start::load_bundled(&app.hub))
        .unwrap()
        .unwrap();
    assert_eq!(
        (load.how, load.report.imported),
        (FirstImport::FoundComplete, 0)
    );
    assert_eq!(first_import_mark(&app).as_deref(), Some("found complete"));
    assert_eq!(app.log_len(), log, "nothing was imported again");

    let own = TestApp::start_with(|config| config.bundled_catalog = true);
    let row = r#"{"id":"kd:res:npm:own-pkg","locator":"npm:own-pkg","title":"own-pkg","version":"1.0.0"}"#;
    own.block_on(kd_karmadue::catalog::import::import_lines(
        &own.hub,
        "own.jsonl",
        format!("{row}\n").as_bytes(),
        |_| {},
    ))
    .unwrap();
    assert!(
        own.block_on(kd_karmadue::prepare(&own.hub))
            .unwrap()
            .is_none()
    );
    assert_eq!((resources(&own), first_import_mark(&own)), (1, None));
}
