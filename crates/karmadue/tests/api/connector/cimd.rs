//! Client ID Metadata Documents (docs/decisions.md 408): a client_id that is the URL of its
//! metadata document, served here on loopback (the hub runs with --outbound-allow-private,
//! which is what lets it reach a loopback document over http), fetched once, cached, and
//! refused with `invalid_client` when the document does not fit.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

/// A loopback server answering every request with `status` and `body` (and `Cache-Control:
/// max-age=600`); counts the requests. Answers the document URL and the counter.
fn serve(
    path: &str,
    status: u16,
    body: impl Fn(&str) -> String + Send + 'static,
) -> (String, Arc<AtomicUsize>) {
    serve_as(path, status, "application/json", body)
}

/// [`serve`] with the `Content-Type` given.
fn serve_as(
    path: &str,
    status: u16,
    content_type: &'static str,
    body: impl Fn(&str) -> String + Send + 'static,
) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}{path}",
        listener.local_addr().unwrap().port()
    );
    let hits = Arc::new(AtomicUsize::new(0));
    let (counter, own_url) = (Arc::clone(&hits), url.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut request = Vec::new();
            let mut buffer = [0u8; 1024];
            while !request.windows(4).any(|window| window == b"\r\n\r\n") {
                match stream.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(read) => request.extend_from_slice(&buffer[..read]),
                }
            }
            counter.fetch_add(1, Ordering::SeqCst);
            let text = body(&own_url);
            let reply = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncache-control: max-age=600\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                text.len()
            );
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    (url, hits)
}

fn document(client_id: &str) -> String {
    json!({
        "client_id": client_id,
        "client_name": "Loopback Claude",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
    })
    .to_string()
}

fn hub() -> TestApp {
    TestApp::start_with(|config| config.outbound_allow_private = true)
}

#[test]
fn a_metadata_document_client_connects_without_registering_and_is_fetched_once() {
    let app = hub();
    let metadata = app
        .request("GET", "/.well-known/oauth-authorization-server", None, &[])
        .json();
    assert_eq!(metadata["client_id_metadata_document_supported"], true);
    let (client_id, hits) = serve("/oauth/client.json", 200, document);
    let browser = person(&app, "cimd@example.org");
    let screen = browser.get(&authorize_path(&app, &client_id));
    assert_eq!(screen.status, 200, "{}", screen.text);
    assert!(screen.text.contains("Loopback Claude"), "{}", screen.text);
    let location = decide(&app, &browser, &client_id, "approve", &["outcomes"]);
    let reply = exchange(&app, &client_id, &param(&location, "code").unwrap());
    assert_eq!(reply.status, 200, "{}", reply.text);
    let access = reply.json()["access_token"].as_str().unwrap().to_owned();
    let me = rpc(
        &app,
        CONNECTOR,
        &access,
        "tools/call",
        json!({ "name": "verify_agent", "arguments": {} }),
    );
    assert!(me.text.contains("Loopback Claude"), "{}", me.text);
    // The screen and the approval used one fetch: the copy lasts its max-age (600 s).
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    app.clock.advance_ms(601_000);
    assert_eq!(browser.get(&authorize_path(&app, &client_id)).status, 200);
    assert_eq!(hits.load(Ordering::SeqCst), 2, "fetched again once stale");
}

#[test]
fn documents_that_do_not_fit_are_refused_as_invalid_client() {
    let app = hub();
    let browser = person(&app, "bad@example.org");
    let cases: Vec<(String, &str)> = vec![
        (serve("/other.json", 200, |_| document("https://app.example/client.json")).0, "not this URL"),
        (serve("/missing.json", 404, |_| "{}".into()).0, "HTTP 404"),
        (serve("/text.json", 200, |_| "not json".into()).0, "not a JSON object"),
        (
            serve("/secret.json", 200, |url| {
                json!({ "client_id": url, "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt" }).to_string()
            })
            .0,
            "public clients only",
        ),
        (
            serve("/js.json", 200, |url| json!({ "client_id": url, "redirect_uris": ["javascript:alert(1)"] }).to_string()).0,
            "cannot be used",
        ),
        (
            serve("/big.json", 200, |url| {
                json!({ "client_id": url, "redirect_uris": [REDIRECT], "client_name": "x".repeat(70_000) }).to_string()
            })
            .0,
            "could not be fetched: the response is over 65536 bytes",
        ),
    ];
    for (client_id, why) in cases {
        let screen = browser.get(&authorize_path(&app, &client_id));
        assert_eq!(screen.status, 400, "{client_id}: {}", screen.text);
        assert!(
            screen.text.contains(why),
            "{client_id}: wanted {why:?} in {}",
            screen.text
        );
    }
    // A redirect the document does not list.
    let (client_id, _) = serve("/ok.json", 200, |url| {
        json!({ "client_id": url, "redirect_uris": ["https://elsewhere.example/cb"] }).to_string()
    });
    let screen = browser.get(&authorize_path(&app, &client_id));
    assert_eq!(screen.status, 400, "{}", screen.text);
    // Without the operator's setting a loopback http URL is no document URL: an unknown client.
    let plain = TestApp::start();
    let (client_id, hits) = serve("/client.json", 200, document);
    let visitor = person(&plain, "plain@example.org");
    let screen = visitor.get(&authorize_path(&plain, &client_id));
    assert_eq!(screen.status, 400);
    assert_eq!(hits.load(Ordering::SeqCst), 0, "nothing was fetched");
}

