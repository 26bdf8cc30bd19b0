//! `kd-bench`: the KarmaDue hub's benchmark harness (not a test).
//!
//! It starts a hub in-process on a temporary data folder (system clock, system randomness,
//! `127.0.0.1:0`) and measures:
//!
//! 1. the raw Ed25519 `verify_strict` rate of this machine over kd-mcp-v1 texts, on one thread
//!    and on every core;
//! 2. signed writes per second end to end over HTTP: pre-registered agents each send signed
//!    `rename_agent` calls (pre-signed before the timed window) over MCP `tools/call`, from C
//!    keep-alive connections; then it checks that the event log grew by exactly the successful
//!    writes and that the hash chain verifies;
//! 3. reads per second (`verify_agent` by id) the same way;
//! 4. the transport floor: JSON-RPC `ping` to the hub (every MCP request's cost before any
//!    tool work) and to a bare axum route on the same runtime (the HTTP stack and the client
//!    alone). A signed write costs at least a ping plus one signature check, so
//!    `1 / (1/ping + 1/verify)` bounds the signed-write rate from above;
//! 5. with `--database-url postgres://…`, the signed-write and read phases again on
//!    PostgreSQL, with one hub and with two hubs on one database (`multi_hub.rs`), printed
//!    beside the SQLite figures of the same run;
//! 6. with `--phases transparency`, signed writes with the transparency log on and off, each
//!    on a fresh hub, alternating (`transparency.rs`; issue 15's goal: on within 10% of off).
//! 7. `--phases ronin-ingest`: Ronin's `POST /ronin/api/v1/events` (one event a request and
//!    batches of 25) beside raw BIP-340 verify over the same pre-signed events and beside
//!    `nostr-rs-relay` ingesting them over WebSocket (`ronin_ingest.rs`, `relay.rs`);
//! 8. `--phases ronin-wait`: `--waiters` held `me/wait` on a `karmadue serve` child, its RSS,
//!    and the wake latency after a matching OFFER (`ronin_wait.rs`). Neither Ronin phase is a
//!    default; alone they register no MCP agents.
//!
//! Run it with `cargo run --release -p kd-bench -- --help`; see `docs/performance.md`.

/// The allocator the `karmadue` binary runs on, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cpu;
mod floor;
mod http;
mod load;
mod multi_hub;
mod relay;
mod report;
mod ronin_ingest;
mod ronin_report;
mod ronin_wait;
mod transparency;
mod verify;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Parser, ValueEnum};
use kd_core::clock::SystemClock;
use kd_core::config::Config;
use kd_core::random::SystemRandom;
use kd_karmadue::Hub;
use serde_json::json;

use crate::load::{Agent, PhaseResult};
use crate::report::{
    hub_cpu, machine, phase_json, print_table, report_json, store_counters, thousands,
};
use crate::verify::Work;

