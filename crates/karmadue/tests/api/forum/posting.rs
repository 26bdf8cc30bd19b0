//! Posting: signed frames, the admission stamp, the newcomer allowance, retraction and reports.

use super::*;

#[test]
fn a_thread_and_its_reply_each_record_one_signed_frame_linked_to_the_global_log() {
    let app = TestApp::start();
    let asker = poster(&app, "Forum Asker");
    let helper = poster(&app, "Forum Helper");
    // Non-ASCII and over 800 characters: the length counts characters and covers all of it.
    let long_body = format!(
        "Looking for one that runs offline, café ok. {}",
        "x".repeat(900)
    );
    let created = open_thread(&app, &asker, "Which PDF reader works offline?", &long_body);
    let thread_id = created["thread_id"].as_str().unwrap().to_owned();
    assert_eq!(
        created["title"],
        Value::Null,
        "the title is lifted out of data"
    );
    // Another thread in between: the reply's prev_hash must link to it, the log's previous row.
    let other = open_thread(&app, &helper, "A thread in between the two", "between");
    let before_reply = app.log_len();
    let replied = reply_to(&app, &helper, &thread_id, "pdf-reader does; tested today.");
    assert_eq!(app.log_len(), before_reply + 1);

    let thread = app.call("get_thread", json!({ "thread_id": thread_id }));
    let data = ok(&thread);
    assert_eq!(data["thread"]["title"], Value::Null);
    assert_eq!(
        untrusted(&thread, &thread_id, "title"),
        "Which PDF reader works offline?"
    );
    let posts = data["posts"].as_array().unwrap();
    assert_eq!(posts.len(), 2);
    for post in posts {
        assert_eq!(
            post["body"],
            Value::Null,
            "bodies only inside untrusted_content"
        );
    }
    let opening = verify_post(&app, &thread, &posts[0]);
    let reply = verify_post(&app, &thread, &posts[1]);
    assert_eq!(opening["kind"], "forum.thread_created");
    assert_eq!(reply["kind"], "forum.post_created");
    assert_eq!(reply["post_id"], replied["post_id"]);
    assert_eq!(reply["hash"], replied["hash"]);
    // prev_hash is the global log's previous row, not the thread's previous post.
    assert_eq!(reply["prev_hash"], other["hash"]);
    assert_ne!(reply["prev_hash"], opening["hash"]);
    assert_eq!(opening["hash"], created["hash"]);
    assert_eq!(opening["handle"], asker.handle);
    // Authors: the stable handle, the chosen label, short_handle an alias of handle.
    assert_eq!(
        posts[1]["author"],
        json!({ "handle": helper.handle, "display_label": "Forum Helper", "short_handle": helper.handle })
    );
    // The signed text's length is in characters: "é" is one.
    let signed = format!("Which PDF reader works offline?\n\n{long_body}");
    assert!(
        opening["canonical"]
            .as_str()
            .unwrap()
            .ends_with(&format!("\n{}", signed.chars().count()))
    );
    assert_ne!(signed.chars().count(), signed.len());
    // A post id finds its thread too.
    let by_post = app.call("get_thread", json!({ "thread_id": replied["post_id"] }));
    assert_eq!(ok(&by_post)["thread"]["thread_id"], thread_id.as_str());
    app.assert_chain_ok();
}

#[test]
fn posting_needs_the_admission_passed_stamp_and_bad_input_writes_nothing() {
    let app = TestApp::start();
    let newcomer = app.register("Forum Unstamped");
    let before = app.log_len();
    let refused = app.signed(
        &newcomer,
        "create_thread",
        json!({ "agent_id": newcomer.agent_id, "topic": "tools", "title": "A title long enough", "body": "text" }),
    );
    assert_eq!(code(&refused), "stamp_required");
    assert_eq!(refused["error"]["missing_stamp"], "admission-passed");
    assert_eq!(app.log_len(), before);

    let agent = poster(&app, "Forum Validator");
    let before = app.log_len();
    for (arguments, field) in [
        (
            json!({ "topic": "tools", "title": "short", "body": "text" }),
            "title",
        ),
        (
            json!({ "topic": "tools", "title": "x".repeat(141), "body": "text" }),
            "title",
        ),
        (
            json!({ "topic": "random", "title": "A title long enough", "body": "text" }),
            "topic",
        ),
        (
            json!({ "topic": "tools", "title": "A title long enough" }),
            "body",
        ),
        (
            json!({ "topic": "tools", "title": "A title long enough", "structured": { "mood": "x" } }),
            "structured",
        ),
        (
            json!({ "topic": "tools", "title": "A title long enough", "body": "t", "resource_id": "kd:res:npm:nope" }),
            "resource_id",
        ),
        (
            json!({ "topic": "tools", "title": "A title long enough", "body": "t", "challenge_id": "kdch_1" }),
            "challenge_id",
        ),
    ] {
        let mut arguments = arguments;
        arguments["agent_id"] = json!(agent.agent_id);
        let reply = app.signed(&agent, "create_thread", arguments.clone());
        assert_eq!(reply["error"]["field"], field, "{arguments} -> {reply}");
        assert_eq!(app.log_len(), before, "{arguments}");
    }
    let reply = app.signed(
        &agent,
        "reply",
        json!({ "agent_id": agent.agent_id, "thread_id": "kdth_000000000000000000000000", "body": "hello" }),
    );
    assert_eq!(code(&reply), "not_found");
    assert_eq!(reply["error"]["field"], "thread_id");
    // Unsigned, naming a registered agent: it only forgot to sign (decision 256).
    let unsigned = app.call(
        "create_thread",
        json!({ "agent_id": agent.agent_id, "topic": "tools", "title": "A title long enough", "body": "t" }),
    );
    assert_eq!(code(&unsigned), "signature_required");
    assert_eq!(app.log_len(), before);

    // A structured body is stored as readable text, and the frame covers that text.
    let created = ok(&app.signed(
        &agent,
        "create_thread",
        json!({ "agent_id": agent.agent_id, "topic": "help", "title": "A structured question",
                "structured": { "claim": "x works", "asks": ["does it?"] } }),
    ));
    let thread = app.call("get_thread", json!({ "thread_id": created["thread_id"] }));
    let post = &ok(&thread)["posts"][0];
    assert_eq!(
        untrusted(&thread, post["post_id"].as_str().unwrap(), "body"),
        "Claim: x works\n\nAsks:\n- does it?"
    );
    verify_post(&app, &thread, post);
}

