//! `--phases transparency`: signed-write throughput with the transparency log on and off, side
//! by side in one run (issue 15: "within 10% of off").
//!
//! - **on**: the hub as the `karmadue` binary runs it: the writer extends the RFC 6962 tree at
//!   the end of every batch (`kd_core::tlog::store::extend`), a checkpoint is signed every
//!   `--checkpoint-interval` (5 s, the default), and every acknowledged signed write answers a
//!   signed kd-log-batch-v1 receipt (one signature per writer batch, decision 258).
//! - **off**: `Config::transparency = false` (docs/decisions.md 242; no `karmadue` flag turns
//!   it off): no tree, no checkpoint, no receipt. Everything else is the same.
//!
//! Each run gets a fresh SQLite hub of its own in a temporary folder. The runs alternate (on,
//! off, off, on, …: `--transparency-rounds` pairs) so that load from other processes on a
//! shared machine falls on both alike; the ratio reported is of the medians.

use std::sync::Arc;
use std::time::Duration;

use kd_core::clock::SystemClock;
use kd_core::config::Config;
use kd_core::random::SystemRandom;
use serde_json::{Value, json};

use crate::load;
use crate::{Args, WriteOutcome, thousands};

/// The goal: the tree on costs at most 10% of the write rate.
const GOAL: f64 = 0.90;

/// One run's figures.
pub struct TlogRun {
    /// Whether the transparency log was on.
    pub on: bool,
    /// The signed-write phase.
    pub writes: WriteOutcome,
    /// Leaves in the tree after the run (the log's rows when on, 0 when off).
    pub tree: u64,
    /// Checkpoints signed during the run.
    pub checkpoints: usize,
}

/// Runs `args.transparency_rounds` pairs of runs, alternating the order.
///
/// # Errors
/// When a hub cannot be opened or a phase fails.
pub fn measure_all(
    args: &Args,
    runtime: &tokio::runtime::Runtime,
    raw_single: Option<f64>,
) -> anyhow::Result<Vec<TlogRun>> {
    let mut runs = Vec::new();
    for round in 0..args.transparency_rounds.max(1) {
        let order = if round % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        for on in order {
            if !args.json {
                let state = if on { "on" } else { "off" };
                println!(
                    "transparency log {state}: signed writes (round {}) ...",
                    round + 1
                );
            }
            runs.push(measure(args, on, runtime, raw_single)?);
        }
    }
    Ok(runs)
}

fn measure(
    args: &Args,
    on: bool,
    runtime: &tokio::runtime::Runtime,
    raw_single: Option<f64>,
) -> anyhow::Result<TlogRun> {
    let dir = tempfile::tempdir()?;
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let addr = listener.local_addr()?;
    let mut config = Config::new(addr, dir.path().join("data"), None);
    config.access_tiers = kd_core::tiers::AccessTiers::default().scaled(1_000_000);
    config.transparency = on;
    let hub = kd_karmadue::open(config, Arc::new(SystemClock), Arc::new(SystemRandom))?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = runtime.spawn(kd_karmadue::serve(listener, Arc::clone(&hub), async {
        let _ = stopped.await;
    }));
    let client_args = args.clone();
    let client_hub = Arc::clone(&hub);
    let client = std::thread::Builder::new().name("kd-client".into()).spawn(
        move || -> anyhow::Result<WriteOutcome> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let mut agents = load::register_agents(addr, client_args.agents).await?;
                crate::signed_writes(
                    &addr.to_string(),
                    &[addr],
                    &client_args,
                    std::slice::from_ref(&client_hub),
                    &mut agents,
                    raw_single,
                    Duration::from_secs_f64(client_args.warmup),
                    Duration::from_secs_f64(client_args.duration),
                )
                .await
            })
        },
    )?;
    let writes = client
        .join()
        .map_err(|_| anyhow::anyhow!("the client thread panicked"))??;
    let _ = stop.send(());
    runtime.block_on(server)??;
    let (tree, checkpoints) = hub.store.read_blocking(|conn| {
        Ok::<_, kd_core::store::StoreError>((
            kd_core::tlog::store::size(conn)?,
            kd_core::tlog::store::checkpoints(conn)?.len(),
        ))
    })?;
    hub.store.close();
    Ok(TlogRun {
        on,
        writes,
        tree,
        checkpoints,
    })
}

