//! Tiers, per-minute limits, stamps and the daily action quota (issue 4; permissions document
//! "What your passport unlocks"; spec "Connector limits").

use kd_core::tiers::AccessTiers;
use serde_json::{Value, json};

use crate::app::{Agent, TestApp, fresh_nonce};
use crate::people::{connect, decide, mint};

const PASSWORD: &str = "correct horse battery staple";

/// A person and an agent linked by a connect code, approved one second after the agent
/// connected (so the connect itself is before the grant).
fn linked<'a>(app: &'a TestApp, email: &str, name: &str) -> (crate::app::Browser<'a>, Agent) {
    let browser = app.browser();
    browser.sign_up(email, "Quinn Quota", PASSWORD);
    let agent = app.register(name);
    let code = mint(&browser);
    assert_eq!(connect(app, &agent, &code)["ok"], true);
    app.clock.advance_ms(1_000);
    decide(&browser, "approve");
    (browser, agent)
}

/// A hub with the permissions document's own limits.
fn strict() -> TestApp {
    TestApp::start_with(|config| config.access_tiers = AccessTiers::default())
}

/// A signed read: the kd-mcp-v1 headers plus x-karmadue-agent.
fn signed_read(app: &TestApp, agent: &Agent, tool: &str, arguments: &Value) -> Value {
    let text = arguments.to_string();
    let mut headers = app.sign(&agent.key, tool, &agent.agent_id, &text, &fresh_nonce());
    headers.push(("x-karmadue-agent".into(), agent.agent_id.clone()));
    let borrowed: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    app.call_text(tool, &text, &borrowed).0
}

fn rename(app: &TestApp, agent: &Agent, name: &str) -> Value {
    app.signed(
        agent,
        "rename_agent",
        json!({ "agent_id": agent.agent_id, "name": name }),
    )
}

