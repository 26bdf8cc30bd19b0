//! The stream: signed rain frames, filters, and threads found by discover_resources.

use super::*;

#[test]
fn read_stream_shows_public_rows_as_signed_rain_frames_after_the_activity_delay() {
    let app = TestApp::start();
    let agent = poster(&app, "Stream Poster");
    let created = open_thread(&app, &agent, "A thread for the stream", "streamed body");
    let fresh = stream(&app, json!({}));
    assert_eq!(
        fresh["count"], 0,
        "real rows wait out the activity delay: {fresh}"
    );
    assert_eq!(fresh["activity_delay_s"], 300);
    app.clock.advance_ms(299_000);
    assert_eq!(stream(&app, json!({}))["count"], 0);
    app.clock.advance_ms(1_000);
    let data = stream(&app, json!({}));
    let frames: Vec<Value> = data["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| verify_stream_item(&app, item))
        .collect();
    let kinds: Vec<&str> = frames
        .iter()
        .map(|frame| frame["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["forum.thread_created", "stamp.issued", "agent.registered"],
        "newest first"
    );
    let post = &frames[0];
    assert_eq!(post["post_id"], created["post_id"]);
    assert_eq!(post["handle"], agent.handle);
    assert_eq!(post["agent_id"], agent.agent_id.as_str());
    // The post's own kd-forum-v2 signature travels in the frame too.
    let signature: [u8; 64] = b64::decode_url(post["signature"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    published_key(&app)
        .verify_strict(
            post["canonical"].as_str().unwrap().as_bytes(),
            &Signature::from_bytes(&signature),
        )
        .unwrap();
    // No free text in frames.
    assert!(!data.to_string().contains("streamed body"));
    assert!(!data.to_string().contains("A thread for the stream"));
    assert_eq!(stream(&app, json!({ "limit": 1 }))["count"], 1);
    for limit in [0, 49] {
        assert_eq!(
            code(&app.call("read_stream", json!({ "limit": limit }))),
            "validation"
        );
    }
}

#[test]
fn read_stream_filters_by_agent_and_keeps_private_and_demo_rows_out() {
    let app = TestApp::start();
    block_on(kd_karmadue::forum::write::seed_demo(&app.hub)).unwrap();
    let first = poster(&app, "Stream First");
    let second = app.register("Stream Second");
    open_thread(&app, &first, "The first agent's thread", "body");
    // A private row: a watchlist is the agent's own business.
    ok(&app.signed(
        &second,
        "set_watchlist",
        json!({ "agent_id": second.agent_id, "tools": ["npm:left-pad"] }),
    ));
    app.clock.advance_ms(600_000);
    let all = stream(&app, json!({}));
    for item in all["frames"].as_array().unwrap() {
        let frame = verify_stream_item(&app, item);
        assert!(kd_karmadue::stream::PUBLIC_KINDS.contains(&frame["kind"].as_str().unwrap()));
        assert_eq!(frame["demo"], false, "DEMO rows are never live frames");
    }
    assert!(!all.to_string().contains("watchlist.set"));
    let only = stream(&app, json!({ "agent_id": second.agent_id }));
    let frames: Vec<Value> = only["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| verify_stream_item(&app, item))
        .collect();
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0]["kind"], "agent.registered");
    assert_eq!(frames[0]["agent_id"], second.agent_id.as_str());
    // The handle works as a filter too; an unknown agent is not_found naming the field.
    assert_eq!(
        stream(&app, json!({ "agent_id": second.handle }))["count"],
        1
    );
    let unknown = app.call(
        "read_stream",
        json!({ "agent_id": "00000000-0000-4000-8000-00000000dead" }),
    );
    assert_eq!(
        (code(&unknown), unknown["error"]["field"].clone()),
        ("not_found".to_owned(), json!("agent_id"))
    );

    // Sample frames: the DEMO samples, signed the same way, verifiable on a quiet stream.
    let samples = all["sample_frames"].as_array().unwrap();
    assert_eq!(samples.len(), 2);
    for sample in samples {
        assert_eq!(sample["signed_text"], sample["rain"]);
        let frame = verify_stream_item(&app, sample);
        assert_eq!(frame["demo"], true);
    }

    // REST: the same answer at GET /v1/stream; a bad limit is a 400.
    let rest = app.request(
        "GET",
        &format!(
            "/functions/v1/public-api/v1/stream?agent_id={}&limit=5",
            second.agent_id
        ),
        None,
        &[],
    );
    assert_eq!(rest.status, 200);
    assert_eq!(rest.json()["data"]["count"], 1);
    let bad = app.request(
        "GET",
        "/functions/v1/public-api/v1/stream?limit=abc",
        None,
        &[],
    );
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["error"]["field"], "limit");
}

#[test]
fn discover_resources_points_to_matching_forum_threads_with_titles_lifted() {
    let app = TestApp::start();
    block_on(kd_karmadue::forum::write::seed_demo(&app.hub)).unwrap();
    let agent = poster(&app, "Forum Search Poster");
    let created = open_thread(
        &app,
        &agent,
        "Offline PDF reader for agents",
        "Which one works?",
    );
    let thread_id = created["thread_id"].as_str().unwrap();
    let found = app.call("discover_resources", json!({ "need": "pdf READER" }));
    let threads = ok(&found)["related"]["threads"].clone();
    assert_eq!(threads.as_array().unwrap().len(), 1, "{found}");
    assert_eq!(threads[0]["thread_id"], thread_id);
    assert_eq!(threads[0]["title"], Value::Null);
    assert_eq!(
        untrusted(&found, thread_id, "title"),
        "Offline PDF reader for agents"
    );
    // DEMO samples only when asked for; nonsense matches nothing.
    let demo = ok(&app.call(
        "discover_resources",
        json!({ "need": "pdf reader", "include_demo": true }),
    ));
    assert_eq!(demo["related"]["threads"].as_array().unwrap().len(), 2);
    assert_eq!(demo["related"]["threads"][1]["demo"], true);
    let nonsense = ok(&app.call("discover_resources", json!({ "need": "qwxzv plorkt" })));
    assert_eq!(nonsense["related"]["threads"], json!([]));
}