#[test]
fn one_address_causes_at_most_ten_document_fetches_a_minute() {
    let app = hub();
    let (url, hits) = serve("/client.json", 404, |_| "{}".into());
    let browser = person(&app, "many@example.org");
    for n in 0..10 {
        let screen = browser.get(&authorize_path(&app, &format!("{url}?n={n}")));
        assert_eq!(screen.status, 400, "{}", screen.text);
    }
    let before = app.log_len();
    let eleventh = browser.get(&authorize_path(&app, &format!("{url}?n=10")));
    // 429 with Retry-After, in words about document fetches (docs/decisions.md 425).
    assert_eq!(eleventh.status, 429, "{}", eleventh.text);
    let retry: u64 = eleventh.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    assert!(
        eleventh
            .text
            .contains("Too many client metadata documents fetched"),
        "{}",
        eleventh.text
    );
    assert!(!eleventh.text.contains("registered"), "{}", eleventh.text);
    assert_eq!(app.log_len(), before, "a refusal writes nothing");
    assert_eq!(
        hits.load(Ordering::SeqCst),
        10,
        "the eleventh was not fetched"
    );
    // A minute later the address may fetch again.
    app.clock.advance_ms(61_000);
    let later = browser.get(&authorize_path(&app, &format!("{url}?n=11")));
    assert_eq!(later.status, 400, "{}", later.text);
}

/// The tester's findings (docs/decisions.md 422-424, 426): a repeated key and a non-JSON media
/// type are refused in words that say so; nothing is written.
#[test]
fn a_repeated_key_or_a_non_json_media_type_is_refused_in_plain_words() {
    let app = hub();
    let browser = person(&app, "strict@example.org");
    let (twice, _) = serve("/twice.json", 200, |url| {
        format!(
            r#"{{"client_id":"{url}","client_name":"A","client_name":"B","redirect_uris":["{REDIRECT}"]}}"#
        )
    });
    let (html, _) = serve_as("/page.json", 200, "text/html; charset=utf-8", document);
    let (plus_json, _) = serve_as("/plus.json", 200, "application/oauth-client+json", document);
    let before = app.log_len();
    let screen = browser.get(&authorize_path(&app, &twice));
    assert_eq!(screen.status, 400, "{}", screen.text);
    assert!(
        screen
            .text
            .contains("the key &quot;client_name&quot; appears more than once")
            || screen
                .text
                .contains("the key \"client_name\" appears more than once"),
        "{}",
        screen.text
    );
    assert!(!screen.text.contains("string fields"), "{}", screen.text);
    let screen = browser.get(&authorize_path(&app, &html));
    assert_eq!(screen.status, 400, "{}", screen.text);
    assert!(
        screen.text.contains("served as text/html, not as JSON"),
        "{}",
        screen.text
    );
    assert_eq!(app.log_len(), before, "refusals write nothing");
    // An application/…+json type is JSON.
    let screen = browser.get(&authorize_path(&app, &plus_json));
    assert_eq!(screen.status, 200, "{}", screen.text);
}

/// The consent screen and Connected apps show the document's host next to the app's name
/// (docs/decisions.md 424): two apps called the same are told apart.
#[test]
fn the_documents_host_is_shown_next_to_the_apps_name() {
    let app = hub();
    let (client_id, _) = serve("/oauth/client.json", 200, document);
    let host = client_id
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let browser = person(&app, "hosts@example.org");
    let screen = browser.get(&authorize_path(&app, &client_id));
    assert_eq!(screen.status, 200, "{}", screen.text);
    assert!(
        screen.text.contains(&format!(
            "It describes itself in a document on <code>{host}</code>"
        )),
        "{}",
        screen.text
    );
    let location = decide(&app, &browser, &client_id, "approve", &["outcomes"]);
    let reply = exchange(&app, &client_id, &param(&location, "code").unwrap());
    assert_eq!(reply.status, 200, "{}", reply.text);
    let apps = browser.get("/you/apps");
    assert!(
        apps.text.contains(&format!(
            "Loopback Claude (described on <code>{host}</code>)"
        )),
        "{}",
        apps.text
    );
    // A client registered by DCR has no document host.
    let registered = client(&app);
    let screen = browser.get(&authorize_path(&app, &registered));
    assert!(!screen.text.contains("describes itself"), "{}", screen.text);
}

fn expiry(app: &TestApp, client_id: &str) -> Option<i64> {
    let id = client_id.to_owned();
    app.hub
        .store
        .read_blocking(move |conn| {
            kd_karmadue::connector::store::document_expiry(conn, &id)
                .map_err(kd_core::store::StoreError::from)
        })
        .unwrap()
}

/// Expired document copies are pruned by the next fetch's write (docs/decisions.md 426),
/// except a connected app's.
#[test]
fn expired_document_copies_are_pruned_unless_an_app_is_connected() {
    let app = hub();
    let browser = person(&app, "prune@example.org");
    let (idle, _) = serve("/idle.json", 200, document);
    let (connected, _) = serve("/connected.json", 200, document);
    assert_eq!(browser.get(&authorize_path(&app, &idle)).status, 200);
    let location = decide(&app, &browser, &connected, "approve", &["outcomes"]);
    let reply = exchange(&app, &connected, &param(&location, "code").unwrap());
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(expiry(&app, &idle).is_some());
    app.clock.advance_ms(601_000);
    let (later, _) = serve("/later.json", 200, document);
    assert_eq!(browser.get(&authorize_path(&app, &later)).status, 200);
    assert_eq!(expiry(&app, &idle), None, "the stale copy was pruned");
    assert!(
        expiry(&app, &connected).is_some(),
        "a connected app's copy stays"
    );
    assert!(expiry(&app, &later).is_some());
}
