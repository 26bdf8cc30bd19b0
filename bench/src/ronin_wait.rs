//! `--phases ronin-wait`: `--waiters` concurrent `GET /ronin/api/v1/me/wait?timeout=55` held by
//! as many keys, the hub's memory with them held, and how fast a matching event wakes a
//! waiter (issue 13: RSS <= 300 MB, wake p99 <= 50 ms).
//!
//! - The hub is the `karmadue` binary (`--karmadue`, default: beside `kd-bench`), started as a
//!   child process (`karmadue serve`, SQLite in a temporary folder, no bundled catalog,
//!   `--max-connections` above the waiters), so the resident set read from
//!   `/proc/<pid>/status` is the hub's alone, not the client's.
//! - Setup (not timed): `--wake-sample` of the waiting keys publish a PROFILE and a service
//!   LISTING, and as many buyer keys a PROFILE (batches of 25).
//! - Each waiter's NIP-98 auth event (kind 27235: `u` the exact URL, `method` GET, a `nonce`)
//!   is signed just before the waits open (the hub takes them within 60 s). The waiters
//!   connect from loopback addresses of 50 connections each (the hub's default cap is 64 per
//!   address), at most 256 connecting at once. The open-file limit of kd-bench is raised to
//!   its hard limit (the child inherits it); below waiters + 1,000 the phase stops and says
//!   `ulimit -n`.
//! - When every request is sent and the hub's CPU time stops growing (it has checked every
//!   auth and parked every waiter), the hub's VmRSS and VmHWM are read, beside its RSS before
//!   the waits opened.
//! - Then one buyer after another posts an OFFER on a sampled key's listing (one connection,
//!   each OFFER after the previous answer). The OFFER names the listing owner, so the hub
//!   wakes that key's waiter, which answers with the new task. Wake latency is the waiter's
//!   answer time minus the OFFER's answer time, both read by this client (negative when the
//!   waiter's answer arrived first; the p50/p99 reported clamp nothing), and, beside it, from
//!   the moment the OFFER was sent.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use base64::Engine as _;
use serde_json::json;
use tokio::sync::{Semaphore, mpsc};

use crate::Args;
use crate::http::{self, Conn};
use crate::ronin_ingest::{self, BATCH, PER_ADDRESS, now_s, refusal_code, secret, sign};

/// Waiter connections per loopback address (the hub allows 64 by default).
const PER_SOURCE: usize = 50;
/// Waiters connecting at once.
const CONNECTING: usize = 256;
/// The path the waiters call.
const WAIT_PATH: &str = "/ronin/api/v1/me/wait?timeout=55";

/// What the phase measured.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Waiters opened.
    pub waiters: usize,
    /// Seconds to send every wait request.
    pub open_seconds: f64,
    /// Seconds from the last request sent to the hub's CPU going quiet.
    pub settle_seconds: f64,
    /// The hub's VmRSS before the waits, kB.
    pub rss_before_kb: u64,
    /// The hub's VmRSS with every wait held, kB.
    pub rss_held_kb: u64,
    /// The hub's peak resident set (VmHWM) at that moment, kB.
    pub hwm_kb: u64,
    /// The hub's `karmadue_connections_open` with the waits held.
    pub open_connections: Option<f64>,
    /// Waiters that answered before any OFFER (should be none), by code.
    pub early: std::collections::BTreeMap<String, u64>,
    /// OFFERs posted.
    pub offers: usize,
    /// Waiters woken with their task.
    pub woken: usize,
    /// Waiters not in the sample that answered before the end.
    pub spurious: usize,
    /// Wake latency after the OFFER's answer, microseconds (signed), sorted.
    pub after_answer_us: Vec<i64>,
    /// Wake latency after the OFFER was sent, microseconds, sorted.
    pub after_send_us: Vec<i64>,
    /// OFFER round trips, microseconds, sorted.
    pub offer_us: Vec<i64>,
}

pub fn quantile_ms(sorted: &[i64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[rank.min(sorted.len() - 1)] as f64 / 1000.0
}

/// The `karmadue` binary to run.
fn karmadue_binary(args: &Args) -> anyhow::Result<PathBuf> {
    let path = match &args.karmadue {
        Some(path) => PathBuf::from(path),
        None => std::env::current_exe()?.with_file_name("karmadue"),
    };
    if !path.is_file() {
        bail!(
            "ronin-wait runs the hub binary {}: build it (cargo build --release -p karmadue) or pass --karmadue",
            path.display()
        );
    }
    Ok(path)
}

/// Raises the soft open-file limit to the hard one; fails below `needed`.
fn raise_open_files(needed: u64) -> anyhow::Result<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        limit.current = limit.maximum;
        setrlimit(Resource::Nofile, limit).context("raising RLIMIT_NOFILE")?;
    }
    let now = getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX);
    if now < needed {
        bail!(
            "the open-file limit is {now}, ronin-wait needs {needed}: raise it (ulimit -n {needed}) or lower --waiters"
        );
    }
    Ok(now)
}