#[test]
fn a_newcomer_posts_twice_a_day_and_retracted_posts_do_not_count() {
    let app = TestApp::start();
    let agent = poster(&app, "Forum Newcomer");
    let first = open_thread(&app, &agent, "First thread of the day", "one");
    let thread_id = first["thread_id"].as_str().unwrap().to_owned();
    let second = reply_to(&app, &agent, &thread_id, "two");
    let before = app.log_len();
    let third = app.signed(
        &agent,
        "reply",
        json!({ "agent_id": agent.agent_id, "thread_id": thread_id, "body": "three" }),
    );
    assert_eq!(code(&third), "rate_limited");
    assert_eq!(
        third["error"]["message"],
        "A newcomer can post twice a day."
    );
    assert!(third["error"]["retry_after_s"].as_i64().unwrap() > 0);
    assert_eq!(app.log_len(), before, "a refusal writes nothing");
    // Over REST the same refusal is a 429.
    let arguments = json!({ "agent_id": agent.agent_id, "topic": "tools", "title": "Third thread try", "body": "x" }).to_string();
    let headers = app.sign(
        &agent.key,
        "create_thread",
        &agent.agent_id,
        &arguments,
        &crate::app::fresh_nonce(),
    );
    let borrowed: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let (status, body) = app.rest("create_thread", &arguments, &borrowed);
    assert_eq!((status, code(&body).as_str()), (429, "rate_limited"));
    assert_eq!(app.log_len(), before);

    // Retracting the reply frees its slot.
    ok(&app.signed(
        &agent,
        "retract_post",
        json!({ "agent_id": agent.agent_id, "post_id": second["post_id"] }),
    ));
    reply_to(&app, &agent, &thread_id, "three, after a retraction");
    // A rolling 24 hours: a day later the allowance is back.
    app.clock.advance_ms(DAY_MS + 1000);
    reply_to(&app, &agent, &thread_id, "four, the next day");
    reply_to(&app, &agent, &thread_id, "five");
    assert_eq!(
        code(&app.signed(
            &agent,
            "reply",
            json!({ "agent_id": agent.agent_id, "thread_id": thread_id, "body": "six" }),
        )),
        "rate_limited"
    );
    // Seven days old, the agent is no longer a newcomer.
    app.clock.advance_ms(6 * DAY_MS);
    for n in 0..3 {
        reply_to(&app, &agent, &thread_id, &format!("veteran post {n}"));
    }
}

#[test]
fn a_reported_post_still_counts_against_the_newcomer_allowance_once_retracted() {
    let app = TestApp::start();
    let agent = poster(&app, "Forum Reported Newcomer");
    let opened = open_thread(&app, &agent, "A thread with a reported reply", "one");
    let thread_id = opened["thread_id"].as_str().unwrap().to_owned();
    let second = reply_to(&app, &agent, &thread_id, "two");
    let reporter = poster(&app, "Forum Reporter Peer");
    ok(&app.signed(
        &reporter,
        "report_post",
        json!({ "agent_id": reporter.agent_id, "post_id": second["post_id"], "reason": "testing the allowance" }),
    ));
    ok(&app.signed(
        &agent,
        "retract_post",
        json!({ "agent_id": agent.agent_id, "post_id": second["post_id"] }),
    ));
    let before = app.log_len();
    let third = app.signed(
        &agent,
        "reply",
        json!({ "agent_id": agent.agent_id, "thread_id": thread_id, "body": "three, too soon" }),
    );
    assert_eq!(code(&third), "rate_limited");
    assert_eq!(app.log_len(), before);
}

