//! `--database-url postgres://…`: the signed-write and read phases again, against hubs on
//! PostgreSQL: one hub, then two hubs on one database (two `kd_karmadue::open` hubs in this
//! process, each on its own listener, the connections split between them). Each configuration
//! gets a fresh database that kd-bench creates on the URL's server and drops afterwards, so the
//! URL's user needs `CREATEDB`; the database the URL names is not touched.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use kd_core::clock::SystemClock;
use kd_core::config::{Config, Secret};
use kd_core::random::SystemRandom;
use kd_karmadue::Hub;
use serde_json::{Value, json};

use crate::load::{self, PhaseResult};
use crate::{Args, Phase, WriteOutcome, phase_json, thousands};

/// What one PostgreSQL configuration measured.
pub struct PgRun {
    /// Hub processes on the database.
    pub hubs: usize,
    /// The signed-write phase, when run.
    pub writes: Option<WriteOutcome>,
    /// The read phase, when run.
    pub reads: Option<PhaseResult>,
}

/// Runs the PostgreSQL configurations (one hub, two hubs) on the server of `url`.
///
/// # Errors
/// When a database cannot be made or a phase fails.
pub fn measure_all(
    args: &Args,
    url: &str,
    runtime: &tokio::runtime::Runtime,
    raw_single: Option<f64>,
) -> anyhow::Result<Vec<PgRun>> {
    let mut runs = Vec::new();
    for hubs in [1, 2] {
        if !args.json {
            println!("PostgreSQL, {hubs} hub(s) on one database: signed writes, reads ...");
        }
        let name = format!("kd_bench_{}_{hubs}", std::process::id());
        let database = kd_core::db::create_postgres_database(url, &name, None)
            .with_context(|| format!("creating database {name} (the URL's user needs CREATEDB)"))?;
        let run = measure(args, &database, hubs, runtime, raw_single);
        kd_core::db::drop_postgres_database(url, &name)?;
        runs.push(run?);
    }
    Ok(runs)
}

/// Opens `count` hubs on `database`, each serving its own listener on `runtime`, and runs
/// the phases from a client thread of its own.
fn measure(
    args: &Args,
    database: &str,
    count: usize,
    runtime: &tokio::runtime::Runtime,
    raw_single: Option<f64>,
) -> anyhow::Result<PgRun> {
    let dir = tempfile::tempdir()?;
    let mut hubs = Vec::with_capacity(count);
    let mut addrs = Vec::with_capacity(count);
    let mut stops = Vec::with_capacity(count);
    let mut servers = Vec::with_capacity(count);
    for index in 0..count {
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
        let addr = listener.local_addr()?;
        let mut config = Config::new(addr, dir.path().join(format!("hub-{index}")), None);
        config.access_tiers = kd_core::tiers::AccessTiers::default().scaled(1_000_000);
        config.database_url = Some(Secret::new(database.to_owned()));
        let hub = kd_karmadue::open(config, Arc::new(SystemClock), Arc::new(SystemRandom))?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        servers.push(
            runtime.spawn(kd_karmadue::serve(listener, Arc::clone(&hub), async {
                let _ = stopped.await;
            })),
        );
        hubs.push(hub);
        addrs.push(addr);
        stops.push(stop);
    }
    let client_args = args.clone();
    let client_hubs = hubs.clone();
    let client_addrs = addrs.clone();
    let client = std::thread::Builder::new().name("kd-client".into()).spawn(
        move || -> anyhow::Result<PgRun> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(phases(
                &client_args,
                &client_addrs,
                &client_hubs,
                raw_single,
            ))
        },
    )?;
    let outcome = client
        .join()
        .map_err(|_| anyhow::anyhow!("the client thread panicked"))?;
    for stop in stops {
        let _ = stop.send(());
    }
    for server in servers {
        runtime.block_on(server)??;
    }
    for hub in &hubs {
        hub.store.close();
    }
    outcome
}

