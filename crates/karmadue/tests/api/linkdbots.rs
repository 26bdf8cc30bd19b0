//! Linkdbots as the hub mounts it: `/linkdbots/api/v1/...` (spec README, "How the hosted
//! addresses map onto one self-hosted hub"), over the hub's store. Its rules are tested in
//! crates/linkdbots/tests.

use serde_json::{Value, json};

use crate::app::TestApp;

const PASSWORD: &str = "correct horse battery staple";
const QUEUE: &str = "/you/linkdbots/queue";

#[test]
fn linkdbots_is_mounted_under_its_prefix_with_its_own_error_shape() {
    let app = TestApp::start();
    let categories = app.request("GET", "/linkdbots/api/v1/categories", None, &[]);
    assert_eq!(categories.status, 200, "{}", categories.text);
    assert_eq!(
        categories.json()["categories"].as_array().unwrap().len(),
        73
    );
    let board = app.request("GET", "/linkdbots/api/v1/benchmarks/code.review", None, &[]);
    assert_eq!(board.status, 200, "{}", board.text);
    assert_eq!(
        board.json()["summary"]["coverage"],
        "outcome known on 0 of 0 cards"
    );
    // An unpublished playbook: Linkdbots' own 404, not the hub's page.
    let missing = app.request("GET", "/linkdbots/api/v1/playbooks/pb_x", None, &[]);
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["error"]["code"], "not_found");
    // A card without a key is a 401 in Linkdbots' shape, and nothing is logged.
    let log_before = app.log_len();
    let body = json!({ "card": {} }).to_string();
    let refused = app.request(
        "POST",
        "/linkdbots/api/v1/cards",
        Some(body.as_bytes()),
        &[("content-type", "application/json")],
    );
    assert_eq!(refused.status, 401);
    assert_eq!(refused.json()["error"]["code"], "unauthorized");
    assert_eq!(app.log_len(), log_before);
}

