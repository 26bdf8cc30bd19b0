//! `/linkdbots/dashboard/queue`: the exact text, approved by its hash (decision 331).

use super::*;

fn propose_bio(app: &TestApp, key: &str, bio: &str) -> (String, String) {
    let body = json!({ "bio": bio, "skills": ["review", "tests"] }).to_string();
    let proposed = keyed(app, "POST", "/agents/me/profile", key, &body);
    assert_eq!(proposed.status, 202, "{}", proposed.text);
    let answer = proposed.json();
    (
        answer["approvalId"].as_str().unwrap().to_owned(),
        answer["contentHash"].as_str().unwrap().to_owned(),
    )
}

fn public_bio(app: &TestApp, agent_id: &str) -> serde_json::Value {
    let profile = app.request(
        "GET",
        &format!("/linkdbots/api/v1/agents/{agent_id}/profile"),
        None,
        &[],
    );
    assert_eq!(profile.status, 200, "{}", profile.text);
    profile.json()["bio"].clone()
}

/// Posts a decision on `approval_id` naming `hash`.
fn decide(person: &Person<'_>, approval_id: &str, hash: &str, decision: &str) -> Reply {
    let fields = [
        ("approval_id", approval_id),
        ("content_hash", hash),
        ("decision", decision),
    ];
    person.post(DASH_QUEUE, &fields)
}

#[test]
fn linkdbots_queue_page_shows_the_exact_text_and_approving_it_publishes_it() {
    let app = TestApp::start();
    let ada = person(&app, "ada@example.org", "Ada Owner");
    let stan = person(&app, "stan@example.org", "Stan Stranger");
    let empty = ada.page(DASH_QUEUE);
    assert!(
        empty.text.contains("Nothing is waiting for you."),
        "{}",
        empty.text
    );
    let (agent_id, key) = paired(&app, &ada, "Miso");
    let bio = "Reviews <b>diffs</b> & 'tests'.";
    let (approval_id, hash) = propose_bio(&app, &key, bio);

    let page = ada.page(DASH_QUEUE);
    for shown in [
        "profile from <code>miso</code>",
        "Reviews &lt;b&gt;diffs&lt;/b&gt; &amp; &#39;tests&#39;.",
        "own words, exactly as they would be published",
        "review",
        &format!("name=\"approval_id\" value=\"{approval_id}\""),
        &format!("name=\"content_hash\" value=\"{hash}\""),
        ">Approve<",
        ">Reject<",
    ] {
        assert!(page.text.contains(shown), "{shown}: {}", page.text);
    }
    assert!(!page.text.contains("<b>diffs"), "{}", page.text);
    // Another person's queue is empty and cannot decide it; a forged form, another text's
    // hash or no decision change nothing.
    assert!(
        stan.page(DASH_QUEUE)
            .text
            .contains("Nothing is waiting for you.")
    );
    let theirs = decide(&stan, &approval_id, &hash, "approve");
    assert_eq!(theirs.status, 404, "{}", theirs.text);
    assert!(theirs.text.contains("no such item in your approval queue"));
    ada.forged(
        DASH_QUEUE,
        &[
            ("approval_id", &approval_id),
            ("content_hash", &hash),
            ("decision", "approve"),
        ],
    );
    let other = "0".repeat(64);
    let wrong = decide(&ada, &approval_id, &other, "approve");
    assert_eq!(wrong.status, 409, "{}", wrong.text);
    assert!(
        wrong.text.contains("approve the text you were shown"),
        "{}",
        wrong.text
    );
    let undecided = ada.post(DASH_QUEUE, &[("approval_id", &approval_id)]);
    assert_eq!(undecided.status, 400, "{}", undecided.text);
    assert!(undecided.text.contains("Choose Approve or Reject."));
    assert_eq!(public_bio(&app, &agent_id), serde_json::Value::Null);

    let approved = decide(&ada, &approval_id, &hash, "approve");
    assert_see_other(&approved, &format!("{DASH_QUEUE}?done=approved"));
    assert_eq!(public_bio(&app, &agent_id), bio);
    let after = ada.page(&format!("{DASH_QUEUE}?done=approved"));
    assert!(
        after.text.contains("Approved: the text is published."),
        "{}",
        after.text
    );
    assert!(
        after.text.contains("Nothing is waiting for you."),
        "{}",
        after.text
    );
    // Decided once: a second decision is a 409 on the page.
    let again = decide(&ada, &approval_id, &hash, "reject");
    assert_eq!(again.status, 409, "{}", again.text);
    assert!(
        again.text.contains("this item was already approved"),
        "{}",
        again.text
    );
}

#[test]
fn linkdbots_queue_page_rejects_and_the_text_never_publishes() {
    let app = TestApp::start();
    let ada = person(&app, "ada@example.org", "Ada Owner");
    let (agent_id, key) = paired(&app, &ada, "Miso");
    let (approval_id, _) = propose_bio(&app, &key, "Buy my course.");
    let rejected = ada.post(
        DASH_QUEUE,
        &[("approval_id", &approval_id), ("decision", "reject")],
    );
    assert_see_other(&rejected, &format!("{DASH_QUEUE}?done=rejected"));
    assert_eq!(public_bio(&app, &agent_id), serde_json::Value::Null);
    let page = ada.page(&format!("{DASH_QUEUE}?done=rejected"));
    assert!(
        page.text
            .contains("Rejected: the text will never be published.")
    );
    assert!(!page.text.contains("Buy my course."));
    // An unknown done word says nothing.
    let quiet = ada.page(&format!("{DASH_QUEUE}?done=%3Cscript%3E"));
    assert!(!quiet.text.contains("role=\"status\""), "{}", quiet.text);
}
