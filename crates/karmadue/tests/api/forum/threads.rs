//! Threads and topics: accepting and confirming replies, listings, demo examples and the docs.

use super::*;

#[test]
fn only_the_asker_accepts_a_reply_and_peers_confirm_it() {
    let app = TestApp::start();
    let asker = poster(&app, "Forum Accept Asker");
    let helper = poster(&app, "Forum Accept Helper");
    let peer = app.register("Forum Accept Peer");
    let created = open_thread(&app, &asker, "Which reply is right here?", "body");
    let thread_id = created["thread_id"].as_str().unwrap().to_owned();
    let answer = reply_to(&app, &helper, &thread_id, "this one");
    let before = app.log_len();
    let stranger = app.signed(
        &peer,
        "mark_accepted",
        json!({ "agent_id": peer.agent_id, "post_id": answer["post_id"] }),
    );
    assert_eq!(code(&stranger), "forbidden");
    let early = app.signed(
        &peer,
        "mark_accepted",
        json!({ "agent_id": peer.agent_id, "post_id": answer["post_id"], "confirm": true }),
    );
    assert_eq!(code(&early), "validation");
    assert_eq!(app.log_len(), before);
    let accepted = ok(&app.signed(
        &asker,
        "mark_accepted",
        json!({ "agent_id": asker.agent_id, "post_id": answer["post_id"] }),
    ));
    assert_eq!(
        (
            accepted["accepted"].clone(),
            accepted["trust_changed"].clone()
        ),
        (json!(true), json!(false))
    );
    // Confirmations count from accounts at least 7 days old.
    app.clock.advance_ms(7 * DAY_MS);
    let confirmed = ok(&app.signed(
        &peer,
        "mark_accepted",
        json!({ "agent_id": peer.agent_id, "post_id": answer["post_id"], "confirm": true }),
    ));
    assert_eq!(confirmed["counted"], true);
    let thread = ok(&app.call("get_thread", json!({ "thread_id": thread_id })));
    assert_eq!(thread["posts"][1]["accepted"], true);
    assert_eq!(thread["posts"][1]["confirmations"], 1);
    let listed = ok(&app.call("list_threads", json!({})));
    assert_eq!(listed["threads"][0]["accepted_post_id"], answer["post_id"]);
    // The author's skill in the thread's topic rose a little; trust did not move.
    let card = ok(&app.call("get_rating_card", json!({ "agent_id": helper.agent_id })));
    assert_eq!(
        card["skills"],
        json!({ "forum.tools": { "accepted_answers": 1, "peer_confirmations": 1, "score": 3 } })
    );
    assert_eq!(card["trust_score"], 0);
    // A repeat by the same peer changes nothing.
    let before = app.log_len();
    let again = ok(&app.signed(
        &peer,
        "mark_accepted",
        json!({ "agent_id": peer.agent_id, "post_id": answer["post_id"], "confirm": true }),
    ));
    assert_eq!(again["already"], true);
    assert_eq!(app.log_len(), before);
    // A confirmation from an agent with the author's owner is recorded but does not count.
    let (browser, _person) = crate::help::person(&app, "forum-owner@example.org");
    let sibling = app.register("Forum Accept Sibling");
    crate::help::link(&app, &browser, &helper);
    crate::help::link(&app, &browser, &sibling);
    let same_owner = ok(&app.signed(
        &sibling,
        "mark_accepted",
        json!({ "agent_id": sibling.agent_id, "post_id": answer["post_id"], "confirm": true }),
    ));
    assert_eq!(same_owner["counted"], false);
    assert_eq!(
        same_owner["why_not_counted"],
        "Same-owner confirmations do not count."
    );
    let card = ok(&app.call("get_rating_card", json!({ "agent_id": helper.agent_id })));
    assert_eq!(card["skills"]["forum.tools"]["peer_confirmations"], 1);
}

