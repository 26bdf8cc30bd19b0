//! `--phases ronin-ingest`: Ronin's event ingest beside the raw BIP-340 verify rate of the same
//! run and beside `nostr-rs-relay` ingesting the same signed events (issue 13, "Benchmarks").
//!
//! 1. Before anything is timed, `--ronin-keys` keys each sign a PROFILE (kind 0) and a LISTING
//!    (kind 31100, `d` = `bench`), `created_at` now, with `kd_protocol::nostr::sign_event` on
//!    every core. Every run below ingests exactly these events.
//! 2. The raw verify rate over those events, on one thread and on every core: BIP-340 alone
//!    (`secp256k1::schnorr::verify`, key and signature already decoded) and the event path
//!    (`Event::parse` of the JSON text, the id recomputed, hex decoded, the key parsed, BIP-340).
//! 3. The hub, in this process on a fresh temporary SQLite folder per run (like the other
//!    phases): `POST /ronin/api/v1/events` with one event per request, then (another fresh
//!    hub) batches of 25, from `--ronin-connections` keep-alive connections. A key's two
//!    events go through one connection, PROFILE first (a LISTING needs the PROFILE). Ronin's
//!    limits are not changed: each key signs two events (the limit is 60 a minute), and each
//!    connection speaks from its own loopback address for at most 600 events (the per-address
//!    limit), then reconnects from the next one (`http::next_source`), so the limiter admits
//!    every event and still counts each. Afterwards every event is read back with
//!    `GET /ronin/api/v1/events/<id>`.
//! 4. `nostr-rs-relay` (`relay.rs`), a child process on a temporary folder, over WebSocket from
//!    the same number of connections, one `["EVENT", …]` in flight per connection, each
//!    answered `["OK", id, true]` after the relay's writer stored it.
//!
//! The rate of a run is events acknowledged over the wall time from the first request to the
//! last answer (connections and reconnects included).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use kd_core::clock::SystemClock;
use kd_core::config::Config;
use kd_core::random::SystemRandom;
use kd_protocol::nostr::Event;
use serde_json::{Value, json};

use crate::http::{self, Conn};
use crate::{Args, relay};

/// The hub's events door.
pub const EVENTS_PATH: &str = "/ronin/api/v1/events";
/// The largest batch Ronin takes.
pub const BATCH: usize = 25;
/// Ronin's per-address limit: events a minute one client address may write.
pub const PER_ADDRESS: usize = 600;

/// The pre-signed events, in per-key order (PROFILE, LISTING).
pub struct Signed {
    /// The events.
    pub events: Vec<Event>,
    /// Their JSON texts as sent.
    pub texts: Vec<String>,
    /// Keys that signed them.
    pub keys: usize,
    /// Wall seconds the signing took (all cores).
    pub seconds: f64,
}

/// A deterministic secp256k1 secret for bench key `index` of `family` (never zero, far below
/// the curve order).
pub fn secret(family: u8, index: usize) -> [u8; 32] {
    let mut secret = [0x5a; 32];
    secret[0] = family;
    secret[1..9].copy_from_slice(&(index as u64 + 1).to_le_bytes());
    secret
}

/// Signs one event with `secret` (deterministic auxiliary randomness: bench keys only).
pub fn sign(
    secret: &[u8; 32],
    created_at: u64,
    kind: u16,
    tags: &[&[&str]],
    content: &Value,
) -> Event {
    let tags = tags
        .iter()
        .map(|tag| tag.iter().map(|part| (*part).to_owned()).collect())
        .collect();
    kd_protocol::nostr::sign_event(
        secret,
        created_at,
        kind,
        tags,
        content.to_string(),
        &[0; 32],
    )
    .unwrap_or_else(|error| panic!("a bench event could not be signed: {error}"))
}

/// A PROFILE and a service LISTING (`d` = `bench`) by `secret`.
pub fn profile_and_listing(secret: &[u8; 32], index: usize, created_at: u64) -> [Event; 2] {
    let profile = sign(
        secret,
        created_at,
        0,
        &[],
        &json!({ "name": format!("Bench key {index}") }),
    );
    let listing = sign(
        secret,
        created_at,
        31100,
        &[&["d", "bench"]],
        &json!({ "title": format!("Summaries {index}"), "price_hint": 2, "currency": "USDC" }),
    );
    [profile, listing]
}