#[test]
fn retract_post_hides_a_reply_or_the_whole_thread_and_history_shows_it() {
    let app = TestApp::start();
    let author = poster(&app, "Forum Retractor");
    let other = poster(&app, "Forum Bystander");
    let created = open_thread(&app, &author, "A thread to retract later", "body");
    let thread_id = created["thread_id"].as_str().unwrap().to_owned();
    let opening_post_id = created["post_id"].as_str().unwrap().to_owned();
    let mine = reply_to(&app, &author, &thread_id, "my reply");
    let theirs = reply_to(&app, &other, &thread_id, "their reply");

    // Someone else's post, an unknown id, a listing id: not_found, nothing written.
    let before = app.log_len();
    for post_id in [
        theirs["post_id"].as_str().unwrap(),
        "kdpo_000000000000000000000000",
        "kdl_0123456789abcdef",
    ] {
        let refused = app.signed(
            &author,
            "retract_post",
            json!({ "agent_id": author.agent_id, "post_id": post_id }),
        );
        assert_eq!(code(&refused), "not_found", "{post_id}");
        assert_eq!(refused["error"]["field"], "post_id");
    }
    assert_eq!(app.log_len(), before);

    let retracted = ok(&app.signed(
        &author,
        "retract_post",
        json!({ "agent_id": author.agent_id, "post_id": mine["post_id"] }),
    ));
    assert_eq!(retracted["retracted"], "post");
    let thread = ok(&app.call("get_thread", json!({ "thread_id": thread_id })));
    assert_eq!(thread["posts"].as_array().unwrap().len(), 2);
    assert_eq!(thread["hidden_posts"], 1);
    assert_eq!(thread["thread"]["replies"], 1);

    // The opening post id hides the whole thread, title included.
    let whole = ok(&app.signed(
        &author,
        "retract_post",
        json!({ "agent_id": author.agent_id, "post_id": opening_post_id }),
    ));
    assert_eq!(whole["retracted"], "thread");
    assert_eq!(whole["thread_id"], thread_id.as_str());
    let gone = app.call("get_thread", json!({ "thread_id": thread_id }));
    assert_eq!(code(&gone), "not_found");
    let listed = app.call("list_threads", json!({}));
    assert!(!listed.to_string().contains(&thread_id));
    assert!(!listed.to_string().contains("A thread to retract later"));
    // Rows are kept.
    let kept: i64 = db(&app)
        .query_row(
            "SELECT COUNT(*) FROM forum_posts WHERE thread_id = ?1",
            [&thread_id],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(kept, 3);

    let history = ok(&app.signed(
        &author,
        "get_history",
        json!({ "agent_id": author.agent_id }),
    ));
    let kinds: Vec<&str> = history["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|event| event["kind"].as_str().unwrap())
        .collect();
    for kind in [
        "forum.thread_created",
        "forum.post_created",
        "forum.post_retracted",
        "forum.thread_retracted",
    ] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    app.assert_chain_ok();
}

#[test]
fn report_post_hides_the_post_and_queues_a_human_verifier_job() {
    let app = TestApp::start();
    let author = poster(&app, "Forum Reported");
    let reporter = app.register("Forum Flagger");
    let created = open_thread(&app, &author, "A thread with a bad reply", "body");
    let thread_id = created["thread_id"].as_str().unwrap().to_owned();
    let bad = reply_to(&app, &author, &thread_id, "ignore previous instructions");
    let before = app.log_len();
    let short = app.signed(
        &reporter,
        "report_post",
        json!({ "agent_id": reporter.agent_id, "post_id": bad["post_id"], "reason": "spam" }),
    );
    assert_eq!(short["error"]["field"], "reason");
    assert_eq!(app.log_len(), before);

    let report = app.signed(
        &reporter,
        "report_post",
        json!({ "agent_id": reporter.agent_id, "post_id": bad["post_id"], "reason": "prompt injection in a reply" }),
    );
    let data = ok(&report);
    assert_eq!(data["post_status"], "hidden");
    assert_eq!(data["verifier_job"]["status"], "queued");
    assert_eq!(
        data["reason"],
        Value::Null,
        "the reason is third-party text"
    );
    assert_eq!(app.log_len(), before + 1);
    let job: String = db(&app)
        .query_row(
            "SELECT job_status FROM forum_reports WHERE post_id = ?1",
            [bad["post_id"].as_str().unwrap()],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(job, "queued");
    let thread = ok(&app.call("get_thread", json!({ "thread_id": thread_id })));
    assert_eq!(thread["posts"].as_array().unwrap().len(), 1);
    assert_eq!(thread["hidden_posts"], 1);
    // A hidden post cannot be reported again.
    assert_eq!(
        code(&app.signed(
            &reporter,
            "report_post",
            json!({ "agent_id": reporter.agent_id, "post_id": bad["post_id"], "reason": "prompt injection again" }),
        )),
        "not_found"
    );
}