/// A `karmadue serve` child; killed when dropped.
struct Child {
    child: tokio::process::Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Child {
    async fn start(binary: &Path, waiters: usize) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let child = tokio::process::Command::new(binary)
            .arg("serve")
            .args(["--listen", &addr.to_string()])
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .args(["--bundled-catalog", "false"])
            .args(["--max-connections", &(waiters + 1000).to_string()])
            .env("KARMADUE_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let mut hub = Self {
            child,
            addr,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(mut conn) = Conn::connect(addr).await
                && conn
                    .round_trip(&http::get(&addr.to_string(), "/ronin/api/v1/health", &[]))
                    .await
                    .is_ok_and(|r| r.status == 200)
            {
                return Ok(hub);
            }
            if let Some(status) = hub.child.try_wait()? {
                bail!("karmadue serve exited at start ({status})");
            }
            if Instant::now() > deadline {
                bail!("karmadue serve did not answer on {addr} within 60 s");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn pid(&self) -> anyhow::Result<u32> {
        self.child.id().context("the hub has exited")
    }

    /// VmRSS and VmHWM, kB.
    fn memory_kb(&self) -> anyhow::Result<(u64, u64)> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()?))?;
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|kb| kb.parse().ok())
                .unwrap_or(0)
        };
        Ok((field("VmRSS:"), field("VmHWM:")))
    }

    /// User + system CPU ticks of the hub.
    fn cpu_ticks(&self) -> anyhow::Result<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid()?))?;
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        // After the name come state (field 3), ppid, …: utime and stime are fields 14 and 15.
        let at = |index: usize| {
            after
                .split_whitespace()
                .nth(index)
                .and_then(|field| field.parse::<u64>().ok())
                .unwrap_or(0)
        };
        Ok(at(11) + at(12))
    }
}

/// Posts `events` (texts) in batches of 25 from fresh addresses; fails on any refusal.
async fn publish(addr: SocketAddr, texts: &[String]) -> anyhow::Result<()> {
    let host = addr.to_string();
    let mut conn: Option<Conn> = None;
    let mut carried = 0;
    for chunk in texts.chunks(BATCH) {
        if conn.is_none() || carried + chunk.len() > PER_ADDRESS {
            conn = Some(Conn::connect_from(http::next_source(), addr).await?);
            carried = 0;
        }
        carried += chunk.len();
        let body = format!("[{}]", chunk.join(","));
        let Some(open) = conn.as_mut() else { continue };
        let response = open
            .round_trip(&http::post(&host, ronin_ingest::EVENTS_PATH, &body, &[]))
            .await?;
        if response.status != 200 {
            bail!("setup refused: {}", String::from_utf8_lossy(response.body));
        }
    }
    Ok(())
}

/// One waiter's answer.
struct Answer {
    index: usize,
    at: Instant,
    status: u16,
    body: Vec<u8>,
}

/// Holds one wait: connects, sends, releases the connecting permit, reads the answer.
/// Says `sent` once the request is written (or the connection failed).
async fn hold(
    index: usize,
    local: std::net::IpAddr,
    addr: SocketAddr,
    request: Vec<u8>,
    gate: Arc<Semaphore>,
    sent: mpsc::UnboundedSender<()>,
    answers: mpsc::UnboundedSender<Answer>,
) {
    let answer = async {
        let permit = gate.acquire_owned().await?;
        let opened = async {
            let mut conn = Conn::connect_from(local, addr).await?;
            conn.send(&request).await?;
            anyhow::Ok(conn)
        }
        .await;
        drop(permit);
        let _ = sent.send(());
        let mut conn = opened?;
        let response = conn.receive().await?;
        anyhow::Ok((response.status, response.body.to_vec()))
    };
    let (status, body) = answer
        .await
        .unwrap_or_else(|error| (0, error.to_string().into_bytes()));
    let _ = answers.send(Answer {
        index,
        at: Instant::now(),
        status,
        body,
    });
}