/// Signs `keys` keys' PROFILE and LISTING on every core.
pub fn presign(keys: usize, family: u8) -> Signed {
    let started = Instant::now();
    let now = now_s();
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let indexes: Vec<usize> = (0..keys).collect();
    let events: Vec<Event> = std::thread::scope(|scope| {
        let handles: Vec<_> = indexes
            .chunks(keys.div_ceil(threads).max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .flat_map(|&index| profile_and_listing(&secret(family, index), index, now))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap_or_default())
            .collect()
    });
    let texts = events.iter().map(Event::to_json_text).collect();
    Signed {
        events,
        texts,
        keys,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// Unix seconds now.
pub fn now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// The verify rates of this machine over the pre-signed events.
#[derive(Debug, Default)]
pub struct VerifyRates {
    /// BIP-340 alone, one thread, per second.
    pub raw_single: f64,
    /// BIP-340 alone, every core.
    pub raw_all: f64,
    /// Parse, id, hex, key, BIP-340: one thread.
    pub event_single: f64,
    /// The same on every core.
    pub event_all: f64,
}

/// One decoded sample: key, signature, id bytes.
type Decoded = (
    secp256k1::XOnlyPublicKey,
    secp256k1::schnorr::Signature,
    [u8; 32],
);

fn decode(event: &Event) -> anyhow::Result<Decoded> {
    let bytes = |text: &str| hex::decode(text).context("hex");
    let key = secp256k1::XOnlyPublicKey::from_byte_array(
        bytes(&event.pubkey)?
            .try_into()
            .map_err(|_| anyhow::anyhow!("key length"))?,
    )?;
    let sig = secp256k1::schnorr::Signature::from_byte_array(
        bytes(&event.sig)?
            .try_into()
            .map_err(|_| anyhow::anyhow!("signature length"))?,
    );
    let id: [u8; 32] = bytes(&event.id)?
        .try_into()
        .map_err(|_| anyhow::anyhow!("id length"))?;
    Ok((key, sig, id))
}

/// Measures [`VerifyRates`] for about `duration` each, on `cores` threads for the all-core
/// figures (std threads, like the Ed25519 phase).
///
/// # Errors
/// When an event does not verify (a bench bug).
pub fn verify_rates(
    signed: &Signed,
    duration: Duration,
    cores: usize,
) -> anyhow::Result<VerifyRates> {
    let decoded: Vec<Decoded> = signed
        .events
        .iter()
        .map(decode)
        .collect::<anyhow::Result<_>>()?;
    let raw = |(key, sig, id): &Decoded| secp256k1::schnorr::verify(sig, id, key).is_ok();
    let event = |text: &String| Event::parse(text).is_ok_and(|event| event.verify().is_ok());
    Ok(VerifyRates {
        raw_single: rate(&decoded, 1, duration, raw)?,
        raw_all: rate(&decoded, cores, duration, raw)?,
        event_single: rate(&signed.texts, 1, duration, event)?,
        event_all: rate(&signed.texts, cores, duration, event)?,
    })
}

fn rate<T: Sync>(
    samples: &[T],
    threads: usize,
    duration: Duration,
    check: impl Fn(&T) -> bool + Sync,
) -> anyhow::Result<f64> {
    let started = Instant::now();
    let check = &check;
    let counts: Vec<Option<u64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                scope.spawn(move || {
                    let mut done = 0u64;
                    let mut index = thread * 7919;
                    loop {
                        for _ in 0..64 {
                            if !check(std::hint::black_box(&samples[index % samples.len()])) {
                                return None;
                            }
                            index += 1;
                        }
                        done += 64;
                        if started.elapsed() >= duration {
                            return Some(done);
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().ok().flatten())
            .collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let mut total = 0;
    for count in counts {
        total += count.context("a bench event did not verify")?;
    }
    Ok(total as f64 / elapsed)
}

/// What one ingest run measured.
#[derive(Debug, Default)]
pub struct IngestRun {
    /// What ingested: "hub, single", "hub, batches of 25", "nostr-rs-relay".
    pub label: String,
    /// Events per request.
    pub per_request: usize,
    /// Connections.
    pub connections: usize,
    /// Events acknowledged (200 from the hub, `OK true` from the relay).
    pub acknowledged: u64,
    /// Requests sent.
    pub requests: u64,
    /// Wall seconds from the first request to the last answer.
    pub seconds: f64,
    /// Request latencies, microseconds, sorted.
    pub latencies_us: Vec<u32>,
    /// Refusals by code (events).
    pub refused: BTreeMap<String, u64>,
    /// Events read back afterwards (`None`: not checked).
    pub stored: Option<u64>,
    /// Connections opened (reconnects from a fresh address included).
    pub connects: u64,
}

impl IngestRun {
    /// Events acknowledged per second.
    pub fn rate(&self) -> f64 {
        self.acknowledged as f64 / self.seconds.max(1e-9)
    }

    /// The `q` quantile of the request latencies, milliseconds.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        quantile_ms(&self.latencies_us, q)
    }
}

/// The `q` quantile of sorted microseconds, in milliseconds.
pub fn quantile_ms(sorted_us: &[u32], q: f64) -> f64 {
    if sorted_us.is_empty() {
        return 0.0;
    }
    let rank = ((sorted_us.len() - 1) as f64 * q).round() as usize;
    f64::from(sorted_us[rank.min(sorted_us.len() - 1)]) / 1000.0
}

/// Everything the phase measured.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Events pre-signed, keys, seconds.
    pub events: usize,
    /// Keys.
    pub keys: usize,
    /// Seconds the pre-signing took.
    pub presign_seconds: f64,
    /// Cores.
    pub cores: usize,
    /// The verify rates.
    pub verify: VerifyRates,
    /// The runs, hub first; the relay's last when it ran.
    pub runs: Vec<IngestRun>,
    /// Why the relay did not run.
    pub relay_skipped: Option<String>,
}

/// Runs the whole phase.
///
/// # Errors
/// When a hub cannot be opened, a connection fails, or the relay misbehaves.
pub fn measure(
    args: &Args,
    server: &tokio::runtime::Runtime,
    cores: usize,
) -> anyhow::Result<Outcome> {
    let say = |text: &str| {
        if !args.json {
            println!("{text}");
        }
    };
    say("ronin-ingest: pre-signing PROFILE + LISTING per key ...");
    let signed = Arc::new(presign(args.ronin_keys, 1));
    say("ronin-ingest: raw BIP-340 verify over the same events ...");
    let verify = verify_rates(
        &signed,
        Duration::from_secs_f64(args.verify_duration),
        cores,
    )?;
    let mut outcome = Outcome {
        events: signed.events.len(),
        keys: signed.keys,
        presign_seconds: signed.seconds,
        cores,
        verify,
        ..Outcome::default()
    };
    for per_request in [1, BATCH] {
        say(&format!(
            "ronin-ingest: the hub, {per_request} event(s) a request ..."
        ));
        outcome
            .runs
            .push(hub_run(args, server, &signed, per_request)?);
    }
    match &args.nostr_rs_relay {
        Some(path) => {
            say("ronin-ingest: nostr-rs-relay over WebSocket ...");
            outcome.runs.push(relay::ingest(
                Path::new(path),
                &signed.texts,
                &signed.events,
                args,
            )?);
        }
        None => {
            let why = format!(
                "no --nostr-rs-relay (or KD_BENCH_NOSTR_RS_RELAY): install it with `{}`",
                relay::INSTALL
            );
            say(&format!("ronin-ingest: skipping the relay column: {why}"));
            outcome.relay_skipped = Some(why);
        }
    }
    Ok(outcome)
}

/// One run against a fresh in-process hub.
fn hub_run(
    args: &Args,
    server: &tokio::runtime::Runtime,
    signed: &Arc<Signed>,
    per_request: usize,
) -> anyhow::Result<IngestRun> {
    let dir = tempfile::tempdir()?;
    let listener = server.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let addr = listener.local_addr()?;
    let config = Config::new(addr, dir.path().join("data"), None);
    let hub = kd_karmadue::open(config, Arc::new(SystemClock), Arc::new(SystemRandom))?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = server.spawn(kd_karmadue::serve(listener, hub, async {
        let _ = stopped.await;
    }));
    let connections = args.ronin_connections;
    let threads = args.client_threads;
    let signed = Arc::clone(signed);
    let client = std::thread::Builder::new().name("kd-client".into()).spawn(
        move || -> anyhow::Result<IngestRun> {
            let runtime = crate::client_runtime(threads)?;
            runtime.block_on(async {
                let mut run = post_all(addr, &signed.texts, connections, per_request).await?;
                run.stored = Some(count_stored(addr, &signed.events, connections).await?);
                Ok(run)
            })
        },
    )?;
    let run = client
        .join()
        .map_err(|_| anyhow::anyhow!("the client thread panicked"))?;
    let _ = stop.send(());
    server.block_on(served)??;
    run
}

/// The requests of connection `connection`: its keys' events in order, `per_request` a
/// request (a JSON array when more than one), each with its event count.
fn plan(
    host: &str,
    texts: &[String],
    connections: usize,
    connection: usize,
    per_request: usize,
) -> Vec<(Vec<u8>, usize)> {
    let mine: Vec<&String> = texts
        .chunks(2)
        .skip(connection)
        .step_by(connections)
        .flatten()
        .collect();
    mine.chunks(per_request)
        .map(|chunk| {
            let body = if per_request == 1 {
                chunk[0].clone()
            } else {
                format!(
                    "[{}]",
                    chunk
                        .iter()
                        .map(|text| text.as_str())
                        .collect::<Vec<_>>()
                        .join(",")
                )
            };
            (http::post(host, EVENTS_PATH, &body, &[]), chunk.len())
        })
        .collect()
}

/// POSTs every event from `connections` connections; times the whole.
async fn post_all(
    addr: SocketAddr,
    texts: &[String],
    connections: usize,
    per_request: usize,
) -> anyhow::Result<IngestRun> {
    let host = addr.to_string();
    let plans: Vec<_> = (0..connections)
        .map(|connection| plan(&host, texts, connections, connection, per_request))
        .collect();
    let started = Instant::now();
    let tasks: Vec<_> = plans
        .into_iter()
        .map(|plan| tokio::spawn(post_plan(addr, plan)))
        .collect();
    let mut run = IngestRun {
        label: if per_request == 1 {
            "hub, one event a POST".into()
        } else {
            format!("hub, batches of {per_request}")
        },
        per_request,
        connections,
        ..IngestRun::default()
    };
    for task in tasks {
        let part = task.await??;
        run.acknowledged += part.acknowledged;
        run.requests += part.requests;
        run.connects += part.connects;
        run.latencies_us.extend(part.latencies_us);
        for (code, events) in part.refused {
            *run.refused.entry(code).or_default() += events;
        }
    }
    run.seconds = started.elapsed().as_secs_f64();
    run.latencies_us.sort_unstable();
    Ok(run)
}

/// Sends one connection's requests in order, reconnecting from a fresh loopback address
/// before an address would carry more than [`PER_ADDRESS`] events.
async fn post_plan(addr: SocketAddr, plan: Vec<(Vec<u8>, usize)>) -> anyhow::Result<IngestRun> {
    let mut run = IngestRun {
        latencies_us: Vec::with_capacity(plan.len()),
        ..IngestRun::default()
    };
    let mut conn: Option<Conn> = None;
    let mut carried = 0;
    for (bytes, events) in plan {
        let open = match conn.take() {
            Some(open) if carried + events <= PER_ADDRESS => open,
            _ => {
                carried = 0;
                run.connects += 1;
                Conn::connect_from(http::next_source(), addr).await?
            }
        };
        let conn = conn.insert(open);
        carried += events;
        let sent = Instant::now();
        let response = conn.round_trip(&bytes).await?;
        run.latencies_us
            .push(u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX));
        run.requests += 1;
        if response.status == 200 {
            run.acknowledged += events as u64;
        } else {
            *run.refused
                .entry(refusal_code(response.status, response.body))
                .or_default() += events as u64;
        }
    }
    Ok(run)
}

/// Ronin's refusal prefix (`invalid`, `rate-limited`, …) with the status.
pub fn refusal_code(status: u16, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let prefix = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|body| {
            body["error"]
                .as_str()
                .map(|error| error.split(':').next().unwrap_or_default().to_owned())
        })
        .unwrap_or_else(|| "?".into());
    format!("{status} {prefix}")
}

/// Reads every event back (`GET /ronin/api/v1/events/<id>`); returns how many were found.
async fn count_stored(
    addr: SocketAddr,
    events: &[Event],
    connections: usize,
) -> anyhow::Result<u64> {
    let host = addr.to_string();
    let ids: Vec<Vec<String>> = (0..connections)
        .map(|connection| {
            events
                .iter()
                .skip(connection)
                .step_by(connections)
                .map(|event| event.id.clone())
                .collect()
        })
        .collect();
    let tasks: Vec<_> = ids
        .into_iter()
        .map(|ids| {
            let host = host.clone();
            tokio::spawn(async move {
                let mut conn = Conn::connect(addr).await?;
                let mut found = 0u64;
                for id in ids {
                    let response = conn
                        .round_trip(&http::get(&host, &format!("{EVENTS_PATH}/{id}"), &[]))
                        .await?;
                    if response.status == 200 && http::find(response.body, id.as_bytes()).is_some()
                    {
                        found += 1;
                    }
                }
                anyhow::Ok(found)
            })
        })
        .collect();
    let mut found = 0;
    for task in tasks {
        found += task.await??;
    }
    Ok(found)
}

/// Refuses settings the phase cannot honour.
pub fn check(args: &Args) -> anyhow::Result<()> {
    if args.ronin_keys == 0 || args.ronin_connections == 0 {
        bail!("--ronin-keys and --ronin-connections must be at least 1");
    }
    Ok(())
}
