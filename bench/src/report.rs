//! What a run prints and reports: the tables on standard output and the JSON report.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::load::PhaseResult;
use crate::{Args, GOAL_RATIO, Outcome, VerifyRates, WriteOutcome, cpu};

pub(crate) fn phase_json(phase: &PhaseResult) -> Value {
    let usage = &phase.cpu;
    json!({
        "seconds": phase.seconds,
        "ok": phase.ok,
        "errors": phase.errors,
        "per_second": phase.rate(),
        "latency_ms": {
            "p50": phase.quantile_ms(0.50),
            "p90": phase.quantile_ms(0.90),
            "p99": phase.quantile_ms(0.99),
            "max": phase.quantile_ms(1.0),
        },
        "ok_total": phase.ok_total,
        "errors_total": phase.errors_total,
        "error_codes": phase.error_codes,
        "pool_exhausted": phase.exhausted,
        "cpu_seconds": {
            "bench_process": usage.process,
            "by_thread_group": usage.groups,
            "hub": hub_cpu(phase),
            "other_processes": usage.others(),
            "hypervisor_steal": usage.machine_steal,
        },
        "cpu_us_per_ok_call": if phase.ok > 0 { Some(usage.process * 1e6 / phase.ok as f64) } else { None },
        "hub_cpu_us_per_ok_call": if phase.ok > 0 { Some(hub_cpu(phase) * 1e6 / phase.ok as f64) } else { None },
    })
}

pub(crate) fn report_json(
    args: &Args,
    machine: &Value,
    rates: Option<&VerifyRates>,
    outcome: &Outcome,
    server_threads: usize,
    cores: usize,
) -> Value {
    let raw_all = rates.map(|rates| rates.raw_all);
    json!({
        "machine": machine,
        "settings": {
            "duration_s": args.duration,
            "warmup_s": args.warmup,
            "connections": args.connections,
            "agents": args.agents,
            "server_threads": server_threads,
            "client_threads": args.client_threads,
        },
        "verify_strict_per_second": rates.map(|rates| json!({
            "threads_all": rates.cores,
            "raw_single_thread": rates.raw_single,
            "raw_all_cores": rates.raw_all,
            "hub_path_single_thread": rates.hub_single,
            "hub_path_all_cores": rates.hub_all,
            "registered_key_path_single_thread": rates.registered_single,
            "registered_key_path_all_cores": rates.registered_all,
            "other_processes_cpu_seconds": rates.others,
            "hypervisor_steal_cpu_seconds": rates.steal,
            "wall_seconds": rates.seconds,
        })),
        "signed_writes": outcome.writes.as_ref().map(|writes| json!({
            "connections": writes.connections,
            "timed": phase_json(&writes.timed),
            "calibration": phase_json(&writes.calibration),
            "presigned": writes.presigned,
            "presign_seconds": writes.presign_seconds,
            "store_batches": {
                "batches": writes.batches.batches,
                "jobs": writes.batches.jobs,
                "jobs_per_batch": writes.batches.jobs_per_batch(),
                "mean_commit_ms": writes.batches.commit_ms(),
            },
            "ratio_to_raw_all_core_verify": raw_all.map(|raw| writes.timed.rate() / raw),
            "goal_ratio": GOAL_RATIO,
            "log_rows_appended": writes.rows_appended,
            "successful_writes": writes.successful_writes,
            "rows_match_writes": i64::try_from(writes.successful_writes).ok() == Some(writes.rows_appended),
            "chain": match &writes.chain {
                Ok((rows, head)) => json!({ "ok": true, "rows": rows, "head_seq": head }),
                Err(reason) => json!({ "ok": false, "reason": reason }),
            },
        })),
        "reads": outcome.reads.as_ref().map(|reads| json!({
            "connections": args.connections,
            "timed": phase_json(reads),
        })),
        "resource": outcome.resource.as_ref().map(|resource| json!({
            "connections": args.connections,
            "timed": phase_json(resource),
            "hub_cpu_us_per_call_vs_ping": outcome.ping.as_ref().and_then(|ping| cpu_ratio(resource, ping)),
        })),
        "floor": outcome.ping.as_ref().map(|ping| json!({
            "connections": args.connections,
            "hub_ping": phase_json(ping),
            "bare_http": outcome.bare.as_ref().map(phase_json),
            "ping_machine_seconds": ping_machine_seconds(ping, cores),
            "signed_write_bound_per_second":
                raw_all.map(|raw| write_bound(ping_machine_seconds(ping, cores), raw)),
            "signed_write_bound_ratio_to_raw_all_core_verify":
                raw_all.map(|raw| write_bound(ping_machine_seconds(ping, cores), raw) / raw),
        })),
        "store_floor": outcome.store.as_ref().map(|store| json!({
            "tasks": args.connections,
            "timed": phase_json(store),
            "writer_seconds_per_job": (store.ok > 0).then(|| writer_seconds(store)),
            "signed_write_bound_per_second": match (raw_all, &outcome.ping) {
                (Some(raw), Some(ping)) if store.ok > 0 => Some(store_bound(ping_machine_seconds(ping, cores), raw, store, cores)),
                _ => None,
            },
        })),
    })
}

