//! Sign-up by a mailed link (issue 16, DECISIONS 260): the answer is the same whether or not
//! the address has an account; the account exists, and the person is signed in, only once the
//! link is followed; a link works once and for 24 hours.

use crate::app::{Browser, TestApp, hidden};

const PASSWORD: &str = "correct horse battery staple";

/// POSTs the sign-up form from a fresh `browser`: the reply.
fn start(browser: &Browser<'_>, email: &str) -> crate::app::Reply {
    let csrf = browser.csrf("/signup");
    browser.post(
        "/signup",
        &[
            ("csrf", &csrf),
            ("email", email),
            ("display_name", "Newcomer"),
            ("password", PASSWORD),
        ],
    )
}

fn people_count(app: &TestApp) -> i64 {
    app.hub
        .store
        .read_blocking(|conn| -> Result<i64, kd_core::store::StoreError> {
            Ok(conn.query_row("SELECT COUNT(*) FROM people", [], |row| row.get(0))?)
        })
        .unwrap()
}

fn waiting_mails(app: &TestApp) -> Vec<kd_core::outbox::Mail> {
    app.hub
        .store
        .read_blocking(|conn| kd_core::outbox::list(conn, true))
        .unwrap()
}

#[test]
fn sign_up_answers_the_same_for_a_new_and_an_existing_address() {
    let app = TestApp::start();
    app.browser()
        .sign_up("old@example.org", "Old Hand", PASSWORD);
    let before = app.log_len();
    let (existing, new) = (app.browser(), app.browser());
    let to_existing = start(&existing, "Old@Example.org");
    let to_new = start(&new, "new@example.org");
    for reply in [&to_existing, &to_new] {
        assert_eq!(reply.status, 303, "{}", reply.text);
        assert_eq!(reply.header("location"), Some("/signup/sent"));
        assert!(reply.text.is_empty(), "{}", reply.text);
    }
    assert!(existing.cookie("kd_session").is_none() && new.cookie("kd_session").is_none());
    assert_eq!(
        existing.get("/signup/sent").text,
        new.get("/signup/sent").text
    );
    assert!(new.get("/signup/sent").text.contains("Check your email"));
    // Nothing is logged until a link is followed; each address got one mail.
    assert_eq!(app.log_len(), before);
    let mails = waiting_mails(&app);
    assert_eq!(mails.len(), 2, "{mails:?}");
    let (old, fresh) = (&mails[0], &mails[1]);
    assert_eq!(old.to_email, "old@example.org");
    assert_eq!(old.subject, kd_karmadue::people::ALREADY_SUBJECT);
    assert!(
        old.body.contains("/signin") && !old.body.contains("token="),
        "{}",
        old.body
    );
    assert_eq!(fresh.to_email, "new@example.org");
    assert_eq!(fresh.subject, kd_karmadue::people::CONFIRM_SUBJECT);
    assert!(
        fresh.body.contains("/signup/confirm?token=kdsu_"),
        "{}",
        fresh.body
    );
    // The token is never in the log.
    let token = fresh
        .body
        .split("token=")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap();
    assert!(!app.events_text().contains(token));
    // The existing account is untouched: its password still signs in.
    let csrf = existing.csrf("/signin");
    let signin = existing.post(
        "/signin",
        &[
            ("csrf", &csrf),
            ("email", "old@example.org"),
            ("password", PASSWORD),
        ],
    );
    assert_eq!(signin.status, 303, "{}", signin.text);
}

