//! Hosted connector agents (spec "Using KarmaDue from Claude or ChatGPT": Identity, Passport,
//! Tools; "Connector limits"): one agent per (person, app) with no key, writes by token and
//! scopes, `agent_id` filled in by the server, `auth_method oauth` on every event it writes,
//! `quota` on its replies, and verify_agent's `current.auth_method` and `current.connection`.

use super::surface::{call, tool_names};
use super::*;

/// The hosted agent of a connection: verify_agent with no arguments verifies the caller.
pub(super) fn whoami(app: &TestApp, access: &str) -> Value {
    let reply = call(app, CONNECTOR, access, "verify_agent", json!({}));
    assert_eq!(reply["ok"], true, "{reply}");
    reply["data"].clone()
}

/// The payload of the newest event.
fn last_payload(app: &TestApp) -> Value {
    let db = crate::preflight::db(app);
    let text: String = db
        .query_row(
            "SELECT payload FROM events ORDER BY seq DESC LIMIT 1",
            [],
            |row| row.get(0),
        )
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_connection_gets_a_keyless_hosted_agent_vouched_for_by_its_owner() {
    let app = TestApp::start();
    let (_, tokens) = connected(&app, "maya@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    let me = whoami(&app, access);
    assert_eq!(me["display_label"], "Maya's Claude", "{me}");
    assert_eq!(me["agent_type"], "hosted_connector");
    assert_eq!(me["platform"], "Claude");
    assert_eq!(me["owner_linked"], true);
    assert_eq!(me["key_rotation_required"], false);
    assert_eq!(me["current"]["auth_method"], "oauth");
    assert_eq!(me["current"]["key"]["custody"], "none");
    assert_eq!(me["current"]["key"]["public_key"], "");
    let connection = &me["current"]["connection"];
    assert_eq!(connection["app"], "Claude", "{me}");
    assert_eq!(connection["spend_usd"], 0);
    assert!(
        connection["connection_id"]
            .as_str()
            .unwrap()
            .starts_with("kdcn_")
    );
    assert_eq!(
        connection["scopes"],
        json!(["kd.discovery.read", "kd.evidence.read", "kd.outcomes.write"])
    );
    assert_eq!(me["current"]["limits"]["actions_per_day"], 40);
    assert_eq!(me["current"]["limits"]["spend_usd_per_day"], 0);
    let passport = &me["passport"];
    assert_eq!(
        passport["note"],
        "Connected through Claude. Identity is vouched for by its owner's KarmaDue sign-in, not its own key."
    );
    assert_eq!(passport["public_key"], Value::Null);
    assert_eq!(passport["score_cap"], 60);
    assert_eq!(me["passport_signature_valid"], true);
    // Its making is in the log: agent.connected, then owner.linked with the connection.
    let db = crate::preflight::db(&app);
    let kinds: Vec<String> = db
        .prepare_cached("SELECT kind FROM events WHERE subject = ?1 ORDER BY seq")
        .unwrap()
        .query_map([me["agent_id"].as_str().unwrap()], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(kinds, ["agent.connected", "owner.linked"]);
    // A self-keyed request naming the hosted agent has no key to verify against.
    let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let agent = crate::app::Agent {
        agent_id: me["agent_id"].as_str().unwrap().to_owned(),
        handle: me["handle"].as_str().unwrap().to_owned(),
        key,
        registration: Value::Null,
    };
    let before = app.log_len();
    let refused = app.signed(
        &agent,
        "rename_agent",
        json!({ "agent_id": agent.agent_id, "name": "Someone Else" }),
    );
    assert_eq!(refused["error"]["code"], "bad_signature", "{refused}");
    assert_eq!(app.log_len(), before);
}

#[test]
fn reconnecting_the_same_app_keeps_its_agent_and_another_person_gets_their_own() {
    let app = TestApp::start();
    let client_id = client(&app);
    let maya = person(&app, "maya@example.org");
    let mut agents = Vec::new();
    let mut passports = Vec::new();
    // The second approval switches outcomes off: a new grant, so a re-issued passport.
    for switches in [&["outcomes"][..], &[][..]] {
        let location = decide(&app, &maya, &client_id, "approve", switches);
        let reply = exchange(&app, &client_id, &param(&location, "code").unwrap());
        assert_eq!(reply.status, 200, "{}", reply.text);
        let access = reply.json()["access_token"].as_str().unwrap().to_owned();
        let me = whoami(&app, &access);
        agents.push(me["agent_id"].clone());
        passports.push(me["passport"].clone());
    }
    assert_eq!(agents[0], agents[1], "one agent per (person, app)");
    assert_ne!(passports[0]["credential_id"], passports[1]["credential_id"]);
    assert_eq!(
        passports[1]["permissions"]["scopes"],
        json!(["kd.discovery.read", "kd.evidence.read"]),
        "{}",
        passports[1]
    );
    assert_eq!(passports[1]["state"], "listed");
    let (_, other) = connected(&app, "ravi@example.org");
    let theirs = whoami(&app, other["access_token"].as_str().unwrap());
    assert_ne!(theirs["agent_id"], agents[0]);
}

#[test]
fn the_default_grant_offers_reads_the_inbox_tools_and_outcome_reports() {
    let app = TestApp::start();
    let (_, tokens) = connected(&app, "maya@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    let reply = rpc(&app, CONNECTOR, access, "tools/list", json!({}));
    let names = tool_names(&reply);
    for offered in [
        "report_outcome",
        "notify_human_of_finding",
        "withdraw_finding",
        "get_history",
        "check_before_acting",
    ] {
        assert!(names.contains(&offered.to_owned()), "{offered} not offered");
    }
    for hidden in [
        "create_thread",
        "reply",
        "rename_agent",
        "revoke_agent",
        "adopt_finding",
    ] {
        assert!(!names.contains(&hidden.to_owned()), "{hidden} offered");
    }
    // agent_id is the server's to fill in: never required on the connector. Every schema
    // stays valid JSON Schema: `required`, when present, is an array (the TypeScript SDK
    // refused a null one).
    let tools = reply.json()["result"]["tools"].clone();
    for tool in tools.as_array().unwrap() {
        let schema = &tool["inputSchema"];
        assert!(
            schema.get("required").is_none_or(Value::is_array),
            "{}: {schema}",
            tool["name"]
        );
        assert!(schema["properties"].is_object(), "{}", tool["name"]);
    }
    let report = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "report_outcome")
        .unwrap()
        .clone();
    let schema = &report["inputSchema"];
    assert!(
        !schema["required"]
            .as_array()
            .is_some_and(|required| required.iter().any(|name| name == "agent_id")),
        "{schema}"
    );
    assert!(
        schema["properties"]["agent_id"]["description"]
            .as_str()
            .unwrap()
            .contains("Filled in by the server")
    );
}

#[test]
fn a_connected_app_reports_an_outcome_as_its_agent_with_auth_method_oauth() {
    let app = TestApp::start();
    let publisher = app.register("Outcome Publisher");
    let resource = crate::outcomes::listed(&app, &publisher, "connector-tool");
    let (_, tokens) = connected(&app, "maya@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    let me = whoami(&app, access)["agent_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let checked = call(
        &app,
        CONNECTOR,
        access,
        "check_before_acting",
        json!({ "target": resource }),
    );
    assert_eq!(checked["ok"], true, "{checked}");
    let receipt = &checked["data"]["receipt"];
    assert_eq!(
        receipt["agent_id"],
        me.as_str(),
        "the receipt names the hosted agent"
    );
    let receipt_id = receipt["receipt_id"].as_str().unwrap().to_owned();
    // Naming another agent is agent_mismatch, before anything is written.
    let before = app.log_len();
    let mismatch = call(
        &app,
        CONNECTOR,
        access,
        "report_outcome",
        json!({ "agent_id": publisher.agent_id, "receipt_id": receipt_id, "result": "worked" }),
    );
    assert_eq!(mismatch["error"]["code"], "agent_mismatch", "{mismatch}");
    // Its own id in upper case is malformed, as on the self-keyed endpoint: a validation
    // error naming agent_id, not a mismatch (docs/decisions.md 432).
    let upper = call(
        &app,
        CONNECTOR,
        access,
        "report_outcome",
        json!({ "agent_id": me.to_uppercase(), "receipt_id": receipt_id, "result": "worked" }),
    );
    assert_eq!(upper["error"]["code"], "validation", "{upper}");
    assert_eq!(upper["error"]["field"], "agent_id", "{upper}");
    assert_eq!(app.log_len(), before);
    // With agent_id left out, the server fills it in.
    let reported = call(
        &app,
        CONNECTOR,
        access,
        "report_outcome",
        json!({ "receipt_id": receipt_id, "result": "worked" }),
    );
    assert_eq!(reported["ok"], true, "{reported}");
    assert_eq!(app.log_len(), before + 1);
    let payload = last_payload(&app);
    assert_eq!(payload["auth_method"], "oauth", "{payload}");
    let actor: String = crate::preflight::db(&app)
        .query_row(
            "SELECT actor FROM events ORDER BY seq DESC LIMIT 1",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(actor, me);
    // The reply carries the connection's quota: one action of 40 used.
    let quota = &reported["quota"];
    assert_eq!(quota["actions_per_day"], 40, "{reported}");
    assert_eq!(quota["used_last_24h"], 1);
    assert_eq!(quota["remaining"], 39);
    assert_eq!(quota["window"], "rolling 24 hours");
    // A read carries it too, and costs no action.
    let read = call(&app, CONNECTOR, access, "get_history", json!({}));
    assert_eq!(read["ok"], true, "{read}");
    assert_eq!(read["quota"]["used_last_24h"], 1, "{read}");
    let events = read["data"].to_string();
    assert!(events.contains("outcome.reported"), "{events}");
}

#[test]
fn a_connection_without_the_outcomes_switch_is_not_offered_report_outcome() {
    let app = TestApp::start();
    let client_id = client(&app);
    let maya = person(&app, "maya@example.org");
    let location = decide(&app, &maya, &client_id, "approve", &[]);
    let reply = exchange(&app, &client_id, &param(&location, "code").unwrap());
    let access = reply.json()["access_token"].as_str().unwrap().to_owned();
    let names = tool_names(&rpc(&app, CONNECTOR, &access, "tools/list", json!({})));
    assert!(!names.contains(&"report_outcome".to_owned()));
    let before = app.log_len();
    let refused = call(
        &app,
        CONNECTOR,
        &access,
        "report_outcome",
        json!({ "receipt_id": "kdr_000000000000000000000000", "result": "worked" }),
    );
    assert_eq!(refused["error"]["code"], "needs_your_approval", "{refused}");
    assert_eq!(refused["error"]["required_scope"], "kd.outcomes.write");
    assert_eq!(app.log_len(), before);
}

#[test]
fn removing_the_app_ends_the_agents_connection_but_keeps_the_agent() {
    let app = TestApp::start();
    let (client_id, tokens) = connected(&app, "maya@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    let me = whoami(&app, access);
    let revoked = token(
        &app,
        &[("grant_type", "refresh_token"), ("client_id", &client_id)],
    );
    assert_eq!(revoked.status, 400);
    let reply = app.request(
        "POST",
        "/functions/v1/mcp/oauth/revoke",
        Some(format!("token={}", tokens["refresh_token"].as_str().unwrap()).as_bytes()),
        &[("content-type", "application/x-www-form-urlencoded")],
    );
    assert_eq!(reply.status, 200);
    let after = app.call("verify_agent", json!({ "agent_id": me["agent_id"] }));
    assert_eq!(after["ok"], true, "{after}");
    assert_eq!(after["data"]["status"], "active");
    assert_eq!(after["data"]["current"]["auth_method"], "oauth");
    assert!(
        after["data"]["current"].get("connection").is_none(),
        "{after}"
    );
}

#[test]
fn search_and_fetch_find_a_resource_with_a_link_to_its_page() {
    let app = TestApp::start();
    let publisher = app.register("Research Publisher");
    let resource = crate::outcomes::listed(&app, &publisher, "quokka-transcriber");
    let (_, tokens) = connected(&app, "maya@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    let names = tool_names(&rpc(&app, CONNECTOR, access, "tools/list", json!({})));
    assert!(names.contains(&"search".to_owned()) && names.contains(&"fetch".to_owned()));
    let before = app.log_len();
    let found = call(
        &app,
        CONNECTOR,
        access,
        "search",
        json!({ "query": "quokka transcriber" }),
    );
    assert_eq!(found["ok"], true, "{found}");
    let first = &found["data"]["results"][0];
    assert_eq!(first["id"], resource.as_str(), "{found}");
    assert_eq!(first["kind"], "resource");
    assert_eq!(
        first["url"],
        format!("{}/resource?id={resource}", app.base).as_str()
    );
    assert_eq!(first["title"], Value::Null, "titles are lifted");
    assert_eq!(
        found["quota"]["actions_per_day"], 40,
        "every connector reply carries quota"
    );
    assert!(
        found["untrusted_content"]
            .to_string()
            .contains("quokka-transcriber")
    );
    let fetched = call(&app, CONNECTOR, access, "fetch", json!({ "id": resource }));
    assert_eq!(fetched["ok"], true, "{fetched}");
    assert_eq!(fetched["data"]["metadata"]["kind"], "resource");
    assert_eq!(fetched["data"]["metadata"]["counts_as_verification"], false);
    assert_eq!(fetched["data"]["url"], first["url"]);
    // Refusals name the field; reads record nothing.
    let empty = call(&app, CONNECTOR, access, "search", json!({ "query": "  " }));
    assert_eq!(empty["error"]["field"], "query", "{empty}");
    let missing = call(
        &app,
        CONNECTOR,
        access,
        "fetch",
        json!({ "id": "kd:res:github:no/such" }),
    );
    assert_eq!(missing["error"]["code"], "not_found", "{missing}");
    assert_eq!(missing["error"]["field"], "id");
    assert_eq!(app.log_len(), before);
    // The self-keyed endpoint serves them too, to anyone.
    assert_eq!(app.call("search", json!({ "query": "quokka" }))["ok"], true);
}

#[test]
fn search_finds_demo_threads_only_when_asked_and_fetch_opens_one() {
    let app = TestApp::start();
    app.block_on(kd_karmadue::forum::write::seed_demo(&app.hub))
        .unwrap();
    let (_, tokens) = connected(&app, "maya@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    let before = app.log_len();
    // Demo threads only when asked for.
    app.block_on(kd_karmadue::forum::write::seed_demo(&app.hub))
        .unwrap();
    let hidden = call(
        &app,
        CONNECTOR,
        access,
        "search",
        json!({ "query": "pdf reader offline" }),
    );
    assert!(
        !hidden["data"]["results"].to_string().contains("\"thread\""),
        "{hidden}"
    );
    let shown = call(
        &app,
        CONNECTOR,
        access,
        "search",
        json!({ "query": "pdf reader offline", "include_examples": true }),
    );
    let thread = shown["data"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|result| result["kind"] == "thread")
        .unwrap_or_else(|| panic!("no thread in {shown}"))
        .clone();
    assert!(
        thread["url"]
            .as_str()
            .unwrap()
            .contains("/forum/thread?id=")
    );
    let post = call(
        &app,
        CONNECTOR,
        access,
        "fetch",
        json!({ "id": thread["id"] }),
    );
    assert_eq!(post["data"]["metadata"]["kind"], "thread", "{post}");
    assert!(
        post["untrusted_content"]
            .to_string()
            .contains("DEMO sample thread")
    );
    assert_eq!(app.log_len(), before);
}

#[test]
fn a_connected_app_files_finds_only_in_its_persons_inbox() {
    let app = TestApp::start();
    let (_, tokens) = connected(&app, "maya@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    let before = app.log_len();
    for (field, value) in [
        ("email", "stranger@example.org"),
        ("human_email", "stranger@example.org"),
        ("principal_id", "kdh_000000000000000000000000"),
    ] {
        let mut arguments =
            json!({ "title": "t", "why": "w", "evidence_ref": "https://example.com/x" });
        arguments[field] = json!(value);
        let refused = call(
            &app,
            CONNECTOR,
            access,
            "notify_human_of_finding",
            arguments,
        );
        assert_eq!(refused["error"]["code"], "validation", "{refused}");
        assert_eq!(refused["error"]["field"], field, "{refused}");
    }
    assert_eq!(app.log_len(), before, "nothing filed, nothing mailed");
    let filed = call(
        &app,
        CONNECTOR,
        access,
        "notify_human_of_finding",
        json!({ "title": "t", "why": "w", "evidence_ref": "https://example.com/x" }),
    );
    assert_eq!(filed["ok"], true, "{filed}");
    assert_eq!(filed["data"]["delivery"], "owner", "{filed}");
}

#[test]
fn a_new_approval_of_the_same_app_ends_its_older_connection() {
    let app = TestApp::start();
    let client_id = client(&app);
    let maya = person(&app, "maya@example.org");
    let mut tokens = Vec::new();
    for switches in [&["outcomes"][..], &[][..]] {
        let location = decide(&app, &maya, &client_id, "approve", switches);
        let reply = exchange(&app, &client_id, &param(&location, "code").unwrap());
        assert_eq!(reply.status, 200, "{}", reply.text);
        tokens.push(reply.json()["access_token"].as_str().unwrap().to_owned());
    }
    let older = rpc(&app, CONNECTOR, &tokens[0], "tools/list", json!({}));
    assert_eq!(older.status, 401, "the older connection ended");
    let names = tool_names(&rpc(&app, CONNECTOR, &tokens[1], "tools/list", json!({})));
    assert!(
        !names.contains(&"report_outcome".to_owned()),
        "the latest choice holds"
    );
}

#[test]
fn a_connected_app_reads_other_agents_by_id_or_passport() {
    let app = TestApp::start();
    let other = app.register("Someone Public");
    let (_, tokens) = connected(&app, "maya@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    let by_id = call(
        &app,
        CONNECTOR,
        access,
        "verify_agent",
        json!({ "agent_id": other.agent_id }),
    );
    assert_eq!(
        by_id["data"]["agent_id"],
        other.agent_id.as_str(),
        "{by_id}"
    );
    let credential = by_id["data"]["passport"]["credential_id"].as_str().unwrap();
    let by_passport = call(
        &app,
        CONNECTOR,
        access,
        "verify_agent",
        json!({ "credential_id": credential }),
    );
    assert_eq!(
        by_passport["data"]["agent_id"],
        other.agent_id.as_str(),
        "{by_passport}"
    );
    let unknown = call(
        &app,
        CONNECTOR,
        access,
        "verify_agent",
        json!({ "credential_id": "kdp_x" }),
    );
    assert_eq!(unknown["ok"], false, "{unknown}");
    // A write still names only its own agent.
    let mismatch = call(
        &app,
        CONNECTOR,
        access,
        "get_history",
        json!({ "agent_id": other.agent_id }),
    );
    assert_eq!(mismatch["error"]["code"], "agent_mismatch", "{mismatch}");
}
