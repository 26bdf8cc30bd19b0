use super::*;

use std::io::{Read, Write};
use std::sync::mpsc;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

#[test]
fn the_refused_ranges_are_refused_and_public_addresses_pass() {
    let policy = Policy::default();
    for address in [
        "127.0.0.1",
        "127.255.255.254",
        "10.1.2.3",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "100.127.255.255",
        "0.0.0.0",
        "0.1.2.3",
        "255.255.255.255",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "192.0.2.1",
        "198.51.100.7",
        "203.0.113.9",
        "198.18.0.1",
        "198.19.255.255",
        "192.0.0.8",
        "::",
        "::1",
        "fc00::1",
        "fd12:3456::1",
        "fe80::1",
        "ff02::1",
        "2001:db8::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "::127.0.0.1",
        "::10.0.0.1",
        "64:ff9b::7f00:1",
        "64:ff9b::a9fe:a9fe",
        "2002:7f00:1::1",
        "2002:c0a8:101::1",
        "2001:0:4136:e378::1",
    ] {
        assert!(
            refusal(ip(address), &policy).is_some(),
            "{address} should be refused"
        );
    }
    for address in [
        "1.1.1.1",
        "8.8.8.8",
        "93.184.216.34",
        "100.63.255.255",
        "100.128.0.1",
        "172.15.255.255",
        "172.32.0.1",
        "169.253.0.1",
        "2606:4700:4700::1111",
        "2a00:1450:4001:81b::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::1",
    ] {
        assert_eq!(refusal(ip(address), &policy), None, "{address}");
    }
}

#[test]
fn the_operator_setting_lets_local_networks_through_and_nothing_else() {
    let policy = Policy::new(true);
    for address in [
        "127.0.0.1",
        "10.0.0.1",
        "192.168.0.10",
        "100.64.0.1",
        "::1",
        "fd00::1",
        "::ffff:127.0.0.1",
    ] {
        assert_eq!(refusal(ip(address), &policy), None, "{address}");
    }
    for address in [
        // Link-local holds the cloud metadata address: never let through.
        "169.254.169.254",
        "::ffff:169.254.169.254",
        "fe80::1",
        "0.0.0.0",
        "::",
        "224.0.0.1",
        "ff02::1",
        "255.255.255.255",
        "192.0.2.1",
        "2001:db8::1",
        "::ffff:0.0.0.0",
    ] {
        assert!(refusal(ip(address), &policy).is_some(), "{address}");
    }
}

/// What a URL's host resolves to under the default policy (literal hosts: no DNS).
fn vetted(text: &str) -> Result<Vec<SocketAddr>, OutboundError> {
    let policy = Policy::default();
    resolve(&parse_url(text, &policy)?, &policy)
}