async fn phases(
    args: &Args,
    addrs: &[SocketAddr],
    hubs: &[Arc<Hub>],
    raw_single: Option<f64>,
) -> anyhow::Result<PgRun> {
    let first = *addrs.first().context("no hub")?;
    let host = first.to_string();
    let mut agents = load::register_agents(first, args.agents).await?;
    let warmup = Duration::from_secs_f64(args.warmup);
    let duration = Duration::from_secs_f64(args.duration);
    let writes = if args.phases.contains(&Phase::Writes) {
        Some(
            crate::signed_writes(
                &host,
                addrs,
                args,
                hubs,
                &mut agents,
                raw_single,
                warmup,
                duration,
            )
            .await?,
        )
    } else {
        None
    };
    let reads = if args.phases.contains(&Phase::Reads) {
        let plans = load::read_plans(&host, &agents, args.connections);
        Some(load::run_on(addrs, plans, warmup, duration).await?)
    } else {
        None
    };
    Ok(PgRun {
        hubs: hubs.len(),
        writes,
        reads,
    })
}

/// The runs as JSON, for `--json`.
pub fn runs_json(runs: &[PgRun]) -> Value {
    runs.iter()
        .map(|run| {
            json!({
                "hubs": run.hubs,
                "signed_writes": run.writes.as_ref().map(|writes| json!({
                    "connections": writes.connections,
                    "timed": phase_json(&writes.timed),
                    "jobs_per_batch": writes.batches.jobs_per_batch(),
                    "mean_commit_ms": writes.batches.commit_ms(),
                    "log_rows_appended": writes.rows_appended,
                    "successful_writes": writes.successful_writes,
                    "chain_ok": writes.chain.is_ok(),
                })),
                "reads": run.reads.as_ref().map(phase_json),
            })
        })
        .collect()
}

/// Prints the SQLite figures of this run beside the PostgreSQL ones.
pub fn print_comparison(
    connections: usize,
    sqlite_writes: Option<&WriteOutcome>,
    sqlite_reads: Option<&PhaseResult>,
    runs: &[PgRun],
) {
    println!();
    println!("SQLite and PostgreSQL in this run (same settings; PostgreSQL on this machine)");
    println!(
        "hub cpu / others: CPU seconds of the hub threads / of other processes (the PostgreSQL server among them) in the timed window"
    );
    println!(
        "{:<22} {:<14} {:>6} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>10} {:>9}  chain",
        "store",
        "phase",
        "conns",
        "req/s",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "errors",
        "hub cpu",
        "others",
        "jobs/batch",
        "commit ms"
    );
    let mut rows: Vec<(String, Option<&WriteOutcome>, Option<&PhaseResult>)> =
        vec![("SQLite, 1 hub".to_owned(), sqlite_writes, sqlite_reads)];
    for run in runs {
        let label = format!(
            "PostgreSQL, {} hub{}",
            run.hubs,
            if run.hubs == 1 { "" } else { "s" }
        );
        rows.push((label, run.writes.as_ref(), run.reads.as_ref()));
    }
    let line = |store: &str, phase: &str, conns: usize, result: &PhaseResult, tail: String| {
        println!(
            "{store:<22} {phase:<14} {conns:>6} {:>9} {:>7.2} {:>7.2} {:>7.2} {:>7} {:>7.2} {:>7.2} {tail}",
            thousands(result.rate()),
            result.quantile_ms(0.50),
            result.quantile_ms(0.90),
            result.quantile_ms(0.99),
            result.errors,
            crate::hub_cpu(result),
            result.cpu.others(),
        );
    };
    for (store, writes, _) in &rows {
        if let Some(writes) = writes {
            let rows_match =
                i64::try_from(writes.successful_writes).ok() == Some(writes.rows_appended);
            let chain = match (&writes.chain, rows_match) {
                (Ok(_), true) => "OK".to_owned(),
                (Ok(_), false) => "ROWS MISMATCH".to_owned(),
                (Err(reason), _) => format!("BROKEN: {reason}"),
            };
            let tail = format!(
                "{:>10.1} {:>9.2}  {chain}",
                writes.batches.jobs_per_batch(),
                writes.batches.commit_ms()
            );
            line(
                store,
                "signed writes",
                writes.connections,
                &writes.timed,
                tail,
            );
        }
    }
    for (store, _, reads) in &rows {
        if let Some(reads) = reads {
            line(store, "reads", connections, reads, String::new());
        }
    }
}
