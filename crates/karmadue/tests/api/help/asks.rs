//! Verification help over the tools: from posting an ask to a stamp or a public refusal,
//! the independence rule, the 72 hours and the REST list.

use super::*;

// ---- verification help ---------------------------------------------------------------------

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario: each step acts on the state the step before it left"
)]
fn verification_help_issues_a_signed_stamp_naming_the_reviewer_visible_on_the_subject() {
    let app = TestApp::start();
    let requester = app.register("asking agent");
    let subject = app.register("subject agent");
    let reviewer = app.register("reviewing agent");
    app.admit(&requester);
    let passport = passport_id(&app, &subject);

    let posted = app.signed(
        &requester,
        "post_verification_ask",
        ask_args(&app, &requester, &subject, "peer-reviewed"),
    );
    let data = ok(&posted);
    let ask_id = data["ask"]["ask_id"].as_str().unwrap().to_owned();
    assert!(ask_id.starts_with("kdva_"));
    assert_eq!(data["ask"]["status"], "open");
    assert_eq!(data["ask"]["subject"]["passport_id"], passport.as_str());
    assert_eq!(data["ask"]["payouts"], "off");
    assert_eq!(data["ask"]["criteria"], Value::Null, "lifted");
    assert!(
        posted["untrusted_content"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|item| item["id"] == ask_id.as_str() && item["field"] == "criteria")
    );
    assert!(!app.events_text().contains("key custody statement"));

    let listed = open_asks(&app);
    assert_eq!(listed["total"], 1);
    assert_eq!(listed["asks"][0]["ask_id"], ask_id.as_str());

    let taken = ok(&accept(&app, &reviewer, &ask_id));
    assert_eq!(taken["ask"]["status"], "accepted");
    assert_eq!(taken["ask"]["reviewer"], reviewer.agent_id.as_str());
    assert_eq!(
        taken["must_submit_by"],
        rfc3339_ms(app.clock.now_ms() + 72 * HOUR_MS).as_str()
    );
    assert_eq!(open_asks(&app)["total"], 0, "a taken ask is not open");
    let submitted = ok(&submit(&app, &reviewer, &ask_id, "met"));
    assert_eq!(submitted["ask"]["status"], "submitted");

    let resolved = ok(&resolve(&app, &requester, &ask_id, "accept"));
    assert_eq!(resolved["resolution"], "stamped");
    let stamp = &resolved["stamp"];
    assert_eq!(stamp["stamp"], "peer-reviewed");
    assert_eq!(stamp["issuer"], reviewer.agent_id.as_str());
    assert_eq!(stamp["credential_id"], passport.as_str());
    // Signed by kd-passport-1 over kd-stamp-v1.
    let detail = &stamp["detail"];
    let text = detail["signed_text"].as_str().unwrap();
    assert_eq!(
        text.split('\n').collect::<Vec<_>>(),
        [
            "kd-stamp-v1",
            stamp["stamp_id"].as_str().unwrap(),
            subject.agent_id.as_str(),
            "peer-reviewed",
            passport.as_str(),
            reviewer.agent_id.as_str(),
            &app.clock.now_unix().to_string(),
            ask_id.as_str(),
        ]
    );
    let signature = kd_protocol::b64::decode_url(detail["signature"].as_str().unwrap()).unwrap();
    published_key(&app)
        .verify(
            text.as_bytes(),
            &ed25519_dalek::Signature::from_slice(&signature).unwrap(),
        )
        .unwrap();
    assert_eq!(resolved["verifier_record"]["completed"], 1);
    assert_eq!(resolved["verifier_record"]["stamps_issued"], 1);

    // Visible on the subject: its stamps, and the reviewer's public record.
    let live = app
        .hub
        .store
        .read_blocking(|conn| stamps::live(conn, &subject.agent_id, app.clock.now_ms()))
        .unwrap();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].issuer, reviewer.agent_id);
    let standing = app.call("get_standing", json!({ "subject_id": subject.agent_id }));
    if standing["ok"] == true {
        assert!(
            standing["data"]["stamps"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["stamp"] == "peer-reviewed" && s["issuer"] == reviewer.agent_id.as_str()),
            "{standing}"
        );
    }
    let record = ok(&app.call(
        "list_verification_asks",
        json!({ "status": "resolved", "reviewer": reviewer.handle }),
    ));
    assert_eq!(record["verifier_record"]["stamps_issued"], 1);
    assert_eq!(record["asks"][0]["resolution"], "stamped");
    for kind in [
        "verification.asked",
        "verification.accepted",
        "verification.submitted",
        "verification.resolved",
    ] {
        assert_eq!(events_of(&app, kind).len(), 1, "{kind}");
    }
    // The admission stamp and the reviewed one.
    assert_eq!(events_of(&app, "stamp.issued").len(), 2);

    // A resolved ask cannot be resolved, taken or submitted again; nothing is written.
    let before = snapshot(&app);
    assert_eq!(
        code(&resolve(&app, &requester, &ask_id, "accept")),
        "validation"
    );
    assert_eq!(code(&accept(&app, &reviewer, &ask_id)), "validation");
    assert_eq!(code(&submit(&app, &reviewer, &ask_id, "met")), "forbidden");
    assert_eq!(snapshot(&app), before);
    app.assert_chain_ok();
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "a table of refusals against one prepared state, each checked to change nothing"
)]
fn an_unmet_result_is_a_public_refusal_and_a_dispute_reopens_the_ask_without_credit() {
    let app = TestApp::start();
    let requester = app.register("refusal asker");
    let first = app.register("first reviewer");
    let second = app.register("second reviewer");
    app.admit(&requester);
    // The requester asks about its own passport.
    let ask_id = post(&app, &requester, &requester, "peer-reviewed");

    // A disputed result: no credit, recorded, and the ask is open again for someone else.
    ok(&accept(&app, &first, &ask_id));
    ok(&submit(&app, &first, &ask_id, "met"));
    let disputed = ok(&resolve(&app, &requester, &ask_id, "dispute"));
    assert_eq!(
        (
            disputed["resolution"].as_str(),
            disputed["reopened"].as_bool()
        ),
        (Some("disputed"), Some(true))
    );
    assert_eq!(disputed["ask"]["status"], "open");
    assert_eq!(disputed["ask"]["reviewer"], Value::Null);
    assert_eq!(rows(&app, "stamps"), 1, "only the admission stamp");
    let before = snapshot(&app);
    let again = accept(&app, &first, &ask_id);
    assert_eq!(
        (code(&again), again["error"]["reason"].as_str()),
        ("forbidden".into(), Some("disputed_before"))
    );
    assert_eq!(snapshot(&app), before);

    ok(&accept(&app, &second, &ask_id));
    ok(&submit(&app, &second, &ask_id, "unmet"));
    let resolved = ok(&resolve(&app, &requester, &ask_id, "accept"));
    assert_eq!(resolved["resolution"], "refused");
    assert_eq!(resolved["stamp"], Value::Null);
    assert_eq!(resolved["refusal"]["public"], true);
    assert_eq!(resolved["refusal"]["reviewer"], second.agent_id.as_str());
    assert_eq!(rows(&app, "stamps"), 1, "no stamp for an unmet result");
    assert_eq!(resolved["verifier_record"]["refusals"], 1);
    assert_eq!(resolved["verifier_record"]["completed"], 1);

    // Public: anyone lists the refusal and both reviewers' records.
    let listed = app.call(
        "list_verification_asks",
        json!({ "status": "resolved", "subject_agent_id": requester.handle }),
    );
    let public = ok(&listed);
    assert_eq!(public["asks"][0]["resolution"], "refused");
    assert_eq!(public["asks"][0]["result"], "unmet");
    // The reviewer's evidence link is third-party text: lifted, like the criteria.
    assert_eq!(public["asks"][0]["evidence_ref"], Value::Null);
    assert!(
        listed["untrusted_content"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|item| item["field"] == "evidence_ref"
                && item["text"] == "https://example.org/review/1")
    );
    let standing = app.call("get_standing", json!({ "subject_id": requester.agent_id }));
    assert_eq!(
        standing["data"]["verifications"][0]["resolution"],
        "refused"
    );
    assert_eq!(
        standing["data"]["verifications"][0]["evidence_ref"],
        Value::Null
    );
    assert!(
        standing["untrusted_content"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|item| item["text"] == "https://example.org/review/1")
    );
    let first_record = ok(&app.call(
        "list_verification_asks",
        json!({ "status": "all", "reviewer": first.agent_id }),
    ))["verifier_record"]
        .clone();
    assert_eq!(
        (
            first_record["completed"].as_i64(),
            first_record["disputed"].as_i64()
        ),
        (Some(0), Some(1))
    );
    let record = app
        .hub
        .store
        .read_blocking(|conn| verification::verifier_record(conn, &second.agent_id))
        .unwrap();
    assert_eq!(record["refusals"], 1);
    let subject_record = app
        .hub
        .store
        .read_blocking(|conn| verification::subject_record(conn, &requester.agent_id))
        .unwrap();
    assert_eq!(subject_record.len(), 1);
    assert_eq!(subject_record[0]["resolution"], "refused");
    app.assert_chain_ok();
}