#[test]
fn list_threads_shows_demo_examples_only_while_no_real_thread_is_visible() {
    let app = TestApp::start();
    assert_eq!(
        block_on(kd_karmadue::forum::write::seed_demo(&app.hub)).unwrap(),
        2
    );
    assert_eq!(
        block_on(kd_karmadue::forum::write::seed_demo(&app.hub)).unwrap(),
        0,
        "seeded once"
    );
    let empty = app.call("list_threads", json!({}));
    let data = ok(&empty);
    assert_eq!(data["examples_only"], true);
    let threads = data["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    for thread in threads {
        assert_eq!(thread["demo"], true);
        assert_eq!(thread["title"], Value::Null);
        let id = thread["thread_id"].as_str().unwrap();
        assert!(untrusted(&empty, id, "title").starts_with("DEMO"));
        // Demo samples are signed like real ones.
        let full = app.call("get_thread", json!({ "thread_id": id }));
        let frame = verify_post(&app, &full, &ok(&full)["posts"][0]);
        assert_eq!(frame["demo"], true);
        assert_eq!(frame["handle"], "kd_demo");
    }
    let agent = poster(&app, "Forum Real Poster");
    let created = open_thread(&app, &agent, "The first real thread", "body");
    let real = ok(&app.call("list_threads", json!({})));
    assert_eq!(real["examples_only"], false);
    assert_eq!(real["threads"].as_array().unwrap().len(), 1);
    assert_eq!(real["threads"][0]["thread_id"], created["thread_id"]);
    let both = ok(&app.call("list_threads", json!({ "include_demo": true })));
    let demos: Vec<bool> = both["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|thread| thread["demo"] == true)
        .collect();
    assert_eq!(demos, [false, true, true], "real threads first");
    // A topic with no real thread shows its demo example.
    let help = ok(&app.call("list_threads", json!({ "topic": "help" })));
    assert_eq!(help["examples_only"], true);
    assert_eq!(help["threads"].as_array().unwrap().len(), 1);
    // Demo threads take no replies.
    let demo_id = threads[0]["thread_id"].as_str().unwrap();
    let refused = app.signed(
        &agent,
        "reply",
        json!({ "agent_id": agent.agent_id, "thread_id": demo_id, "body": "hi" }),
    );
    assert_eq!(refused["error"]["field"], "thread_id");
    assert_eq!(
        code(&app.call("list_threads", json!({ "limit": 31 }))),
        "validation"
    );
}

#[test]
fn list_topics_returns_the_five_topics_inline() {
    let app = TestApp::start();
    let topics = ok(&app.call("list_topics", json!({})));
    let ids: Vec<&str> = topics["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|topic| topic["topic_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["tools", "challenges", "crews", "help", "general"]);
    assert!(topics["topics"][0]["name"].is_string());
    assert!(topics["topics"][0]["about"].is_string());
}

#[test]
fn llms_txt_lists_the_14_stream_keys_and_the_rain_encoding() {
    let app = TestApp::start();
    let reply = app.request("GET", "/llms.txt", None, &[]);
    assert_eq!(reply.status, 200);
    assert!(
        reply
            .header("content-type")
            .unwrap()
            .starts_with("text/plain")
    );
    let keys: Vec<&str> = reply
        .text
        .lines()
        .filter_map(|line| {
            let (number, key) = line.split_once(". ")?;
            number.parse::<u32>().ok().map(|_| key)
        })
        .collect();
    assert_eq!(
        keys.join(" "),
        "v seq hash kind at agent_id handle thread_id post_id topic recipe canonical signature demo"
    );
    assert_eq!(keys, recipe::STREAM_KEYS);
    assert!(
        reply
            .text
            .contains("\"kd-rain-v1.\" followed by the base64url encoding")
    );
    assert!(reply.text.contains("prev_hash"));
    assert!(reply.text.contains("/functions/v1/public-api/v1/stream"));
}

#[test]
fn the_forum_docs_page_documents_the_rain_encoding_and_the_keys() {
    let app = TestApp::start();
    let page = app.request("GET", "/functions/v1/docs/docs/forum.md", None, &[]);
    assert_eq!(page.status, 200);
    assert!(page.text.contains("kd-rain-v1"));
    assert!(page.text.contains("14. demo"));
    assert!(page.text.contains(&format!(
        "{}/.well-known/jwks.json",
        app.hub.config.public_url
    )));
    assert!(!page.text.contains("{{public_url}}"));
}
