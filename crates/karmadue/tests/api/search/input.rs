//! Input and results: refusals, empty and nonsense needs, demo records, evidence and notes.

use super::*;

#[test]
fn bad_input_is_refused_naming_the_field_and_query_syntax_is_just_text() {
    let app = shared();
    let long = "a".repeat(501);
    let huge = "speech to text ".repeat(700);
    for (arguments, field) in [
        (json!({ "need": "x", "limit": 0 }), "limit"),
        (json!({ "need": "x", "limit": 51 }), "limit"),
        (json!({ "need": "x", "limit": -3 }), "limit"),
        (json!({ "need": "x", "limit": "8" }), "limit"),
        (json!({ "need": "x", "limit": 8.5 }), "limit"),
        (json!({ "need": "x", "offset": -1 }), "offset"),
        (json!({ "need": "x", "offset": 10001 }), "offset"),
        (json!({ "need": long }), "need"),
        (json!({ "need": huge }), "need"),
        (json!({ "need": 42 }), "need"),
        (
            json!({ "need": "x", "include_demo": "yes" }),
            "include_demo",
        ),
        (json!({ "need": "x", "query": "x" }), "query"),
    ] {
        let reply = app.call("discover_resources", arguments.clone());
        assert_eq!(reply["ok"], false, "{arguments}: {reply}");
        assert_eq!(
            (
                reply["error"]["code"].as_str(),
                reply["error"]["field"].as_str()
            ),
            (Some("validation"), Some(field)),
            "{arguments}: {reply}"
        );
    }
    let (status, body) = app.rest("discover_resources", r#"{"need":"slack","limit":0}"#, &[]);
    assert_eq!(
        (status, body["error"]["field"].as_str()),
        (400, Some("limit"))
    );
    let (status, body) = app.rest("discover_resources", r#"{"need":"slack"}"#, &[]);
    assert_eq!((status, body["ok"].as_bool()), (200, Some(true)));
    let at_cap = "b".repeat(500);
    for need in [
        "\"",
        "*",
        "NEAR(",
        "-",
        ":",
        "(",
        ")",
        "AND",
        "OR NOT",
        "\"unbalanced quote",
        "title:slack",
        "a:b AND (c OR -d) NEAR(e, f) * ~2 ^3 [x TO y] {z}",
        "🦀🦀",
        "\\",
        "' OR 1=1 --",
        at_cap.as_str(),
    ] {
        let reply = app.call("discover_resources", json!({ "need": need }));
        assert_eq!(reply["ok"], true, "{need:?}: {reply}");
    }
    let quoted = discover(app, json!({ "need": "\"postgres\" AND (mcp OR server)" }));
    assert_eq!(
        ids(&quoted),
        ids(&discover(
            app,
            json!({ "need": "postgres and mcp or server" })
        )),
        "syntax characters are separators"
    );
    assert!(
        ids(&quoted).contains(&"kd:res:npm:@modelcontextprotocol/server-postgres".to_owned()),
        "{quoted}"
    );
}

#[test]
fn a_need_of_nonsense_says_nothing_matched() {
    let app = shared();
    for need in ["xqzvbnm flurble", "zzzzqqqq", "the of and", "🦀"] {
        let reply = discover(app, json!({ "need": need }));
        let data = data(&reply);
        assert_eq!(
            (data["total"].as_u64(), &data["next_offset"]),
            (Some(0), &Value::Null),
            "{need}: {reply}"
        );
        assert_eq!(data["results"], json!([]));
        assert!(
            data["message"]
                .as_str()
                .unwrap()
                .starts_with("Nothing matched"),
            "{need}: {reply}"
        );
        assert_eq!(data["related"], json!({ "challenges": [], "threads": [] }));
    }
}

#[test]
fn an_empty_need_lists_the_catalog_by_popularity_and_evidence() {
    let app = shared();
    let all = discover(app, json!({}));
    let blank = discover(app, json!({ "need": "   " }));
    assert_eq!(ids(&all), ids(&blank));
    assert!(
        data(&all)["total"].as_u64().unwrap() == 112_627,
        "{}",
        data(&all)["total"]
    );
    assert_eq!(ids(&all).len(), 8);
    assert!(
        data(&all)["message"]
            .as_str()
            .unwrap()
            .starts_with("No need given")
    );
    assert!(ids(&all).iter().all(|id| !id.starts_with("kd:res:demo:")));
}

#[test]
fn demo_records_appear_only_when_asked_and_sort_after_every_current_record() {
    let app = shared();
    let without = discover(app, json!({ "need": "calendar connector" }));
    let with = discover(
        app,
        json!({ "need": "calendar connector", "include_demo": true }),
    );
    assert_eq!(
        data(&with)["total"].as_u64().unwrap(),
        data(&without)["total"].as_u64().unwrap() + 1
    );
    let rows = every_result(app, "calendar connector", true);
    let demo = rows
        .iter()
        .position(|row| row["resource_id"] == "kd:res:demo:calendar-connector")
        .expect("the demo row is listed");
    assert!(
        rows[..demo]
            .iter()
            .all(|row| row["archived_upstream"] == true || row["demo"] == false)
    );
    assert!(
        rows[demo..]
            .iter()
            .all(|row| row["archived_upstream"] == true || row["demo"] == true),
        "demo rows sort last"
    );
    let row = &rows[demo];
    assert_eq!(
        (
            row["label"].as_str(),
            row["counts_as_verification"].as_bool()
        ),
        (Some("DEMO"), Some(false))
    );
    assert!(row["ranking_note"].as_str().unwrap().contains("DEMO"));
    assert!(
        every_result(app, "calendar connector", false)
            .iter()
            .all(|row| row["demo"] == false)
    );
}

#[test]
fn each_result_carries_its_evidence_claims_and_the_servers_own_ranking_note() {
    let app = shared();
    let reply = discover(
        app,
        json!({ "need": "whisper speech recognition", "limit": 5 }),
    );
    let data = data(&reply);
    assert_eq!(data["related"], json!({ "challenges": [], "threads": [] }));
    assert!(data["message"].as_str().unwrap().contains("matched"));
    let results = data["results"].as_array().unwrap();
    assert_eq!(results.len(), 5);
    for (index, row) in results.iter().enumerate() {
        for key in [
            "resource_id",
            "type",
            "locator",
            "license",
            "version",
            "evidence_summary",
            "counts_as_verification",
            "claims",
        ] {
            assert!(row.get(key).is_some(), "{key} missing: {row}");
        }
        assert!(
            row.get("reliability_reports").is_none(),
            "no reports exist yet: {row}"
        );
        assert_eq!(
            row["counts_as_verification"], false,
            "metadata reads are not checks"
        );
        for claim in row["claims"].as_array().unwrap() {
            assert!(claim["plain"].as_str().unwrap().ends_with('.'));
            assert_eq!(claim["kind_label"], "Metadata read (not a check)");
        }
        let note = row["ranking_note"].as_str().unwrap();
        assert!(
            note.starts_with("Matches") || note.starts_with("Its name"),
            "{note}"
        );
        // The boundary lifts third-party text into untrusted_content with ":N" ids; the
        // server's own note is never lifted.
        if row["title"].is_null() {
            let place = format!(":{index}");
            let items = reply["untrusted_content"]["items"].as_array().unwrap();
            assert!(
                items
                    .iter()
                    .any(|item| item["id"] == place.as_str() && item["field"] == "title"),
                "{reply}"
            );
        }
    }
    assert_eq!(
        results[0]["resource_id"],
        "kd:res:github:ggml-org/whisper.cpp"
    );
    let listing = app.rpc("tools/list", json!({}));
    let tool = listing["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "discover_resources")
        .unwrap()
        .clone();
    assert_eq!(tool["annotations"]["readOnlyHint"], true);
    assert!(
        tool["inputSchema"].get("required").is_none(),
        "need is optional: {tool}"
    );
}
