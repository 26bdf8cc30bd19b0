//! `discover_resources` on catalog version 2 (issue 16 "The catalog and search"): the popular
//! packages resolve, a need that is a name finds that record first, a hyphenated name is one
//! name, folders whose archived copy the catalog holds are archived, partial and common words
//! find what titles hold, and a need nobody mentions names every word.

use serde_json::{Value, json};

use crate::app::TestApp;
use crate::search::{data, discover, every_result, ids, import, npm_row, row_text, shared};

#[test]
fn popular_packages_of_version_two_resolve_and_version_one_ids_still_do() {
    let app = shared();
    for id in [
        "kd:res:pypi:faster-whisper",
        "kd:res:pypi:openai-whisper",
        "kd:res:pypi:whisperx",
        "kd:res:pypi:vosk",
        "kd:res:pypi:sherpa-onnx",
        "kd:res:npm:0nmcp",
        "kd:res:github:ggml-org/whisper.cpp",
        "kd:res:skill:anthropics/skills/skills/pdf/SKILL.md",
    ] {
        let reply = app.call("get_resource", json!({ "resource_id": id }));
        assert_eq!(reply["ok"], true, "{id}: {reply}");
    }
    let vosk = discover(app, json!({ "need": "vosk" }));
    assert_eq!(
        ids(&vosk).first().map(String::as_str),
        Some("kd:res:pypi:vosk")
    );
}

#[test]
fn a_hyphenated_name_is_one_name_and_a_need_that_is_a_name_ranks_that_record_first() {
    let app = shared();
    let reply = discover(app, json!({ "need": "faster-whisper", "limit": 10 }));
    let found = ids(&reply);
    assert_eq!(
        found.first().map(String::as_str),
        Some("kd:res:pypi:faster-whisper"),
        "{found:?}"
    );
    for unrelated in ["kd:res:npm:@docusaurus/faster", "kd:res:npm:faster.js"] {
        assert!(
            !found.iter().any(|id| id == unrelated),
            "{unrelated} in {found:?}"
        );
    }
    for index in 0..found.len() {
        let text = row_text(&reply, index);
        assert!(
            text.contains("fast"),
            "result {index} is not about faster-whisper: {text}"
        );
    }
    let note = reply["data"]["results"][0]["ranking_note"]
        .as_str()
        .unwrap();
    assert!(note.starts_with("Its name is exactly the need"), "{note}");
    for (need, first) in [
        ("faster whisper", "kd:res:pypi:faster-whisper"),
        ("Faster_Whisper", "kd:res:pypi:faster-whisper"),
        ("openai-whisper", "kd:res:pypi:openai-whisper"),
        ("whisperx", "kd:res:pypi:whisperx"),
        ("sherpa-onnx", "kd:res:pypi:sherpa-onnx"),
        ("whisper.cp", "kd:res:github:ggml-org/whisper.cpp"),
    ] {
        let reply = discover(app, json!({ "need": need }));
        assert_eq!(
            ids(&reply).first().map(String::as_str),
            Some(first),
            "{need}: {reply}"
        );
    }
}

#[test]
fn speech_to_text_on_device_finds_only_speech_records() {
    let app = shared();
    let reply = discover(app, json!({ "need": "speech to text on device" }));
    let found = ids(&reply);
    assert_eq!(found.len(), 8);
    for index in 0..found.len() {
        let text = row_text(&reply, index);
        assert!(
            [
                "whisper", "speech", "transcri", "stt", "asr", "voice", "dictat"
            ]
            .iter()
            .any(|word| text.contains(word)),
            "result {index} is off target: {text}"
        );
    }
}

/// modelcontextprotocol/servers moved these folders to servers-archived, and the catalog holds
/// both copies (docs/decisions.md 246).
#[test]
fn folders_whose_archived_copy_the_catalog_holds_are_archived_and_sort_after_current_ones() {
    let app = shared();
    for (folder, need) in [
        ("postgres", "postgres database"),
        ("puppeteer", "web browser automation"),
    ] {
        let live = format!("kd:res:github:modelcontextprotocol/servers/src/{folder}");
        let archived = format!("kd:res:github:modelcontextprotocol/servers-archived/src/{folder}");
        for id in [&live, &archived] {
            let reply = app.call("get_resource", json!({ "resource_id": id }));
            assert_eq!(reply["data"]["archived_upstream"], true, "{id}: {reply}");
        }
        let first = discover(app, json!({ "need": need }));
        assert!(!ids(&first).contains(&live), "{need}: {first}");
        let rows = every_result(app, folder, false);
        let at = rows
            .iter()
            .position(|row| row["resource_id"] == live.as_str())
            .expect("still listed");
        assert!(
            rows[at..]
                .iter()
                .all(|row| row["archived_upstream"] == true),
            "{folder}: archived rows sort last"
        );
        let note = rows[at]["ranking_note"].as_str().unwrap();
        assert!(note.contains("archived upstream"), "{note}");
    }
    let whole = app.call(
        "get_resource",
        json!({ "resource_id": "kd:res:github:modelcontextprotocol/servers" }),
    );
    assert_eq!(
        whole["data"]["archived_upstream"], false,
        "the repository itself is current"
    );
}