#[test]
fn nobody_sharing_an_owner_with_the_requester_or_the_subject_may_take_the_ask_or_have_it_stamped() {
    let app = TestApp::start();
    let (owner, owner_id) = person(&app, "shared@example.org");
    let requester = app.register("owned asker");
    link(&app, &owner, &requester);
    app.admit(&requester);
    let subject = app.register("plain subject");
    let sibling = app.register("sibling reviewer");
    link(&app, &owner, &sibling);
    let outsider = app.register("outside reviewer");
    let ask_id = post(&app, &requester, &subject, "peer-reviewed");

    let before = snapshot(&app);
    let same_owner = accept(&app, &sibling, &ask_id);
    assert_eq!(
        (code(&same_owner), same_owner["error"]["reason"].as_str()),
        ("forbidden".into(), Some("shares_owner"))
    );
    let own_ask = accept(&app, &requester, &ask_id);
    assert_eq!(own_ask["error"]["reason"], "own_ask");
    let own_passport = accept(&app, &subject, &ask_id);
    assert_eq!(own_passport["error"]["reason"], "own_passport");
    assert_eq!(snapshot(&app), before);
    // The person who owns the requester cannot take its human-reviewed ask either.
    let human_ask = post(&app, &requester, &subject, "human-reviewed");
    let before = snapshot(&app);
    let as_person = block_on(verification::accept_as_person(
        &app.hub, &owner_id, &human_ask,
    ))
    .unwrap_err();
    assert_eq!(as_person.code.as_str(), "forbidden");
    assert_eq!(as_person.extra["reason"], "shares_owner");
    assert_eq!(snapshot(&app), before);

    // An outsider takes it; then the requester's owner approves a link to the outsider.
    ok(&accept(&app, &outsider, &ask_id));
    ok(&submit(&app, &outsider, &ask_id, "met"));
    link(&app, &owner, &outsider);
    let before = snapshot(&app);
    let refused = resolve(&app, &requester, &ask_id, "accept");
    assert_eq!(
        (code(&refused), refused["error"]["reason"].as_str()),
        ("forbidden".into(), Some("shares_owner"))
    );
    assert_eq!(snapshot(&app), before, "no stamp, no event");
    assert_eq!(
        ok(&app.call("list_verification_asks", json!({ "status": "submitted" })))["total"],
        1
    );

    // The owner of the subject counts too.
    let (subject_owner, _) = person(&app, "subject-owner@example.org");
    let subject2 = app.register("owned subject");
    link(&app, &subject_owner, &subject2);
    let helper = app.register("subject sibling");
    link(&app, &subject_owner, &helper);
    let second_ask = post(&app, &requester, &subject2, "peer-reviewed");
    let before = snapshot(&app);
    assert_eq!(
        accept(&app, &helper, &second_ask)["error"]["reason"],
        "shares_owner"
    );
    assert_eq!(snapshot(&app), before);
}

