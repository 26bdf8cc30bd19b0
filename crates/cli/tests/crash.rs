//! Two `karmadue serve` processes on one PostgreSQL database, one killed with SIGKILL under
//! write load: the other keeps serving, every write either process acknowledged is in the
//! database, and the chain verifies (docs/decisions.md 151). Runs when `KD_TEST_PG_URL` names
//! a server (scripts/test starts one; required with `KD_REQUIRE_PG=1`).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;

use common::{BIN, Hub};

/// A hub on the PostgreSQL `database` with the tier table `tiers`.
fn start(data_dir: &Path, database: &str, tiers: &Path) -> Hub {
    let mut command = Command::new(BIN);
    command.env("KARMADUE_DATABASE_URL", database);
    common::start_hub_as(
        command,
        data_dir,
        &["--access-tiers".as_ref(), tiers.as_os_str()],
    )
}

/// Registers a new agent through `karmadue agent new`; its id when the hub acknowledged it.
fn register(hub_url: &str, key_file: &Path, n: u64) -> Option<String> {
    // Names far apart (a lookalike of a taken name is refused).
    let name = format!("Crash {:08x}", n.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32);
    let output = Command::new(BIN)
        .args(["agent", "new", "--name", &name])
        .env("KARMADUE_HUB", hub_url)
        .env("KARMADUE_AGENT_FILE", key_file)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let reply: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
    reply["data"]["agent_id"].as_str().map(str::to_owned)
}

/// Copies the key files of the data folder `from` into `to/keys`, so a second hub signs with
/// the same keys.
fn copy_keys(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to.join("keys")).unwrap();
    for entry in std::fs::read_dir(from.join("keys")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, to.join("keys").join(path.file_name().unwrap())).unwrap();
    }
}

#[test]
fn a_hub_killed_under_write_load_loses_no_acknowledged_write() {
    let Some(url) = kd_core::db::testing::scratch_postgres() else {
        eprintln!("skipped: no PostgreSQL (KD_TEST_PG_URL)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Every registration comes from one address, whose limits the two hubs share exactly:
    // roomier limits, so that the load is not refused.
    let tiers = dir.path().join("tiers.json");
    std::fs::write(
        &tiers,
        serde_json::to_string(&kd_core::tiers::AccessTiers::default().scaled(1000)).unwrap(),
    )
    .unwrap();
    let victim = start(&dir.path().join("a"), &url, &tiers);
    // The second process signs with the same keys (decision 153).
    copy_keys(&dir.path().join("a"), &dir.path().join("b"));
    let survivor = start(&dir.path().join("b"), &url, &tiers);
    let urls = [victim.url.clone(), survivor.url.clone()];
    let victim = Arc::new(Mutex::new(Some(victim)));

    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let next = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..4)
        .map(|worker| {
            let (url, acknowledged, stop, next) = (
                urls[worker % 2].clone(),
                Arc::clone(&acknowledged),
                Arc::clone(&stop),
                Arc::clone(&next),
            );
            let keys = dir.path().join(format!("keys-{worker}"));
            std::fs::create_dir_all(&keys).unwrap();
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    if let Some(id) = register(&url, &keys.join(format!("{n}.json")), n) {
                        acknowledged.lock().unwrap().push(id);
                    }
                }
            })
        })
        .collect();
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs(3));
    let before_kill = acknowledged.lock().unwrap().len();
    drop(victim.lock().unwrap().take()); // SIGKILL (Child::kill) and reap
    std::thread::sleep(Duration::from_secs(2));
    stop.store(true, Ordering::SeqCst);
    for worker in workers {
        worker.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(
        before_kill > 4,
        "the load ran ({before_kill} writes in {:?})",
        started.elapsed()
    );
    assert!(
        acknowledged.len() > before_kill,
        "the survivor kept serving"
    );

    // The survivor still serves writes, and every acknowledged write is in the database.
    let last = register(&survivor.url, &dir.path().join("last.json"), u64::MAX / 3);
    assert!(last.is_some(), "the survivor registers after the kill");
    let conn = kd_core::db::Connection::open(&kd_core::db::Location::Postgres(url)).unwrap();
    for id in acknowledged.iter().chain(last.iter()) {
        let found: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM agents WHERE agent_id = ?1",
                [id],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(found, 1, "acknowledged agent {id} is missing");
    }
    let report = kd_core::eventlog::verify_chain(&conn).unwrap().unwrap();
    assert!(report.rows >= i64::try_from(acknowledged.len()).unwrap());
    eprintln!(
        "{} acknowledged writes ({before_kill} before the kill), chain of {} rows verified",
        acknowledged.len(),
        report.rows
    );
}
