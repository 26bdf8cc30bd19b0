//! The Ronin phases' tables and JSON (`ronin_ingest.rs`, `ronin_wait.rs`).

use serde_json::{Value, json};

use crate::relay;
use crate::ronin_ingest::{self as ingest, IngestRun};
use crate::ronin_wait::{self as wait, quantile_ms};
use crate::thousands;

/// What the Ronin phases measured (each `None` when not asked for).
pub struct RoninOutcome {
    ingest: Option<ingest::Outcome>,
    wait: Option<wait::Outcome>,
}

impl RoninOutcome {
    /// Runs the Ronin phases `args.phases` names: ingest, then the held waits.
    ///
    /// # Errors
    /// As [`ingest::measure`] and [`wait::measure`].
    pub fn measure(
        args: &crate::Args,
        server: &tokio::runtime::Runtime,
        cores: usize,
    ) -> anyhow::Result<Self> {
        let ingest = args.phases.contains(&crate::Phase::RoninIngest);
        let wait = args.phases.contains(&crate::Phase::RoninWait);
        Ok(Self {
            ingest: ingest
                .then(|| ingest::measure(args, server, cores))
                .transpose()?,
            wait: wait.then(|| wait::measure(args)).transpose()?,
        })
    }

    /// Adds `ronin_ingest` and `ronin_wait` to the JSON report.
    pub fn add_json(&self, report: &mut Value) {
        if let Some(ingest) = &self.ingest {
            report["ronin_ingest"] = ingest_json(ingest);
        }
        if let Some(wait) = &self.wait {
            report["ronin_wait"] = wait_json(wait);
        }
    }

    /// Prints the tables.
    pub fn print(&self) {
        if let Some(ingest) = &self.ingest {
            print_ingest(ingest);
        }
        if let Some(wait) = &self.wait {
            print_wait(wait);
        }
    }
}

/// The goal: the hub ingests at least twice what nostr-rs-relay does.
const GOAL_RATIO: f64 = 2.0;
/// The goals for the held waits.
const GOAL_RSS_MB: f64 = 300.0;
const GOAL_WAKE_P99_MS: f64 = 50.0;

/// The phase as JSON.
pub fn ingest_json(outcome: &ingest::Outcome) -> Value {
    let relay = outcome
        .runs
        .iter()
        .find(|run| run.label == relay::LABEL)
        .map(IngestRun::rate);
    json!({
        "events": outcome.events,
        "keys": outcome.keys,
        "presign_seconds": outcome.presign_seconds,
        "verify_per_second": {
            "bip340_one_thread": outcome.verify.raw_single,
            "bip340_all_cores": outcome.verify.raw_all,
            "event_one_thread": outcome.verify.event_single,
            "event_all_cores": outcome.verify.event_all,
        },
        "runs": outcome.runs.iter().map(|run| json!({
            "label": run.label,
            "events_per_request": run.per_request,
            "connections": run.connections,
            "acknowledged": run.acknowledged,
            "requests": run.requests,
            "seconds": run.seconds,
            "events_per_second": run.rate(),
            "latency_ms": { "p50": run.quantile_ms(0.5), "p99": run.quantile_ms(0.99) },
            "refused": run.refused,
            "stored": run.stored,
            "connects": run.connects,
            "vs_relay": relay.map(|relay| run.rate() / relay.max(1e-9)),
        })).collect::<Vec<_>>(),
        "relay_skipped": outcome.relay_skipped,
    })
}

/// Prints the phase's table.
pub fn print_ingest(outcome: &ingest::Outcome) {
    let verify = &outcome.verify;
    println!();
    println!(
        "Ronin ingest: {} events ({} keys x PROFILE + LISTING), pre-signed in {:.1} s",
        thousands(outcome.events as f64),
        thousands(outcome.keys as f64),
        outcome.presign_seconds
    );
    println!(
        "  BIP-340 verify alone:        {:>9}/s one thread, {:>9}/s on {} cores",
        thousands(verify.raw_single),
        thousands(verify.raw_all),
        outcome.cores
    );
    println!(
        "  parse + id + BIP-340:        {:>9}/s one thread, {:>9}/s on {} cores",
        thousands(verify.event_single),
        thousands(verify.event_all),
        outcome.cores
    );
    let relay = outcome
        .runs
        .iter()
        .find(|run| run.label == relay::LABEL)
        .map(IngestRun::rate);
    println!(
        "  {:<24} {:>5} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}",
        "run", "conns", "events/s", "p50 ms", "p99 ms", "acked", "stored", "vs relay", "vs BIP"
    );
    for run in &outcome.runs {
        println!(
            "  {:<24} {:>5} {:>10} {:>9.2} {:>9.2} {:>9} {:>9} {:>8} {:>7.0}%",
            run.label,
            run.connections,
            thousands(run.rate()),
            run.quantile_ms(0.5),
            run.quantile_ms(0.99),
            run.acknowledged,
            run.stored
                .map_or_else(|| "-".into(), |stored| stored.to_string()),
            relay.map_or_else(
                || "-".into(),
                |relay| format!("{:.2}x", run.rate() / relay.max(1e-9))
            ),
            100.0 * run.rate() / verify.raw_all.max(1e-9),
        );
        if !run.refused.is_empty() {
            println!("    refused: {:?}", run.refused);
        }
    }
    match (relay, &outcome.relay_skipped) {
        (Some(relay), _) => {
            let best = outcome
                .runs
                .iter()
                .filter(|run| run.label != relay::LABEL)
                .map(IngestRun::rate)
                .fold(0.0, f64::max);
            let single = outcome.runs.first().map_or(0.0, IngestRun::rate);
            let met = |rate: f64| {
                if rate >= GOAL_RATIO * relay {
                    "met"
                } else {
                    "NOT met"
                }
            };
            println!(
                "  goal: ingest >= {GOAL_RATIO}x nostr-rs-relay: one event a POST {:.2}x ({}), best {:.2}x ({})",
                single / relay,
                met(single),
                best / relay,
                met(best)
            );
        }
        (None, Some(why)) => println!("  nostr-rs-relay: skipped ({why})"),
        (None, None) => {}
    }
}

