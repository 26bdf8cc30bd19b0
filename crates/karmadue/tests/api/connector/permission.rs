//! `/oauth/add-permission?agent=&scope=` (permissions document "Connector permissions"): the
//! approve_url of a needs_your_approval refusal, a consent screen for one more permission, the
//! connection's scopes growing only with a consent record.

use super::surface::{call, tool_names};
use super::*;

/// Maya's browser and her connection's access token (outcomes on, listings off).
fn maya(app: &TestApp) -> (Browser<'_>, String) {
    let client_id = client(app);
    let browser = person(app, "maya@example.org");
    let location = decide(app, &browser, &client_id, "approve", &["outcomes"]);
    let reply = exchange(app, &client_id, &param(&location, "code").unwrap());
    assert_eq!(reply.status, 200, "{}", reply.text);
    let access = reply.json()["access_token"].as_str().unwrap().to_owned();
    (browser, access)
}

#[test]
fn a_refused_write_names_the_screen_that_adds_its_permission_and_approving_adds_it() {
    let app = TestApp::start();
    let (browser, access) = maya(&app);
    let logged = app.log_len();
    let refused = call(&app, CONNECTOR, &access, "create_thread", json!({}));
    assert_eq!(refused["error"]["code"], "needs_your_approval", "{refused}");
    assert_eq!(app.log_len(), logged);
    let me = call(&app, CONNECTOR, &access, "verify_agent", json!({}))["data"]["agent_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let approve_url = asks_for_a_permission(&app, &access, &refused, &me);
    let path = approve_url.strip_prefix(&app.base).unwrap();
    // A visitor signs in first and comes back.
    let visitor = app.browser().get(path);
    assert_eq!(visitor.status, 303);
    assert_eq!(
        visitor.header("location").unwrap(),
        format!("/signin?next={}", encode(path))
    );
    let screen = browser.get(path);
    assert_eq!(screen.status, 200, "{}", screen.text);
    assert!(screen.text.contains("Add a permission"), "{}", screen.text);
    assert!(
        screen
            .text
            .contains("Post offers, requests, forum threads and replies")
    );
    let first = first_passport(&app, &access);
    let before = app.log_len();
    let csrf = hidden(&screen.text, "csrf");
    let approve = |decision: &str| {
        browser.post(
            "/oauth/add-permission",
            &[
                ("csrf", csrf.as_str()),
                ("agent", me.as_str()),
                ("scope", "kd.listings.write"),
                ("decision", decision),
            ],
        )
    };
    let denied = approve("deny");
    assert!(denied.text.contains("Nothing changed"), "{}", denied.text);
    assert_eq!(app.log_len(), before, "a denial changes nothing");
    let added = approve("approve");
    assert_eq!(added.status, 200, "{}", added.text);
    assert!(added.text.contains("Permission added"), "{}", added.text);
    assert_eq!(
        app.log_len(),
        before + 2,
        "owner.linked with the new grant, agent.passport_reissued"
    );
    // The same token now holds it.
    let names = tool_names(&rpc(&app, CONNECTOR, &access, "tools/list", json!({})));
    assert!(names.contains(&"create_thread".to_owned()), "{names:?}");
    posts_a_thread(&app, &access);
    let next = call(&app, CONNECTOR, &access, "verify_agent", json!({}))["next_unlock"].clone();
    assert_eq!(next["permission"], "kd.proposals.write", "{next}");
    let me_now = call(&app, CONNECTOR, &access, "verify_agent", json!({}));
    assert_eq!(
        me_now["data"]["current"]["connection"]["scopes"],
        json!([
            "kd.discovery.read",
            "kd.evidence.read",
            "kd.outcomes.write",
            "kd.listings.write"
        ]),
        "{me_now}"
    );
    assert_eq!(
        me_now["data"]["current"]["scopes"],
        me_now["data"]["current"]["connection"]["scopes"]
    );
    let reissued = assert_reissued(&app, &access, &first, &me_now);
    // Approving again adds nothing and re-issues nothing.
    assert!(approve("approve").text.contains("Permission added"));
    assert_eq!(app.log_len(), before + 3, "the thread, and nothing more");
    let same =
        call(&app, CONNECTOR, &access, "verify_agent", json!({}))["data"]["passport"].clone();
    assert_eq!(same["credential_id"], reissued["credential_id"]);
}

/// The refusal's approve_url, the add-one-permission screen for kd.listings.write. The refusal
/// stands for the hosted agent, whose next unlock is a permission its person approves, never
/// the admission test (decision 428); a read's reply says the same.
fn asks_for_a_permission(app: &TestApp, access: &str, refused: &Value, me: &str) -> String {
    let approve_url = refused["error"]["approve_url"].as_str().unwrap().to_owned();
    assert_eq!(
        approve_url,
        format!(
            "{}/oauth/add-permission?agent={me}&scope=kd.listings.write",
            app.base
        )
    );
    assert_eq!(refused["tier"]["tier"], "registered", "{refused}");
    assert_eq!(refused["tier"]["per"], "agent");
    assert_eq!(refused["next_unlock"]["permission"], "kd.listings.write");
    assert_eq!(refused["next_unlock"]["approve_url"], approve_url.as_str());
    assert_eq!(
        refused["next_unlock"]["not_yet_approved"],
        json!(["kd.listings.write", "kd.proposals.write"])
    );
    assert!(
        !refused.to_string().contains("start_admission_test"),
        "{refused}"
    );
    let read = call(app, CONNECTOR, access, "verify_agent", json!({}));
    assert_eq!(read["next_unlock"], refused["next_unlock"], "{read}");
    // get_standing's own next_unlock says the same, anonymously too.
    let standing = call(app, CONNECTOR, access, "get_standing", json!({}));
    assert_eq!(
        standing["data"]["next_unlock"], refused["next_unlock"],
        "{standing}"
    );
    let public = app.call("get_standing", json!({ "agent_id": me }));
    assert_eq!(
        public["data"]["next_unlock"], refused["next_unlock"],
        "{public}"
    );
    approve_url
}

/// The approved kd.listings.write stands in for the admission stamp the hosted agent never
/// has (decision 409): the app posts a thread.
fn posts_a_thread(app: &TestApp, access: &str) {
    let before = app.log_len();
    let arguments =
        json!({ "topic": "tools", "title": "Asked by Claude", "body": "Which runner do you use?" });
    let posted = call(app, CONNECTOR, access, "create_thread", arguments);
    assert_eq!(posted["ok"], true, "{posted}");
    assert_eq!(app.log_len(), before + 1);
}

/// The connection's first passport: a connector passport stating the approved grant.
fn first_passport(app: &TestApp, access: &str) -> Value {
    let first = call(app, CONNECTOR, access, "verify_agent", json!({}))["data"]["passport"].clone();
    assert_eq!(first["recipe"], "kd-connector-passport-v1", "{first}");
    assert_eq!(
        first["permissions"]["scopes"],
        json!(["kd.discovery.read", "kd.evidence.read", "kd.outcomes.write"])
    );
    first
}

/// The passport after a permission was added: a new id stating the new grant (nine lines,
/// $0, 40 actions), verifying, and the first one superseded. Answers the new passport.
fn assert_reissued(app: &TestApp, access: &str, first: &Value, me_now: &Value) -> Value {
    // The signed passport was re-issued to state the new grant; the old one is superseded.
    let reissued = &me_now["data"]["passport"];
    assert_eq!(me_now["data"]["passport_signature_valid"], true, "{me_now}");
    assert_ne!(reissued["credential_id"], first["credential_id"]);
    assert_eq!(
        reissued["permissions"]["scopes"],
        me_now["data"]["current"]["connection"]["scopes"]
    );
    assert_eq!(
        reissued["permissions"]["connection_id"],
        me_now["data"]["current"]["connection"]["connection_id"]
    );
    let lines: Vec<&str> = reissued["signed_text"]
        .as_str()
        .unwrap()
        .split('\n')
        .collect();
    assert_eq!(lines.len(), 9);
    assert_eq!(
        lines[5],
        "kd.discovery.read kd.evidence.read kd.outcomes.write kd.listings.write"
    );
    assert_eq!((lines[6], lines[7]), ("0", "40"));
    let old = call(
        app,
        CONNECTOR,
        access,
        "get_receipt",
        json!({ "receipt_id": first["credential_id"] }),
    );
    assert_eq!(old["data"]["state"], "superseded", "{old}");
    reissued.clone()
}

#[test]
fn only_the_owner_may_add_and_only_a_scope_an_app_may_hold() {
    let app = TestApp::start();
    let (browser, access) = maya(&app);
    let me = call(&app, CONNECTOR, &access, "verify_agent", json!({}))["data"]["agent_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let other = person(&app, "ravi@example.org");
    let before = app.log_len();
    let theirs = other.get(&format!(
        "/oauth/add-permission?agent={me}&scope=kd.listings.write"
    ));
    assert_eq!(theirs.status, 400);
    assert!(
        theirs
            .text
            .contains("None of your connected apps writes as this agent"),
        "{}",
        theirs.text
    );
    let screen = browser.get(&format!(
        "/oauth/add-permission?agent={me}&scope=kd.listings.write"
    ));
    let csrf = hidden(&screen.text, "csrf");
    for scope in ["kd.self_keyed", "kd.jobs.request", "kd.discovery.read", ""] {
        let page = browser.get(&format!("/oauth/add-permission?agent={me}&scope={scope}"));
        assert_eq!(page.status, 400, "{scope}");
        let posted = browser.post(
            "/oauth/add-permission",
            &[
                ("csrf", csrf.as_str()),
                ("agent", me.as_str()),
                ("scope", scope),
                ("decision", "approve"),
            ],
        );
        assert_eq!(posted.status, 400, "{scope}: {}", posted.text);
    }
    let forged = browser.post(
        "/oauth/add-permission",
        &[
            ("csrf", "not-the-token"),
            ("agent", me.as_str()),
            ("scope", "kd.listings.write"),
            ("decision", "approve"),
        ],
    );
    assert_eq!(forged.status, 403);
    assert_eq!(app.log_len(), before, "no refusal changed anything");
    // The guard: a connection's scopes grow only with a consent record for that scope.
    let db = crate::preflight::db(&app);
    let connection: String = db
        .query_row(
            "SELECT connection_id FROM oauth_connections WHERE agent_id = ?1",
            [&me],
            |row| row.get(0),
        )
        .unwrap();
    let unguarded = kd_karmadue::connector::store::add_scope(
        &db,
        &connection,
        "kd.discovery.read kd.evidence.read kd.outcomes.write kd.proposals.write",
        "kdcs_000000000000000000000000",
        "kd.proposals.write",
    )
    .unwrap();
    assert!(!unguarded, "no consent record, no change");
    let scope: String = db
        .query_row(
            "SELECT scope FROM oauth_connections WHERE connection_id = ?1",
            [&connection],
            |row| row.get(0),
        )
        .unwrap();
    assert!(!scope.contains("kd.proposals.write"), "{scope}");
}