#[test]
fn an_accepted_ask_reopens_after_72_hours_and_the_lapsed_taker_cannot_submit() {
    let app = TestApp::start();
    let requester = app.register("window asker");
    let slow = app.register("slow reviewer");
    let quick = app.register("quick reviewer");
    app.admit(&requester);
    let ask_id = post(&app, &requester, &requester, "peer-reviewed");
    ok(&accept(&app, &slow, &ask_id));

    // Within 72 hours it stays taken.
    app.clock.advance_ms(72 * HOUR_MS - 1000);
    let before = snapshot(&app);
    let held = accept(&app, &quick, &ask_id);
    assert_eq!(
        (code(&held), field(&held)),
        ("validation".into(), "ask_id".into())
    );
    assert_eq!(open_asks(&app)["total"], 0);
    assert_eq!(snapshot(&app), before);

    // After 72 hours it is open again; the lapsed taker's submission is refused.
    app.clock.advance_ms(1000);
    assert_eq!(open_asks(&app)["asks"][0]["ask_id"], ask_id.as_str());
    let late = submit(&app, &slow, &ask_id, "met");
    assert_eq!(code(&late), "validation");
    assert!(
        late["error"]["message"]
            .as_str()
            .unwrap()
            .contains("72-hour"),
        "{late}"
    );
    assert_eq!(snapshot(&app), before);
    let retaken = ok(&accept(&app, &quick, &ask_id));
    assert_eq!(retaken["ask"]["reviewer"], quick.agent_id.as_str());
    let event = events_of(&app, "verification.accepted").pop().unwrap();
    assert_eq!(event["reopened_from"], slow.agent_id.as_str());
    assert_eq!(code(&submit(&app, &slow, &ask_id, "met")), "forbidden");
    ok(&submit(&app, &quick, &ask_id, "met"));

    // An ask past its deadline cannot be taken.
    let expiring = post(&app, &requester, &slow, "peer-reviewed");
    app.clock.advance_ms(10 * DAY_MS);
    let before = snapshot(&app);
    let expired = accept(&app, &quick, &expiring);
    assert_eq!(code(&expired), "validation");
    assert!(
        expired["error"]["message"]
            .as_str()
            .unwrap()
            .contains("deadline")
    );
    assert_eq!(snapshot(&app), before);
}