fn median(mut rates: Vec<f64>) -> f64 {
    rates.sort_by(f64::total_cmp);
    match rates.len() {
        0 => 0.0,
        n if n % 2 == 1 => rates[n / 2],
        n => f64::midpoint(rates[n / 2 - 1], rates[n / 2]),
    }
}

/// CPU microseconds per successful write in the timed window: of the hub's threads (tokio
/// workers and the store writer), and of the writer alone.
fn cpu_per_write(run: &TlogRun) -> (f64, f64) {
    let timed = &run.writes.timed;
    let writes = (timed.ok as f64).max(1.0);
    let writer = timed
        .cpu
        .groups
        .get(crate::cpu::group_of("kd-store-writer"))
        .copied()
        .unwrap_or(0.0);
    (crate::hub_cpu(timed) * 1e6 / writes, writer * 1e6 / writes)
}

/// The median of `figure` over the runs with the log on, over its median with the log off.
fn ratio(runs: &[TlogRun], figure: impl Fn(&TlogRun) -> f64) -> f64 {
    let of = |on: bool| {
        median(
            runs.iter()
                .filter(|run| run.on == on)
                .map(&figure)
                .collect(),
        )
    };
    of(true) / of(false).max(f64::MIN_POSITIVE)
}

fn rate(run: &TlogRun) -> f64 {
    run.writes.timed.rate()
}

/// The runs as JSON, for `--json`.
pub fn runs_json(runs: &[TlogRun]) -> Value {
    json!({
        "runs": runs.iter().map(|run| json!({
            "transparency": run.on,
            "signed_writes_per_second": run.writes.timed.rate(),
            "timed": crate::phase_json(&run.writes.timed),
            "jobs_per_batch": run.writes.batches.jobs_per_batch(),
            "mean_commit_ms": run.writes.batches.commit_ms(),
            "tree_leaves": run.tree,
            "log_rows_appended": run.writes.rows_appended,
            "checkpoints": run.checkpoints,
            "chain_ok": run.writes.chain.is_ok(),
            "hub_cpu_us_per_write": cpu_per_write(run).0,
            "writer_cpu_us_per_write": cpu_per_write(run).1,
        })).collect::<Vec<_>>(),
        "median_ratio_on_to_off": ratio(runs, rate),
        "hub_cpu_per_write_ratio_on_to_off": ratio(runs, |run| cpu_per_write(run).0),
        "goal_ratio": GOAL,
    })
}

/// Prints the runs side by side and the ratio.
pub fn print(runs: &[TlogRun]) {
    println!();
    println!("signed writes with the transparency log on (tree + checkpoints + receipts) and off");
    println!(
        "hub us/w, writer us/w: CPU microseconds per write of the hub's threads, of the writer alone; others: CPU seconds of other processes"
    );
    println!(
        "{:<6} {:>9} {:>7} {:>7} {:>7} {:>10} {:>9} {:>9} {:>11} {:>8} {:>11} {:>7}",
        "tlog",
        "req/s",
        "p50 ms",
        "p99 ms",
        "errors",
        "jobs/batch",
        "commit ms",
        "hub us/w",
        "writer us/w",
        "others",
        "tree leaves",
        "chkpts"
    );
    for run in runs {
        let writes = &run.writes;
        let (hub, writer) = cpu_per_write(run);
        println!(
            "{:<6} {:>9} {:>7.2} {:>7.2} {:>7} {:>10.1} {:>9.2} {hub:>9.1} {writer:>11.1} {:>8.2} {:>11} {:>7}",
            if run.on { "on" } else { "off" },
            thousands(writes.timed.rate()),
            writes.timed.quantile_ms(0.50),
            writes.timed.quantile_ms(0.99),
            writes.timed.errors,
            writes.batches.jobs_per_batch(),
            writes.batches.commit_ms(),
            writes.timed.cpu.others(),
            run.tree,
            run.checkpoints,
        );
    }
    let rates = ratio(runs, rate);
    println!(
        "write rate, on / off (medians): {rates:.3} (goal >= {GOAL}: {})",
        if rates >= GOAL { "met" } else { "NOT met" }
    );
    println!(
        "hub CPU per write, on / off (medians): {:.3}",
        ratio(runs, |run| cpu_per_write(run).0)
    );
}
