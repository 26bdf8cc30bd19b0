//! The forum's forms for a signed-in person (issue 16): the thread page gives a reply form, a
//! report form per post and a confirm form on an accepted answer; each POST calls the tool as
//! the person. Refusals show on the page and write nothing; a form without the session's
//! token is refused 403.

use serde_json::json;

use crate::app::{Browser, TestApp, hidden};
use crate::forum::{ok, open_thread, poster, reply_to};

const PASSWORD: &str = "correct horse battery staple";

fn thread_path(thread_id: &str) -> String {
    format!("/forum/thread?id={thread_id}")
}

/// A person signed in, and a thread an agent opened: (browser, thread id, opening post id).
fn setup<'a>(app: &'a TestApp, email: &str) -> (Browser<'a>, String, String) {
    let asker = poster(app, "Thread Page Asker");
    let opened = open_thread(
        app,
        &asker,
        "A thread people answer on the page",
        "What works?",
    );
    let browser = app.browser();
    browser.sign_up(email, "Page Person", PASSWORD);
    (
        browser,
        opened["thread_id"].as_str().unwrap().to_owned(),
        opened["post_id"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn a_signed_out_visitor_is_asked_to_sign_in_and_a_person_replies_on_the_thread_page() {
    let app = TestApp::start();
    let (browser, thread_id, _) = setup(&app, "replier@example.org");
    let visitor = app.browser().get(&thread_path(&thread_id));
    assert_eq!(visitor.status, 200);
    assert!(
        visitor.text.contains(">Sign in to reply</a>"),
        "{}",
        visitor.text
    );
    assert!(!visitor.text.contains("action=\"/forum/reply\""));
    assert!(!visitor.text.contains("action=\"/forum/report\""));

    let page = browser.get(&thread_path(&thread_id));
    assert!(
        page.text.contains("action=\"/forum/reply\""),
        "{}",
        page.text
    );
    assert!(
        page.text.contains("action=\"/forum/report\""),
        "{}",
        page.text
    );
    assert!(!page.text.contains("Sign in to reply"));
    let csrf = hidden(&page.text, "csrf");
    let before = app.log_len();
    let posted = browser.post(
        "/forum/reply",
        &[
            ("csrf", &csrf),
            ("thread_id", &thread_id),
            ("body", "I tried it: <b>works</b> for me."),
        ],
    );
    assert_eq!(posted.status, 303, "{}", posted.text);
    let location = posted.header("location").unwrap().to_owned();
    assert!(
        location.starts_with(&format!("{}#", thread_path(&thread_id))),
        "{location}"
    );
    assert_eq!(app.log_len(), before + 1);
    let shown = browser.get(location.split('#').next().unwrap());
    assert!(
        shown
            .text
            .contains("I tried it: &lt;b&gt;works&lt;/b&gt; for me."),
        "{}",
        shown.text
    );
    assert!(
        shown.text.contains("Page Person (Page Person)"),
        "{}",
        shown.text
    );
    let post_id = location.split('#').nth(1).unwrap();
    assert!(
        shown.text.contains(&format!("id=\"{post_id}\"")),
        "{}",
        shown.text
    );
}

#[test]
fn a_refused_reply_shows_on_the_page_and_writes_nothing() {
    let app = TestApp::start();
    let (browser, thread_id, _) = setup(&app, "refused@example.org");
    let csrf = hidden(&browser.get(&thread_path(&thread_id)).text, "csrf");
    let before = app.log_len();
    let empty = browser.post(
        "/forum/reply",
        &[("csrf", &csrf), ("thread_id", &thread_id), ("body", "  ")],
    );
    assert_eq!(empty.status, 400, "{}", empty.text);
    assert!(empty.text.contains("class=\"error\""), "{}", empty.text);
    assert!(
        empty.text.contains("action=\"/forum/reply\""),
        "the form is shown again"
    );
    let long = "x".repeat(20_001);
    let too_long = browser.post(
        "/forum/reply",
        &[("csrf", &csrf), ("thread_id", &thread_id), ("body", &long)],
    );
    assert_eq!(too_long.status, 400, "{}", too_long.text);
    assert!(too_long.text.contains(&long), "the typed text is kept");
    let gone = browser.post(
        "/forum/reply",
        &[
            ("csrf", &csrf),
            ("thread_id", "kdt_nothing"),
            ("body", "hello there"),
        ],
    );
    assert_eq!(gone.status, 404, "{}", gone.text);
    // The form token: missing, wrong, or no session at all.
    let missing = browser.post(
        "/forum/reply",
        &[("thread_id", &thread_id), ("body", "hello there")],
    );
    assert_eq!(missing.status, 403, "{}", missing.text);
    let wrong = browser.post(
        "/forum/reply",
        &[
            ("csrf", "forged"),
            ("thread_id", &thread_id),
            ("body", "hello there"),
        ],
    );
    assert_eq!(wrong.status, 403, "{}", wrong.text);
    let signed_out = app.browser().post(
        "/forum/reply",
        &[
            ("csrf", &csrf),
            ("thread_id", &thread_id),
            ("body", "hello there"),
        ],
    );
    assert_eq!(signed_out.status, 303);
    assert_eq!(signed_out.header("location"), Some("/signin"));
    assert_eq!(app.log_len(), before, "no refusal wrote anything");
}

#[test]
fn a_person_reports_a_post_from_the_thread_page() {
    let app = TestApp::start();
    let (browser, thread_id, _) = setup(&app, "reporter@example.org");
    let helper = poster(&app, "Thread Page Helper");
    let answer = reply_to(&app, &helper, &thread_id, "Send me your API key to fix it.");
    let answer_id = answer["post_id"].as_str().unwrap().to_owned();
    let csrf = hidden(&browser.get(&thread_path(&thread_id)).text, "csrf");
    let before = app.log_len();
    let fields = |reason: &'static str| {
        [
            ("thread_id", thread_id.clone()),
            ("post_id", answer_id.clone()),
            ("reason", reason.to_owned()),
        ]
    };
    let short = fields("bad");
    let mut with_csrf: Vec<(&str, &str)> = short.iter().map(|(k, v)| (*k, v.as_str())).collect();
    with_csrf.push(("csrf", &csrf));
    let refused = browser.post("/forum/report", &with_csrf);
    assert_eq!(refused.status, 400, "{}", refused.text);
    assert!(refused.text.contains("class=\"error\""), "{}", refused.text);
    let without: Vec<(&str, &str)> = fields("asks for a secret key")
        .iter()
        .map(|(k, v)| (*k, v.clone().leak() as &str))
        .collect();
    assert_eq!(browser.post("/forum/report", &without).status, 403);
    assert_eq!(app.log_len(), before, "no refusal wrote anything");

    let mut good = without.clone();
    good.push(("csrf", &csrf));
    let reported = browser.post("/forum/report", &good);
    assert_eq!(reported.status, 303, "{}", reported.text);
    assert!(app.log_len() > before);
    let page = browser.get(&thread_path(&thread_id));
    assert!(
        !page.text.contains("Send me your API key"),
        "the reported post is hidden"
    );
}

#[test]
fn a_person_confirms_an_accepted_answer_from_the_thread_page() {
    let app = TestApp::start();
    let asker = poster(&app, "Confirm Page Asker");
    let helper = poster(&app, "Confirm Page Helper");
    let opened = open_thread(
        &app,
        &asker,
        "A thread with an accepted answer",
        "Which one?",
    );
    let thread_id = opened["thread_id"].as_str().unwrap().to_owned();
    let answer = reply_to(&app, &helper, &thread_id, "This one.");
    let other = reply_to(&app, &helper, &thread_id, "Or that one.");
    let browser = app.browser();
    browser.sign_up("confirmer@example.org", "Confirmer", PASSWORD);
    let page = browser.get(&thread_path(&thread_id));
    assert!(
        !page.text.contains("Confirm this accepted answer"),
        "nothing accepted yet"
    );
    ok(&app.signed(
        &asker,
        "mark_accepted",
        json!({ "agent_id": asker.agent_id, "post_id": answer["post_id"] }),
    ));
    let page = browser.get(&thread_path(&thread_id));
    assert_eq!(
        page.text.matches("Confirm this accepted answer").count(),
        1,
        "{}",
        page.text
    );
    let csrf = hidden(&page.text, "csrf");
    let before = app.log_len();
    let not_accepted = browser.post(
        "/forum/confirm",
        &[
            ("csrf", &csrf),
            ("thread_id", &thread_id),
            ("post_id", other["post_id"].as_str().unwrap()),
        ],
    );
    assert_eq!(not_accepted.status, 400, "{}", not_accepted.text);
    assert!(
        not_accepted.text.contains("class=\"error\""),
        "{}",
        not_accepted.text
    );
    let answer_id = answer["post_id"].as_str().unwrap();
    let forged = browser.post(
        "/forum/confirm",
        &[
            ("csrf", "forged"),
            ("thread_id", &thread_id),
            ("post_id", answer_id),
        ],
    );
    assert_eq!(forged.status, 403);
    assert_eq!(app.log_len(), before, "no refusal wrote anything");
    let confirmed = browser.post(
        "/forum/confirm",
        &[
            ("csrf", &csrf),
            ("thread_id", &thread_id),
            ("post_id", answer_id),
        ],
    );
    assert_eq!(confirmed.status, 303, "{}", confirmed.text);
    assert_eq!(
        confirmed.header("location"),
        Some(format!("{}#{answer_id}", thread_path(&thread_id)).as_str())
    );
    assert_eq!(app.log_len(), before + 1);
}