/// Signs each waiter's NIP-98 header for `url` (all cores).
fn auth_headers(waiters: usize, url: &str) -> Vec<String> {
    let now = now_s();
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let indexes: Vec<usize> = (0..waiters).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = indexes
            .chunks(waiters.div_ceil(threads).max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|&index| {
                            let nonce = format!("kd-bench-wait-{index}");
                            let tags: &[&[&str]] =
                                &[&["u", url], &["method", "GET"], &["nonce", &nonce]];
                            let event = kd_protocol::nostr::sign_event(
                                &secret(2, index),
                                now,
                                27235,
                                tags.iter()
                                    .map(|tag| tag.iter().map(|part| (*part).to_owned()).collect())
                                    .collect(),
                                String::new(),
                                &[0; 32],
                            )
                            .map(|event| {
                                base64::engine::general_purpose::STANDARD
                                    .encode(event.to_json_text())
                            })
                            .unwrap_or_default();
                            format!("Nostr {event}")
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap_or_default())
            .collect()
    })
}

/// Runs the whole phase.
///
/// # Errors
/// When the hub cannot start, the setup is refused, or the open-file limit is too low.
pub fn measure(args: &Args) -> anyhow::Result<Outcome> {
    let binary = karmadue_binary(args)?;
    raise_open_files(args.waiters as u64 + 1000)?;
    let runtime = crate::client_runtime(args.client_threads)?;
    runtime.block_on(run(args, &binary))
}

async fn run(args: &Args, binary: &Path) -> anyhow::Result<Outcome> {
    let say = |text: &str| {
        if !args.json {
            println!("{text}");
        }
    };
    let waiters = args.waiters;
    let sample = args.wake_sample.min(waiters);
    say(&format!(
        "ronin-wait: starting karmadue serve, publishing {sample} listings and buyers ..."
    ));
    let hub = Child::start(binary, waiters).await?;
    let addr = hub.addr;
    let host = addr.to_string();
    let offers = setup(addr, sample).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut outcome = Outcome {
        waiters,
        offers: sample,
        ..Outcome::default()
    };
    outcome.rss_before_kb = hub.memory_kb()?.0;

    say(&format!(
        "ronin-wait: signing {waiters} NIP-98 auths, opening the waits ..."
    ));
    let url = format!("http://{addr}{WAIT_PATH}");
    let auths = auth_headers(waiters, &url);
    let gate = Arc::new(Semaphore::new(CONNECTING));
    let (sender, mut answers) = mpsc::unbounded_channel();
    let (sent, mut sent_all) = mpsc::unbounded_channel();
    let opened = Instant::now();
    let mut source = http::next_source();
    let mut tasks = Vec::with_capacity(waiters);
    for (index, auth) in auths.iter().enumerate() {
        if index % PER_SOURCE == 0 && index > 0 {
            source = http::next_source();
        }
        let request = http::get(&host, WAIT_PATH, &[("authorization", auth)]);
        tasks.push(tokio::spawn(hold(
            index,
            source,
            addr,
            request,
            Arc::clone(&gate),
            sent.clone(),
            sender.clone(),
        )));
    }
    drop((sender, sent));
    let mut sent_count = 0;
    while sent_count < waiters && sent_all.recv().await.is_some() {
        sent_count += 1;
    }
    anyhow::ensure!(
        sent_count == waiters,
        "only {sent_count} of {waiters} waits were sent"
    );
    outcome.open_seconds = opened.elapsed().as_secs_f64();
    outcome.settle_seconds = settle(&hub).await?;
    (outcome.rss_held_kb, outcome.hwm_kb) = hub.memory_kb()?;
    outcome.open_connections = metric(addr, "karmadue_connections_open").await;
    while let Ok(answer) = answers.try_recv() {
        *outcome
            .early
            .entry(refusal_code(answer.status, &answer.body))
            .or_default() += 1;
    }

    say(&format!(
        "ronin-wait: {sample} OFFERs, one after another, waking their listing's owner ..."
    ));
    wake(addr, &offers, &mut answers, &mut outcome, opened).await?;
    for task in &tasks {
        task.abort();
    }
    drop(hub);
    Ok(outcome)
}

/// Publishes the sample's PROFILEs and LISTINGs and the buyers' PROFILEs; returns each
/// buyer's OFFER (id, request bytes) on its sampled key's listing, signed, not sent.
async fn setup(addr: SocketAddr, sample: usize) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let host = addr.to_string();
    let created = now_s();
    let mut setup: Vec<String> = Vec::with_capacity(3 * sample);
    for index in 0..sample {
        setup.extend(
            ronin_ingest::profile_and_listing(&secret(2, index), index, created)
                .iter()
                .map(|e| e.to_json_text()),
        );
        setup.push(
            sign(
                &secret(3, index),
                created,
                0,
                &[],
                &json!({ "name": format!("Bench buyer {index}") }),
            )
            .to_json_text(),
        );
    }
    publish(addr, &setup).await?;
    let offers = (0..sample)
        .map(|index| {
            let owner = kd_protocol::nostr::public_key_hex(&secret(2, index)).unwrap_or_default();
            let address = format!("31100:{owner}:bench");
            let offer = sign(
                &secret(3, index),
                created,
                1100,
                &[&["a", &address], &["p", &owner]],
                &json!({ "scope": "Summarise this PDF in five bullets.", "price": 2, "currency": "USDC" }),
            );
            let bytes = http::post(&host, ronin_ingest::EVENTS_PATH, &offer.to_json_text(), &[]);
            (offer.id, bytes)
        })
        .collect();
    Ok(offers)
}

