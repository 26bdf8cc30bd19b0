//! The comparison column of `ronin-ingest`: `nostr-rs-relay` (crates.io, 0.8.12) ingesting the
//! same signed events on the same machine.
//!
//! The relay runs as a child process on a temporary folder with a config file of its own:
//! SQLite (its default engine), listening on a free loopback port, no rate limits
//! (`messages_per_sec` and `subscriptions_per_min` unset), no NIP-05 check, no pay-to-relay.
//! `--ronin-connections` WebSocket connections each send their keys' events as
//! `["EVENT", <event>]`, one at a time, waiting for `["OK", <id>, true]` (which the relay sends
//! after its writer stored the event). Afterwards every id is asked back with `REQ` filters
//! of 500 ids on one connection and the `EVENT` answers are counted.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures_util::{SinkExt, StreamExt};
use kd_protocol::nostr::Event;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

use crate::Args;
use crate::ronin_ingest::IngestRun;

/// The relay column's label.
pub const LABEL: &str = "nostr-rs-relay";

/// How to install the relay kd-bench compares with.
pub const INSTALL: &str = "apt-get install -y protobuf-compiler && cargo install nostr-rs-relay --version 0.8.12 --locked --root /work/tools/nostr-rs-relay (then --nostr-rs-relay /work/tools/nostr-rs-relay/bin/nostr-rs-relay)";

/// A running relay; killed when dropped.
struct Relay {
    child: tokio::process::Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

/// The config file: everything else is the relay's default.
fn config(dir: &Path, port: u16) -> String {
    format!(
        "[info]\nrelay_url = \"ws://127.0.0.1:{port}/\"\nname = \"kd-bench\"\n\n\
         [database]\ndata_directory = \"{}\"\n\n\
         [network]\naddress = \"127.0.0.1\"\nport = {port}\n\n\
         [options]\nreject_future_seconds = 1800\n\n\
         [limits]\n\n[authorization]\n\n[verified_users]\nmode = \"disabled\"\n",
        dir.display()
    )
}

impl Relay {
    async fn start(binary: &Path) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        // A free port: bind, read, release (the relay binds it a moment later).
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let config_path = dir.path().join("config.toml");
        std::fs::write(&config_path, config(dir.path(), port))?;
        let child = tokio::process::Command::new(binary)
            .arg("--config")
            .arg(&config_path)
            .arg("--db")
            .arg(dir.path())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let mut relay = Self {
            child,
            addr,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while tokio::net::TcpStream::connect(addr).await.is_err() {
            if let Some(status) = relay.child.try_wait()? {
                bail!("nostr-rs-relay exited at start ({status})");
            }
            if Instant::now() > deadline {
                bail!("nostr-rs-relay did not listen on {addr} within 30 s");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(relay)
    }

    fn url(&self) -> String {
        format!("ws://{}/", self.addr)
    }
}

/// Ingests `texts` (the events `events`, same order) into a fresh relay at `binary`.
///
/// # Errors
/// When the relay cannot start or a connection fails.
pub fn ingest(
    binary: &Path,
    texts: &[String],
    events: &[Event],
    args: &Args,
) -> anyhow::Result<IngestRun> {
    let runtime = crate::client_runtime(args.client_threads)?;
    let connections = args.ronin_connections;
    runtime.block_on(async {
        let relay = Relay::start(binary).await?;
        let url = relay.url();
        let plans: Vec<Vec<(String, String)>> = (0..connections)
            .map(|connection| {
                texts
                    .chunks(2)
                    .zip(events.chunks(2))
                    .skip(connection)
                    .step_by(connections)
                    .flat_map(|(texts, events)| {
                        texts
                            .iter()
                            .zip(events)
                            .map(|(text, event)| (format!("[\"EVENT\",{text}]"), event.id.clone()))
                    })
                    .collect()
            })
            .collect();
        let mut sockets = Vec::with_capacity(connections);
        for _ in 0..connections {
            sockets.push(tokio_tungstenite::connect_async(url.as_str()).await?.0);
        }
        let started = Instant::now();
        let tasks: Vec<_> = plans
            .into_iter()
            .zip(sockets)
            .map(|(plan, socket)| tokio::spawn(send_plan(socket, plan)))
            .collect();
        let mut run = IngestRun {
            label: LABEL.into(),
            per_request: 1,
            connections,
            connects: connections as u64,
            ..IngestRun::default()
        };
        for task in tasks {
            let part = task.await??;
            run.acknowledged += part.acknowledged;
            run.requests += part.requests;
            run.latencies_us.extend(part.latencies_us);
            for (code, n) in part.refused {
                *run.refused.entry(code).or_default() += n;
            }
        }
        run.seconds = started.elapsed().as_secs_f64();
        run.latencies_us.sort_unstable();
        run.stored = Some(count_stored(&url, events).await?);
        drop(relay);
        Ok(run)
    })
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next text message, or an error when the socket ends.
async fn next_text(socket: &mut Socket) -> anyhow::Result<Value> {
    loop {
        match socket
            .next()
            .await
            .context("the relay closed the connection")??
        {
            Message::Text(text) => return Ok(serde_json::from_str(text.as_str())?),
            Message::Close(_) => bail!("the relay closed the connection"),
            _ => {}
        }
    }
}

async fn send_plan(mut socket: Socket, plan: Vec<(String, String)>) -> anyhow::Result<IngestRun> {
    let mut run = IngestRun {
        latencies_us: Vec::with_capacity(plan.len()),
        ..IngestRun::default()
    };
    for (message, id) in plan {
        let sent = Instant::now();
        socket.send(Message::Text(message.into())).await?;
        let answer = loop {
            let answer = next_text(&mut socket).await?;
            if answer[0] == "OK" && answer[1] == id.as_str() {
                break answer;
            }
        };
        run.latencies_us
            .push(u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX));
        run.requests += 1;
        if answer[2] == true {
            run.acknowledged += 1;
        } else {
            let reason = answer[3].as_str().unwrap_or_default();
            let code = reason.split(':').next().unwrap_or_default().to_owned();
            *run.refused.entry(format!("OK false {code}")).or_default() += 1;
        }
    }
    socket.close(None).await.ok();
    Ok(run)
}

/// Asks every event back by id, 500 a `REQ`, and counts the `EVENT`s answered.
async fn count_stored(url: &str, events: &[Event]) -> anyhow::Result<u64> {
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await?;
    let mut found = 0u64;
    for (index, chunk) in events.chunks(500).enumerate() {
        let ids: Vec<&str> = chunk.iter().map(|event| event.id.as_str()).collect();
        let sub = format!("kd-bench-{index}");
        let request = serde_json::json!(["REQ", sub, { "ids": ids, "limit": ids.len() }]);
        socket
            .send(Message::Text(request.to_string().into()))
            .await?;
        loop {
            let answer = next_text(&mut socket).await?;
            if answer[1] != sub.as_str() {
                continue;
            }
            match answer[0].as_str() {
                Some("EVENT") => found += 1,
                Some("EOSE") => break,
                Some("CLOSED") => bail!("the relay closed a REQ: {answer}"),
                _ => {}
            }
        }
        socket
            .send(Message::Text(
                serde_json::json!(["CLOSE", sub]).to_string().into(),
            ))
            .await?;
    }
    Ok(found)
}