/// Machine time (seconds of all `cores` together) one `ping` took: the whole process's CPU per
/// ping, client included, over the cores. From CPU rather than from the rate, so that a ping
/// phase that left some CPU idle does not lower the bounds. Without CPU figures (not Linux):
/// one over the rate.
fn ping_machine_seconds(ping: &PhaseResult, cores: usize) -> f64 {
    if ping.cpu.process > 0.0 && ping.ok > 0 {
        ping.cpu.process / ping.ok as f64 / cores as f64
    } else {
        1.0 / ping.rate()
    }
}

/// The most signed writes a second this machine can serve: a signed write costs at least a
/// ping (the HTTP request, the envelope, the client: `ping_seconds` of machine time) plus one
/// signature check (the all-core `verify_strict` rate uses every core, so one check takes
/// `1 / verify_rate` of machine time).
fn write_bound(ping_seconds: f64, verify_rate: f64) -> f64 {
    1.0 / (ping_seconds + 1.0 / verify_rate)
}

/// [`write_bound`] with the store floor's cost added: the writer's CPU per nonce + event job,
/// spread over the machine's `cores` (it is CPU the requests' other work cannot use).
fn store_bound(ping_seconds: f64, verify_rate: f64, store: &PhaseResult, cores: usize) -> f64 {
    1.0 / (ping_seconds + 1.0 / verify_rate + writer_seconds(store) / cores as f64)
}

/// The store writer's CPU seconds per job of the store floor. The writer is one thread, so
/// `1 / writer_seconds` also bounds the signed-write rate on its own.
fn writer_seconds(store: &PhaseResult) -> f64 {
    hub_cpu(store) / store.ok as f64
}