#[test]
fn the_tiers_table_is_served_as_configured() {
    let app = strict();
    let reply = app.request("GET", "/functions/v1/public-api/v1/tiers", None, &[]);
    assert_eq!(reply.status, 200);
    let body = reply.json();
    let tiers = body["data"]["tiers"].as_array().unwrap();
    let rows: Vec<(String, u64, u64, String)> = tiers
        .iter()
        .map(|tier| {
            (
                tier["tier"].as_str().unwrap().to_owned(),
                tier["reads_per_minute"].as_u64().unwrap(),
                tier["writes_per_minute"].as_u64().unwrap(),
                tier["per"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("anonymous".to_owned(), 30, 10, "ip".to_owned()),
            ("registered".to_owned(), 60, 20, "agent".to_owned()),
            ("admission_passed".to_owned(), 120, 30, "agent".to_owned()),
            (
                "owner_linked_admitted".to_owned(),
                240,
                60,
                "agent".to_owned()
            ),
        ]
    );
    assert!(
        tiers[0]["unlocks"]
            .as_array()
            .unwrap()
            .contains(&json!("discover_resources"))
    );
    assert!(
        tiers[2]["unlocks"]
            .as_array()
            .unwrap()
            .contains(&json!("publish_ask"))
    );
    assert_eq!(
        body["data"]["tool_reads_per_minute"]["discover_resources"],
        40
    );

    // The permissions page is generated from the same table.
    let page = app.request("GET", "/functions/v1/docs/docs/permissions.md", None, &[]);
    assert_eq!(page.status, 200);
    for line in [
        "| Anonymous | Nothing | 30 / 10 (per IP) |",
        "| Owner-linked and admitted |",
        "240 / 60 (per agent)",
        "`publish_ask`",
        "- `discover_resources`: 40",
        &format!(
            "{}/functions/v1/public-api/v1/tiers",
            app.hub.config.public_url
        ),
    ] {
        assert!(page.text.contains(line), "{line}\n{}", page.text);
    }
}

#[test]
fn every_reply_carries_the_callers_tier_and_next_unlock() {
    let app = strict();
    let anonymous = app.call(
        "get_resource",
        json!({ "resource_id": "kd:res:npm:nothing" }),
    );
    assert_eq!(anonymous["ok"], false, "refusals carry it too");
    assert_eq!(anonymous["tier"]["tier"], "anonymous");
    assert_eq!(anonymous["tier"]["reads_per_minute"], 30);
    assert_eq!(anonymous["tier"]["per"], "ip");
    assert_eq!(anonymous["next_unlock"]["tier"], "registered");
    assert_eq!(anonymous["next_unlock"]["missing_stamp"], "passport");
    assert!(anonymous["next_unlock"]["how_to_get"][0].is_string());
    assert!(anonymous.get("quota").is_none());

    let agent = app.register("Tier Reader");
    let read = signed_read(&app, &agent, "get_standing", &json!({}));
    assert_eq!(read["ok"], true, "{read}");
    assert_eq!(read["tier"]["tier"], "registered");
    assert_eq!(read["tier"]["writes_per_minute"], 20);
    assert_eq!(read["next_unlock"]["missing_stamp"], "admission-passed");
    assert!(
        read["next_unlock"]["unlocks"]
            .as_array()
            .unwrap()
            .contains(&json!("publish_ask"))
    );
    assert_eq!(read["data"]["subject_id"], json!(agent.agent_id));
    assert_eq!(read["data"]["tier"]["tier"], "registered");
    assert!(read["data"].get("quota").is_none(), "unlinked: no quota");
    assert_eq!(read["data"]["verifier_record"]["completed"], 0);
    assert_eq!(read["data"]["verifications"], json!([]));

    // REST answers carry the same fields.
    let (status, body) = app.rest(
        "verify_agent",
        &json!({ "agent_id": agent.agent_id }).to_string(),
        &[],
    );
    assert_eq!(status, 200);
    assert_eq!(body["tier"]["tier"], "anonymous");
    assert_eq!(body["data"]["standing_tier"], "registered");
    assert_eq!(body["data"]["current"]["limits"]["reads_per_minute"], 60);
    assert_eq!(
        body["data"]["verifier_record"]["reviewer"],
        json!(agent.agent_id)
    );
}

#[test]
fn anonymous_reads_stop_at_thirty_a_minute_per_address_until_the_window_moves() {
    let app = strict();
    let before = app.log_len();
    for index in 0..30 {
        let reply = app.call(
            "get_resource",
            json!({ "resource_id": format!("kd:res:npm:n{index}") }),
        );
        assert_ne!(
            reply["error"]["code"], "rate_limited",
            "call {index}: {reply}"
        );
    }
    let limited = app.call("get_resource", json!({ "resource_id": "kd:res:npm:x" }));
    assert_eq!(limited["error"]["code"], "rate_limited", "{limited}");
    assert_eq!(limited["error"]["retry_after_s"], 60);
    // REST: 429 with Retry-After.
    let reply = app.request(
        "POST",
        "/functions/v1/public-api/v1/tools/get_resource",
        Some(br#"{"resource_id":"kd:res:npm:x"}"#),
        &[("content-type", "application/json")],
    );
    assert_eq!(reply.status, 429);
    assert_eq!(reply.header("retry-after"), Some("60"));
    assert_eq!(reply.json()["error"]["code"], "rate_limited");
    // A registered agent has its own allowance.
    let agent_before = app.log_len();
    assert_eq!(agent_before, before, "reads and refusals wrote nothing");
    app.clock.advance_ms(59_999);
    assert_eq!(
        app.call("get_resource", json!({ "resource_id": "kd:res:npm:x" }))["error"]["code"],
        "rate_limited"
    );
    app.clock.advance_ms(1);
    assert_eq!(
        app.call("get_resource", json!({ "resource_id": "kd:res:npm:x" }))["error"]["code"],
        "not_found"
    );
}

#[test]
fn anonymous_writes_stop_at_ten_a_minute_and_concurrent_reads_never_over_admit() {
    let app = strict();
    for index in 0..10 {
        let reply = app.call(
            "register_agent",
            json!({ "name": format!("Nobody {index}"), "public_key": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "challenge_id": "kdc_missing", "signature": "AA", "platform": "t" }),
        );
        assert_ne!(reply["error"]["code"], "rate_limited", "{reply}");
    }
    let limited = app.call(
        "register_agent",
        json!({ "name": "Nobody X", "public_key": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "challenge_id": "kdc_missing", "signature": "AA", "platform": "t" }),
    );
    assert_eq!(limited["error"]["code"], "rate_limited", "{limited}");
    assert!(
        limited["error"]["message"]
            .as_str()
            .unwrap()
            .contains("10 writes")
    );

    // 60 reads at once from one address: exactly 30 get through.
    let app = std::sync::Arc::new(strict());
    let threads: Vec<_> = (0..6)
        .map(|_| {
            let app = std::sync::Arc::clone(&app);
            std::thread::spawn(move || {
                (0..10)
                    .filter(|_| {
                        app.call("get_resource", json!({ "resource_id": "kd:res:npm:x" }))["error"]
                            ["code"]
                            != "rate_limited"
                    })
                    .count()
            })
        })
        .collect();
    let admitted: usize = threads
        .into_iter()
        .map(|thread| thread.join().unwrap())
        .sum();
    assert_eq!(admitted, 30);
}

#[test]
fn each_read_tool_has_its_own_limit_per_caller() {
    let app = strict();
    let agent = app.register("Busy Searcher");
    for index in 0..40 {
        let reply = signed_read(
            &app,
            &agent,
            "discover_resources",
            &json!({ "need": format!("thing {index}") }),
        );
        assert_eq!(reply["ok"], true, "call {index}: {reply}");
    }
    let limited = signed_read(
        &app,
        &agent,
        "discover_resources",
        &json!({ "need": "one more" }),
    );
    assert_eq!(limited["error"]["code"], "rate_limited");
    assert!(
        limited["error"]["message"]
            .as_str()
            .unwrap()
            .contains("discover_resources allows 40 calls a minute"),
        "{limited}"
    );
    // Other reads still fit in the registered tier's 60.
    let other = signed_read(&app, &agent, "get_standing", &json!({}));
    assert_eq!(other["ok"], true, "{other}");
}

#[test]
fn a_gated_tool_without_its_stamp_is_refused_naming_how_to_get_it_and_records_nothing() {
    // The gate reads the table: put verify_agent behind admission and get_resource behind a
    // passport to exercise both refusals.
    let app = TestApp::start_with(|config| {
        let mut tiers = AccessTiers::default().scaled(1000);
        tiers.tiers[1].unlocks.push("get_resource".into());
        tiers.tiers[2].unlocks.push("verify_agent".into());
        config.access_tiers = tiers;
    });
    let agent = app.register("Gated Agent");
    let before = app.log_len();
    let anonymous = app.call("get_resource", json!({ "resource_id": "kd:res:npm:x" }));
    assert_eq!(
        anonymous["error"]["code"], "identity_required",
        "{anonymous}"
    );
    assert_eq!(anonymous["error"]["missing_stamp"], "passport");
    assert_eq!(anonymous["error"]["required_tier"], "registered");
    assert!(anonymous["error"]["how_to_get"][0].is_string());

    let stamp = signed_read(
        &app,
        &agent,
        "verify_agent",
        &json!({ "agent_id": agent.agent_id }),
    );
    assert_eq!(stamp["error"]["code"], "stamp_required", "{stamp}");
    assert_eq!(stamp["error"]["missing_stamp"], "admission-passed");
    assert_eq!(stamp["error"]["required_tier"], "admission_passed");
    assert!(
        stamp["error"]["how_to_get"][0]
            .as_str()
            .unwrap()
            .contains("start_admission_test")
    );
    let (status, _) = app.rest(
        "verify_agent",
        &json!({ "agent_id": agent.agent_id }).to_string(),
        &[],
    );
    // Naming a registered agent unsigned: signature_required, 401 as well (decision 256).
    assert_eq!(status, 401, "signature_required over REST");
    assert_eq!(app.log_len(), before);

    // With a live admission-passed stamp the gate opens; when it lapses it closes again.
    stamp_admission(&app, &agent, 90);
    let open = signed_read(
        &app,
        &agent,
        "verify_agent",
        &json!({ "agent_id": agent.agent_id }),
    );
    assert_eq!(open["ok"], true, "{open}");
    assert_eq!(open["tier"]["tier"], "admission_passed");
    assert_eq!(open["next_unlock"]["missing_stamp"], "owner-link");
    app.clock.advance_ms(90 * 86_400_000);
    let lapsed = signed_read(
        &app,
        &agent,
        "verify_agent",
        &json!({ "agent_id": agent.agent_id }),
    );
    assert_eq!(lapsed["error"]["code"], "stamp_required");
}

/// Issues an admission-passed stamp for `days` days through the stamps API (the admission test
/// has its own tests; this one is about the gate).
fn stamp_admission(app: &TestApp, agent: &Agent, days: i64) {
    let agent_id = agent.agent_id.clone();
    let hub = std::sync::Arc::clone(&app.hub);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime
        .block_on(hub.store.write(move |txn| {
            let expires = txn.now_ms() + days * 86_400_000;
            kd_karmadue::standing::stamps::issue(
                txn,
                "hub",
                kd_karmadue::standing::stamps::NewStamp {
                    stamp_id: format!("kdst_test{}", &agent_id[..8]),
                    agent_id: agent_id.clone(),
                    stamp: kd_karmadue::standing::stamps::ADMISSION_PASSED,
                    expires_ms: Some(expires),
                    issuer: "hub".into(),
                    credential_id: None,
                    detail: json!({}),
                },
            )
        }))
        .unwrap()
        .unwrap();
}

#[test]
fn an_owner_linked_agent_has_a_daily_action_quota_that_refused_calls_and_reads_do_not_use() {
    let app = TestApp::start();
    let (_browser, agent) = linked(&app, "quota@example.com", "Quota Agent");
    // connect_with_code was before the person approved: not the person's allowance.
    let linked_reply = rename(&app, &agent, "Quota Agent One");
    assert_eq!(linked_reply["ok"], true, "{linked_reply}");
    assert_eq!(linked_reply["quota"]["actions_per_day"], 40);
    assert_eq!(linked_reply["quota"]["used_last_24h"], 1);
    assert_eq!(linked_reply["quota"]["remaining"], 39);
    assert_eq!(linked_reply["quota"]["window"], "rolling 24 hours");
    assert!(
        linked_reply["quota"]["what_counts"]
            .as_str()
            .unwrap()
            .contains("refused")
    );

    // Lower the owner's limit to 3 to reach it quickly.
    set_actions_per_day(&app, &agent, 3);
    // A refused call and reads do not count.
    let refused = rename(&app, &agent, "");
    assert_eq!(refused["ok"], false);
    let _ = signed_read(&app, &agent, "get_standing", &json!({}));
    assert_eq!(
        rename(&app, &agent, "Quota Agent Two")["quota"]["used_last_24h"],
        2
    );
    app.clock.advance_ms(3_600_000);
    assert_eq!(
        rename(&app, &agent, "Quota Agent Three")["quota"]["remaining"],
        0
    );
    let before = app.log_len();
    let limited = rename(&app, &agent, "Quota Agent Four");
    assert_eq!(limited["error"]["code"], "rate_limited", "{limited}");
    assert_eq!(limited["quota"]["remaining"], 0);
    // The first action leaves the window 23 hours from now.
    assert_eq!(limited["error"]["retry_after_s"], 23 * 3600);
    assert_eq!(app.log_len(), before, "a refused action records nothing");
    let standing = app.call("get_standing", json!({ "subject_id": agent.agent_id }));
    assert_eq!(standing["data"]["quota"]["used_last_24h"], 3);
    assert_eq!(standing["data"]["owner_linked"], true);
    // 24 hours after the first three, only the fourth is still in the window.
    app.clock.advance_ms(23 * 3_600_000);
    let again = rename(&app, &agent, "Quota Agent Five");
    assert_eq!(again["ok"], true, "{again}");
    assert_eq!(again["quota"]["used_last_24h"], 2);
}

/// Sets the agent's actions a day as its owner does in the app (`owner.grant_changed`).
pub(crate) fn set_actions_per_day(app: &TestApp, agent: &Agent, limit: i64) {
    let agent_id = agent.agent_id.clone();
    let asked = agent_id.clone();
    let owner = app
        .hub
        .store
        .read_blocking(move |conn| -> Result<_, kd_core::store::StoreError> {
            Ok(kd_karmadue::identity::store::owner_of(conn, &asked)?)
        })
        .unwrap()
        .expect("the agent is linked");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime
        .block_on(kd_karmadue::people::set_actions_per_day(
            &app.hub, &owner, &agent_id, limit,
        ))
        .unwrap();
}

#[test]
fn concurrent_writes_never_exceed_the_daily_actions() {
    let app = std::sync::Arc::new(TestApp::start());
    let (_browser, agent) = linked(&app, "race@example.com", "Racing Agent");
    set_actions_per_day(&app, &agent, 5);
    let agent = std::sync::Arc::new(agent);
    let threads: Vec<_> = (0..12)
        .map(|index| {
            let app = std::sync::Arc::clone(&app);
            let agent = std::sync::Arc::clone(&agent);
            std::thread::spawn(move || {
                rename(&app, &agent, &format!("Racer Number {index}"))["ok"] == true
            })
        })
        .collect();
    let admitted = threads
        .into_iter()
        .map(|thread| thread.join().unwrap())
        .filter(|ok| *ok)
        .count();
    assert_eq!(admitted, 5);
    let standing = app.call("get_standing", json!({ "agent_id": agent.handle }));
    assert_eq!(standing["data"]["quota"]["used_last_24h"], 5);
}

#[test]
fn get_standing_is_never_about_a_person_and_names_unknown_agents() {
    let app = TestApp::start();
    let person = app.call(
        "get_standing",
        json!({ "subject_id": "kdh_0123456789abcdef01234567" }),
    );
    assert_eq!(person["error"]["code"], "validation");
    assert_eq!(person["error"]["field"], "subject_id");
    let unknown = app.call("get_standing", json!({ "agent_id": "kd_000000000000" }));
    assert_eq!(unknown["error"]["code"], "not_found");
    assert_eq!(unknown["error"]["field"], "agent_id");
    let agent = app.register("Keyed Agent");
    let by_key = app.call("get_standing", json!({ "subject_id": agent.public_key() }));
    assert_eq!(
        by_key["data"]["subject_id"],
        json!(agent.agent_id),
        "{by_key}"
    );
    let missing = app.call("get_standing", json!({}));
    assert_eq!(missing["error"]["code"], "validation");
}

/// Issues a review stamp on `subject` by `issuer` (the verification-help flow has its own
/// tests; this one is about what a stamp is worth).
fn review_stamp(app: &TestApp, subject: &Agent, issuer: &str, stamp: &'static str, n: u32) {
    let agent_id = subject.agent_id.clone();
    let issuer = issuer.to_owned();
    let hub = std::sync::Arc::clone(&app.hub);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime
        .block_on(hub.store.write(move |txn| {
            kd_karmadue::standing::stamps::issue(
                txn,
                &issuer,
                kd_karmadue::standing::stamps::NewStamp {
                    stamp_id: format!("kdst_review{n:04}"),
                    agent_id: agent_id.clone(),
                    stamp,
                    expires_ms: None,
                    issuer: issuer.clone(),
                    credential_id: None,
                    detail: json!({}),
                },
            )
        }))
        .unwrap()
        .unwrap();
}

#[test]
fn trust_counts_each_independent_reviewer_once_and_never_a_newcomer_peer() {
    fn person_id(app: &TestApp, email: &str) -> String {
        let email = email.to_owned();
        app.hub
            .store
            .read_blocking(move |conn| -> Result<String, kd_core::store::StoreError> {
                Ok(conn.query_row(
                    "SELECT person_id FROM people WHERE email = ?1",
                    [email],
                    |row| row.get::<String>(0),
                )?)
            })
            .unwrap()
    }
    use kd_karmadue::standing::stamps::{HUMAN_REVIEWED, PEER_REVIEWED};
    let app = TestApp::start();
    let subject = app.register("Reviewed Subject");
    let trust = |app: &TestApp| {
        app.call("read_scores", json!({ "subject_id": subject.agent_id }))["data"]["trust_score"]
            .clone()
    };
    // A person's review counts once they have had their account 7 days, and once however
    // often they stamp.
    app.browser()
        .sign_up("reviewer@example.org", "Rita Reviewer", PASSWORD);
    let person = format!("person:{}", person_id(&app, "reviewer@example.org"));
    review_stamp(&app, &subject, &person, HUMAN_REVIEWED, 1);
    assert_eq!(
        trust(&app),
        0,
        "an account made just now counts for nothing"
    );
    app.clock.advance_ms(7 * 86_400_000);
    review_stamp(&app, &subject, &person, HUMAN_REVIEWED, 2);
    review_stamp(&app, &subject, &person, HUMAN_REVIEWED, 4);
    assert_eq!(trust(&app), 20);
    // A person id with no account behind it counts for nothing either.
    review_stamp(
        &app,
        &subject,
        "person:kdh_aaaaaaaaaaaaaaaaaaaaaaaa",
        HUMAN_REVIEWED,
        5,
    );
    assert_eq!(trust(&app), 20);
    // A peer registered just now counts for nothing.
    let fresh = app.register("Fresh Reviewer");
    review_stamp(&app, &subject, &fresh.agent_id, PEER_REVIEWED, 3);
    assert_eq!(trust(&app), 20);
    // Established peers count 10 each, at most 30 together, each once.
    let peers: Vec<Agent> = [
        "Alder Reviewer",
        "Birch Checker",
        "Cedar Auditor",
        "Dogwood Examiner",
    ]
    .iter()
    .map(|name| app.register(name))
    .collect();
    app.clock.advance_ms(7 * 86_400_000);
    for (index, peer) in peers.iter().enumerate() {
        review_stamp(
            &app,
            &subject,
            &peer.agent_id,
            PEER_REVIEWED,
            10 + u32::try_from(index).unwrap(),
        );
        review_stamp(
            &app,
            &subject,
            &peer.agent_id,
            PEER_REVIEWED,
            20 + u32::try_from(index).unwrap(),
        );
    }
    assert_eq!(
        trust(&app),
        50,
        "20 from the person, 30 (capped) from four established peers"
    );
    let scores = app.call("read_scores", json!({ "subject_id": subject.agent_id }));
    assert_eq!(scores["data"]["basis"]["peer_reviews"], 4);
    assert_eq!(scores["data"]["basis"]["human_reviews"], 1);
    let verified = app.call("verify_agent", json!({ "agent_id": subject.agent_id }));
    assert_eq!(verified["data"]["trust_score"], 50);
}

#[test]
fn a_paused_agent_still_reads_its_standing_but_cannot_write() {
    let app = TestApp::start();
    let (owner, agent) = linked(&app, "pause-read@example.org", "Paused Reader");
    let you = owner.get("/you");
    let paused = owner.post(
        "/you/agents",
        &[
            ("csrf", &crate::app::hidden(&you.text, "csrf")),
            ("agent_id", &agent.agent_id),
            ("action", "pause"),
        ],
    );
    assert_eq!(paused.status, 303);
    let read = signed_read(&app, &agent, "get_standing", &json!({}));
    assert_eq!(read["ok"], true, "{read}");
    let write = rename(&app, &agent, "Paused Writer");
    assert_eq!(write["error"]["code"], "forbidden");
    assert!(
        write["error"]["message"]
            .as_str()
            .unwrap()
            .contains("paused")
    );
}

#[test]
fn an_unsigned_call_to_a_gated_tool_is_identity_required_with_the_way_to_a_passport() {
    let app = strict();
    let before = app.log_len();
    for (tool, required) in [
        ("publish_ask", "admission_passed"),
        ("set_watchlist", "registered"),
    ] {
        let reply = app.call(
            tool,
            json!({ "agent_id": "00000000-0000-4000-8000-000000000000", "title": "x", "tools": [] }),
        );
        assert_eq!(
            reply["error"]["code"], "identity_required",
            "{tool}: {reply}"
        );
        assert_eq!(reply["error"]["missing_stamp"], "passport");
        assert_eq!(reply["error"]["required_tier"], required);
        assert!(
            reply["error"]["how_to_get"][1]
                .as_str()
                .unwrap()
                .contains("register_challenge")
        );
    }
    let (status, _) = app.rest("publish_ask", r#"{"title":"x"}"#, &[]);
    assert_eq!(status, 401);
    // A tool no tier gates still asks for the signature.
    let rename = app.call(
        "rename_agent",
        json!({ "agent_id": "00000000-0000-4000-8000-000000000000", "name": "Someone" }),
    );
    assert_eq!(rename["error"]["code"], "signature_required");
    assert_eq!(app.log_len(), before);
}

#[test]
fn refusals_decided_by_the_rest_adapter_carry_the_tier_too() {
    let app = strict();
    let (status, unknown) = app.rest("no_such_tool", "{}", &[]);
    assert_eq!(status, 404);
    assert_eq!(unknown["tier"]["tier"], "anonymous", "{unknown}");
    assert_eq!(unknown["next_unlock"]["missing_stamp"], "passport");
    let reply = app.request(
        "POST",
        "/functions/v1/public-api/v1/tools/get_resource",
        Some(b"resource_id=x"),
        &[("content-type", "application/x-www-form-urlencoded")],
    );
    assert_eq!(reply.status, 415);
    assert_eq!(reply.json()["tier"]["tier"], "anonymous");
}

#[test]
fn a_stray_bearer_or_nonce_does_not_lift_an_anonymous_callers_limits() {
    let app = strict();
    for index in 0..30 {
        let (reply, _) = app.call_text(
            "get_resource",
            &json!({ "resource_id": format!("kd:res:npm:s{index}") }).to_string(),
            &[("authorization", "Bearer junk")],
        );
        assert_ne!(
            reply["error"]["code"], "rate_limited",
            "call {index}: {reply}"
        );
    }
    let (limited, _) = app.call_text(
        "get_resource",
        r#"{"resource_id":"kd:res:npm:x"}"#,
        &[("x-kd-nonce", "nonce-without-a-signature")],
    );
    assert_eq!(limited["error"]["code"], "rate_limited", "{limited}");
    assert_eq!(limited["tier"]["tier"], "anonymous");
}

#[test]
fn reads_refusals_and_recovery_tools_stay_open_when_the_daily_actions_are_used_up() {
    let app = TestApp::start();
    let (_owner, agent) = linked(&app, "spent@example.org", "Spent Agent");
    set_actions_per_day(&app, &agent, 2);
    assert_eq!(rename(&app, &agent, "Spent Agent One")["ok"], true);
    // A refused code attempt is logged (connect.refused) but is not an action.
    let refused = crate::people::connect(&app, &agent, "WRNG-CD23");
    assert_eq!(refused["error"]["code"], "invalid_code");
    let after_refusal = app.call("get_standing", json!({ "subject_id": agent.agent_id }));
    assert_eq!(after_refusal["data"]["quota"]["used_last_24h"], 1);
    app.clock.advance_ms(3_600_000);
    assert_eq!(
        rename(&app, &agent, "Spent Agent Two")["quota"]["remaining"],
        0
    );
    // get_history is a signed read: it works with no action left and uses none.
    let history = app.signed(&agent, "get_history", json!({ "agent_id": agent.agent_id }));
    assert_eq!(history["ok"], true, "{history}");
    assert_eq!(history["quota"]["used_last_24h"], 2);
    // Lowering the limit below what was used: one action frees when enough have left.
    app.clock.advance_ms(3_600_000);
    assert_eq!(
        rename(&app, &agent, "Spent Agent Three")["error"]["code"],
        "rate_limited"
    );
    set_actions_per_day(&app, &agent, 1);
    let lowered = rename(&app, &agent, "Spent Agent Four");
    assert_eq!(lowered["error"]["code"], "rate_limited");
    // One action at the start, one an hour later, now two hours in: with a limit of 1 the
    // second must leave too, 23 hours from now (the oldest alone would say 22).
    assert_eq!(lowered["error"]["retry_after_s"], 23 * 3600);
    // Releasing itself (like rotating or revoking its key) is never held back by the quota.
    let released = app.signed(
        &agent,
        "release_agent",
        json!({ "agent_id": agent.agent_id }),
    );
    assert_eq!(released["ok"], true, "{released}");
}