/// Waits until the hub's CPU time stops growing (every auth checked, every waiter parked), at
/// most 20 s; returns the seconds waited.
async fn settle(hub: &Child) -> anyhow::Result<f64> {
    let settled = Instant::now();
    let mut ticks = hub.cpu_ticks()?;
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = hub.cpu_ticks()?;
        // Under 2 ticks (20 ms of CPU) in 300 ms: every auth checked, every waiter parked.
        if now.saturating_sub(ticks) < 2 || settled.elapsed() > Duration::from_secs(20) {
            break;
        }
        ticks = now;
    }
    Ok(settled.elapsed().as_secs_f64())
}

/// Posts the OFFERs one after another and matches each to its waiter's answer.
async fn wake(
    addr: SocketAddr,
    offers: &[(String, Vec<u8>)],
    answers: &mut mpsc::UnboundedReceiver<Answer>,
    outcome: &mut Outcome,
    opened: Instant,
) -> anyhow::Result<()> {
    let mut conn: Option<Conn> = None;
    let mut timings = Vec::with_capacity(offers.len());
    for (index, (id, bytes)) in offers.iter().enumerate() {
        if index % PER_ADDRESS == 0 {
            conn = Some(Conn::connect_from(http::next_source(), addr).await?);
        }
        let Some(open) = conn.as_mut() else { continue };
        let sent = Instant::now();
        let response = open.round_trip(bytes).await?;
        let answered = Instant::now();
        if response.status != 200 {
            bail!(
                "an OFFER was refused: {}",
                String::from_utf8_lossy(response.body)
            );
        }
        timings.push((id.clone(), sent, answered));
    }
    let mut woken_at: Vec<Option<Instant>> = vec![None; offers.len()];
    // The waits end 55 s after they opened; give the last answers until then.
    let deadline = opened + Duration::from_secs(56);
    while woken_at.iter().any(Option::is_none) {
        let Ok(Some(answer)) = tokio::time::timeout_at(deadline.into(), answers.recv()).await
        else {
            break;
        };
        match timings.get(answer.index) {
            Some((id, _, _))
                if answer.status == 200 && http::find(&answer.body, id.as_bytes()).is_some() =>
            {
                woken_at[answer.index] = Some(answer.at);
            }
            Some(_) => {
                *outcome
                    .early
                    .entry(format!(
                        "sample {}",
                        refusal_code(answer.status, &answer.body)
                    ))
                    .or_default() += 1
            }
            None => outcome.spurious += 1,
        }
    }
    let micros = |later: Instant, earlier: Instant| -> i64 {
        match later.checked_duration_since(earlier) {
            Some(after) => i64::try_from(after.as_micros()).unwrap_or(i64::MAX),
            None => -i64::try_from(earlier.duration_since(later).as_micros()).unwrap_or(i64::MAX),
        }
    };
    for ((_, sent, answered), woken) in timings.iter().zip(&woken_at) {
        outcome.offer_us.push(micros(*answered, *sent));
        if let Some(woken) = woken {
            outcome.woken += 1;
            outcome.after_answer_us.push(micros(*woken, *answered));
            outcome.after_send_us.push(micros(*woken, *sent));
        }
    }
    while let Ok(answer) = answers.try_recv() {
        if answer.index >= offers.len() {
            outcome.spurious += 1;
        }
    }
    outcome.after_answer_us.sort_unstable();
    outcome.after_send_us.sort_unstable();
    outcome.offer_us.sort_unstable();
    Ok(())
}

/// One gauge from the hub's `/metrics`.
async fn metric(addr: SocketAddr, name: &str) -> Option<f64> {
    let mut conn = Conn::connect(addr).await.ok()?;
    let response = conn
        .round_trip(&http::get(&addr.to_string(), "/metrics", &[]))
        .await
        .ok()?;
    let text = String::from_utf8_lossy(response.body);
    text.lines()
        .find(|line| line.starts_with(name) && line[name.len()..].starts_with(' '))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
}