pub(crate) fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Prints the run's figures as tables: the settings, the verify rates, the phases, the
/// floors, the signed writes' checks and the CPU each thread group took.
pub(crate) fn print_table(
    args: &Args,
    rates: Option<&VerifyRates>,
    outcome: &Outcome,
    server_threads: usize,
    cores: usize,
) {
    println!();
    println!(
        "settings: agents {}, connections {}, warm-up {} s, timed {} s, hub tokio workers {}, client threads {}",
        args.agents,
        args.connections,
        args.warmup,
        args.duration,
        server_threads,
        args.client_threads
    );
    if let Some(rates) = rates {
        print_verify_rates(rates, cores);
    }
    let phases = phase_rows(args, outcome);
    print_phases(&phases);
    if let (Some(resource), Some(ping)) = (&outcome.resource, &outcome.ping)
        && let Some(ratio) = cpu_ratio(resource, ping)
    {
        println!();
        println!(
            "hub CPU per call: get_resource {:.1} us, ping {:.1} us ({:.2} x ping; goal <= 100 us and <= 3 x ping)",
            ratio["get_resource_us"].as_f64().unwrap_or(0.0),
            ratio["ping_us"].as_f64().unwrap_or(0.0),
            ratio["ratio"].as_f64().unwrap_or(0.0),
        );
    }
    if let (Some(ping), Some(rates)) = (&outcome.ping, rates) {
        print_floor(ping, outcome.store.as_ref(), rates, cores);
    }
    if let Some(writes) = &outcome.writes {
        print_writes(writes, rates);
    }
    for (name, phase, _) in &phases {
        if !phase.error_codes.is_empty() {
            println!("{name}: refusals {:?}", phase.error_codes);
        }
    }
    if !phases.is_empty() {
        print_cpu(args, cores, &phases);
    }
}

/// One measured phase: its name, its result and its connections.
type PhaseRow<'a> = (&'static str, &'a PhaseResult, usize);

/// The phases the run measured, in the order they are printed.
fn phase_rows<'a>(args: &Args, outcome: &'a Outcome) -> Vec<PhaseRow<'a>> {
    let mut phases: Vec<PhaseRow<'a>> = Vec::new();
    if let Some(ping) = &outcome.ping {
        phases.push(("floor: ping to the hub", ping, args.connections));
    }
    if let Some(bare) = &outcome.bare {
        phases.push(("floor: ping, bare axum", bare, args.connections));
    }
    if let Some(writes) = &outcome.writes {
        phases.push((
            "signed writes (rename_agent)",
            &writes.timed,
            writes.connections,
        ));
    }
    if let Some(reads) = &outcome.reads {
        phases.push(("reads (verify_agent by id)", reads, args.connections));
    }
    if let Some(resource) = &outcome.resource {
        phases.push(("reads (get_resource)", resource, args.connections));
    }
    if let Some(store) = &outcome.store {
        phases.push(("store floor (nonce + event)", store, args.connections));
    }
    phases
}

/// The Ed25519 verify rates, on one thread and on every core.
fn print_verify_rates(rates: &VerifyRates, cores: usize) {
    println!();
    println!(
        "{:<58} {:>12} {:>14}",
        "Ed25519 verify_strict over kd-mcp-v1 texts",
        "1 thread",
        format!("{} threads", rates.cores)
    );
    for (label, single, all) in [
        (
            "  raw (key already decoded)",
            rates.raw_single,
            rates.raw_all,
        ),
        (
            "  hub path (parse_b64url key + decode sig + verify_strict)",
            rates.hub_single,
            rates.hub_all,
        ),
        (
            "  registered-key path (from_bytes_unchecked_registered)",
            rates.registered_single,
            rates.registered_all,
        ),
    ] {
        println!(
            "{label:<58} {:>10}/s {:>12}/s",
            thousands(single),
            thousands(all)
        );
    }
    println!(
        "  (other processes used {:.2} cpu-s and the hypervisor stole {:.2} cpu-s of the {:.0} cpu-s these took)",
        rates.others,
        rates.steal,
        rates.seconds * cores as f64
    );
    warn_if_busy("raw verify", rates.others, rates.seconds * cores as f64);
}

