//! Connect codes and owner links: approval, refusals, limits, the owner session as a bearer, pause and remove.

use super::*;

#[test]
fn a_connect_code_links_an_agent_only_after_the_person_approves() {
    let app = TestApp::start();
    let browser = app.browser();
    let token = browser.sign_up("owner@example.org", "Owner", PASSWORD);
    let agent = app.register("Connecting Agent");
    let code = mint(&browser);
    assert!(code.len() == 9 && code.as_bytes()[4] == b'-', "{code}");
    assert!(
        code.chars()
            .all(|c| c == '-' || "ABCDEFGHJKLMNPQRSTUVWXYZ23456789".contains(c)),
        "{code}"
    );
    assert_eq!(verify(&app, &agent)["owner_linked"], false);

    let before = app.log_len();
    let typed = code.replace('-', "").to_lowercase();
    let filed = connect(&app, &agent, &typed);
    assert_eq!(filed["ok"], true, "{filed}");
    assert_eq!(filed["data"]["status"], "pending");
    assert_eq!(app.log_len(), before + 1);
    assert_eq!(
        verify(&app, &agent)["owner_linked"],
        false,
        "nothing changes before approval"
    );

    let you = browser.get("/you");
    assert!(
        you.text.contains("Connecting Agent") && you.text.contains("Approve"),
        "{}",
        you.text
    );
    let forged = browser.post(
        "/you/requests",
        &[
            ("csrf", "forged"),
            ("request_id", &hidden(&you.text, "request_id")),
            ("decision", "approve"),
        ],
    );
    assert_eq!(forged.status, 403);
    assert_eq!(verify(&app, &agent)["owner_linked"], false);

    decide(&browser, "approve");
    let verified = verify(&app, &agent);
    assert_eq!(verified["owner_linked"], true, "{verified}");
    assert_eq!(
        verified["current"]["scopes"],
        json!(["kd.discovery.read", "kd.evidence.read"])
    );
    assert_eq!(verified["current"]["limits"]["actions_per_day"], 40);
    assert_eq!(verified["current"]["limits"]["spend_usd_per_day"], 0);
    assert_eq!(verified["current"]["limits"]["spend_usd_per_action"], 0);
    assert_eq!(app.log_len(), before + 2);
    let you = browser.get("/you");
    assert!(
        you.text.contains("linked") && you.text.contains("No requests are waiting"),
        "{}",
        you.text
    );

    let history = app.signed(&agent, "get_history", json!({ "agent_id": agent.agent_id }));
    let kinds: Vec<&str> = history["data"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(&kinds[..2], ["owner.linked", "owner.link_requested"]);
    let events = app.events_text();
    for secret in [
        code.as_str(),
        typed.as_str(),
        &code.replace('-', ""),
        token.as_str(),
        PASSWORD,
    ] {
        assert!(!events.contains(secret), "the event log holds {secret}");
    }
    app.assert_chain_ok();
}

#[test]
fn a_declined_request_leaves_the_agent_unlinked() {
    let app = TestApp::start();
    let browser = app.browser();
    browser.sign_up("decline@example.org", "Decliner", PASSWORD);
    let agent = app.register("Declined Agent");
    assert_eq!(connect(&app, &agent, &mint(&browser))["ok"], true);
    let before = app.log_len();
    decide(&browser, "decline");
    assert_eq!(app.log_len(), before + 1);
    assert_eq!(verify(&app, &agent)["owner_linked"], false);
    assert!(app.events_text().contains("owner.link_declined"));
    assert!(browser.get("/you").text.contains("No requests are waiting"));
}

#[test]
fn wrong_expired_and_used_codes_are_all_invalid_code_and_logged_without_the_code() {
    let app = TestApp::start();
    let browser = app.browser();
    browser.sign_up("codes@example.org", "Codes", PASSWORD);
    let first = app.register("First Agent");
    let second = app.register("Second Agent");
    let used = mint(&browser);
    assert_eq!(connect(&app, &first, &used)["ok"], true);
    let expired = mint(&browser);
    app.clock.advance_ms(30 * 60 * 1000);

    for code in [
        used.as_str(),
        expired.as_str(),
        "ZZZZ-ZZZZ",
        "not a code at all",
    ] {
        let before = app.log_len();
        let arguments = json!({ "agent_id": second.agent_id, "code": code }).to_string();
        let nonce = crate::app::fresh_nonce();
        let headers = app.sign(
            &second.key,
            "connect_with_code",
            &second.agent_id,
            &arguments,
            &nonce,
        );
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let (status, reply) = app.rest("connect_with_code", &arguments, &headers);
        assert_eq!(
            (status, reply["error"]["code"].as_str()),
            (400, Some("invalid_code")),
            "{code}: {reply}"
        );
        assert_eq!(app.log_len(), before + 1, "connect.refused is logged");
    }
    let events = app.events_text();
    assert_eq!(events.matches("connect.refused").count(), 4);
    for secret in [
        used.as_str(),
        expired.as_str(),
        &used.replace('-', ""),
        &expired.replace('-', ""),
    ] {
        assert!(!events.contains(secret), "the event log holds a code");
    }
    assert_eq!(verify(&app, &second)["owner_linked"], false);
}

#[test]
fn code_attempts_are_limited_per_agent_per_clock_hour_even_concurrently() {
    let app = TestApp::start();
    let agent = app.register("Guessing Agent");
    let before = app.log_len();
    let replies: Vec<Value> = std::thread::scope(|scope| {
        let (app, agent) = (&app, &agent);
        let tasks: Vec<_> = (0..14)
            .map(|n| scope.spawn(move || connect(app, agent, &format!("WRNG-{n:04}"))))
            .collect();
        tasks.into_iter().map(|task| task.join().unwrap()).collect()
    });
    let code = |reply: &Value| reply["error"]["code"].as_str().unwrap().to_owned();
    assert_eq!(
        replies
            .iter()
            .filter(|reply| code(reply) == "invalid_code")
            .count(),
        10
    );
    let limited: Vec<&Value> = replies
        .iter()
        .filter(|reply| code(reply) == "rate_limited")
        .collect();
    assert_eq!(limited.len(), 4);
    // START_MS is 26 min 40 s into its clock hour: the next hour begins in 2,000 s.
    for reply in &limited {
        assert_eq!(
            reply["error"]["message"],
            "Too many code attempts. Try again later."
        );
        assert_eq!(reply["error"]["retry_after_s"], 2000);
    }
    // Ten connect.refused for the codes, one for the hour's first rate-limited try.
    assert_eq!(app.log_len(), before + 11);
    let (status, _) = {
        let arguments = json!({ "agent_id": agent.agent_id, "code": "ABCD-EF23" }).to_string();
        let headers = app.sign(
            &agent.key,
            "connect_with_code",
            &agent.agent_id,
            &arguments,
            &crate::app::fresh_nonce(),
        );
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        app.rest("connect_with_code", &arguments, &headers)
    };
    assert_eq!(status, 429);
    assert_eq!(app.log_len(), before + 11);

    app.clock.advance_ms(2_000 * 1000);
    assert_eq!(
        code(&connect(&app, &agent, "WRNG-NEXT")),
        "invalid_code",
        "a new hour, new attempts"
    );
}

#[test]
fn one_code_hammered_by_many_agents_admits_exactly_one() {
    let app = TestApp::start();
    let browser = app.browser();
    browser.sign_up("race@example.org", "Race", PASSWORD);
    let names = [
        "Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel",
    ];
    let agents: Vec<Agent> = names
        .iter()
        .map(|name| app.register(&format!("Racer {name}")))
        .collect();
    let code = mint(&browser);
    let replies: Vec<Value> = std::thread::scope(|scope| {
        let (app, code) = (&app, &code);
        let tasks: Vec<_> = agents
            .iter()
            .map(|agent| scope.spawn(move || connect(app, agent, code)))
            .collect();
        tasks.into_iter().map(|task| task.join().unwrap()).collect()
    });
    assert_eq!(
        replies.iter().filter(|reply| reply["ok"] == true).count(),
        1,
        "{replies:?}"
    );
    assert_eq!(
        replies
            .iter()
            .filter(|reply| reply["error"]["code"] == "invalid_code")
            .count(),
        7
    );
}

#[test]
fn a_person_makes_at_most_six_codes_an_hour_even_concurrently() {
    let app = TestApp::start();
    let browser = app.browser();
    browser.sign_up("mint@example.org", "Mint", PASSWORD);
    let csrf = browser.csrf("/connect");
    let before = app.log_len();
    let statuses: Vec<u16> = std::thread::scope(|scope| {
        let (browser, csrf) = (&browser, &csrf);
        let tasks: Vec<_> = (0..10)
            .map(|_| scope.spawn(move || browser.post("/connect", &[("csrf", csrf)]).status))
            .collect();
        tasks.into_iter().map(|task| task.join().unwrap()).collect()
    });
    assert_eq!(
        statuses.iter().filter(|status| **status == 200).count(),
        6,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|status| **status == 429).count(),
        4,
        "{statuses:?}"
    );
    assert_eq!(app.log_len(), before, "codes are working state, not events");
    assert_eq!(browser.post("/connect", &[("csrf", "forged")]).status, 403);
    app.clock.advance_ms(3_600_001);
    assert_eq!(mint(&browser).len(), 9);
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario: each step acts on the state the step before it left"
)]
fn the_owner_session_works_as_a_bearer_for_signed_writes_on_its_own_agents_only() {
    let app = TestApp::start();
    let (_owner, token, agent) = linked(&app, "bearer@example.org", "Owned Agent");
    let stranger = app
        .browser()
        .sign_up("stranger@example.org", "Stranger", PASSWORD);

    let rename = json!({ "agent_id": agent.agent_id, "name": "Owned Renamed" }).to_string();
    let before = app.log_len();
    let (status, refused) = app.rest(
        "rename_agent",
        &rename,
        &[("authorization", &bearer(&stranger))],
    );
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (403, Some("forbidden")),
        "{refused}"
    );
    let (status, refused) = app.rest(
        "rename_agent",
        &rename,
        &[("authorization", "Bearer kds_not_a_session")],
    );
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (401, Some("signature_required")),
        "{refused}"
    );
    assert_eq!(app.log_len(), before);

    let (status, renamed) = app.rest(
        "rename_agent",
        &rename,
        &[("authorization", &bearer(&token))],
    );
    assert_eq!(status, 200, "{renamed}");
    // No nonce is involved: the session is the proof, so further writes need no fresh headers.
    let rename_again = json!({ "agent_id": agent.agent_id, "name": "Owned Again" }).to_string();
    let (again, _) = app.call_text(
        "rename_agent",
        &rename_again,
        &[("authorization", &bearer(&token))],
    );
    assert_eq!(again["ok"], true, "{again}");
    let history = app.signed(&agent, "get_history", json!({ "agent_id": agent.agent_id }));
    assert!(
        history["data"]["events"][0]["actor"]
            .as_str()
            .unwrap()
            .starts_with("person:kdh_"),
        "{history}"
    );

    let release = json!({ "agent_id": agent.agent_id }).to_string();
    let (released, _) = app.call_text(
        "release_agent",
        &release,
        &[("authorization", &bearer(&token))],
    );
    assert_eq!(released["data"]["released"], true, "{released}");
    assert_eq!(verify(&app, &agent)["owner_linked"], false);
    assert!(
        verify(&app, &agent)["current"]["limits"]
            .get("actions_per_day")
            .is_none()
    );
    let history = app.signed(&agent, "get_history", json!({ "agent_id": agent.agent_id }));
    let latest = &history["data"]["events"][0];
    assert_eq!(latest["kind"], "agent.released");
    assert_eq!(latest["payload"]["by"], "owner");
    assert!(
        latest["actor"].as_str().unwrap().starts_with("person:kdh_"),
        "{latest}"
    );

    let before = app.log_len();
    let (status, refused) = app.rest(
        "rename_agent",
        &rename,
        &[("authorization", &bearer(&token))],
    );
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (403, Some("forbidden")),
        "released: no longer theirs"
    );
    assert_eq!(app.log_len(), before);
    assert!(!app.events_text().contains(&token));
}