/// Benchmark the KarmaDue hub in-process: raw Ed25519 verify rate, signed writes and reads per
/// second end to end over HTTP.
#[derive(Parser, Debug, Clone)]
#[command(name = "kd-bench", version)]
struct Args {
    /// Timed window of each HTTP phase, seconds (after the warm-up).
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Warm-up before each timed window, seconds (load runs, nothing is counted).
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Concurrent keep-alive connections (signed writes use at most one per agent, so that each
    /// agent's renames stay sequential).
    #[arg(long, default_value_t = 64)]
    connections: usize,
    /// Pre-registered agents.
    #[arg(long, default_value_t = 64)]
    agents: usize,
    /// How long each raw verify measurement runs, seconds.
    #[arg(long, default_value_t = 2.0)]
    verify_duration: f64,
    /// Tokio worker threads of the hub (default: all cores).
    #[arg(long)]
    server_threads: Option<usize>,
    /// Threads of the bench client (1: a current-thread runtime).
    #[arg(long, default_value_t = 1)]
    client_threads: usize,
    /// Phases to run.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Phase::Verify, Phase::Floor, Phase::Writes, Phase::Reads, Phase::Resource, Phase::Store])]
    phases: Vec<Phase>,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    json: bool,
    /// Also run the signed-write and read phases on PostgreSQL (postgres://user@host/db, a
    /// user allowed CREATEDB): one hub, then two hubs on one database, printed beside the
    /// SQLite figures. kd-bench makes and drops its own databases on that server.
    #[arg(long, env = "KD_BENCH_DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
    /// With `--phases …,transparency`: pairs of signed-write runs, transparency log on and
    /// off, each on a fresh hub, alternating (`transparency.rs`).
    #[arg(long, default_value_t = 2)]
    transparency_rounds: usize,
    /// `ronin-ingest`: keys, each signing a PROFILE and a LISTING (events = 2 x keys).
    #[arg(long, default_value_t = 10_000)]
    ronin_keys: usize,
    /// `ronin-ingest`: keep-alive connections, for the hub and for nostr-rs-relay alike.
    #[arg(long, default_value_t = 16)]
    ronin_connections: usize,
    /// `ronin-ingest`: the nostr-rs-relay binary to compare with (0.8.12); without it that
    /// column is skipped and the install command printed.
    #[arg(long, env = "KD_BENCH_NOSTR_RS_RELAY")]
    nostr_rs_relay: Option<String>,
    /// `ronin-wait`: concurrent `me/wait` requests, one key each.
    #[arg(long, default_value_t = 10_000)]
    waiters: usize,
    /// `ronin-wait`: waiters woken by an OFFER on their listing (the latency sample).
    #[arg(long, default_value_t = 1_000)]
    wake_sample: usize,
    /// `ronin-wait`: the `karmadue` binary to serve the hub (default: beside kd-bench).
    #[arg(long, env = "KD_BENCH_KARMADUE")]
    karmadue: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Phase {
    Verify,
    /// `ping` to the hub and to the bare HTTP server.
    Floor,
    Writes,
    Reads,
    /// `get_resource` on one catalog row (the reply's own cost: issue 10 "a reply built once").
    Resource,
    /// The store alone: nonce + event jobs through the writer (runs last).
    Store,
    /// Signed writes with the transparency log on and off, side by side (not in the default
    /// phases; `transparency.rs`).
    Transparency,
    /// Ronin's event ingest beside raw BIP-340 verify and nostr-rs-relay (not in the default
    /// phases; `ronin_ingest.rs`).
    RoninIngest,
    /// Ronin's held `me/wait` requests: the hub's RSS and the wake latency (not in the default
    /// phases; `ronin_wait.rs`).
    RoninWait,
}

impl Phase {
    /// The phases of the MCP hub (an in-process hub with registered agents).
    fn is_mcp(self) -> bool {
        !matches!(self, Self::RoninIngest | Self::RoninWait)
    }
}

/// The hub's runtime in this process: `threads` workers.
fn server_runtime(threads: usize) -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("kd-server")
        .enable_all()
        .build()?)
}

/// The bench client's runtime: current-thread for one thread, else multi-thread.
fn client_runtime(threads: usize) -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("kd-client")
            .enable_all()
            .build()?
    })
}

/// The rate the signed-write path should reach, as a share of the raw all-core verify rate.
const GOAL_RATIO: f64 = 0.5;

#[derive(Debug, Default)]
struct VerifyRates {
    cores: usize,
    raw_single: f64,
    raw_all: f64,
    hub_single: f64,
    hub_all: f64,
    registered_single: f64,
    registered_all: f64,
    /// Wall seconds of the four measurements.
    seconds: f64,
    /// CPU seconds other processes used meanwhile.
    others: f64,
    /// CPU seconds the hypervisor stole meanwhile.
    steal: f64,
}

#[derive(Debug)]
struct WriteOutcome {
    calibration: PhaseResult,
    /// The store writer's batches during the timed run (warm-up included).
    batches: Batches,
    timed: PhaseResult,
    presigned: usize,
    presign_seconds: f64,
    connections: usize,
    rows_appended: i64,
    successful_writes: u64,
    chain: Result<(i64, i64), String>,
}

/// The store writer's group commits over a run, from the hub's metrics.
#[derive(Debug, Default)]
struct Batches {
    batches: f64,
    jobs: f64,
    /// Time spent in `COMMIT` (writing the WAL frames, fsync), seconds.
    commit_seconds: f64,
}

impl Batches {
    fn jobs_per_batch(&self) -> f64 {
        self.jobs / self.batches.max(1.0)
    }

    fn commit_ms(&self) -> f64 {
        1e3 * self.commit_seconds / self.batches.max(1.0)
    }
}