/// Rate and latency quantiles of each phase.
fn print_phases(phases: &[PhaseRow<'_>]) {
    if phases.is_empty() {
        return;
    }
    println!();
    println!(
        "{:<32} {:>6} {:>10} {:>8} {:>8} {:>8} {:>8} {:>7}",
        "MCP tools/call over HTTP",
        "conns",
        "req/s",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "max ms",
        "errors"
    );
    for (name, phase, conns) in phases {
        println!(
            "{:<32} {:>6} {:>10} {:>8.2} {:>8.2} {:>8.2} {:>8.1} {:>7}",
            name,
            conns,
            thousands(phase.rate()),
            phase.quantile_ms(0.50),
            phase.quantile_ms(0.90),
            phase.quantile_ms(0.99),
            phase.quantile_ms(1.0),
            phase.errors
        );
    }
}

/// The upper bounds a ping, a verify and the store floor put on the signed-write rate.
fn print_floor(ping: &PhaseResult, store: Option<&PhaseResult>, rates: &VerifyRates, cores: usize) {
    let ping_seconds = ping_machine_seconds(ping, cores);
    let bound = write_bound(ping_seconds, rates.raw_all);
    println!();
    println!(
        "floor: a signed write costs at least a ping ({:.1} us of machine time) plus a verify ({:.1} us),",
        ping_seconds * 1e6,
        1e6 / rates.raw_all
    );
    println!(
        "       so at most {}/s here = {:.3} x raw all-core verify",
        thousands(bound),
        bound / rates.raw_all
    );
    if let Some(store) = store.filter(|store| store.ok > 0) {
        let writer = writer_seconds(store);
        let bound = store_bound(ping_seconds, rates.raw_all, store, cores);
        println!(
            "       with the store floor's writer CPU too ({:.0} us a job, {:.1} us of machine time): at most {}/s = {:.3} x",
            writer * 1e6,
            writer * 1e6 / cores as f64,
            thousands(bound),
            bound / rates.raw_all
        );
        println!(
            "       the one writer thread alone: at most {}/s = {:.3} x",
            thousands(1.0 / writer),
            1.0 / writer / rates.raw_all
        );
    }
}

/// The signed writes against the goal, and the log's and the writer's checks.
fn print_writes(writes: &WriteOutcome, rates: Option<&VerifyRates>) {
    println!();
    if let Some(rates) = rates {
        let ratio = writes.timed.rate() / rates.raw_all;
        println!(
            "signed writes / raw all-core verify: {:.3} (goal >= {GOAL_RATIO}: {})",
            ratio,
            if ratio >= GOAL_RATIO { "met" } else { "MISSED" }
        );
        println!(
            "signed writes / hub-path all-core verify: {:.3}",
            writes.timed.rate() / rates.hub_all
        );
    }
    let matches = i64::try_from(writes.successful_writes).ok() == Some(writes.rows_appended);
    println!(
        "log rows appended: {} for {} successful writes ({}); pre-signed {} requests in {:.2} s",
        writes.rows_appended,
        writes.successful_writes,
        if matches { "equal" } else { "MISMATCH" },
        writes.presigned,
        writes.presign_seconds
    );
    println!(
        "store writer: {} batches, {:.1} jobs per batch, {:.2} ms per COMMIT (WAL frames and fsync)",
        thousands(writes.batches.batches),
        writes.batches.jobs_per_batch(),
        writes.batches.commit_ms()
    );
    match &writes.chain {
        Ok((rows, head)) => println!("chain: verify_chain OK, {rows} rows, head seq {head}"),
        Err(reason) => println!("chain: BROKEN: {reason}"),
    }
    if writes.timed.exhausted {
        println!(
            "WARNING: a connection ran out of pre-signed requests; the write rate is a lower bound"
        );
    }
}

/// CPU seconds each thread group took inside the timed window, per phase.
fn print_cpu(args: &Args, cores: usize, phases: &[PhaseRow<'_>]) {
    println!();
    let budget = cores as f64 * args.duration;
    println!(
        "CPU seconds inside the timed window ({cores} cores x {} s = {budget:.0} cpu-s)",
        args.duration
    );
    let groups: BTreeSet<&str> = phases
        .iter()
        .flat_map(|(_, phase, _)| phase.cpu.groups.keys().copied())
        .collect();
    print!("{:<42}", "  thread group");
    for (name, _, _) in phases {
        let short = name.split(" (").next().unwrap_or(name);
        print!(" {short:>18}");
    }
    println!();
    let row = |label: &str, value: &dyn Fn(&PhaseResult) -> f64| {
        print!("{:<42}", format!("  {label}"));
        for (_, phase, _) in phases {
            let seconds = value(phase);
            print!(" {:>10.2} ({:>3.0}%)", seconds, 100.0 * seconds / budget);
        }
        println!();
    };
    for group in groups {
        row(group, &|phase| {
            phase.cpu.groups.get(group).copied().unwrap_or(0.0)
        });
    }
    row("whole bench process", &|phase| phase.cpu.process);
    row("other processes on the machine", &|phase| {
        phase.cpu.others()
    });
    row("stolen by the hypervisor", &|phase| phase.cpu.machine_steal);
    for (name, phase, _) in phases {
        warn_if_busy(name, phase.cpu.others(), budget);
    }
    for (name, phase, _) in phases {
        if phase.ok > 0 {
            println!(
                "  {name}: {:.0} us of CPU per successful call, {:.0} us of it in the hub",
                phase.cpu.process * 1e6 / phase.ok as f64,
                hub_cpu(phase) * 1e6 / phase.ok as f64
            );
        }
    }
}

/// Says so when other processes took more than a tenth of the machine during a measurement.
fn warn_if_busy(what: &str, others: f64, budget: f64) {
    if others > 0.1 * budget {
        println!(
            "WARNING: other processes used {:.0}% of the machine during {what}; its figures are low",
            100.0 * others / budget
        );
    }
}

/// The hub's CPU microseconds per successful call of `resource` and of `ping`, and their ratio.
fn cpu_ratio(resource: &PhaseResult, ping: &PhaseResult) -> Option<Value> {
    if resource.ok == 0 || ping.ok == 0 {
        return None;
    }
    let resource_us = hub_cpu(resource) * 1e6 / resource.ok as f64;
    let ping_us = hub_cpu(ping) * 1e6 / ping.ok as f64;
    Some(
        json!({ "get_resource_us": resource_us, "ping_us": ping_us, "ratio": resource_us / ping_us }),
    )
}

/// CPU seconds of the hub's threads (tokio workers, blocking pool, store writer) in the window.
pub(crate) fn hub_cpu(phase: &PhaseResult) -> f64 {
    ["kd-server", "kd-store-writer"]
        .iter()
        .map(|name| {
            phase
                .cpu
                .groups
                .get(cpu::group_of(name))
                .copied()
                .unwrap_or(0.0)
        })
        .sum()
}

/// The machine the figures come from: CPU model, cores, OS, architecture.
pub(crate) fn machine(cores: usize) -> Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, name)| name.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into());
    json!({ "cores": cores, "cpu": cpu, "os": std::env::consts::OS, "arch": std::env::consts::ARCH })
}

/// The store writer's counters from the hub's metrics: batches committed, jobs committed, the
/// sum and count of commit durations (seconds).
/// Summed over `hubs` (several hubs on one PostgreSQL database each have a writer).
pub(crate) fn store_counters(hubs: &[std::sync::Arc<kd_karmadue::Hub>]) -> [f64; 4] {
    let mut sums = [0.0; 4];
    for hub in hubs {
        let text = hub.metrics.render();
        let value = |name: &str| -> f64 {
            text.lines()
                .find(|line| line.starts_with(name) && line[name.len()..].starts_with(' '))
                .and_then(|line| line.rsplit(' ').next())
                .and_then(|number| number.parse().ok())
                .unwrap_or(0.0)
        };
        let counters = [
            value("karmadue_store_batches_committed_total"),
            value("karmadue_store_jobs_committed_total"),
            value("karmadue_store_commit_duration_seconds_sum"),
            value("karmadue_store_commit_duration_seconds_count"),
        ];
        for (sum, counter) in sums.iter_mut().zip(counters) {
            *sum += counter;
        }
    }
    sums
}
