//! The transparency log through the binary: a hub signs checkpoints while its log grows, a
//! signed write answers a receipt, `ledger monitor` follows the checkpoints and alarms on an
//! inconsistent one, the proofs verify from the CLI, and `ledger verify` catches a tail deleted
//! after a checkpoint (docs/transparency.md).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::path::Path;
use std::process::Command;

use common::{BIN, Hub, agent, start_hub_with};

/// The hub's latest checkpoint once its size reaches `at_least` (waits up to 20 s).
fn checkpoint(hub: &Hub, at_least: u64) -> String {
    for _ in 0..200 {
        if let Ok(mut response) = ureq::get(format!("{}/.well-known/kd-checkpoint", hub.url)).call()
        {
            let note = response.body_mut().read_to_string().unwrap();
            let size: u64 = note.split('\n').nth(1).unwrap().parse().unwrap();
            if size >= at_least {
                return note;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("no checkpoint of size {at_least} within 20 s");
}

fn events(data: &Path) -> u64 {
    let conn =
        kd_core::db::Connection::open_sqlite_read_only(&data.join("karmadue.sqlite")).unwrap();
    let count = kd_core::eventlog::count(&conn).unwrap();
    u64::try_from(count).unwrap()
}

fn run(args: &[&str], data: &Path) -> (bool, String) {
    let output = Command::new(BIN)
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

fn monitor(hub: &Hub, state: &Path) -> (bool, String) {
    let output = Command::new(BIN)
        .args(["ledger", "monitor", &hub.url, "--once", "--state"])
        .arg(state)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn checkpoints_receipts_the_monitor_and_ledger_verify_hold_the_hub_to_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let hub = start_hub_with(&data, &["--checkpoint-interval-s".as_ref(), "1".as_ref()]);
    let key_file = dir.path().join("agent.json");
    let (ok, reply, stderr) = agent(&hub, &key_file, &["new", "--name", "Tlog Agent"]);
    assert!(ok, "{reply} {stderr}");
    let (ok, renamed, stderr) = agent(
        &hub,
        &key_file,
        &[
            "call",
            "rename_agent",
            "--args",
            r#"{"name": "Tlog Agent Renamed"}"#,
        ],
    );
    assert!(ok, "{renamed} {stderr}");
    // The signed write's receipt: its event, signed, redeemable at the proof route.
    let receipt = &renamed["receipt"];
    let seq = renamed["data"]["event_seq"].as_u64().unwrap();
    assert_eq!(receipt["seq"].as_u64(), Some(seq), "{renamed}");
    assert_eq!(receipt["recipe"], "kd-receipt-v1");
    let text = receipt["signed_text"].as_str().unwrap();
    assert!(text.starts_with(&format!(
        "kd-receipt-v1\n{}\n{seq}\n",
        kd_core::tlog::note::origin_of(&hub.url)
    )));
    let key = kd_core::keys::ServerKey::load(&data.join("keys"), kd_core::keys::PASSPORT_KEY_ID)
        .unwrap()
        .unwrap();
    assert!(key.verify_text(text, receipt["signature"].as_str().unwrap()));

    let first = checkpoint(&hub, events(&data));
    let state = dir.path().join("monitor.txt");
    let (ok, said) = monitor(&hub, &state);
    assert!(ok && said.starts_with("ok: checkpoint"), "{said}");
    let proof_url = receipt["proof_url"].as_str().unwrap();
    let mut redeemed = ureq::get(proof_url).call().unwrap();
    let redeemed: serde_json::Value =
        serde_json::from_str(&redeemed.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(redeemed["row_hash"], receipt["row_hash"]);

    // The log grows; the next checkpoint is consistent with the first.
    let (ok, _, stderr) = agent(
        &hub,
        &key_file,
        &[
            "call",
            "rename_agent",
            "--args",
            r#"{"name": "Tlog Agent Again"}"#,
        ],
    );
    assert!(ok, "{stderr}");
    let grown = events(&data);
    let second = checkpoint(&hub, grown);
    assert_ne!(first, second);
    let (ok, said) = monitor(&hub, &state);
    assert!(ok && said.contains("is consistent with"), "{said}");

    let (ok, said) = run(&["ledger", "prove-inclusion", &seq.to_string()], &data);
    assert!(ok && said.contains("ok: the proof verifies"), "{said}");
    let (ok, said) = run(
        &["ledger", "prove-consistency", "1", &grown.to_string()],
        &data,
    );
    assert!(ok && said.contains("ok: the proof verifies"), "{said}");
    let (ok, said) = run(
        &["ledger", "prove-inclusion", &(grown + 1).to_string()],
        &data,
    );
    assert!(!ok && said.contains("refused"), "{said}");

    // A checkpoint the hub signed for a history it no longer shows: the monitor alarms.
    let origin = kd_core::tlog::note::origin_of(&hub.url);
    let forged = kd_core::tlog::note::sign(
        &kd_core::tlog::note::Checkpoint {
            origin,
            size: 2,
            root: [7; 32],
        },
        &key,
    );
    std::fs::write(&state, format!("{}\n{forged}", key.public_key_b64url())).unwrap();
    let (ok, said) = monitor(&hub, &state);
    assert!(!ok && said.starts_with("ALARM:"), "{said}");
    drop(hub);

    let (ok, said) = run(&["ledger", "verify"], &data);
    assert!(ok, "{said}");
    assert!(said.contains("checkpoints match the tree"), "{said}");
    // The tail after the checkpoint deleted: the chain still verifies, the checkpoint does not.
    let conn = kd_core::db::Connection::open_sqlite(data.join("karmadue.sqlite")).unwrap();
    conn.execute_batch(&format!(
        "DROP TRIGGER events_append_only_delete; DELETE FROM events WHERE seq > {};",
        grown - 1
    ))
    .unwrap();
    let (ok, said) = run(&["ledger", "verify"], &data);
    assert!(!ok, "{said}");
    assert!(
        said.contains(&format!("ok: {} rows verified", grown - 1)),
        "{said}"
    );
    assert!(said.contains("broken: transparency log"), "{said}");
}
