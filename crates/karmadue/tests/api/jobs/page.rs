//! The app's /you/jobs page (decision 468): a person takes and completes an open job of an
//! agent they do not own; an owner sees their agents' jobs and disputes; refusals change
//! nothing.

use serde_json::json;

use super::{call, ok, open_job, snapshot};
use crate::app::{TestApp, hidden};

#[test]
fn a_person_takes_and_completes_a_job_on_the_page_and_the_owner_sees_it() {
    let app = TestApp::start();
    let (owner, _, agent) =
        crate::people::linked(&app, "jobs-page-owner@example.org", "Jobs Page Agent");
    let helper = app.browser();
    helper.sign_up(
        "jobs-page-helper@example.org",
        "Pat Helper",
        crate::standing::PASSWORD,
    );
    let job_id = open_job(&app, &agent, "<script>alert(1)</script> Check it");
    ok(&call(
        &app,
        &agent,
        "open_dispute",
        json!({ "subject_type": "job", "subject_id": job_id, "reason": "<b>wrong</b> result" }),
    ));
    // The owner sees the job their agent requested and its dispute, but cannot take it.
    let mine = owner.get("/you/jobs");
    assert_eq!(mine.status, 200, "{}", mine.text);
    assert!(mine.text.contains("Jobs your agents requested"));
    assert!(mine.text.contains(&job_id) && mine.text.contains(&agent.handle));
    assert!(mine.text.contains("&lt;b&gt;wrong&lt;/b&gt;"), "escaped");
    assert!(!mine.text.contains("<script>alert"), "escaped");
    assert!(
        mine.text
            .contains("No jobs of other people's agents are open right now.")
    );
    let before = snapshot(&app);
    let csrf = owner.csrf("/you");
    let own = owner.post("/you/jobs/take", &[("csrf", &csrf), ("job_id", &job_id)]);
    assert_eq!(own.status, 403, "{}", own.text);
    assert!(
        own.text.contains("another person must take it"),
        "{}",
        own.text
    );
    assert_eq!(snapshot(&app), before);
    // The helper sees it open and takes it; a forged form changes nothing.
    let open = helper.get("/you/jobs");
    assert!(open.text.contains("Take this job"), "{}", open.text);
    let forged = helper.post("/you/jobs/take", &[("csrf", "forged"), ("job_id", &job_id)]);
    assert_eq!(forged.status, 403);
    assert_eq!(snapshot(&app), before);
    let csrf = hidden(&open.text, "csrf");
    let taken = helper.post("/you/jobs/take", &[("csrf", &csrf), ("job_id", &job_id)]);
    assert_eq!(taken.status, 303, "{}", taken.text);
    let held = helper.get("/you/jobs");
    assert!(held.text.contains("Submit result"), "{}", held.text);
    // A refused result re-shows the form as filled in; nothing changes.
    let after_take = snapshot(&app);
    let bad = helper.post(
        "/you/jobs/complete",
        &[
            ("csrf", &csrf),
            ("job_id", &job_id),
            ("result", "passed"),
            ("evidence_ref", "http://example.org/plain"),
        ],
    );
    assert_eq!(bad.status, 400, "{}", bad.text);
    assert!(bad.text.contains("http://example.org/plain"));
    assert_eq!(snapshot(&app), after_take);
    let done = helper.post(
        "/you/jobs/complete",
        &[
            ("csrf", &csrf),
            ("job_id", &job_id),
            ("result", "failed"),
            ("evidence_ref", "https://example.org/evidence"),
        ],
    );
    assert_eq!(done.status, 303, "{}", done.text);
    let seen = owner.get("/you/jobs");
    assert!(
        seen.text.contains("https://example.org/evidence"),
        "{}",
        seen.text
    );
    let read = ok(&call(&app, &agent, "get_job", json!({ "job_id": job_id })));
    assert_eq!(read["job"]["result"], "failed");
    // Signed out: to sign in.
    let visitor = app.browser().get("/you/jobs");
    assert_eq!(visitor.status, 303);
}
