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

/// `rename_agent` to `name`, signed by the agent of `key_file`: its reply (asserted ok).
fn rename(hub: &Hub, key_file: &Path, name: &str) -> serde_json::Value {
    let arguments = serde_json::json!({ "name": name }).to_string();
    let (ok, reply, stderr) = agent(
        hub,
        key_file,
        &["call", "rename_agent", "--args", &arguments],
    );
    assert!(ok, "{reply} {stderr}");
    reply
}

#[test]
fn checkpoints_receipts_the_monitor_and_ledger_verify_hold_the_hub_to_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let hub = start_hub_with(&data, &["--checkpoint-interval-s".as_ref(), "1".as_ref()]);
    let key_file = dir.path().join("agent.json");
    let (ok, reply, stderr) = agent(&hub, &key_file, &["new", "--name", "Tlog Agent"]);
    assert!(ok, "{reply} {stderr}");
    let renamed = rename(&hub, &key_file, "Tlog Agent Renamed");
    // The signed write's receipt: its event, signed, redeemable at the proof route.
    let receipt = &renamed["receipt"];
    let seq = renamed["data"]["event_seq"].as_u64().unwrap();
    assert_eq!(receipt["seq"].as_u64(), Some(seq), "{renamed}");
    assert_eq!(receipt["recipe"], "kd-log-batch-v1");
    let text = receipt["batch"]["signed_text"].as_str().unwrap();
    assert!(text.starts_with(&format!(
        "kd-log-batch-v1\n{}\n{seq}\n1\n",
        kd_core::tlog::note::origin_of(&hub.url)
    )));
    let key = kd_core::keys::ServerKey::load(&data.join("keys"), kd_core::keys::PASSPORT_KEY_ID)
        .unwrap()
        .unwrap();
    let verifier = kd_core::tlog::receipt::Verifier {
        key_id: key.key_id(),
        public_key: &key.public_key_bytes(),
    };
    let signed = kd_core::tlog::receipt::verify_receipt(verifier, receipt).unwrap();
    assert_eq!(
        (signed.first_seq, signed.size),
        (i64::try_from(seq).unwrap(), 1)
    );

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
    rename(&hub, &key_file, "Tlog Agent Again");
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

/// A hub (checkpoints every second) with a few signed writes under a checkpoint the monitor
/// has seen: the hub, its data folder, the monitor's state, the agent's key file and the
/// checkpoint's size.
fn watched_hub(
    dir: &Path,
) -> (
    Hub,
    std::path::PathBuf,
    std::path::PathBuf,
    std::path::PathBuf,
    u64,
) {
    let data = dir.join("data");
    let hub = start_hub_with(&data, &["--checkpoint-interval-s".as_ref(), "1".as_ref()]);
    let key_file = dir.join("agent.json");
    let (ok, reply, stderr) = agent(&hub, &key_file, &["new", "--name", "Tamper Witness"]);
    assert!(ok, "{reply} {stderr}");
    for name in [
        "Tamper Witness Two",
        "Tamper Witness Three",
        "Tamper Witness Four",
    ] {
        let reply = rename(&hub, &key_file, name);
        assert!(reply["receipt"].is_object(), "{reply}");
    }
    let size = events(&data);
    checkpoint(&hub, size);
    let state = dir.join("monitor.txt");
    let (ok, said) = monitor(&hub, &state);
    assert!(ok && said.starts_with("ok: checkpoint"), "{said}");
    let (ok, said) = run(&["ledger", "verify"], &data);
    assert!(ok && said.contains("checkpoints match the tree"), "{said}");
    (hub, data, state, key_file, size)
}

/// A connection to the live hub's database with the log's append-only triggers dropped, as
/// an operator with the file could.
fn tamper_with(data: &Path) -> kd_core::db::Connection {
    let conn = kd_core::db::Connection::open_sqlite(data.join("karmadue.sqlite")).unwrap();
    conn.execute_batch(
        "DROP TRIGGER events_append_only_update; DROP TRIGGER events_append_only_delete;",
    )
    .unwrap();
    conn
}

