//! Findings: open findings and claim URLs, withdrawal, owners' inboxes, the public cache.

use super::*;

fn path_of(url: &str, app: &TestApp) -> String {
    url.strip_prefix(&app.hub.config.public_url)
        .unwrap()
        .to_owned()
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario: each step acts on the state the step before it left"
)]
fn an_open_finding_has_an_absolute_claim_url_that_a_signed_in_person_adopts_into_their_inbox() {
    let app = TestApp::start();
    let agent = app.register("Finder Agent");
    let before = app.log_len();
    let filed = finding(&app, &agent, json!({}));
    assert_eq!(filed["ok"], true, "{filed}");
    assert_eq!(app.log_len(), before + 1);
    let data = &filed["data"];
    assert_eq!(
        (data["delivery"].as_str(), data["status"].as_str()),
        (Some("open"), Some("open"))
    );
    let code = data["claim_code"].as_str().unwrap().to_owned();
    let url = data["claim_url"].as_str().unwrap();
    assert_eq!(
        url,
        format!("{}/findings/adopt?code={code}", app.hub.config.public_url)
    );
    assert_eq!(data["title"], Value::Null, "title and why are lifted");
    let lifted: Vec<&str> = filed["untrusted_content"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["field"].as_str().unwrap())
        .collect();
    assert_eq!(lifted, ["title", "why"]);

    let person = app.browser();
    assert!(
        person
            .get(&path_of(url, &app))
            .text
            .contains("Sign in (or create an account) first")
    );
    let token = person.sign_up("finder@example.org", "Finder", PASSWORD);
    let before = app.log_len();
    let confirm = person.get(&path_of(url, &app));
    assert_eq!(confirm.header("referrer-policy"), Some("no-referrer"));
    assert_eq!(app.log_len(), before, "a GET never adopts");
    let forged = person.post("/findings/adopt", &[("csrf", "forged"), ("code", &code)]);
    assert_eq!(forged.status, 403);
    let adopted = person.post(
        "/findings/adopt",
        &[
            ("csrf", &hidden(&confirm.text, "csrf")),
            ("code", &hidden(&confirm.text, "code")),
        ],
    );
    assert_eq!(
        (adopted.status, adopted.header("location")),
        (303, Some("/inbox")),
        "{}",
        adopted.text
    );
    assert_eq!(app.log_len(), before + 1);
    let inbox = person.get("/inbox");
    assert!(
        inbox.text.contains("A &lt;i&gt;job&lt;/i&gt; for you") && !inbox.text.contains("<i>job"),
        "{}",
        inbox.text
    );

    // The code now belongs to this person: someone else gets invalid_code; no session, identity_required.
    let other = app
        .browser()
        .sign_up("other@example.org", "Other", PASSWORD);
    let before = app.log_len();
    let (status, refused) = app.rest(
        "adopt_finding",
        &json!({ "claim_code": code }).to_string(),
        &[("authorization", &bearer(&other))],
    );
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (400, Some("invalid_code")),
        "{refused}"
    );
    let (status, refused) = app.rest(
        "adopt_finding",
        &json!({ "claim_code": code }).to_string(),
        &[],
    );
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (401, Some("identity_required")),
        "{refused}"
    );
    let (again, _) = app.call_text(
        "adopt_finding",
        &json!({ "claim_code": code.to_lowercase() }).to_string(),
        &[("authorization", &bearer(&token))],
    );
    assert_eq!(
        again["data"]["status"], "inbox",
        "adopting your own again is a no-op: {again}"
    );
    assert_eq!(app.log_len(), before);

    let approve = person.post(
        "/inbox",
        &[
            ("csrf", &hidden(&inbox.text, "csrf")),
            ("finding_id", &hidden(&inbox.text, "finding_id")),
            ("decision", "approve"),
        ],
    );
    assert_eq!(approve.status, 303);
    assert!(person.get("/inbox").text.contains("Your Inbox is empty"));
    let events = app.events_text();
    for kind in ["finding.filed", "finding.adopted", "finding.approved"] {
        assert!(events.contains(kind), "{kind}");
    }
    assert!(
        !events.contains(&code) && !events.contains("for you"),
        "no code or finding text in the log"
    );
    let withdraw = app.signed(
        &agent,
        "withdraw_finding",
        json!({ "agent_id": agent.agent_id, "finding_id": data["finding_id"] }),
    );
    assert_eq!(
        withdraw["error"]["code"], "not_found",
        "an approved finding is no longer open"
    );
    app.assert_chain_ok();
}

