//! Linkdbots' pages as the hub serves them (docs/decisions.md 336–339): the public
//! leaderboards under `/linkdbots/benchmarks`, and a person's category proposals at
//! `/linkdbots/dashboard/categories` behind the session, decided by the operator.

use crate::app::TestApp;

use super::PASSWORD;
const PAGE: &str = "/linkdbots/dashboard/categories";

fn proposals(app: &TestApp) -> i64 {
    app.hub
        .store
        .read_blocking(|conn| {
            kd_linkdbots::categories_store::count(conn).map_err(kd_linkdbots::ApiError::from)
        })
        .unwrap()
}

#[test]
fn signed_out_the_dashboard_sends_to_sign_in_and_back_and_refusals_store_nothing() {
    let app = TestApp::start();
    // Signed out: to sign in, and back here after.
    let anonymous = app.browser().get(PAGE);
    assert_eq!(
        (anonymous.status, anonymous.header("location")),
        (303, Some("/signin?next=/linkdbots/dashboard/categories"))
    );
    let person = app.browser();
    person.sign_up("ada@example.org", "Ada Owner", PASSWORD);
    let returning = app.browser();
    let csrf = returning.csrf("/signin?next=/linkdbots/dashboard/categories");
    let signed = returning.post(
        "/signin",
        &[
            ("csrf", &csrf),
            ("email", "ada@example.org"),
            ("password", PASSWORD),
            ("next", PAGE),
        ],
    );
    assert_eq!(
        (signed.status, signed.header("location")),
        (303, Some(PAGE))
    );

    let page = person.get(PAGE);
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains("You have not proposed a category."));
    assert!(page.text.contains("<code>code.review</code>"));
    let csrf = person.csrf(PAGE);
    // A forged form and a bad name change nothing.
    let forged = person.post(
        PAGE,
        &[
            ("csrf", "forged"),
            ("name", "code.lint"),
            ("description", "Lint"),
        ],
    );
    assert_eq!(forged.status, 403);
    let bad = person.post(
        PAGE,
        &[
            ("csrf", &csrf),
            ("name", "Code Lint"),
            ("description", "Lint"),
        ],
    );
    assert_eq!(bad.status, 400, "{}", bad.text);
    assert!(
        bad.text.contains("a category name is 2 to 40 characters"),
        "{}",
        bad.text
    );
    let taken = person.post(
        PAGE,
        &[
            ("csrf", &csrf),
            ("name", "code.review"),
            ("description", "Again"),
        ],
    );
    assert_eq!(taken.status, 409);
    assert_eq!(proposals(&app), 0);
}

#[test]
fn a_person_proposes_a_category_on_the_dashboard_and_the_operator_accepts_it() {
    let app = TestApp::start();
    let person = app.browser();
    person.sign_up("ada@example.org", "Ada Owner", PASSWORD);
    let csrf = person.csrf(PAGE);
    let description = "Lint \"code\" & 'style'";
    let proposed = person.post(
        PAGE,
        &[
            ("csrf", &csrf),
            ("name", "code.lint"),
            ("description", description),
        ],
    );
    assert_eq!(
        (proposed.status, proposed.header("location")),
        (303, Some(PAGE))
    );
    let page = person.get(PAGE);
    assert!(
        page.text.contains("<td class=\"status\">proposed</td>"),
        "{}",
        page.text
    );
    assert!(
        page.text
            .contains("Lint &quot;code&quot; &amp; &#39;style&#39;"),
        "{}",
        page.text
    );
    let card_categories = app.request("GET", "/linkdbots/api/v1/categories", None, &[]);
    assert!(!card_categories.text.contains("code.lint"));

    // The operator accepts it: a category everywhere.
    let pending = app
        .hub
        .store
        .read_blocking(kd_linkdbots::categories::pending)
        .unwrap();
    let id = pending[0]["id"].as_str().unwrap().to_owned();
    app.block_on(kd_linkdbots::categories::decide(
        &app.hub.linkdbots.store,
        app.hub.linkdbots.clock.now_ms(),
        &id,
        true,
    ))
    .unwrap();
    let page = person.get(PAGE);
    assert!(
        page.text.contains("<td class=\"status\">accepted</td>"),
        "{}",
        page.text
    );
    let list = app.request("GET", "/linkdbots/api/v1/categories", None, &[]);
    assert_eq!(list.json()["categories"].as_array().unwrap().len(), 74);
    let board = app.request("GET", "/linkdbots/benchmarks/code.lint", None, &[]);
    assert_eq!(board.status, 200, "{}", board.text);
    assert_eq!(
        board.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(
        board
            .header("content-security-policy")
            .unwrap()
            .contains("default-src 'none'")
    );
    assert!(
        board.text.contains("Lint &quot;code&quot; &amp; 'style'"),
        "{}",
        board.text
    );
    let index = app.request("GET", "/linkdbots/benchmarks", None, &[]);
    assert!(
        index
            .text
            .contains("href=\"/linkdbots/benchmarks/code.lint\"")
    );
    let unknown = app.request("GET", "/linkdbots/benchmarks/code.nope", None, &[]);
    assert_eq!(unknown.status, 404);
    assert!(unknown.text.contains("<h1>Not found</h1>"));
}
