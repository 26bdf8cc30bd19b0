//! `ledger verify` and the signed heads `serve` writes to the ledger folder.

use super::*;

#[test]
fn ledger_verify_passes_a_sound_log_and_names_the_first_corrupted_row() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let hub = start_hub(&data);
    for n in 0..3 {
        let key_file = dir.path().join(format!("agent-{n}.json"));
        let (ok, reply, stderr) = agent(
            &hub,
            &key_file,
            &["new", "--name", &format!("Ledger Agent {n}x{n}")],
        );
        assert!(ok, "{reply} {stderr}");
    }
    drop(hub);
    let verify = || {
        Command::new(BIN)
            .args(["ledger", "verify", "--data-dir"])
            .arg(&data)
            .output()
            .unwrap()
    };
    let sound = verify();
    assert!(sound.status.success());
    // The forum's two DEMO sample threads, then the three registrations.
    let said = String::from_utf8_lossy(&sound.stdout).into_owned();
    assert!(said.starts_with("ok: 5 rows verified"), "{said}");
    let conn = kd_core::db::Connection::open_sqlite(data.join("karmadue.sqlite")).unwrap();
    let seq: i64 = conn
        .query_row(
            "SELECT seq FROM events WHERE payload LIKE '%Ledger Agent 1x1%'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    conn.execute_batch(
        "DROP TRIGGER events_append_only_update;
         UPDATE events SET payload = replace(payload, 'Ledger Agent 1x1', 'Ledger Agent 9x9')
         WHERE payload LIKE '%Ledger Agent 1x1%';",
    )
    .unwrap();
    let broken = verify();
    assert!(!broken.status.success());
    let said = String::from_utf8_lossy(&broken.stdout);
    assert!(said.contains(&format!("row {seq}")), "{said}");
}

#[test]
fn serve_writes_the_day_s_signed_head_to_the_ledger_folder_and_ledger_verify_checks_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let ledger = dir.path().join("public-ledger");
    let ledger_args = ["--ledger-dir".as_ref(), ledger.as_os_str()];
    let hub = start_hub_with(&data, &ledger_args);
    // The day's head is published just after start: wait for it before writing more.
    assert_eq!(head_files(&ledger.join("heads")).len(), 1);
    let (ok, reply, stderr) = agent(
        &hub,
        &dir.path().join("agent.json"),
        &["new", "--name", "Head Anchor Agent"],
    );
    assert!(ok, "{reply} {stderr}");
    drop(hub);
    // A start with events in the log publishes the day's head and writes its file; the
    // first start already did (the forum's DEMO threads are events), and a day's head never
    // changes, so the second start finds it.
    let hub = start_hub_with(&data, &ledger_args);
    let files = head_files(&ledger.join("heads"));
    assert_eq!(files.len(), 1, "{files:?}");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    let live: serde_json::Value = serde_json::from_str(
        &ureq::get(&format!("{}/.well-known/kd-log-head.json", hub.url))
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(live["signature"], file["signature"]);
    assert_eq!(
        live["seq"], 2,
        "published at the first start: the two DEMO forum threads"
    );
    assert!(ledger.join("scripts/verify_head.py").exists());
    assert!(
        !data.join("ledger").exists(),
        "--ledger-dir replaces the default folder"
    );
    drop(hub);

    let (passed, said) = ledger_verify(&data, None);
    assert!(passed, "{said}");
    assert!(
        said.contains("ok: 1 daily heads match the log; signatures verified"),
        "{said}"
    );
    // The ledger folder is read too: an edited head file is named.
    let (passed, said) = ledger_verify(&data, Some(&ledger));
    assert!(passed, "{said}");
    assert!(said.contains("ok: 1 head files in"), "{said}");
    let original = std::fs::read(&files[0]).unwrap();
    std::fs::write(&files[0], b"{}\n").unwrap();
    let (passed, said) = ledger_verify(&data, Some(&ledger));
    assert!(!passed, "{said}");
    assert!(said.contains("differs from the signed head of"), "{said}");
    std::fs::write(&files[0], original).unwrap();
    // A head whose text and signature no longer agree is named by its day.
    let conn = kd_core::db::Connection::open_sqlite(data.join("karmadue.sqlite")).unwrap();
    conn.execute_batch(
        "DROP TRIGGER log_heads_append_only_update;
         UPDATE log_heads SET signature = 'AAAA' || substr(signature, 5);",
    )
    .unwrap();
    let (passed, said) = ledger_verify(&data, None);
    assert!(!passed, "{said}");
    let day = file["date"].as_str().unwrap();
    assert!(
        said.contains(&format!(
            "broken: head of {day}: the signature does not verify"
        )),
        "{said}"
    );
}

/// Runs `karmadue ledger verify` on `data` (and the ledger folder, when given): whether it
/// passed, and what it printed.
fn ledger_verify(data: &Path, ledger: Option<&Path>) -> (bool, String) {
    let mut command = Command::new(BIN);
    command.args(["ledger", "verify", "--data-dir"]).arg(data);
    if let Some(ledger) = ledger {
        command.arg("--ledger-dir").arg(ledger);
    }
    let output = command.output().unwrap();
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    (output.status.success(), said)
}