#[test]
fn withdraw_finding_takes_only_your_own_open_findings_and_the_claim_code_stops_working() {
    let app = TestApp::start();
    let agent = app.register("Withdrawing Agent");
    let stranger = app.register("Stranger Agent");
    let filed = finding(&app, &agent, json!({}));
    let (finding_id, code) = (
        filed["data"]["finding_id"].clone(),
        filed["data"]["claim_code"].as_str().unwrap().to_owned(),
    );
    let before = app.log_len();
    let theirs = app.signed(
        &stranger,
        "withdraw_finding",
        json!({ "agent_id": stranger.agent_id, "finding_id": finding_id }),
    );
    assert_eq!(theirs["error"]["code"], "not_found", "{theirs}");
    assert_eq!(app.log_len(), before);
    let withdrawn = app.signed(
        &agent,
        "withdraw_finding",
        json!({ "agent_id": agent.agent_id, "finding_id": finding_id, "reason": "a test" }),
    );
    assert_eq!(withdrawn["data"]["status"], "withdrawn", "{withdrawn}");
    assert_eq!(app.log_len(), before + 1);
    let again = app.signed(
        &agent,
        "withdraw_finding",
        json!({ "agent_id": agent.agent_id, "finding_id": finding_id }),
    );
    assert_eq!(again["error"]["code"], "not_found");
    let token = app.browser().sign_up("late@example.org", "Late", PASSWORD);
    let (adopt, _) = app.call_text(
        "adopt_finding",
        &json!({ "claim_code": code }).to_string(),
        &[("authorization", &bearer(&token))],
    );
    assert_eq!(adopt["error"]["code"], "invalid_code", "{adopt}");
    let history = app.signed(&agent, "get_history", json!({ "agent_id": agent.agent_id }));
    assert_eq!(history["data"]["events"][0]["kind"], "finding.withdrawn");
}

#[test]
fn a_claimed_agents_findings_go_to_its_owners_inbox_with_dedupe_and_a_daily_cap() {
    let app = TestApp::start();
    let (owner, _token, agent) = linked(&app, "inbox@example.org", "Reporting Agent");
    let filed = finding(&app, &agent, json!({ "dedupe_key": "job-1" }));
    assert_eq!(
        (
            filed["data"]["delivery"].as_str(),
            filed["data"]["status"].as_str()
        ),
        (Some("owner"), Some("inbox")),
        "{filed}"
    );
    assert!(filed["data"].get("claim_code").is_none());
    let inbox = owner.get("/inbox");
    assert!(
        inbox.text.contains("It matches your skills"),
        "{}",
        inbox.text
    );

    let before = app.log_len();
    let duplicate = finding(&app, &agent, json!({ "dedupe_key": "job-1" }));
    assert_eq!(duplicate["data"]["deduplicated"], true, "{duplicate}");
    assert_eq!(duplicate["data"]["finding_id"], filed["data"]["finding_id"]);
    assert_eq!(app.log_len(), before);
    let not_owner = finding(
        &app,
        &agent,
        json!({ "human_id": "kdh_000000000000000000000000" }),
    );
    assert_eq!(
        (
            not_owner["error"]["code"].as_str(),
            not_owner["error"]["field"].as_str()
        ),
        (Some("not_found"), Some("human_id"))
    );
    let missing = app.signed(
        &agent,
        "notify_human_of_finding",
        json!({ "agent_id": agent.agent_id, "title": "T", "why": "W" }),
    );
    assert_eq!(missing["error"]["field"], "evidence_ref", "{missing}");

    // 20 a day per agent, exactly, even when filed at once.
    let eager = app.register("Eager Finder");
    let replies: Vec<Value> = std::thread::scope(|scope| {
        let (app, eager) = (&app, &eager);
        let tasks: Vec<_> = (0..24)
            .map(|n| {
                scope.spawn(move || finding(app, eager, json!({ "dedupe_key": format!("k{n}") })))
            })
            .collect();
        tasks.into_iter().map(|task| task.join().unwrap()).collect()
    });
    assert_eq!(
        replies.iter().filter(|reply| reply["ok"] == true).count(),
        20
    );
    assert!(
        replies
            .iter()
            .filter(|reply| reply["ok"] == false)
            .all(|reply| reply["error"]["code"] == "rate_limited")
    );
    app.clock.advance_ms(24 * 3_600_000 + 1);
    assert_eq!(finding(&app, &eager, json!({}))["ok"], true);
}