#[test]
fn tricky_spellings_of_local_addresses_are_refused() {
    for (url, address) in [
        ("http://2130706433/", "127.0.0.1"),
        ("http://0x7f000001/", "127.0.0.1"),
        ("http://017700000001/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://0/", "0.0.0.0"),
        ("http://0.0.0.0:8080/hook", "0.0.0.0"),
        ("http://[::]/", "::"),
        ("http://[::1]:9000/", "::1"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1"),
        ("http://[::ffff:7f00:1]/", "::ffff:127.0.0.1"),
        (
            "https://169.254.169.254/latest/meta-data/",
            "169.254.169.254",
        ),
        ("http://[::ffff:a9fe:a9fe]/", "::ffff:169.254.169.254"),
        ("http://2852039166/", "169.254.169.254"),
        ("http://[fd00::1]/", "fd00::1"),
        ("http://100.64.1.1/", "100.64.1.1"),
        ("http://[64:ff9b::7f00:1]/", "64:ff9b::7f00:1"),
    ] {
        match vetted(url) {
            Err(OutboundError::Refused {
                address: refused, ..
            }) => {
                assert_eq!(refused, ip(address), "{url}");
            }
            other => panic!("{url}: {other:?}"),
        }
    }
}

#[test]
fn a_name_is_vetted_by_what_it_resolves_to() {
    // localhost resolves through the hosts file to loopback.
    assert!(matches!(
        vetted("http://localhost:8080/"),
        Err(OutboundError::Refused { .. })
    ));
    assert!(matches!(
        vetted("http://8.8.8.8/"),
        Ok(addresses) if addresses == vec!["8.8.8.8:80".parse::<SocketAddr>().unwrap()]
    ));
    assert!(matches!(
        vetted("https://[2606:4700:4700::1111]/"),
        Ok(addresses) if addresses[0].port() == 443
    ));
}

#[test]
fn only_http_and_https_urls_without_credentials_are_taken() {
    let policy = Policy::default();
    for url in [
        "ftp://8.8.8.8/",
        "file:///etc/passwd",
        "gopher://8.8.8.8/",
        "javascript:alert(1)",
        "8.8.8.8/hook",
        "http://user:pw@8.8.8.8/",
        "http://user@8.8.8.8/",
        "",
    ] {
        assert!(
            matches!(parse_url(url, &policy), Err(OutboundError::BadUrl(_))),
            "{url}"
        );
    }
    assert_eq!(
        parse_url("http://8.8.8.8/", &policy.clone().https_only()),
        Err(OutboundError::HttpsRequired)
    );
    assert!(parse_url("https://8.8.8.8/", &policy.https_only()).is_ok());
}

/// A one-connection HTTP server on loopback answering `reply`; reports the request it read.
fn serve_once(reply: Vec<u8>) -> (u16, mpsc::Receiver<Vec<u8>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tell, told) = mpsc::channel();
    std::thread::spawn(move || {
        let Ok((mut stream, _)) = listener.accept() else {
            return;
        };
        let mut request = Vec::new();
        let mut chunk = [0u8; 4096];
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        while let Ok(read) = stream.read(&mut chunk) {
            if read == 0 {
                break;
            }
            request.extend_from_slice(&chunk[..read]);
            let text = String::from_utf8_lossy(&request).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|line| {
                        let (name, value) = line.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if request.len() >= end + 4 + length {
                    break;
                }
            }
        }
        tell.send(request).ok();
        stream.write_all(&reply).ok();
    });
    (port, told)
}

#[test]
fn a_post_to_loopback_is_made_when_the_operator_allows_it() {
    let (port, told) =
        serve_once(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok".to_vec());
    let request = Request::post(
        format!("http://127.0.0.1:{port}/hook"),
        b"{\"a\":1}".to_vec(),
    )
    .header("X-Test", "yes");
    let response = send_blocking(&request, &Policy::new(true)).unwrap();
    assert_eq!(
        (
            response.status,
            response.body.as_slice(),
            response.content_type.as_deref()
        ),
        (200, b"ok".as_slice(), Some("text/plain"))
    );
    let seen = String::from_utf8(told.recv().unwrap()).unwrap();
    assert!(seen.starts_with("POST /hook HTTP/1.1\r\n"), "{seen}");
    assert!(seen.to_lowercase().contains("x-test: yes"), "{seen}");
    assert!(seen.ends_with("{\"a\":1}"), "{seen}");
}

#[test]
fn loopback_is_never_contacted_by_default() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let request = Request::post(format!("http://127.0.0.1:{port}/"), Vec::new());
    assert!(matches!(
        send_blocking(&request, &Policy::default()),
        Err(OutboundError::Refused { .. })
    ));
    assert!(listener.accept().is_err(), "a connection was made");
}

#[test]
fn a_redirect_is_returned_not_followed() {
    let (target, target_told) =
        serve_once(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n".to_vec());
    let (port, _) = serve_once(
        format!("HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:{target}/\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .into_bytes(),
    );
    let response = send_blocking(
        &Request::get(format!("http://127.0.0.1:{port}/")),
        &Policy::new(true),
    )
    .unwrap();
    assert_eq!(response.status, 302);
    assert!(
        target_told
            .recv_timeout(Duration::from_millis(300))
            .is_err(),
        "the redirect was followed"
    );
}

#[test]
fn a_body_over_the_cap_is_refused() {
    let body = "x".repeat(2048);
    let (port, _) = serve_once(
        format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    );
    let policy = Policy {
        max_response_bytes: 1024,
        ..Policy::new(true)
    };
    assert_eq!(
        send_blocking(&Request::get(format!("http://127.0.0.1:{port}/")), &policy),
        Err(OutboundError::TooLarge(1024))
    );
}

#[tokio::test]
async fn a_silent_server_times_out() {
    // Accepts (the backlog) but never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let policy = Policy {
        total_timeout: Duration::from_millis(300),
        ..Policy::new(true)
    };
    let outcome = send(Request::get(format!("http://127.0.0.1:{port}/")), policy).await;
    assert_eq!(outcome, Err(OutboundError::Timeout));
    drop(listener);
}
