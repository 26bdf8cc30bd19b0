//! The scores rule (DECISIONS 4; docs/decisions.md 472): same-owner and evidence-free signals
//! are stored and move nothing; a counted signal moves trust by its author's standing weight,
//! each author once, peer signals together at most 20; record_outcome never moves trust.

use super::*;
use crate::help::{link, person};

fn attest(app: &TestApp, args: Value) -> Value {
    ok(&app.call("attest_peer", args))
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario: each step reads the subject's trust after the signal before it"
)]
fn same_owner_and_evidence_free_signals_move_nothing_and_independent_ones_do() {
    let app = TestApp::start();
    let (alice, _) = person(&app, "alice-signals@example.org");
    let (bob, _) = person(&app, "bob-signals@example.org");
    let subject = app.register("signal subject");
    let sibling = app.register("signal sibling");
    let outsider = app.register("signal outsider");
    link(&app, &alice, &subject);
    link(&app, &alice, &sibling);
    link(&app, &bob, &outsider);
    app.admit(&sibling);
    app.admit(&outsider);
    assert_eq!(trust(&app, &subject), 0);

    // Same owner, with evidence: stored, not counted.
    let data = attest(
        &app,
        attestation(&sibling, &subject, "t1", "principal_confirmation", EVIDENCE),
    );
    assert_eq!(data["signal"]["counted"], false, "{data}");
    assert_eq!(data["signal"]["not_counted_reason"], "same_owner");
    assert_eq!(data["signal"]["points"], 0);
    assert!(
        data["trust_effect"]
            .as_str()
            .unwrap()
            .contains("moves nothing")
    );
    let data = ok(&signed_review(
        &app,
        &sibling,
        review(&subject, "t1", 100, true),
    ));
    assert_eq!(data["signal"]["not_counted_reason"], "same_owner");
    assert_eq!(trust(&app, &subject), 0);

    // Another owner, no evidence: stored, not counted.
    let data = attest(
        &app,
        attestation(&outsider, &subject, "t2", "none", EVIDENCE),
    );
    assert_eq!(data["signal"]["not_counted_reason"], "no_evidence");
    let data = attest(&app, attestation(&outsider, &subject, "t3", "commit", ""));
    assert_eq!(data["signal"]["not_counted_reason"], "no_evidence");
    let data = ok(&signed_review(
        &app,
        &outsider,
        review(&subject, "t2", 100, false),
    ));
    assert_eq!(data["signal"]["not_counted_reason"], "no_evidence");
    assert_eq!(trust(&app, &subject), 0);

    // Another owner, with evidence: counted, weight 10 (admitted and owner-linked).
    let data = attest(
        &app,
        attestation(
            &outsider,
            &subject,
            "t4",
            "principal_confirmation",
            EVIDENCE,
        ),
    );
    assert_eq!(data["signal"]["counted"], true, "{data}");
    assert_eq!(data["signal"]["weight"], 10);
    assert_eq!(data["signal"]["points"], 10);
    assert_eq!(data["subject_signal_trust"], 10);
    assert_eq!(data["recipe"], "/functions/v1/docs/docs/attestations.md");
    assert_eq!(trust(&app, &subject), 10);
    // The same author counts once: its best signal.
    let data = ok(&signed_review(
        &app,
        &outsider,
        review(&subject, "t4", 80, true),
    ));
    assert_eq!(data["signal"]["points"], 8);
    assert_eq!(trust(&app, &subject), 10);

    // An author that has not passed admission weighs 0.
    let newcomer = app.register("signal newcomer");
    let data = attest(
        &app,
        attestation(&newcomer, &subject, "t5", "commit", EVIDENCE),
    );
    assert_eq!(data["signal"]["not_counted_reason"], "author_not_admitted");
    assert_eq!(trust(&app, &subject), 10);

    // Admitted without an owner: weight 5; a review's score is its share.
    let lone = app.register("signal lone reviewer");
    app.admit(&lone);
    let data = ok(&signed_review(
        &app,
        &lone,
        review(&subject, "t6", 100, true),
    ));
    assert_eq!(data["signal"]["weight"], 5);
    assert_eq!(data["signal"]["points"], 5);
    assert_eq!(trust(&app, &subject), 15);
    // Peer signals together at most 20.
    for name in ["signal third", "signal fourth"] {
        let author = app.register(name);
        app.admit(&author);
        attest(
            &app,
            attestation(&author, &subject, "t7", "test_run", EVIDENCE),
        );
    }
    assert_eq!(trust(&app, &subject), 20);
    let shown = basis(&app, &subject);
    assert_eq!(shown["peer_signals"], 4, "{shown}");
    assert_eq!(shown["peer_signal_trust"], 20);
    assert_eq!(shown["peer_signals_not_counted"], 6);

    // record_outcome: the agent's own record never moves trust.
    let data = ok(&app.signed(
        &subject,
        "record_outcome",
        json!({ "agent_id": subject.agent_id, "counterparty_agent_id": outsider.agent_id, "skill": "tools",
                "promised": "Fix the login redirect", "evidence_ref": EVIDENCE, "accepted": true }),
    ));
    assert_eq!(data["signal"]["signal_kind"], "outcome");
    assert_eq!(data["signal"]["not_counted_reason"], "self_reported");
    assert_eq!(data["signal"]["evidence_kind"], "link");
    assert_eq!(data["signal"]["accepted"], true);
    assert_eq!(trust(&app, &subject), 20);
    // Outsider's trust does not move either.
    assert_eq!(trust(&app, &outsider), 0);
}

#[test]
fn free_text_is_lifted_and_the_log_carries_the_signal() {
    let app = TestApp::start();
    let attester = app.register("lift attester");
    let subject = app.register("lift subject");
    let reply = app.call(
        "attest_peer",
        attestation(&attester, &subject, "pr-7", "commit", EVIDENCE),
    );
    let data = ok(&reply);
    assert!(data["signal"]["note"].is_null(), "{reply}");
    assert!(data["signal"]["attestation_text"].is_null());
    let items = reply["untrusted_content"]["items"].as_array().unwrap();
    assert!(items.iter().any(|item| item["field"] == "note"), "{reply}");
    let signal_id = data["signal"]["signal_id"].as_str().unwrap();
    assert!(signal_id.starts_with("kdsg_"));
    let events = app.events_text();
    assert!(events.contains("signal.recorded"), "{events}");
    // A handle is signed as the agent id it names.
    let mut args = attestation(&attester, &subject, "pr-8", "commit", EVIDENCE);
    args["subject_agent_id"] = json!(subject.handle);
    ok(&app.call("attest_peer", args));
}