#[test]
fn a_finding_for_an_address_reads_the_same_whether_or_not_it_has_an_account() {
    let app = TestApp::start();
    let person = app.browser();
    person.sign_up("known@example.org", "Known", PASSWORD);
    let first = app.register("First Finder");
    let second = app.register("Second Finder");
    let to_known = finding(&app, &first, json!({ "email": "known@example.org" }));
    let to_new = finding(&app, &second, json!({ "human_email": "new@example.org" }));
    let shape = |reply: &Value| {
        let mut data = reply["data"].clone();
        for key in ["finding_id", "event_seq"] {
            data[key] = Value::Null;
        }
        data
    };
    assert_eq!(shape(&to_known), shape(&to_new));
    assert!(to_known["data"].get("claim_code").is_none() && to_known["data"]["status"] == "sent");
    assert!(
        person.get("/inbox").text.contains("It matches your skills"),
        "an account's owner sees it at once"
    );

    let mails = outbox(&app);
    assert_eq!(mails.len(), 2);
    let url_of = |body: &str| {
        body.lines()
            .find(|line| line.contains("/findings/adopt?code="))
            .unwrap()
            .to_owned()
    };
    let generic = |mail: &kd_core::outbox::Mail, handle: &str| {
        mail.body
            .replace(handle, "H")
            .replace(&url_of(&mail.body), "URL")
    };
    // Both mails have the same time; pick each by its address, not by its place in the list.
    let mail_to = |address: &str| {
        mails
            .iter()
            .find(|mail| mail.to_email == address)
            .unwrap_or_else(|| panic!("no mail to {address}"))
    };
    let new_mail = mail_to("new@example.org");
    assert_eq!(
        generic(mail_to("known@example.org"), &first.handle),
        generic(new_mail, &second.handle)
    );

    // The new address signs up later and adopts through the link in the mail.
    let newcomer = app.browser();
    newcomer.sign_up("new@example.org", "Newcomer", PASSWORD);
    let confirm = newcomer.get(&path_of(&url_of(&new_mail.body), &app));
    let adopted = newcomer.post(
        "/findings/adopt",
        &[
            ("csrf", &hidden(&confirm.text, "csrf")),
            ("code", &hidden(&confirm.text, "code")),
        ],
    );
    assert_eq!(adopted.status, 303, "{}", adopted.text);
    assert!(
        newcomer
            .get("/inbox")
            .text
            .contains("It matches your skills")
    );
    let events = app.events_text();
    assert!(!events.contains("example.org"));
}

#[test]
fn an_approved_finding_is_published_to_the_public_cache_without_its_persons_name() {
    let app = TestApp::start();
    let (owner, _token, agent) = linked(&app, "publisher@example.org", "Finding Agent");
    let empty = app.call("lookup_findings", json!({ "question": "skills" }));
    assert_eq!(empty["data"]["count"], 0, "{empty}");
    let approved = finding(&app, &agent, json!({}));
    assert_eq!(approved["ok"], true, "{approved}");
    let dismissed = finding(
        &app,
        &agent,
        json!({ "title": "Another lead", "reason": "Also matches skills", "dedupe_key": "two" }),
    );
    assert_eq!(dismissed["ok"], true, "{dismissed}");
    let approved_id = approved["data"]["finding_id"].as_str().unwrap().to_owned();
    let dismissed_id = dismissed["data"]["finding_id"].as_str().unwrap().to_owned();
    // Filed but not approved: not public.
    assert_eq!(app.call("lookup_findings", json!({}))["data"]["count"], 0);

    let inbox = owner.get("/inbox");
    assert!(inbox.text.contains("Approve and publish"));
    let ids: Vec<String> = inbox
        .text
        .match_indices("name=\"finding_id\" value=\"")
        .map(|(at, found)| {
            inbox.text[at + found.len()..]
                .split('"')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    let csrf = hidden(&inbox.text, "csrf");
    // The page lists each finding twice (approve and dismiss forms). Both were filed at the same
    // instant, so their order is not what this test is about: each is picked by its id.
    assert_eq!(ids.len(), 4, "{ids:?}");
    assert!(
        ids.contains(&approved_id) && ids.contains(&dismissed_id),
        "{ids:?}"
    );
    for (finding_id, decision) in [(&approved_id, "approve"), (&dismissed_id, "dismiss")] {
        let reply = owner.post(
            "/inbox",
            &[
                ("csrf", &csrf),
                ("finding_id", finding_id),
                ("decision", decision),
            ],
        );
        assert_eq!(reply.status, 303);
    }

    let found = app.call("lookup_findings", json!({ "question": "Matches SKILLS" }));
    assert_eq!(found["data"]["count"], 1, "{found}");
    let row = &found["data"]["findings"][0];
    assert_eq!(row["finding_id"], json!(approved_id));
    assert_eq!(row["evidence_type"], "agent_reported");
    assert_eq!(row["counts_as_verification"], false);
    assert_eq!(row["agent"]["handle"], json!(agent.handle));
    assert_eq!(row["title"], Value::Null, "free text is lifted");
    let items = found["untrusted_content"]["items"].as_array().unwrap();
    assert!(
        items
            .iter()
            .any(|item| item["text"] == "A <i>job</i> for you")
    );
    assert!(!found.to_string().contains("publisher@example.org"));
    assert!(!found.to_string().contains("Ada Owner"));

    assert_eq!(
        app.call("lookup_findings", json!({ "question": "unrelated words" }))["data"]["count"],
        0
    );
    assert_eq!(
        app.call(
            "lookup_findings",
            json!({ "min_evidence": "human_verified" })
        )["data"]["count"],
        0,
        "an agent's finding is never verification-grade"
    );
    assert_eq!(
        app.call(
            "lookup_findings",
            json!({ "min_evidence": "agent_reported" })
        )["data"]["count"],
        1
    );
}
