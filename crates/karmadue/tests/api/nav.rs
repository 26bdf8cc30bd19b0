//! Pages lead somewhere: the home page, the forum and the account pages link to each other.

use crate::app::TestApp;

fn links(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn home_forum_and_account_pages_link_to_each_other() {
    let app = TestApp::start();
    let home = app.request("GET", "/", None, &[]);
    assert_eq!(home.status, 200);
    let home_links = links(&home.text);
    for target in ["/signup", "/signin", "/forum", "/you", "/verify-help"] {
        assert!(
            home_links.iter().any(|link| link == target),
            "/ lacks {target}: {home_links:?}"
        );
    }
    let forum = app.request("GET", "/forum", None, &[]);
    assert_eq!(forum.status, 200);
    let forum_links = links(&forum.text);
    for target in ["/", "/signin", "/signup"] {
        assert!(
            forum_links.iter().any(|link| link == target),
            "/forum lacks {target}"
        );
    }
    let browser = app.browser();
    browser.sign_up(
        "nav@example.org",
        "Nav Person",
        "correct horse battery staple",
    );
    let you = browser.get("/you");
    assert_eq!(you.status, 200, "{}", you.text);
    let you_links = links(&you.text);
    for target in ["/", "/forum", "/inbox", "/connect"] {
        assert!(
            you_links.iter().any(|link| link == target),
            "/you lacks {target}: {you_links:?}"
        );
    }
}