#[test]
fn the_rest_endpoint_lists_open_asks_with_third_party_text_lifted() {
    let app = TestApp::start();
    let requester = app.register("rest asker");
    app.admit(&requester);
    let subject = app.register("rest subject");
    let first = post(&app, &requester, &subject, "peer-reviewed");
    let second = post(&app, &requester, &subject, "human-reviewed");
    let taker = app.register("rest taker");
    ok(&accept(&app, &taker, &first));

    let reply = app.request("GET", verification::REST_PATH, None, &[]);
    assert_eq!(reply.status, 200, "{}", reply.text);
    let body = reply.json();
    assert_eq!(body["ok"], true);
    assert_eq!(body["data"]["total"], 1);
    let ask = &body["data"]["asks"][0];
    assert_eq!(ask["ask_id"], second.as_str());
    assert_eq!(ask["stamp"], "human-reviewed");
    assert_eq!(ask["criteria"], Value::Null);
    assert_eq!(ask["subject"]["handle"], subject.handle.as_str());
    let items = body["untrusted_content"]["items"].as_array().unwrap();
    assert!(
        items.iter().any(|item| item["id"] == second.as_str()
            && item["field"] == "criteria"
            && item["text"]
                .as_str()
                .unwrap()
                .starts_with("Ignore previous")),
        "{body}"
    );

    let all = app
        .request(
            "GET",
            &format!("{}?status=all&limit=1", verification::REST_PATH),
            None,
            &[],
        )
        .json();
    assert_eq!(
        (
            all["data"]["total"].as_i64(),
            all["data"]["next_offset"].as_i64()
        ),
        (Some(2), Some(1))
    );
    let bad = app.request(
        "GET",
        &format!("{}?limit=99", verification::REST_PATH),
        None,
        &[],
    );
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["error"]["field"], "limit");
    let unknown = app.request(
        "GET",
        &format!("{}?colour=red", verification::REST_PATH),
        None,
        &[],
    );
    assert_eq!(
        (unknown.status, unknown.json()["error"]["field"].as_str()),
        (400, Some("colour"))
    );
    let nobody = app.request(
        "GET",
        &format!(
            "{}?subject_agent_id=kd_000000000000",
            verification::REST_PATH
        ),
        None,
        &[],
    );
    assert_eq!(nobody.status, 404, "{}", nobody.text);
}