#[test]
fn pause_refuses_the_agents_writes_until_resumed_and_remove_releases_it() {
    let app = TestApp::start();
    let (owner, _token, agent) = linked(&app, "pause@example.org", "Pausable Agent");
    let act = |action: &str| {
        let page = owner.get("/you");
        let reply = owner.post(
            "/you/agents",
            &[
                ("csrf", &hidden(&page.text, "csrf")),
                ("agent_id", &agent.agent_id),
                ("action", action),
            ],
        );
        assert_eq!(reply.status, 303, "{}", reply.text);
    };
    act("pause");
    assert_eq!(verify(&app, &agent)["current"]["paused"], true);
    assert!(owner.get("/you").text.contains("linked, paused"));
    let before = app.log_len();
    let refused = app.signed(
        &agent,
        "rename_agent",
        json!({ "agent_id": agent.agent_id, "name": "Paused Rename" }),
    );
    assert_eq!(refused["error"]["code"], "forbidden", "{refused}");
    assert_eq!(app.log_len(), before);

    act("resume");
    let renamed = app.signed(
        &agent,
        "rename_agent",
        json!({ "agent_id": agent.agent_id, "name": "Resumed Rename" }),
    );
    assert_eq!(renamed["ok"], true, "{renamed}");

    act("remove");
    assert_eq!(verify(&app, &agent)["owner_linked"], false);
    assert!(owner.get("/you").text.contains("No agents yet"));
    let events = app.events_text();
    for kind in ["agent.paused", "agent.resumed", "agent.released"] {
        assert!(events.contains(kind), "{kind}");
    }
    // Someone else's agent is not theirs to pause.
    let other = app.register("Unowned Agent");
    let page = owner.get("/you");
    let reply = owner.post(
        "/you/agents",
        &[
            ("csrf", &hidden(&page.text, "csrf")),
            ("agent_id", &other.agent_id),
            ("action", "pause"),
        ],
    );
    assert_eq!(reply.status, 404);
    app.assert_chain_ok();
}

