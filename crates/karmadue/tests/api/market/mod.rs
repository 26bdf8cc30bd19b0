//! The marketplace (issue 32): listings drafted by owner-linked agents and published only by
//! their person, matching, proposals with the exact terms hash approved only by people, and
//! handoffs inside a shared circle. Every refusal leaves the log unchanged.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::app::{Agent, Browser, TestApp, hidden};
use crate::help::{link, person};

mod reports;

fn ok(reply: &Value) -> Value {
    assert_eq!(reply["ok"], true, "{reply}");
    reply["data"].clone()
}

/// The refusal's code, after checking the log did not grow.
fn refused(app: &TestApp, before: i64, reply: &Value) -> String {
    assert_eq!(reply["ok"], false, "{reply}");
    assert_eq!(app.log_len(), before, "a refusal wrote to the log: {reply}");
    reply["error"]["code"].as_str().unwrap().to_owned()
}

/// A person with one linked agent.
fn linked<'a>(app: &'a TestApp, email: &str, name: &str) -> (Browser<'a>, String, Agent) {
    let (browser, person_id) = person(app, email);
    let agent = app.register(name);
    link(app, &browser, &agent);
    (browser, person_id, agent)
}

fn post(app: &TestApp, agent: &Agent, arguments: Value) -> Value {
    let mut arguments = arguments;
    arguments["agent_id"] = json!(agent.agent_id);
    app.signed(agent, "post_listing", arguments)
}

/// The person presses a button of `/you/market` whose form holds `name` = `value`.
fn press(browser: &Browser<'_>, action: &str, fields: &[(&str, &str)]) {
    let page = browser.get("/you/market");
    assert_eq!(page.status, 200, "{}", page.text);
    let csrf = hidden(&page.text, "csrf");
    let mut all = vec![("csrf", csrf.as_str())];
    all.extend_from_slice(fields);
    let reply = browser.post(action, &all);
    assert_eq!(reply.status, 303, "{}", reply.text);
}

/// The terms hash rebuilt here from the reply's fields (kd-terms-v1).
fn rebuilt_hash(proposal: &Value) -> String {
    let text = [
        "kd-terms-v1",
        proposal["proposal_id"].as_str().unwrap(),
        proposal["listing_id"].as_str().unwrap(),
        proposal["proposer_id"].as_str().unwrap(),
        proposal["counterparty_id"].as_str().unwrap(),
        &kd_protocol::canonical::canonical_value_text(&proposal["terms"]),
    ]
    .join("\n");
    hex::encode(Sha256::digest(text.as_bytes()))
}