#[test]
fn no_session_before_confirmation_and_the_link_works_once() {
    let app = TestApp::start();
    let browser = app.browser();
    assert_eq!(start(&browser, "ada@example.org").status, 303);
    assert_eq!(browser.get("/you").header("location"), Some("/signin"));
    let csrf = browser.csrf("/signin");
    let early = browser.post(
        "/signin",
        &[
            ("csrf", &csrf),
            ("email", "ada@example.org"),
            ("password", PASSWORD),
        ],
    );
    assert_eq!(
        early.status, 400,
        "no account before the link: {}",
        early.text
    );
    assert_eq!(people_count(&app), 0);

    let link = app.signup_link("ada@example.org").unwrap();
    let before = app.log_len();
    // Opening the link changes nothing (a mail scanner may open it); the button does.
    let page = browser.get(&link);
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains("Confirm my account and sign in"));
    assert_eq!((app.log_len(), people_count(&app)), (before, 0));
    let confirmed = browser.confirm(&link);
    assert_eq!(confirmed.status, 303, "{}", confirmed.text);
    assert_eq!(confirmed.header("location"), Some("/you"));
    assert_eq!((app.log_len(), people_count(&app)), (before + 1, 1));
    let you = browser.get("/you");
    assert_eq!(you.status, 200);
    assert!(you.text.contains("ada@example.org"), "{}", you.text);

    // Used: refused, nothing written, whoever tries.
    let other = app.browser();
    let again = other.get(&link);
    assert_eq!(again.status, 400, "{}", again.text);
    assert!(again.text.contains("already used"), "{}", again.text);
    let form = other.csrf("/signup");
    let token = link.split("token=").nth(1).unwrap();
    let replay = other.post("/signup/confirm", &[("csrf", &form), ("token", token)]);
    assert_eq!(replay.status, 400, "{}", replay.text);
    assert!(other.cookie("kd_session").is_none());
    assert_eq!((app.log_len(), people_count(&app)), (before + 1, 1));
}

#[test]
fn an_expired_or_garbage_link_is_refused_clearly_and_writes_nothing() {
    let app = TestApp::start();
    let browser = app.browser();
    assert_eq!(start(&browser, "late@example.org").status, 303);
    let link = app.signup_link("late@example.org").unwrap();
    let page = browser.get(&link);
    assert_eq!(page.status, 200);
    let (csrf, token) = (hidden(&page.text, "csrf"), hidden(&page.text, "token"));
    let before = app.log_len();

    for garbage in ["/signup/confirm?token=kdsu_nothing", "/signup/confirm"] {
        let refused = browser.get(garbage);
        assert_eq!(refused.status, 400, "{}", refused.text);
        assert!(
            refused.text.contains("This link does not work"),
            "{}",
            refused.text
        );
    }
    let garbage = browser.post("/signup/confirm", &[("csrf", &csrf), ("token", "kdsu_00")]);
    assert_eq!(garbage.status, 400, "{}", garbage.text);
    // Without the page's form token, even a good link is refused.
    let forged = browser.post("/signup/confirm", &[("csrf", "forged"), ("token", &token)]);
    assert_eq!(forged.status, 403, "{}", forged.text);

    app.clock.advance_ms(kd_core::people::SIGNUP_LINK_TTL_MS);
    assert_eq!(browser.get(&link).status, 400);
    // A fresh form token (the page's lasted an hour): the link itself is what is refused.
    let csrf = browser.csrf("/signup");
    let expired = browser.post("/signup/confirm", &[("csrf", &csrf), ("token", &token)]);
    assert_eq!(expired.status, 400, "{}", expired.text);
    assert!(expired.text.contains("expired"), "{}", expired.text);
    assert!(browser.cookie("kd_session").is_none());
    assert_eq!((app.log_len(), people_count(&app)), (before, 0));
}

#[test]
fn the_first_of_two_links_to_one_address_makes_the_account_and_the_other_stops_working() {
    let app = TestApp::start();
    let (first, second) = (app.browser(), app.browser());
    assert_eq!(start(&first, "twice@example.org").status, 303);
    let first_link = app.signup_link("twice@example.org").unwrap();
    assert_eq!(start(&second, "twice@example.org").status, 303);
    let second_link = app.signup_link("twice@example.org").unwrap();
    assert_ne!(first_link, second_link);
    assert_eq!(second.confirm(&second_link).status, 303);
    let before = app.log_len();
    assert_eq!(first.get(&first_link).status, 400);
    assert_eq!((app.log_len(), people_count(&app)), (before, 1));
}
