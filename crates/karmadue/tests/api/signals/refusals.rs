//! Peer-signal refusals: each names its code and field, and writes nothing (log and
//! `peer_signals` unchanged).

use super::*;

fn unchanged(app: &TestApp, before: (i64, i64), reply: &Value, expected: (&str, &str)) {
    let (got_code, got_field) = code(reply);
    assert_eq!((got_code.as_str(), got_field.as_str()), expected, "{reply}");
    assert_eq!((app.log_len(), signal_rows(app)), before, "{reply}");
}

#[test]
fn attest_peer_refusals_write_nothing() {
    let app = TestApp::start();
    let attester = app.register("refusing attester");
    let subject = app.register("refusing subject");
    let other = app.register("refusing other");
    let good = attestation(&attester, &subject, "task-1", "commit", EVIDENCE);
    ok(&app.call("attest_peer", good.clone()));
    let before = (app.log_len(), signal_rows(&app));
    let with = |key: &str, value: Value| {
        let mut args = attestation(&attester, &subject, "task-2", "commit", EVIDENCE);
        if value.is_null() {
            args.as_object_mut().unwrap().remove(key);
        } else {
            args[key] = value;
        }
        app.call("attest_peer", args)
    };
    let cases = [
        (with("signature", Value::Null), ("signature_required", "signature")),
        (with("signature", json!("not base64!")), ("validation", "signature")),
        (with("signature", json!("AAAA")), ("validation", "signature")),
        (with("outcome", json!("amazing")), ("validation", "outcome")),
        (with("evidence_kind", json!("Big Evidence")), ("validation", "evidence_kind")),
        (with("evidence_ref", json!("http://example.org/x")), ("validation", "evidence_ref")),
        (with("task_ref", json!("two\nlines")), ("validation", "task_ref")),
        (with("note", json!("x".repeat(501))), ("validation", "note")),
        (with("subject_agent_id", json!("00000000-0000-4000-8000-00000000dead")), ("not_found", "subject_agent_id")),
        (with("attester_agent_id", json!("00000000-0000-4000-8000-00000000dead")), ("not_found", "attester_agent_id")),
        (with("subject_agent_id", json!("not an agent")), ("validation", "subject_agent_id")),
        // The signed text names another outcome than the one sent.
        (with("outcome", json!("partial")), ("bad_signature", "signature")),
        // Signed by another agent's key.
        (
            app.call("attest_peer", {
                let mut args = attestation(&other, &subject, "task-2", "commit", EVIDENCE);
                args["attester_agent_id"] = json!(attester.agent_id);
                args
            }),
            ("bad_signature", "signature"),
        ),
        // Oneself.
        (app.call("attest_peer", attestation(&attester, &attester, "task-3", "commit", EVIDENCE)), ("forbidden", "subject_agent_id")),
        // Once per attester, subject and task_ref.
        (app.call("attest_peer", good), ("validation", "task_ref")),
        (app.call("attest_peer", json!({ "attester_agent_id": attester.agent_id, "subject_agent_id": subject.agent_id, "extra": 1 })), ("validation", "extra")),
    ];
    for (reply, expected) in cases {
        unchanged(&app, before, &reply, expected);
    }
    // The bad signature names the text it was verified against.
    let reply = with("outcome", json!("partial"));
    assert!(
        reply["error"]["attestation_text"]
            .as_str()
            .unwrap()
            .contains("outcome:partial")
    );
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "two tables of refusals against one prepared state, each checked to change nothing"
)]
fn review_and_outcome_refusals_write_nothing() {
    let app = TestApp::start();
    let reviewer = app.register("refusing reviewer");
    let subject = app.register("reviewed subject");
    ok(&signed_review(
        &app,
        &reviewer,
        review(&subject, "r-1", 70, true),
    ));
    let before = (app.log_len(), signal_rows(&app));
    let with = |key: &str, value: Value| {
        let mut args = review(&subject, "r-2", 70, true);
        args[key] = value;
        signed_review(&app, &reviewer, args)
    };
    let cases = [
        (with("score", json!(100.5)), ("validation", "score")),
        (with("score", json!(-1)), ("validation", "score")),
        (with("score", json!("90")), ("validation", "score")),
        (
            with("subject_agent_id", json!(reviewer.agent_id)),
            ("forbidden", "subject_agent_id"),
        ),
        (
            with(
                "subject_agent_id",
                json!("00000000-0000-4000-8000-00000000dead"),
            ),
            ("not_found", "subject_agent_id"),
        ),
        (with("task_ref", json!("r-1")), ("validation", "task_ref")),
        (
            with("evidence_ref", json!("javascript:alert(1)")),
            ("validation", "evidence_ref"),
        ),
        (
            with("work_claim", json!("y".repeat(501))),
            ("validation", "work_claim"),
        ),
        // Unsigned.
        (
            app.call("submit_peer_review", {
                let mut args = review(&subject, "r-3", 70, true);
                args["agent_id"] = json!(reviewer.agent_id);
                args
            }),
            ("signature_required", ""),
        ),
    ];
    for (reply, expected) in cases {
        unchanged(&app, before, &reply, expected);
    }
    let outcome = |args: Value| {
        let mut args = args;
        args["agent_id"] = json!(reviewer.agent_id);
        app.signed(&reviewer, "record_outcome", args)
    };
    let cases = [
        (
            outcome(json!({ "evidence_ref": EVIDENCE })),
            ("validation", "promised"),
        ),
        (
            outcome(json!({ "promised": "  ", "evidence_ref": EVIDENCE })),
            ("validation", "promised"),
        ),
        (
            outcome(json!({ "promised": "p" })),
            ("validation", "evidence_ref"),
        ),
        (
            outcome(json!({ "promised": "p", "evidence_ref": "ftp://x" })),
            ("validation", "evidence_ref"),
        ),
        (
            outcome(
                json!({ "promised": "p", "evidence_ref": EVIDENCE, "counterparty_agent_id": reviewer.agent_id }),
            ),
            ("forbidden", "counterparty_agent_id"),
        ),
        (
            outcome(
                json!({ "promised": "p", "evidence_ref": EVIDENCE, "counterparty_agent_id": "00000000-0000-4000-8000-00000000dead" }),
            ),
            ("not_found", "counterparty_agent_id"),
        ),
        (
            outcome(json!({ "promised": "p", "evidence_ref": EVIDENCE, "skill": "a\tb" })),
            ("validation", "skill"),
        ),
        (
            outcome(json!({ "promised": "p", "evidence_ref": EVIDENCE, "accepted": "yes" })),
            ("validation", "accepted"),
        ),
    ];
    for (reply, expected) in cases {
        unchanged(&app, before, &reply, expected);
    }
}
