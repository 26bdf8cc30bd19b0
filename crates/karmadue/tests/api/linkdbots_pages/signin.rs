//! Signed out: every page sends the visitor to sign in and back (decision 330).

use super::*;
use crate::app::urlencode;

#[test]
fn linkdbots_pages_send_a_visitor_to_sign_in_and_back_to_the_page() {
    let app = TestApp::start();
    person(&app, "ada@example.org", "Ada Owner");
    let visitor = app.browser();
    let pages = [
        DASH_CONNECT,
        DASH_QUEUE,
        DASH_AGENTS,
        DASH_HOST_KEYS,
        DASH_TEAMS,
        "/linkdbots/claim?code=ABCD2345",
        "/linkdbots/connect?code=ABCD2345",
    ];
    for page in pages {
        let to = format!("/signin?next={}", urlencode(page));
        assert_see_other(&visitor.get(page), &to);
        // A form posted without a session does nothing and goes the same way.
        let posted = visitor.post(page, &[("csrf", "x"), ("name", "Miso")]);
        assert_see_other(&posted, &to);
    }
    assert_eq!(codes(&app), 0);
    // Signing in with that next comes back to the page; a next elsewhere lands on /you.
    for (next, lands) in [
        (DASH_QUEUE, DASH_QUEUE),
        (
            "/linkdbots/claim?code=ABCD2345",
            "/linkdbots/claim?code=ABCD2345",
        ),
        ("/linkdbots/api/v1/pair", "/you"),
        ("https://evil.example/linkdbots/dashboard/queue", "/you"),
    ] {
        let browser = app.browser();
        let csrf = browser.csrf(&format!("/signin?next={}", urlencode(next)));
        let signed = browser.post(
            "/signin",
            &[
                ("csrf", &csrf),
                ("email", "ada@example.org"),
                ("password", PASSWORD),
                ("next", next),
            ],
        );
        assert_see_other(&signed, lands);
    }
}