#[derive(Debug, Default)]
struct Outcome {
    writes: Option<WriteOutcome>,
    reads: Option<PhaseResult>,
    /// `get_resource` on one catalog row.
    resource: Option<PhaseResult>,
    /// `ping` to the hub.
    ping: Option<PhaseResult>,
    /// `ping` to the bare HTTP server.
    bare: Option<PhaseResult>,
    /// The store floor (`floor::store`).
    store: Option<PhaseResult>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    check_args(&args)?;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let machine = machine(cores);
    if !args.json {
        println!(
            "kd-bench: {} ({} cores)",
            machine["cpu"].as_str().unwrap_or("?"),
            cores
        );
    }

    let rates = if args.phases.contains(&Phase::Verify) {
        if !args.json {
            println!("measuring raw Ed25519 verify_strict ...");
        }
        Some(verify_rates(&args, cores)?)
    } else {
        None
    };

    let server_threads = args.server_threads.unwrap_or(cores).max(1);
    let server_runtime = server_runtime(server_threads)?;
    let raw_single = rates.as_ref().map(|rates| rates.raw_single);
    let mcp = args.phases.iter().any(|phase| phase.is_mcp());
    let outcome = if mcp {
        measure_hub(&args, &server_runtime, raw_single)?
    } else {
        Outcome::default()
    };
    let postgres_runs = match &args.database_url {
        Some(url) if mcp => multi_hub::measure_all(&args, url, &server_runtime, raw_single)?,
        _ => Vec::new(),
    };

    let tlog_runs = if args.phases.contains(&Phase::Transparency) {
        transparency::measure_all(&args, &server_runtime, raw_single)?
    } else {
        Vec::new()
    };

    let ronin = ronin_report::RoninOutcome::measure(&args, &server_runtime, cores)?;

    let mut report = if mcp {
        report_json(
            &args,
            &machine,
            rates.as_ref(),
            &outcome,
            server_threads,
            cores,
        )
    } else {
        json!({ "machine": machine })
    };
    ronin.add_json(&mut report);
    if !postgres_runs.is_empty() {
        report["postgres"] = multi_hub::runs_json(&postgres_runs);
    }
    if !tlog_runs.is_empty() {
        report["transparency"] = transparency::runs_json(&tlog_runs);
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        if mcp {
            print_table(&args, rates.as_ref(), &outcome, server_threads, cores);
        }
        ronin.print();
        if !postgres_runs.is_empty() {
            multi_hub::print_comparison(
                args.connections,
                outcome.writes.as_ref(),
                outcome.reads.as_ref(),
                &postgres_runs,
            );
        }
        if !tlog_runs.is_empty() {
            transparency::print(&tlog_runs);
        }
    }
    Ok(())
}

/// Refuses settings the run cannot honour.
fn check_args(args: &Args) -> anyhow::Result<()> {
    if args.duration <= 0.0 || args.warmup < 0.0 || args.verify_duration <= 0.0 {
        bail!("--duration and --verify-duration must be positive, --warmup not negative");
    }
    if args.warmup + args.duration > 240.0 {
        bail!(
            "--warmup + --duration must be at most 240 s: requests are signed before the run and \
             the hub accepts timestamps within 300 s"
        );
    }
    if args.agents == 0 || args.connections == 0 || args.client_threads == 0 {
        bail!("--agents, --connections and --client-threads must be at least 1");
    }
    if args.phases.contains(&Phase::RoninIngest) {
        ronin_ingest::check(args)?;
    }
    if args.phases.contains(&Phase::RoninWait) && args.waiters == 0 {
        bail!("--waiters must be at least 1");
    }
    if let Some(url) = &args.database_url
        && kd_core::db::Location::parse(url).backend() != kd_core::db::Backend::Postgres
    {
        bail!("--database-url must be a postgres:// URL");
    }
    Ok(())
}