#[test]
fn listings_wait_for_the_person_and_match_the_opposite_kind() {
    let app = TestApp::start();
    let (browser_a, person_a, a) = linked(&app, "ann@example.com", "market-ann");
    let (browser_b, _, b) = linked(&app, "bob@example.com", "market-bob");
    let loner = app.register("market-loner");

    drafting_refusals(&app, &a, &loner);

    // An agent alone never publishes, even with publish and the confirmation.
    let give = ok(&post(
        &app,
        &a,
        json!({"kind": "give", "category": "connectors", "title": "Review of MCP connector licenses",
               "description": "I review MCP connectors and their licenses.", "points": 40,
               "publish": true, "human_confirmation": {"confirmed": true}}),
    ));
    assert_eq!(give["published"], false, "{give}");
    assert_eq!(give["status"], "draft");
    assert!(give["title"].is_null(), "title lifted: {give}");
    let give_id = give["listing_id"].as_str().unwrap().to_owned();
    let ask = ok(&post(
        &app,
        &b,
        json!({"kind": "ask", "category": "connectors", "title": "Need my MCP connector license reviewed"}),
    ));
    let ask_id = ask["listing_id"].as_str().unwrap().to_owned();

    // A draft is never a candidate.
    let reply = app.signed(
        &b,
        "search_matches",
        json!({"agent_id": b.agent_id, "listing_id": ask_id}),
    );
    assert_eq!(ok(&reply)["total"], 0, "{reply}");

    // The people publish on their page: a listing.published by the person.
    press(
        &browser_a,
        "/you/market/publish",
        &[("listing_id", &give_id)],
    );
    press(
        &browser_b,
        "/you/market/publish",
        &[("listing_id", &ask_id)],
    );
    let events = app.events_text();
    assert!(
        events.contains(&format!("person:{person_a}")),
        "consent record by the person"
    );

    let found = ok(&app.signed(
        &b,
        "search_matches",
        json!({"agent_id": b.agent_id, "listing_id": ask_id}),
    ));
    assert_eq!(
        found["candidates"][0]["listing_id"],
        give_id.as_str(),
        "{found}"
    );
    let nonsense = ok(&app.signed(
        &b,
        "search_matches",
        json!({"agent_id": b.agent_id, "need": "qzxv plorbt wuffle"}),
    ));
    assert_eq!(nonsense["total"], 0, "{nonsense}");
    let before = app.log_len();
    let reply = app.signed(&b, "search_matches", json!({"agent_id": b.agent_id}));
    assert_eq!(refused(&app, before, &reply), "validation");

    // retract_post: not yours, then yours (listing.retracted in get_history).
    let reply = app.signed(
        &b,
        "retract_post",
        json!({"agent_id": b.agent_id, "post_id": give_id}),
    );
    assert_eq!(refused(&app, before, &reply), "not_found", "not yours");
    ok(&app.signed(
        &a,
        "retract_post",
        json!({"agent_id": a.agent_id, "post_id": give_id}),
    ));
    let history = ok(&app.signed(&a, "get_history", json!({"agent_id": a.agent_id})));
    assert!(
        history.to_string().contains("listing.retracted"),
        "{history}"
    );
}

#[test]
fn proposals_carry_the_exact_terms_hash_and_only_people_approve() {
    let app = TestApp::start();
    let (browser_a, _, a) = linked(&app, "ann@example.com", "deal-ann");
    let (browser_b, _, b) = linked(&app, "bob@example.com", "deal-bob");
    let outsider = app.register("deal-outsider");
    let give = ok(&post(
        &app,
        &a,
        json!({"kind": "give", "title": "Dataset cleaning for evals"}),
    ));
    let give_id = give["listing_id"].as_str().unwrap().to_owned();
    let propose = |terms: Value| {
        app.signed(
            &a,
            "propose_terms",
            json!({"agent_id": a.agent_id, "my_listing_id": give_id, "counterparty_id": b.agent_id, "terms": terms}),
        )
    };
    let before = app.log_len();
    assert_eq!(
        refused(&app, before, &propose(json!({}))),
        "validation",
        "a draft"
    );
    press(
        &browser_a,
        "/you/market/publish",
        &[("listing_id", &give_id)],
    );
    let before = app.log_len();
    assert_eq!(
        refused(&app, before, &propose(json!({"price": 2.5}))),
        "validation"
    );

    let terms = json!({"points": 120, "scope": "Clean 3 datasets", "milestones": [{"pay": 40}, {"pay": 80}]});
    let made = ok(&propose(terms));
    let proposal = &made;
    let proposal_id = proposal["proposal_id"].as_str().unwrap().to_owned();
    assert_eq!(proposal["terms_recipe"], "kd-terms-v1");
    assert_eq!(
        proposal["terms_hash"].as_str().unwrap(),
        rebuilt_hash(proposal)
    );
    let read = ok(&app.signed(
        &b,
        "get_proposal",
        json!({"agent_id": b.agent_id, "proposal_id": proposal_id}),
    ));
    assert_eq!(read["terms_hash"], proposal["terms_hash"]);

    responses(&app, [&a, &b, &outsider], &proposal_id);

    // Handoff outside a circle: refused before approval.
    let before = app.log_len();
    let reply = app.signed(
        &a,
        "handoff_task",
        json!({"agent_id": a.agent_id, "to_agent": b.agent_id, "payload": {"note": "start"}}),
    );
    assert_eq!(refused(&app, before, &reply), "forbidden");

    let hash = proposal["terms_hash"].as_str().unwrap().to_owned();
    approve_and_hand_off(
        &app,
        [&browser_a, &browser_b],
        [&a, &b, &outsider],
        &proposal_id,
        &hash,
    );
}

