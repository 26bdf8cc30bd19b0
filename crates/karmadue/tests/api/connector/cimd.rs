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
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncache-control: max-age=600\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
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
            "cannot be used",
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
    let eleventh = browser.get(&authorize_path(&app, &format!("{url}?n=10")));
    assert!(
        eleventh.text.contains("Too many clients"),
        "{}",
        eleventh.text
    );
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