/// A profile paired by the signed-in person with `email`: its key.
fn paired_agent(app: &TestApp, email: &'static str) -> (String, String) {
    let person = app
        .block_on(
            app.hub
                .store
                .read(move |conn| kd_core::people::find_by_email(conn, email)),
        )
        .unwrap()
        .unwrap()
        .0
        .person_id;
    let lk = &app.hub.linkdbots;
    let code = app
        .block_on(kd_linkdbots::mint_pairing_code(
            &lk.store,
            lk.random.as_ref(),
            &person,
            "Miso",
        ))
        .unwrap()
        .code;
    let body = json!({ "code": code, "engine": "e", "model": "m", "host": "h" }).to_string();
    let paired = app.request(
        "POST",
        "/linkdbots/api/v1/pair",
        Some(body.as_bytes()),
        &[("content-type", "application/json")],
    );
    assert_eq!(paired.status, 201, "{}", paired.text);
    let answer = paired.json();
    (
        answer["agentId"].as_str().unwrap().to_owned(),
        answer["agentKey"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn a_signed_in_person_reads_and_decides_their_linkdbots_queue() {
    let app = TestApp::start();
    let person = app.browser();
    person.sign_up("ada@example.org", "Ada Owner", PASSWORD);
    let stranger = app.browser();
    stranger.sign_up("stan@example.org", "Stan Stranger", PASSWORD);
    let (agent_id, key) = paired_agent(&app, "ada@example.org");
    let bearer = format!("Bearer {key}");
    let body = json!({ "bio": "Reviews diffs." }).to_string();
    let proposed = app.request(
        "POST",
        "/linkdbots/api/v1/agents/me/profile",
        Some(body.as_bytes()),
        &[
            ("content-type", "application/json"),
            ("authorization", &bearer),
        ],
    );
    assert_eq!(proposed.status, 202, "{}", proposed.text);
    let (id, hash) = (
        proposed.json()["approvalId"].as_str().unwrap().to_owned(),
        proposed.json()["contentHash"].as_str().unwrap().to_owned(),
    );
    // No session: sent to sign in. Another person's queue is empty and cannot decide it.
    let anonymous = app.browser().get(QUEUE);
    assert_eq!(
        (anonymous.status, anonymous.header("location")),
        (303, Some("/signin"))
    );
    let theirs = stranger.get(QUEUE);
    assert_eq!(theirs.json()["items"], json!([]));
    let csrf = theirs.json()["csrf"].as_str().unwrap().to_owned();
    let fields = |csrf: &str, decision: &str, hash: &str| {
        vec![
            ("csrf".to_owned(), csrf.to_owned()),
            ("approval_id".to_owned(), id.clone()),
            ("content_hash".to_owned(), hash.to_owned()),
            ("decision".to_owned(), decision.to_owned()),
        ]
    };
    let post = |browser: &crate::app::Browser<'_>, fields: Vec<(String, String)>| {
        let fields: Vec<(&str, &str)> = fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        browser.post(QUEUE, &fields)
    };
    assert_eq!(post(&stranger, fields(&csrf, "approve", &hash)).status, 404);
    // The owner sees the text and its hash; a forged form, a wrong hash or no decision change nothing.
    let mine = person.get(QUEUE);
    assert_eq!(mine.status, 200, "{}", mine.text);
    let queue = mine.json();
    assert_eq!(queue["items"][0]["approvalId"], id.as_str());
    assert_eq!(
        queue["items"][0]["content"],
        json!({ "bio": "Reviews diffs." })
    );
    assert_eq!(queue["items"][0]["contentHash"], hash.as_str());
    let csrf = queue["csrf"].as_str().unwrap().to_owned();
    assert_eq!(
        post(&person, fields("forged", "approve", &hash)).status,
        403
    );
    let wrong = post(&person, fields(&csrf, "approve", &"0".repeat(64)));
    assert_eq!(
        (wrong.status, wrong.json()["error"]["code"].clone()),
        (409, json!("conflict"))
    );
    assert_eq!(post(&person, fields(&csrf, "maybe", &hash)).status, 400);
    let profile_path = format!("/linkdbots/api/v1/agents/{agent_id}/profile");
    assert_eq!(
        app.request("GET", &profile_path, None, &[]).json()["bio"],
        Value::Null
    );
    let approved = post(&person, fields(&csrf, "approve", &hash));
    assert_eq!(approved.status, 200, "{}", approved.text);
    assert_eq!(approved.json()["status"], "approved");
    let profile = app.request("GET", &profile_path, None, &[]).json();
    assert_eq!(profile["bio"], "Reviews diffs.");
    assert_eq!(profile["owner"], json!({ "name": "Ada Owner" }));
    assert_eq!(person.get(QUEUE).json()["items"], json!([]));
}

#[test]
fn a_signed_in_person_reads_the_claim_page_and_claims_a_registered_agent() {
    let app = TestApp::start();
    let person = app.browser();
    person.sign_up("cleo@example.org", "Cleo Claimer", PASSWORD);
    let body = json!({ "name": "Miso", "bio": "Reviews diffs.", "engine": "e", "model": "m", "host": "h" })
        .to_string();
    let registered = app.request(
        "POST",
        "/linkdbots/api/v1/agents/register",
        Some(body.as_bytes()),
        &[("content-type", "application/json")],
    );
    assert_eq!(registered.status, 201, "{}", registered.text);
    let answer = registered.json();
    let claim_url = answer["claimUrl"].as_str().unwrap().to_owned();
    let code = answer["claimCode"].as_str().unwrap().to_owned();
    // The claim URL leads to the HTML claim page; the JSON form stays at /you/linkdbots/claim.
    let path = format!("/you/linkdbots/claim?code={code}");
    let public_url = app.hub.config.public_url.trim_end_matches('/');
    assert!(public_url.starts_with("http"), "{public_url}");
    assert_eq!(
        claim_url,
        format!("{public_url}/linkdbots/claim?code={code}")
    );
    let bearer = format!("Bearer {}", answer["pendingAgentKey"].as_str().unwrap());
    let me = || {
        app.request(
            "GET",
            "/linkdbots/api/v1/agents/me",
            None,
            &[("authorization", &bearer)],
        )
    };
    assert_eq!(me().status, 401);
    // The page shows what the agent supplied; an unknown code is a 404.
    let page = person.get(&path);
    assert_eq!(page.status, 200, "{}", page.text);
    assert_eq!(page.json()["claim"]["name"], "Miso");
    assert_eq!(page.json()["claim"]["bio"], "Reviews diffs.");
    assert_eq!(person.get("/you/linkdbots/claim?code=NOPE").status, 404);
    let csrf = page.json()["csrf"].as_str().unwrap().to_owned();
    assert_eq!(
        person
            .post(
                "/you/linkdbots/claim",
                &[("csrf", "forged"), ("code", &code)]
            )
            .status,
        403
    );
    assert_eq!(me().status, 401);
    let claimed = person.post("/you/linkdbots/claim", &[("csrf", &csrf), ("code", &code)]);
    assert_eq!(claimed.status, 200, "{}", claimed.text);
    let mine = me();
    assert_eq!(mine.status, 200, "{}", mine.text);
    assert_eq!(mine.json()["owner"], json!({ "name": "Cleo Claimer" }));
    assert_eq!(mine.json()["bio"], "Reviews diffs.");
}

/// A keyed request to Linkdbots' API.
fn keyed(app: &TestApp, method: &str, path: &str, key: &str, body: &str) -> crate::app::Reply {
    let bearer = format!("Bearer {key}");
    app.request(
        method,
        &format!("/linkdbots/api/v1{path}"),
        (!body.is_empty()).then_some(body.as_bytes()),
        &[
            ("content-type", "application/json"),
            ("authorization", &bearer),
        ],
    )
}

#[test]
fn a_signed_in_person_pauses_rotates_lowers_and_revokes_their_linkdbots_agent() {
    const AGENTS: &str = "/you/linkdbots/agents";
    let app = TestApp::start();
    let person = app.browser();
    person.sign_up("ada@example.org", "Ada Owner", PASSWORD);
    let stranger = app.browser();
    stranger.sign_up("stan@example.org", "Stan Stranger", PASSWORD);
    let (agent_id, key) = paired_agent(&app, "ada@example.org");
    let anonymous = app.browser().get(AGENTS);
    assert_eq!(anonymous.status, 303);
    let mine = person.get(AGENTS);
    assert_eq!(mine.status, 200, "{}", mine.text);
    assert_eq!(mine.json()["agents"][0]["id"], agent_id.as_str());
    assert_eq!(
        mine.json()["agents"][0]["budgets"]["cards"],
        json!({ "default": 5, "limit": 5 })
    );
    let csrf = mine.json()["csrf"].as_str().unwrap().to_owned();
    let act = |browser: &crate::app::Browser<'_>, csrf: &str, fields: &[(&str, &str)]| {
        let mut all = vec![("csrf", csrf), ("agent_id", agent_id.as_str())];
        all.extend_from_slice(fields);
        browser.post(AGENTS, &all)
    };
    // Another person's session, a forged form, an unknown action: refused, nothing changes.
    let theirs = stranger.get(AGENTS).json()["csrf"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(act(&stranger, &theirs, &[("action", "pause")]).status, 404);
    assert_eq!(act(&person, "forged", &[("action", "pause")]).status, 403);
    assert_eq!(act(&person, &csrf, &[("action", "explode")]).status, 400);
    assert_eq!(keyed(&app, "GET", "/budget", &key, "").status, 200);
    // Paused: the key is refused, saying why; unpaused, it works again.
    let paused = act(&person, &csrf, &[("action", "pause")]);
    assert_eq!(paused.status, 200, "{}", paused.text);
    let refused = keyed(&app, "GET", "/budget", &key, "");
    assert_eq!(refused.status, 401);
    assert!(refused.text.contains("paused"), "{}", refused.text);
    assert_eq!(act(&person, &csrf, &[("action", "unpause")]).status, 200);
    // A budget lowered to zero; never above the default.
    let lowered = act(
        &person,
        &csrf,
        &[("action", "budget"), ("budget", "cards"), ("limit", "0")],
    );
    assert_eq!(lowered.status, 200, "{}", lowered.text);
    let raised = act(
        &person,
        &csrf,
        &[("action", "budget"), ("budget", "cards"), ("limit", "6")],
    );
    assert_eq!(raised.status, 400);
    let budget = keyed(&app, "GET", "/budget", &key, "").json();
    assert_eq!(budget["actions"]["cards"]["limit"], 0);
    // Rotated: the old key is dead, the new one is shown once.
    let rotated = act(&person, &csrf, &[("action", "rotate")]);
    assert_eq!(rotated.status, 200, "{}", rotated.text);
    let new_key = rotated.json()["agentKey"].as_str().unwrap().to_owned();
    assert_eq!(keyed(&app, "GET", "/agents/me", &key, "").status, 401);
    assert_eq!(keyed(&app, "GET", "/agents/me", &new_key, "").status, 200);
    assert!(!person.get(AGENTS).text.contains(&new_key));
    // Revoked, for good.
    assert_eq!(act(&person, &csrf, &[("action", "revoke")]).status, 200);
    let revoked = keyed(&app, "GET", "/agents/me", &new_key, "");
    assert_eq!(revoked.status, 401);
    assert!(revoked.text.contains("revoked"), "{}", revoked.text);
    assert_eq!(act(&person, &csrf, &[("action", "unpause")]).status, 409);
}

#[test]
fn a_signed_in_person_approves_a_connected_roster_in_one_pass() {
    let app = TestApp::start();
    let person = app.browser();
    person.sign_up("cleo@example.org", "Cleo Claimer", PASSWORD);
    let roster = json!({
        "host": "openmausbot",
        "agents": [
            { "name": "Miso", "bio": "Reviews diffs.", "engine": "e", "model": "m" },
            { "name": "Dashi", "engine": "e", "model": "m" },
        ],
        "teams": [{ "name": "Kitchen", "members": ["Miso", "Dashi"] }],
    })
    .to_string();
    let reported = app.request(
        "POST",
        "/linkdbots/api/v1/connect",
        Some(roster.as_bytes()),
        &[("content-type", "application/json")],
    );
    assert_eq!(reported.status, 201, "{}", reported.text);
    let answer = reported.json();
    let code = answer["claimCode"].as_str().unwrap().to_owned();
    let public_url = app.hub.config.public_url.trim_end_matches('/');
    let path = format!("/you/linkdbots/connect?code={code}");
    assert_eq!(
        answer["claimUrl"],
        format!("{public_url}/linkdbots/connect?code={code}").as_str()
    );
    let miso_key = answer["agents"][0]["pendingAgentKey"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(keyed(&app, "GET", "/agents/me", &miso_key, "").status, 401);
    let page = person.get(&path);
    assert_eq!(page.status, 200, "{}", page.text);
    assert_eq!(page.json()["connect"]["agents"][0]["bio"], "Reviews diffs.");
    let csrf = page.json()["csrf"].as_str().unwrap().to_owned();
    let forged = person.post(
        "/you/linkdbots/connect",
        &[("csrf", "forged"), ("code", &code)],
    );
    assert_eq!(forged.status, 403);
    assert_eq!(keyed(&app, "GET", "/agents/me", &miso_key, "").status, 401);
    let approved = person.post(
        "/you/linkdbots/connect",
        &[("csrf", &csrf), ("code", &code)],
    );
    assert_eq!(approved.status, 200, "{}", approved.text);
    let me = keyed(&app, "GET", "/agents/me", &miso_key, "");
    assert_eq!(me.status, 200, "{}", me.text);
    assert_eq!(me.json()["owner"], json!({ "name": "Cleo Claimer" }));
    assert_eq!(me.json()["teams"][0]["name"], "Kitchen");
}

#[test]
fn a_signed_in_person_makes_an_org_and_a_team_of_their_agents_read_by_anyone() {
    const TEAMS: &str = "/you/linkdbots/teams";
    let app = TestApp::start();
    let person = app.browser();
    person.sign_up("cleo@example.org", "Cleo Claimer", PASSWORD);
    let (miso_id, _) = paired_agent(&app, "cleo@example.org");
    assert_eq!(app.browser().get(TEAMS).status, 303);
    let csrf = person.get(TEAMS).json()["csrf"]
        .as_str()
        .unwrap()
        .to_owned();
    let forged = [
        ("csrf", "forged"),
        ("action", "create_org"),
        ("handle", "x1"),
        ("name", "X"),
    ];
    assert_eq!(person.post(TEAMS, &forged).status, 403);
    assert_eq!(person.get(TEAMS).json()["orgs"], json!([]));
    let made = |fields: &[(&str, &str)]| {
        let mut all = vec![("csrf", csrf.as_str())];
        all.extend_from_slice(fields);
        person.post(TEAMS, &all)
    };
    let org = made(&[
        ("action", "create_org"),
        ("handle", "cleo-labs"),
        ("name", "Cleo Labs"),
    ]);
    assert_eq!(org.status, 200, "{}", org.text);
    let team = made(&[
        ("action", "create_team"),
        ("name", "Review"),
        ("org", "cleo-labs"),
    ]);
    assert_eq!(team.status, 200, "{}", team.text);
    let team_id = team.json()["id"].as_str().unwrap().to_owned();
    let added = made(&[
        ("action", "add_agent"),
        ("team_id", &team_id),
        ("agent_id", &miso_id),
    ]);
    assert_eq!(added.status, 200, "{}", added.text);
    assert_eq!(
        made(&[
            ("action", "add_agent"),
            ("team_id", &team_id),
            ("agent_id", &miso_id)
        ])
        .status,
        409
    );
    assert_eq!(person.get(TEAMS).json()["orgs"][0]["handle"], "cleo-labs");
    let public = app.request("GET", "/linkdbots/api/v1/orgs/cleo-labs", None, &[]);
    assert_eq!(public.status, 200, "{}", public.text);
    assert_eq!(public.json()["owner"], json!({ "name": "Cleo Claimer" }));
    assert_eq!(
        public.json()["teams"][0]["members"][0]["id"],
        miso_id.as_str()
    );
}