/// post_listing's refusals, each before any write.
fn drafting_refusals(app: &TestApp, a: &Agent, loner: &Agent) {
    let before = app.log_len();
    let reply = post(
        app,
        loner,
        json!({"kind": "give", "title": "Unowned offer"}),
    );
    assert_eq!(refused(app, before, &reply), "forbidden");
    for bad in [
        json!({"kind": "swap", "title": "Connector reviews"}),
        json!({"category": "cars", "title": "Connector reviews"}),
        json!({"title": "Connector reviews", "points": -1}),
        json!({"title": "Connector reviews", "publish": true}),
    ] {
        let reply = post(app, a, bad);
        assert_eq!(refused(app, before, &reply), "validation");
    }
}

/// Both people approve the exact terms on the page; then a handoff inside the circle, confirmed
/// by the receiving person, and one outside it refused.
fn approve_and_hand_off(
    app: &TestApp,
    [browser_a, browser_b]: [&Browser<'_>; 2],
    [a, b, outsider]: [&Agent; 3],
    proposal_id: &str,
    hash: &str,
) {
    // Each side's person approves the exact terms (the hash shown) on the page.
    for browser in [browser_a, browser_b] {
        press(
            browser,
            "/you/market/proposal",
            &[
                ("proposal_id", proposal_id),
                ("terms_hash", hash),
                ("decision", "approve"),
            ],
        );
    }
    let read = ok(&app.signed(
        a,
        "get_proposal",
        json!({"agent_id": a.agent_id, "proposal_id": proposal_id}),
    ));
    assert_eq!(read["status"], "approved", "{read}");
    let before = app.log_len();
    let reply = app.signed(
        a,
        "respond_to_proposal",
        json!({"agent_id": a.agent_id, "proposal_id": proposal_id, "action": "cancel"}),
    );
    assert_eq!(refused(app, before, &reply), "validation");

    // Now a handoff inside the circle; the receiving person confirms it.
    let handoff = ok(&app.signed(a, "handoff_task", json!({"agent_id": a.agent_id, "to_agent": b.agent_id, "kind": "fyi", "payload": {"note": "Datasets are ready"}})));
    let handoff_id = handoff["handoff_id"].as_str().unwrap().to_owned();
    let before = app.log_len();
    let reply = app.signed(
        a,
        "handoff_task",
        json!({"agent_id": a.agent_id, "to_agent": outsider.agent_id}),
    );
    assert_eq!(refused(app, before, &reply), "forbidden");
    ok(&app.signed(
        a,
        "confirm_handoff",
        json!({"agent_id": a.agent_id, "handoff_id": handoff_id}),
    ));
    press(
        browser_b,
        "/you/market/handoff",
        &[("handoff_id", &handoff_id), ("decision", "confirm")],
    );
    let page = browser_b.get("/you/market");
    assert!(page.text.contains(hash), "the page shows the terms hash");
    assert!(page.text.contains("confirmed"), "{}", page.text);
}

/// respond_to_proposal's and get_proposal's refusals, each before any write; then a review
/// request.
fn responses(app: &TestApp, [a, b, outsider]: [&Agent; 3], proposal_id: &str) {
    let before = app.log_len();
    let respond = |agent: &Agent, action: &str| {
        app.signed(
            agent,
            "respond_to_proposal",
            json!({"agent_id": agent.agent_id, "proposal_id": proposal_id, "action": action}),
        )
    };
    assert_eq!(refused(app, before, &respond(b, "approve")), "forbidden");
    assert_eq!(refused(app, before, &respond(a, "decline")), "forbidden");
    assert_eq!(refused(app, before, &respond(b, "cancel")), "forbidden");
    assert_eq!(
        refused(app, before, &respond(outsider, "decline")),
        "not_found"
    );
    let reply = app.signed(
        outsider,
        "get_proposal",
        json!({"agent_id": outsider.agent_id, "proposal_id": proposal_id}),
    );
    assert_eq!(
        refused(app, before, &reply),
        "not_found",
        "a non-party never sees it"
    );
    ok(&respond(b, "request_review"));
}
