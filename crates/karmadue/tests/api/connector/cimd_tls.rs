//! An https metadata document on loopback (docs/decisions.md 420-422): served with a
//! certificate of a throwaway test CA (`tests/api/fixtures/tls`, with how it was made), the
//! hub fetches it when the operator trusts that CA (`--outbound-ca-file`), and refuses it in
//! plain words when not.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::*;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/api/fixtures/tls");

/// A loopback https server (the test CA's leaf for 127.0.0.1) answering every request with the
/// metadata document of its own URL; counts the requests it read. Answers the URL and the
/// counter.
fn serve_tls(path: &str) -> (String, Arc<AtomicUsize>) {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(format!("{FIXTURES}/leaf.pem"))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
    let key = PrivateKeyDer::from_pem_file(format!("{FIXTURES}/leaf.key")).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "https://127.0.0.1:{}{path}",
        listener.local_addr().unwrap().port()
    );
    let hits = Arc::new(AtomicUsize::new(0));
    let (counter, own_url) = (Arc::clone(&hits), url.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let connection = rustls::ServerConnection::new(Arc::clone(&config)).unwrap();
            let mut tls = rustls::StreamOwned::new(connection, stream);
            let mut request = Vec::new();
            let mut buffer = [0u8; 1024];
            // A client refusing the certificate ends the handshake here: nothing is read.
            while !request.windows(4).any(|window| window == b"\r\n\r\n") {
                match tls.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(read) => request.extend_from_slice(&buffer[..read]),
                }
            }
            if !request.ends_with(b"\r\n\r\n") {
                continue;
            }
            counter.fetch_add(1, Ordering::SeqCst);
            let text = document(&own_url);
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncache-control: max-age=600\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                text.len()
            );
            let _ = tls.write_all(reply.as_bytes());
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    });
    (url, hits)
}

fn document(client_id: &str) -> String {
    json!({
        "client_id": client_id,
        "client_name": "TLS Claude",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
    })
    .to_string()
}

#[test]
fn an_https_document_from_the_operators_ca_is_fetched_and_without_it_refused_in_plain_words() {
    let ca = kd_core::outbound::TrustedCas::from_pem_file(std::path::Path::new(&format!(
        "{FIXTURES}/ca.pem"
    )))
    .unwrap();
    assert_eq!(ca.len(), 1);
    let trusting = TestApp::start_with(|config| {
        config.outbound_allow_private = true;
        config.outbound_trusted_cas = ca;
    });
    let (client_id, hits) = serve_tls("/oauth/client.json");
    let browser = person(&trusting, "tls@example.org");
    let screen = browser.get(&authorize_path(&trusting, &client_id));
    assert_eq!(screen.status, 200, "{}", screen.text);
    assert!(screen.text.contains("TLS Claude"), "{}", screen.text);
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    let location = decide(&trusting, &browser, &client_id, "approve", &["outcomes"]);
    let reply = exchange(&trusting, &client_id, &param(&location, "code").unwrap());
    assert_eq!(reply.status, 200, "{}", reply.text);

    // The same document, the public roots only: refused before any request byte is sent.
    let plain = TestApp::start_with(|config| config.outbound_allow_private = true);
    let (client_id, hits) = serve_tls("/oauth/client.json");
    let visitor = person(&plain, "untrusted@example.org");
    let before = plain.log_len();
    let screen = visitor.get(&authorize_path(&plain, &client_id));
    assert_eq!(screen.status, 400, "{}", screen.text);
    assert!(
        screen.text.contains(&format!(
            "The client&#39;s metadata document at {client_id} could not be fetched: its TLS certificate is not trusted."
        )) || screen.text.contains(&format!(
            "The client's metadata document at {client_id} could not be fetched: its TLS certificate is not trusted."
        )),
        "{}",
        screen.text
    );
    for internal in ["rustls", "UnknownIssuer", "invalid peer certificate", "io:"] {
        assert!(
            !screen.text.contains(internal),
            "{internal}: {}",
            screen.text
        );
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0, "no request was sent");
    assert_eq!(plain.log_len(), before, "a refusal writes nothing");
}