fn github_row(repo: &str, path: &str, category: &str) -> Value {
    json!({
        "id": format!("kd:res:github:{repo}/{path}"),
        "locator": format!("https://github.com/{repo}/tree/main/{path}"),
        "title": "Zorblax", "type": "mcp_server", "repo": repo, "subpath": path,
        "description": "Zorblax widget server.", "category": category,
        "source_list": ["a"], "categories": [], "popularity": null,
        "license": null, "version": null, "last_commit": null,
    })
}

#[test]
fn an_archived_twin_marks_its_folder_whichever_row_comes_first_and_the_index_follows() {
    for archived_first in [false, true] {
        let app = TestApp::start();
        let live = github_row("acme/tools", "src/zorblax", "Reference Servers");
        let archived = github_row(
            "acme/tools-archived",
            "src/zorblax",
            "Reference Servers / Archived",
        );
        let first = if archived_first { &archived } else { &live };
        import(&app, std::slice::from_ref(first));
        let search = discover(&app, json!({ "need": "zorblax" }));
        assert_eq!(data(&search)["total"], 1);
        let log = app.log_len();
        let second = if archived_first { &live } else { &archived };
        import(&app, std::slice::from_ref(second));
        assert_eq!(app.log_len(), log + 1, "one event: the second row");
        let reply = app.call(
            "get_resource",
            json!({ "resource_id": "kd:res:github:acme/tools/src/zorblax" }),
        );
        assert_eq!(reply["data"]["archived_upstream"], true, "{reply}");
        let search = discover(&app, json!({ "need": "zorblax" }));
        for row in data(&search)["results"].as_array().unwrap() {
            assert!(
                row["ranking_note"]
                    .as_str()
                    .unwrap()
                    .contains("archived upstream"),
                "the kept index refreshed the twin: {row}"
            );
        }
        app.assert_chain_ok();
    }
}

#[test]
fn a_word_typed_half_way_finds_the_titles_it_starts() {
    let app = shared();
    for (need, word) in [
        ("kuber", "kubernetes"),
        ("postgres datab", "postgres"),
        ("playwr", "playwright"),
    ] {
        let reply = discover(app, json!({ "need": need }));
        assert!(
            data(&reply)["total"].as_u64().unwrap() > 0,
            "{need}: {reply}"
        );
        for index in 0..ids(&reply).len() {
            let text = row_text(&reply, index);
            assert!(text.contains(word), "{need}: result {index}: {text}");
        }
    }
}

#[test]
fn a_need_of_common_words_finds_the_titles_that_hold_them() {
    let app = TestApp::start();
    import(
        &app,
        &[
            npm_row("lets-plot-widgets", "Plotting library for notebooks."),
            npm_row("helpers-kit", "Assorted utilities."),
        ],
    );
    for (need, id) in [
        ("lets", "kd:res:npm:lets-plot-widgets"),
        ("help", "kd:res:npm:helpers-kit"),
    ] {
        let reply = discover(&app, json!({ "need": need }));
        assert_eq!(ids(&reply), vec![id.to_owned()], "{need}: {reply}");
        let message = data(&reply)["message"].as_str().unwrap();
        assert!(!message.contains("only common words"), "{message}");
    }
    let none = discover(&app, json!({ "need": "the of and" }));
    assert_eq!(data(&none)["total"], 0);
    assert_eq!(
        data(&none)["message"],
        "Nothing matched. The need has only common words, and no title holds the, of and and; say what the tool should do. Try other words, or fewer of them."
    );
}

#[test]
fn a_need_nobody_mentions_names_every_word() {
    let app = shared();
    let reply = discover(app, json!({ "need": "asdkjhqwe zzxq" }));
    let data = data(&reply);
    assert_eq!(data["total"], 0);
    assert_eq!(data["query"]["unknown_words"], json!(["asdkjhqwe", "zzxq"]));
    assert_eq!(data["query"]["fuzzy_words"], json!([]));
    assert!(
        data["message"]
            .as_str()
            .unwrap()
            .starts_with("Nothing matched. No record mentions asdkjhqwe or zzxq."),
        "{reply}"
    );
}