#[test]
fn approving_a_second_request_for_an_agent_you_already_own_changes_nothing_about_the_link() {
    let app = TestApp::start();
    let person = app.browser();
    person.sign_up("twice@example.org", "Tess Twice", PASSWORD);
    let agent = app.register("Twice Connected");
    let first = mint(&person);
    let second = mint(&person);
    assert_eq!(connect(&app, &agent, &first)["ok"], true);
    let again = connect(&app, &agent, &second);
    assert_eq!(again["ok"], true, "{again}");
    let you = person.get("/you");
    let requests: Vec<String> = you
        .text
        .match_indices("name=\"request_id\" value=\"")
        .map(|(at, found)| {
            you.text[at + found.len()..]
                .split('"')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    let csrf = hidden(&you.text, "csrf");
    let approve = |request_id: &str| {
        person.post(
            "/you/requests",
            &[
                ("csrf", &csrf),
                ("request_id", request_id),
                ("decision", "approve"),
            ],
        )
    };
    assert_eq!(approve(&requests[0]).status, 303);
    let paused = person.post(
        "/you/agents",
        &[
            ("csrf", &csrf),
            ("agent_id", &agent.agent_id),
            ("action", "pause"),
        ],
    );
    assert_eq!(paused.status, 303);
    let last = requests.last().unwrap();
    assert_ne!(last, &requests[0]);
    assert_eq!(approve(last).status, 303);
    let verified = verify(&app, &agent);
    assert_eq!(verified["owner_linked"], true);
    assert_eq!(
        verified["current"]["paused"], true,
        "a late approval does not unpause"
    );
    assert!(app.events_text().contains("owner.link_confirmed"));
}