/// Stores `rows` from index `from` on with every `prev_hash` and `row_hash` recomputed (a
/// chain that verifies), and drops the tree's hashes so the hub's next batch rebuilds the
/// tree from the rewritten rows: nothing but the signed checkpoints remembers the old log.
fn rewrite_from(
    conn: &kd_core::db::Connection,
    mut rows: Vec<kd_core::eventlog::EventRow>,
    from: usize,
) {
    for at in from..rows.len() {
        rows[at].prev_hash = rows[at - 1].row_hash.clone();
        rows[at].row_hash = rows[at].computed_hash();
        let row = &rows[at];
        conn.execute(
            "UPDATE events SET prev_hash = ?1, row_hash = ?2, kind = ?3, actor = ?4, subject = ?5, payload = ?6 WHERE seq = ?7",
            kd_core::db::params![
                row.prev_hash,
                row.row_hash,
                row.kind,
                row.actor,
                row.subject,
                row.payload,
                row.seq
            ],
        )
        .unwrap();
    }
    conn.execute_batch("DELETE FROM tlog_hashes").unwrap();
    assert!(kd_core::eventlog::verify_chain(conn).unwrap().is_ok());
}

/// After `tamper` on the live hub's database and one more signed write, `ledger verify` and
/// `ledger monitor` (against the hub as it now serves its log) both fail; `verify` says why.
fn tampering_is_caught(tamper: impl FnOnce(&kd_core::db::Connection, u64), verify_says: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (hub, data, state, key_file, size) = watched_hub(dir.path());
    tamper(&tamper_with(&data), size);
    // The hub goes on on the tampered database: its next batch rebuilds the tree from the rows.
    rename(&hub, &key_file, "Tamper Witness Later");
    let (ok, said) = run(&["ledger", "verify"], &data);
    assert!(!ok, "{said}");
    assert!(
        said.contains("ok: ") && said.contains("rows verified"),
        "the chain verifies: {said}"
    );
    assert!(said.contains("broken: transparency log"), "{said}");
    assert!(said.contains(verify_says), "{said}");
    // Whatever the hub signs next, the monitor that saw the old checkpoint alarms.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let (ok, said) = monitor(&hub, &state);
    assert!(!ok && said.starts_with("ALARM:"), "{said}");
}

#[test]
fn deleting_the_tail_after_a_checkpoint_is_caught_by_verify_and_the_monitor() {
    tampering_is_caught(
        |conn, size| {
            conn.execute_batch(&format!(
                "DELETE FROM events WHERE seq > {}; DELETE FROM tlog_hashes;",
                size - 2
            ))
            .unwrap();
        },
        "deleted",
    );
}

#[test]
fn rewriting_a_row_with_every_later_hash_recomputed_is_caught_by_verify_and_the_monitor() {
    tampering_is_caught(
        |conn, _| {
            let mut rows = kd_core::eventlog::rows_after(conn, 0, 1000).unwrap();
            let at = rows.len() - 2;
            rows[at].subject = "someone else".into();
            rewrite_from(conn, rows, at);
        },
        "changed",
    );
}

#[test]
fn swapping_two_rows_is_caught_by_verify_and_the_monitor() {
    tampering_is_caught(
        |conn, _| {
            let mut rows = kd_core::eventlog::rows_after(conn, 0, 1000).unwrap();
            let at = rows.len() - 3;
            let (first, second) = (rows[at].clone(), rows[at + 1].clone());
            for (row, from) in [(at, &second), (at + 1, &first)] {
                rows[row].kind.clone_from(&from.kind);
                rows[row].actor.clone_from(&from.actor);
                rows[row].subject.clone_from(&from.subject);
                rows[row].payload.clone_from(&from.payload);
            }
            rewrite_from(conn, rows, at);
        },
        "checkpoint of size",
    );
}
