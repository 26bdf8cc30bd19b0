//! The client's address behind a trusted reverse proxy (`--trusted-proxies`; decision 105).

use kd_core::config::TrustedProxies;
use kd_core::tiers::AccessTiers;
use serde_json::Value;

use crate::app::TestApp;

/// An anonymous `get_resource` read with `X-Forwarded-For: forwarded` (none when empty).
fn read(app: &TestApp, forwarded: &str) -> Value {
    let headers: Vec<(&str, &str)> = if forwarded.is_empty() {
        Vec::new()
    } else {
        vec![("x-forwarded-for", forwarded)]
    };
    app.call_text(
        "get_resource",
        r#"{"resource_id":"kd:res:npm:nothing-here"}"#,
        &headers,
    )
    .0
}

fn limited(reply: &Value) -> bool {
    reply["error"]["code"] == "rate_limited"
}

#[test]
fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_anonymous_allowance() {
    // The tests connect from 127.0.0.1: here that is the proxy.
    let app = TestApp::start_with(|config| {
        config.access_tiers = AccessTiers::default();
        config.trusted_proxies = TrustedProxies::parse("127.0.0.1, 10.0.0.0/8").unwrap();
    });
    let before = app.log_len();
    for index in 0..30 {
        let reply = read(&app, "203.0.113.7");
        assert!(!limited(&reply), "call {index}: {reply}");
    }
    assert!(limited(&read(&app, "203.0.113.7")));
    // The nearest untrusted hop is the client: what it wrote to the left changes nothing, and
    // trusted hops to its right are skipped.
    assert!(limited(&read(&app, "198.51.100.1, 203.0.113.7")));
    assert!(limited(&read(&app, "203.0.113.7, 10.1.2.3")));
    // A line the hub cannot read as ASCII keeps its place: it cannot move the client's own
    // earlier line into the place of the hop the proxy appended.
    let reply = app
        .call_text(
            "get_resource",
            r#"{"resource_id":"kd:res:npm:nothing-here"}"#,
            &[
                ("x-forwarded-for", "6.6.6.6"),
                ("x-forwarded-for", "\u{e9}t\u{e9}, 203.0.113.7"),
            ],
        )
        .0;
    assert!(limited(&reply), "{reply}");
    // Another client behind the same proxy has its own 30.
    let other = read(&app, "203.0.113.8");
    assert!(!limited(&other), "{other}");
    assert_eq!(other["error"]["code"], "not_found");
    // The proxy's own requests (no header) count for the proxy.
    assert!(!limited(&read(&app, "")));
    // REST reads the same address.
    let (status, _) = app.rest(
        "get_resource",
        r#"{"resource_id":"kd:res:npm:x"}"#,
        &[("x-forwarded-for", "203.0.113.7")],
    );
    assert_eq!(status, 429);
    let (status, _) = app.rest(
        "get_resource",
        r#"{"resource_id":"kd:res:npm:x"}"#,
        &[("x-forwarded-for", "203.0.113.9")],
    );
    assert_eq!(status, 404);
    assert_eq!(app.log_len(), before, "reads and refusals wrote nothing");
}

#[test]
fn without_a_trusted_proxy_x_forwarded_for_is_ignored() {
    let app = TestApp::start_with(|config| config.access_tiers = AccessTiers::default());
    for index in 0..30 {
        let reply = read(&app, &format!("203.0.113.{index}"));
        assert!(!limited(&reply), "call {index}: {reply}");
    }
    // A new header value does not buy a new allowance: every call came from 127.0.0.1.
    assert!(limited(&read(&app, "198.51.100.77")));
    assert!(limited(&read(&app, "")));
}

#[test]
fn a_trusted_proxy_that_is_not_the_peer_changes_nothing() {
    // Trusting some other address: requests from 127.0.0.1 keep it, whatever they forward.
    let app = TestApp::start_with(|config| {
        config.access_tiers = AccessTiers::default();
        config.trusted_proxies = TrustedProxies::parse("192.0.2.1").unwrap();
    });
    for index in 0..30 {
        assert!(!limited(&read(&app, &format!("203.0.113.{index}"))));
    }
    assert!(limited(&read(&app, "198.51.100.77")));
}