/// The phase as JSON.
pub fn wait_json(outcome: &wait::Outcome) -> Value {
    json!({
        "waiters": outcome.waiters,
        "open_seconds": outcome.open_seconds,
        "settle_seconds": outcome.settle_seconds,
        "rss_kb": { "before": outcome.rss_before_kb, "held": outcome.rss_held_kb, "peak": outcome.hwm_kb },
        "open_connections": outcome.open_connections,
        "early_answers": outcome.early,
        "offers": outcome.offers,
        "woken": outcome.woken,
        "spurious": outcome.spurious,
        "wake_ms_after_offer_answer": { "p50": quantile_ms(&outcome.after_answer_us, 0.5), "p99": quantile_ms(&outcome.after_answer_us, 0.99) },
        "wake_ms_after_offer_sent": { "p50": quantile_ms(&outcome.after_send_us, 0.5), "p99": quantile_ms(&outcome.after_send_us, 0.99) },
        "offer_ms": { "p50": quantile_ms(&outcome.offer_us, 0.5), "p99": quantile_ms(&outcome.offer_us, 0.99) },
    })
}

/// Prints the phase's table.
pub fn print_wait(outcome: &wait::Outcome) {
    let mb = |kb: u64| kb as f64 / 1024.0;
    let held = mb(outcome.rss_held_kb);
    let per_waiter = 1024.0 * (held - mb(outcome.rss_before_kb)) / outcome.waiters.max(1) as f64;
    println!();
    println!(
        "Ronin me/wait: {} waits held (sent in {:.1} s, hub quiet {:.1} s later; hub connections open: {})",
        thousands(outcome.waiters as f64),
        outcome.open_seconds,
        outcome.settle_seconds,
        outcome
            .open_connections
            .map_or_else(|| "?".into(), |open| format!("{open:.0}"))
    );
    println!(
        "  hub RSS: {:.1} MB before, {held:.1} MB held ({per_waiter:.1} kB a wait), peak {:.1} MB",
        mb(outcome.rss_before_kb),
        mb(outcome.hwm_kb)
    );
    if !outcome.early.is_empty() {
        println!("  answered without a wake: {:?}", outcome.early);
    }
    let p99 = quantile_ms(&outcome.after_answer_us, 0.99);
    println!(
        "  {} OFFERs (round trip p50 {:.2} / p99 {:.2} ms): {} waiters woken with their task, {} others answered",
        outcome.offers,
        quantile_ms(&outcome.offer_us, 0.5),
        quantile_ms(&outcome.offer_us, 0.99),
        outcome.woken,
        outcome.spurious
    );
    println!(
        "  wake after the OFFER's answer: p50 {:.2} ms, p99 {p99:.2} ms; after the OFFER was sent: p50 {:.2} ms, p99 {:.2} ms",
        quantile_ms(&outcome.after_answer_us, 0.5),
        quantile_ms(&outcome.after_send_us, 0.5),
        quantile_ms(&outcome.after_send_us, 0.99),
    );
    let met = |ok: bool| if ok { "met" } else { "NOT met" };
    println!(
        "  goals: RSS <= {GOAL_RSS_MB} MB {} ; wake p99 <= {GOAL_WAKE_P99_MS} ms {}{}",
        met(held <= GOAL_RSS_MB),
        met(p99 <= GOAL_WAKE_P99_MS && outcome.woken == outcome.offers),
        if outcome.woken == outcome.offers {
            ""
        } else {
            " (not every sampled waiter woke)"
        }
    );
}