/// The main phases on one hub in this process (SQLite, a temporary folder) and the bare axum
/// floor beside it, served by `server_runtime` and measured from a client thread of its own.
fn measure_hub(
    args: &Args,
    server_runtime: &tokio::runtime::Runtime,
    raw_single: Option<f64>,
) -> anyhow::Result<Outcome> {
    let dir = tempfile::tempdir()?;
    let listener = server_runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let addr = listener.local_addr()?;
    let mut config = Config::new(addr, dir.path().join("data"), None);
    // The bench measures throughput, not the per-minute limits (which would stop it at 20
    // writes a minute): the same table, with every limit out of reach.
    config.access_tiers = kd_core::tiers::AccessTiers::default().scaled(1_000_000);
    let hub = kd_karmadue::open(config, Arc::new(SystemClock), Arc::new(SystemRandom))?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = server_runtime.spawn(kd_karmadue::serve(listener, Arc::clone(&hub), async {
        let _ = stopped.await;
    }));
    let bare_listener = server_runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let bare_addr = bare_listener.local_addr()?;
    let (stop_bare, bare_stopped) = tokio::sync::oneshot::channel::<()>();
    let bare = server_runtime.spawn(floor::serve(bare_listener, async {
        let _ = bare_stopped.await;
    }));

    let client_args = args.clone();
    let client_hub = Arc::clone(&hub);
    let client = std::thread::Builder::new().name("kd-client".into()).spawn(
        move || -> anyhow::Result<Outcome> {
            let runtime = client_runtime(client_args.client_threads)?;
            runtime.block_on(client_main(
                addr,
                bare_addr,
                &client_args,
                client_hub,
                raw_single,
            ))
        },
    )?;
    let outcome = client
        .join()
        .map_err(|_| anyhow::anyhow!("the client thread panicked"))??;
    let _ = stop.send(());
    let _ = stop_bare.send(());
    server_runtime.block_on(server)??;
    server_runtime.block_on(bare)??;
    Ok(outcome)
}

fn verify_rates(args: &Args, cores: usize) -> anyhow::Result<VerifyRates> {
    let keys: Vec<(String, ed25519_dalek::SigningKey)> = (0..args.agents)
        .map(|index| {
            (
                format!("00000000-0000-4000-8000-{index:012}"),
                load::agent_key(index),
            )
        })
        .collect();
    let samples = verify::samples(&keys, 1024);
    let duration = Duration::from_secs_f64(args.verify_duration);
    let before = cpu::Snapshot::take();
    let started = Instant::now();
    let mut rates = VerifyRates {
        cores,
        raw_single: verify::rate(&samples, Work::Raw, 1, duration)?,
        raw_all: verify::rate(&samples, Work::Raw, cores, duration)?,
        hub_single: verify::rate(&samples, Work::HubPath, 1, duration)?,
        hub_all: verify::rate(&samples, Work::HubPath, cores, duration)?,
        registered_single: verify::rate(&samples, Work::RegisteredKey, 1, duration)?,
        registered_all: verify::rate(&samples, Work::RegisteredKey, cores, duration)?,
        ..VerifyRates::default()
    };
    rates.seconds = started.elapsed().as_secs_f64();
    let usage = cpu::Snapshot::take().since(&before);
    rates.others = usage.others();
    rates.steal = usage.machine_steal;
    Ok(rates)
}

async fn client_main(
    addr: SocketAddr,
    bare_addr: SocketAddr,
    args: &Args,
    hub: Arc<Hub>,
    raw_single: Option<f64>,
) -> anyhow::Result<Outcome> {
    let host = addr.to_string();
    let mut agents = load::register_agents(addr, args.agents).await?;
    let warmup = Duration::from_secs_f64(args.warmup);
    let duration = Duration::from_secs_f64(args.duration);
    let mut outcome = Outcome::default();
    if args.phases.contains(&Phase::Floor) {
        if !args.json {
            println!("floor: ping to the hub, ping to the bare HTTP server ...");
        }
        let plans = load::ping_plans(&host, args.connections, http::MCP_PATH);
        outcome.ping = Some(load::run(addr, plans, warmup, duration).await?);
        let plans = load::ping_plans(&bare_addr.to_string(), args.connections, floor::PATH);
        outcome.bare = Some(load::run(bare_addr, plans, warmup, duration).await?);
    }
    if args.phases.contains(&Phase::Writes) {
        if !args.json {
            println!("signed writes: calibrating, pre-signing, running ...");
        }
        outcome.writes = Some(
            signed_writes(
                &host,
                &[addr],
                args,
                std::slice::from_ref(&hub),
                &mut agents,
                raw_single,
                warmup,
                duration,
            )
            .await?,
        );
    }
    if args.phases.contains(&Phase::Reads) {
        if !args.json {
            println!("reads: running ...");
        }
        let plans = load::read_plans(&host, &agents, args.connections);
        outcome.reads = Some(load::run(addr, plans, warmup, duration).await?);
    }
    if args.phases.contains(&Phase::Resource) {
        if !args.json {
            println!("reads: get_resource on one catalog row ...");
        }
        load::import_resource(&hub).await?;
        let plans = load::resource_plans(&host, args.connections, load::BENCH_RESOURCE);
        outcome.resource = Some(load::run(addr, plans, warmup, duration).await?);
    }
    if args.phases.contains(&Phase::Store) {
        if !args.json {
            println!("store floor: nonce + event jobs through the writer ...");
        }
        outcome.store =
            Some(floor::store(Arc::clone(&hub), args.connections, warmup, duration).await?);
    }
    Ok(outcome)
}

