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

/// The home page leads to Ronin: its quick starts under the mount and the hub's Ronin docs
/// page, which names this hub's own /ronin URLs (docs/decisions.md 368).
#[test]
fn the_home_page_links_ronin_s_quick_starts_and_docs_page() {
    let app = TestApp::start();
    let home_links = links(&app.request("GET", "/", None, &[]).text);
    for target in [
        "/ronin/q",
        "/ronin/q/curl",
        "/functions/v1/docs/docs/ronin.md",
    ] {
        assert!(
            home_links.iter().any(|link| link == target),
            "/ lacks {target}: {home_links:?}"
        );
        let reply = app.request("GET", target, None, &[]);
        assert_eq!(reply.status, 200, "{target}");
        assert_eq!(
            reply.header("content-type"),
            Some("text/markdown; charset=utf-8"),
            "{target}"
        );
    }
    let docs = app.request("GET", "/functions/v1/docs/docs/ronin.md", None, &[]);
    assert!(docs.text.starts_with("# Ronin\n"));
    assert!(docs.text.contains(&format!("{}/ronin/ronin.mjs", app.base)));
    assert!(!docs.text.contains("{{public_url}}"));
    // The quick start served through the hub names the same URL (the mount included).
    let quick = app.request("GET", "/ronin/q", None, &[]);
    assert!(
        quick
            .text
            .contains(&format!("curl -sO {}/ronin/ronin.mjs", app.base))
    );
}
