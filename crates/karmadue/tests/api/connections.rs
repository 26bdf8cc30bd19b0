//! Connections at the edge (issue 11, decisions 141–142): header-read, idle and body
//! timeouts, the connection cap, and a shutdown that ends within its grace.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kd_core::clock::ManualClock;
use kd_core::config::Config;
use kd_core::random::SeededRandom;

use crate::app::{START_MS, TestApp};

fn connect(app: &TestApp) -> TcpStream {
    let stream = TcpStream::connect(app.base.trim_start_matches("http://")).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    stream
}

/// Reads until the hub closes the connection (or 15 s pass: a panic); returns what it sent
/// and how long that took.
fn read_until_closed(stream: &mut TcpStream) -> (String, Duration) {
    let started = Instant::now();
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => received.extend_from_slice(&buffer[..n]),
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(error) => panic!("the hub kept the connection open: {error}"),
        }
    }
    (
        String::from_utf8_lossy(&received).into_owned(),
        started.elapsed(),
    )
}

fn quick(config: &mut Config) {
    config.header_read_timeout = Duration::from_secs(1);
    config.body_idle_timeout = Duration::from_secs(1);
}

#[test]
fn a_half_sent_head_and_a_silent_connection_are_closed_after_the_header_timeout() {
    let app = TestApp::start_with(quick);
    let mut silent = connect(&app);
    let mut half = connect(&app);
    half.write_all(b"POST /functions/v1/mcp HTTP/1.1\r\nHost: localhost\r\nContent-")
        .unwrap();
    let (_, waited) = read_until_closed(&mut half);
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    let (sent, waited) = read_until_closed(&mut silent);
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    assert!(!sent.starts_with("HTTP/1.1 2"), "{sent}");
}

#[test]
fn a_kept_alive_connection_is_closed_when_idle_and_a_stalled_body_is_refused() {
    let app = TestApp::start_with(quick);
    let mut idle = connect(&app);
    idle.write_all(b"GET /llms.txt HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let (sent, waited) = read_until_closed(&mut idle);
    assert!(sent.starts_with("HTTP/1.1 200"), "{sent}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");

    let mut stalled = connect(&app);
    stalled
        .write_all(
            b"POST /functions/v1/mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"",
        )
        .unwrap();
    let (sent, waited) = read_until_closed(&mut stalled);
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    assert!(!sent.starts_with("HTTP/1.1 2"), "{sent}");
    // The hub still serves.
    assert_eq!(app.request("GET", "/llms.txt", None, &[]).status, 200);
}

#[test]
fn past_the_connection_cap_new_connections_are_closed_and_counted() {
    let app = TestApp::start_with(|config| config.max_connections = 3);
    let held: Vec<TcpStream> = (0..3).map(|_| connect(&app)).collect();
    // Let the hub accept them before the fourth arrives.
    std::thread::sleep(Duration::from_millis(300));
    let mut refused = connect(&app);
    let _ = refused.write_all(b"GET /llms.txt HTTP/1.1\r\nHost: localhost\r\n\r\n");
    let (sent, waited) = read_until_closed(&mut refused);
    assert_eq!(sent, "", "a connection past the cap is closed unanswered");
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    drop(held);
    std::thread::sleep(Duration::from_millis(300));
    let metrics = app.request("GET", "/metrics", None, &[]);
    assert_eq!(metrics.status, 200);
    assert!(
        metrics
            .text
            .lines()
            .any(|line| line == "karmadue_connections_refused_total 1"),
        "{}",
        metrics.text
    );
    assert!(
        metrics
            .text
            .contains("# TYPE karmadue_connections_open gauge")
    );
}

/// A connection to the hub from `source` (another loopback address: Linux routes all of
/// 127.0.0.0/8 to the loopback interface).
fn connect_from(app: &TestApp, source: &str) -> TcpStream {
    let hub: std::net::SocketAddr = app.base.trim_start_matches("http://").parse().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
        socket.connect(hub).await.unwrap()
    });
    let stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    stream
}

#[test]
fn an_address_past_its_share_of_the_cap_is_refused_while_another_is_served() {
    let app = TestApp::start_with(|config| {
        config.max_connections = 10;
        config.max_connections_per_address = 2;
    });
    // One client holds its share with two silent connections.
    let held: Vec<TcpStream> = (0..2).map(|_| connect_from(&app, "127.0.0.2")).collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut third = connect_from(&app, "127.0.0.2");
    let _ = third.write_all(b"GET /llms.txt HTTP/1.1\r\nHost: localhost\r\n\r\n");
    let (sent, waited) = read_until_closed(&mut third);
    assert_eq!(
        sent, "",
        "a connection past the address's share is closed unanswered"
    );
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    // Another address is served meanwhile, with room left under the cap.
    let mut other = connect_from(&app, "127.0.0.3");
    other
        .write_all(b"GET /llms.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let (sent, _) = read_until_closed(&mut other);
    assert!(sent.starts_with("HTTP/1.1 200"), "{sent}");
    // A closed connection gives its slot back.
    drop(held);
    std::thread::sleep(Duration::from_millis(300));
    let mut again = connect_from(&app, "127.0.0.2");
    again
        .write_all(b"GET /llms.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let (sent, _) = read_until_closed(&mut again);
    assert!(sent.starts_with("HTTP/1.1 200"), "{sent}");
    let metrics = app.request("GET", "/metrics", None, &[]);
    for line in [
        "karmadue_connections_refused_per_address_total 1",
        "karmadue_connections_refused_total 1",
    ] {
        assert!(
            metrics.text.lines().any(|shown| shown == line),
            "{line}: {}",
            metrics.text
        );
    }
}

/// Everything `serve` logs, in the order it logged it.
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn shutdown_ends_within_the_grace_despite_a_half_sent_request_and_says_so() {
    use tracing::instrument::WithSubscriber;
    let dir = tempfile::tempdir().unwrap();
    let (runtime, listener, mut config) = crate::app::runtime_and_config(dir.path());
    let addr = config.listen;
    config.body_idle_timeout = Duration::from_secs(60);
    config.shutdown_grace = Duration::from_secs(1);
    let hub = kd_karmadue::open(
        config,
        Arc::new(ManualClock::new(START_MS)),
        Arc::new(SeededRandom::new(7)),
    )
    .unwrap();
    let log = Captured::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = runtime.spawn(
        kd_karmadue::serve(listener, hub, async {
            let _ = stopped.await;
        })
        .with_subscriber(subscriber),
    );
    let mut half = TcpStream::connect(addr).unwrap();
    half.set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    half.write_all(
        b"POST /functions/v1/mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    stop.send(()).unwrap();
    let result = runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(5), served).await })
        .expect("serve returned within the grace");
    assert!(result.unwrap().is_ok());
    assert!(started.elapsed() < Duration::from_secs(4));
    let (_, waited) = read_until_closed(&mut half);
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    let down = text
        .find("shutting down")
        .unwrap_or_else(|| panic!("{text}"));
    let end = text.find("stopped").unwrap_or_else(|| panic!("{text}"));
    assert!(down < end, "{text}");
}