/// The signed-write phase against `hubs` (listening on `addrs`, one database), the load split
/// between them; the log is counted and verified through the first.
#[allow(clippy::too_many_arguments)]
async fn signed_writes(
    host: &str,
    addrs: &[SocketAddr],
    args: &Args,
    hubs: &[Arc<Hub>],
    agents: &mut [Agent],
    raw_single: Option<f64>,
    warmup: Duration,
    duration: Duration,
) -> anyhow::Result<WriteOutcome> {
    // Off the client's runtime: a PostgreSQL store's blocking driver may not run on it.
    let log_rows = |hub: &Arc<Hub>| -> anyhow::Result<i64> {
        Ok(kd_core::db::off_runtime(|| {
            hub.store.read_blocking(kd_core::eventlog::count)
        })?)
    };
    let hub = hubs.first().context("no hub")?;
    let rows_before = log_rows(hub)?;
    let connections = args.connections.min(agents.len());
    let mut nonce_base = 0u64;

    // Calibration: one second of load, to size the pre-signed pool of the timed run.
    let calibration_pool = raw_single.unwrap_or(20_000.0).max(2_000.0) as usize;
    let per_connection = calibration_pool.div_ceil(connections).max(16);
    let plans = load::signed_write_plans(host, agents, connections, per_connection, nonce_base);
    nonce_base += (connections * per_connection) as u64;
    let calibration = load::run_on(addrs, plans, Duration::ZERO, Duration::from_secs(1)).await?;
    apply_renames(agents, &calibration.renamed);

    // Twice the calibrated rate, and never less than 30% of one core's raw verify rate: the
    // calibration second may have been slowed by other processes on a shared machine.
    let calibrated = (calibration.ok_total + calibration.errors_total) as f64;
    let mut per_second = (2.0 * calibrated).max(0.3 * raw_single.unwrap_or(20_000.0));
    if calibration.exhausted {
        per_second *= 2.0;
    }
    let estimate = per_second * (warmup + duration).as_secs_f64();
    let per_connection = (estimate as usize).div_ceil(connections).max(64);
    let started = Instant::now();
    let plans = load::signed_write_plans(host, agents, connections, per_connection, nonce_base);
    let presign_seconds = started.elapsed().as_secs_f64();
    let before = store_counters(hubs);
    let timed = load::run_on(addrs, plans, warmup, duration).await?;
    let after = store_counters(hubs);
    let batches = Batches {
        batches: after[0] - before[0],
        jobs: after[1] - before[1],
        commit_seconds: after[2] - before[2],
    };
    apply_renames(agents, &timed.renamed);

    let rows_after = log_rows(hub)?;
    let chain =
        kd_core::db::off_runtime(|| hub.store.read_blocking(kd_core::eventlog::verify_chain))
            .context("verify_chain")?
            .map(|report| (report.rows, report.head.seq))
            .map_err(|broken| format!("chain broken at seq {}: {}", broken.seq, broken.reason));
    Ok(WriteOutcome {
        successful_writes: calibration.ok_total + timed.ok_total,
        calibration,
        timed,
        presigned: connections * per_connection,
        presign_seconds,
        connections,
        rows_appended: rows_after - rows_before,
        chain,
        batches,
    })
}

fn apply_renames(agents: &mut [Agent], renamed: &[(usize, usize)]) {
    for &(agent, name) in renamed {
        if let Some(agent) = agents.get_mut(agent) {
            agent.current = name;
        }
    }
}
