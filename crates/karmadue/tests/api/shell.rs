//! Every HTML page of the hub process (the hub's, Linkdbots' and Ronin's) renders through the
//! one page shell, `kd_core::page` (docs/decisions.md 441): each GET route is called, signed
//! out and signed in, and every answer that is HTML carries the shell's head, stylesheet,
//! navigation and headers, with a policy of the shell's family.

use std::collections::BTreeSet;

use kd_core::page::{CONTENT_SECURITY_POLICY, SCRIPT_CONTENT_SECURITY_POLICY, STYLE};

use crate::app::{Reply, TestApp};

/// `path` with each `{parameter}` filled with a value no record has.
fn filled(path: &str) -> String {
    path.split('/')
        .map(|part| if part.starts_with('{') { "none" } else { part })
        .collect::<Vec<_>>()
        .join("/")
}

/// `policy` with its `form-action` as the shell's (the consent page adds the client's origin
/// to it, so the approval's redirect may leave).
fn shell_family(policy: &str) -> String {
    policy
        .split("; ")
        .map(|directive| {
            if directive.starts_with("form-action 'self'") {
                "form-action 'self'"
            } else {
                directive
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// How every document of the shell starts.
const HEAD: &str =
    "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\"";

/// What is wrong with an HTML answer, against the shell (nothing: empty).
fn off_the_shell(reply: &Reply) -> Vec<&'static str> {
    let html = &reply.text;
    let header = |name| reply.header(name).unwrap_or_default();
    let policy = shell_family(header("content-security-policy"));
    let policies = [CONTENT_SECURITY_POLICY, SCRIPT_CONTENT_SECURITY_POLICY];
    let checks = [
        (html.starts_with(HEAD), "the head"),
        (html.contains(&format!("<style>{STYLE}")), "the stylesheet"),
        (html.matches("<style>").count() == 1, "one style element"),
        (
            html.contains("</head><body><nav><a href="),
            "the navigation",
        ),
        (html.contains("</nav><main>"), "main after the navigation"),
        (html.ends_with("</main></body></html>"), "main last"),
        (policies.contains(&policy.as_str()), "the policy"),
        (
            header("content-type") == "text/html; charset=utf-8",
            "the type",
        ),
        (header("cache-control") == "no-store", "no-store"),
        (header("x-frame-options") == "DENY", "never framed"),
        (header("referrer-policy") == "no-referrer", "no referrer"),
    ];
    checks
        .into_iter()
        .filter(|(holds, _)| !holds)
        .map(|(_, what)| what)
        .collect()
}

#[test]
fn every_html_page_of_the_hub_linkdbots_and_ronin_renders_through_the_one_shell() {
    let app = TestApp::start();
    let signed_in = app.browser();
    signed_in.sign_up(
        "shell@example.org",
        "Shell Person",
        "correct horse battery staple",
    );
    let signed_out = app.browser();
    let mut paths: Vec<String> = kd_karmadue::http::route_paths(&app.hub)
        .iter()
        .map(|path| filled(path))
        .collect();
    paths.push("/no-such-page".to_owned());
    let mut pages = BTreeSet::new();
    let mut offenders = Vec::new();
    for path in &paths {
        for reply in [signed_out.get(path), signed_in.get(path)] {
            let kind = reply.header("content-type").unwrap_or_default();
            if !kind.starts_with("text/html") {
                continue;
            }
            pages.insert(path.clone());
            let wrong = off_the_shell(&reply);
            if !wrong.is_empty() {
                offenders.push(format!("{path} ({}): {wrong:?}", reply.status));
            }
        }
    }
    assert!(offenders.is_empty(), "pages off the shell: {offenders:#?}");
    // The walk reached the pages of all three services, so the check above is not empty.
    for page in [
        "/",
        "/forum",
        "/signin",
        "/you",
        "/inbox",
        "/linkdbots/dashboard/queue",
        "/linkdbots/benchmarks",
        "/linkdbots/benchmarks/none",
        "/ronin",
    ] {
        assert!(
            pages.contains(page),
            "{page} was not an HTML page: {pages:?}"
        );
    }
}

#[test]
fn ronin_s_page_alone_lets_a_script_run_and_only_from_this_hub() {
    let app = TestApp::start();
    let ronin = app.request("GET", "/ronin", None, &[]);
    assert_eq!(ronin.status, 200);
    assert_eq!(
        ronin.header("content-security-policy"),
        Some(SCRIPT_CONTENT_SECURITY_POLICY)
    );
    for path in ["/", "/forum", "/signin", "/linkdbots/benchmarks"] {
        let reply = app.request("GET", path, None, &[]);
        assert_eq!(
            reply.header("content-security-policy"),
            Some(CONTENT_SECURITY_POLICY),
            "{path}"
        );
    }
}