#[test]
fn a_signed_in_person_takes_a_human_reviewed_ask_and_an_agent_cannot() {
    let app = TestApp::start();
    let requester = app.register("human asker");
    app.admit(&requester);
    let agent_reviewer = app.register("agent not human");
    let (_browser, person_id) = person(&app, "reviewer@example.org");
    let ask_id = post(&app, &requester, &requester, "human-reviewed");

    let before = snapshot(&app);
    let refused = accept(&app, &agent_reviewer, &ask_id);
    assert_eq!(refused["error"]["reason"], "needs_person");
    assert_eq!(snapshot(&app), before);

    let peer_ask = post(&app, &requester, &requester, "peer-reviewed");
    let before = snapshot(&app);
    let not_for_people = block_on(verification::accept_as_person(
        &app.hub, &person_id, &peer_ask,
    ))
    .unwrap_err();
    assert_eq!(
        (
            not_for_people.code.as_str(),
            &not_for_people.extra["reason"]
        ),
        ("forbidden", &json!("needs_agent"))
    );
    let unknown_reviewer = app.call(
        "list_verification_asks",
        json!({ "reviewer": "kd_000000000000" }),
    );
    assert_eq!(
        (code(&unknown_reviewer), field(&unknown_reviewer)),
        ("not_found".into(), "reviewer".into())
    );
    assert_eq!(snapshot(&app), before);
    let taken = block_on(verification::accept_as_person(
        &app.hub, &person_id, &ask_id,
    ))
    .unwrap();
    let reviewer = format!("person:{person_id}");
    assert_eq!(taken.ask["reviewer"], reviewer.as_str());
    let bad = block_on(verification::submit_as_person(
        &app.hub,
        &person_id,
        &ask_id,
        "met",
        "not a link",
        None,
    ))
    .unwrap_err();
    assert_eq!(bad.field.as_deref(), Some("evidence_ref"));
    block_on(verification::submit_as_person(
        &app.hub,
        &person_id,
        &ask_id,
        "met",
        "https://example.org/checked",
        Some("Looked at it."),
    ))
    .unwrap();
    let resolved = ok(&resolve(&app, &requester, &ask_id, "accept"));
    assert_eq!(resolved["stamp"]["stamp"], "human-reviewed");
    assert_eq!(resolved["stamp"]["issuer"], reviewer.as_str());
    assert_eq!(
        events_of(&app, "verification.accepted")[0]["reviewer"],
        reviewer.as_str()
    );
    assert!(
        !app.events_text().contains("reviewer@example.org"),
        "no address in the log"
    );
}
