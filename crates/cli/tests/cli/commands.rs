//! `import`, `outbox`, `tiers`, and printing into a closed pipe.

use super::*;

#[test]
fn import_is_idempotent_and_reports_bad_rows_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rows.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"id":"kd:res:npm:import-test-one","locator":"npm:import-test-one","title":"import-test-one","type":"package","version":"1.0.0","downloads_a_month":12,"description":"first","selection":"sample"}"#, "\n",
            "this is not json\n",
            r#"{"id":"kd:res:npm:import-test-two","locator":"npm:wrong","title":"x"}"#, "\n",
            "\n",
            r#"{"id":"kd:res:pypi:import-test-three","locator":"pypi:import-test-three","title":"import-test-three","type":"package","version":"0.1","month":"2026-05","rank_among_15000_most_downloaded":null,"description":"third","selection":"sample"}"#, "\n",
        ),
    )
    .unwrap();
    let data = dir.path().join("data");
    let run = || {
        Command::new(BIN)
            .args(["import", "--data-dir"])
            .arg(&data)
            .arg(&file)
            .output()
            .unwrap()
    };
    let first = run();
    let said = String::from_utf8_lossy(&first.stdout).into_owned();
    assert_eq!(first.status.code(), Some(2), "{said}");
    assert!(
        said.contains("5 lines, 2 imported, 0 unchanged, 2 bad"),
        "{said}"
    );
    assert!(said.contains("line 2: not JSON"), "{said}");
    assert!(
        said.contains("line 3: npm locator must be npm:<name> matching the id"),
        "{said}"
    );
    let second = run();
    let said = String::from_utf8_lossy(&second.stdout).into_owned();
    assert!(
        said.contains("5 lines, 0 imported, 2 unchanged, 2 bad"),
        "{said}"
    );
    let verify = Command::new(BIN)
        .args(["ledger", "verify", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&verify.stdout).starts_with("ok: 2 rows verified"));
    // A .jsonl.gz file is read as it is, and the summary gives the rows per second.
    let gz = dir.path().join("more.jsonl.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(
        &mut encoder,
        concat!(
            r#"{"id":"kd:res:npm:import-test-gz","locator":"npm:import-test-gz","title":"import-test-gz","type":"package","version":"2.0.0","downloads_a_month":40,"description":"compressed","selection":"all"}"#,
            "\n"
        )
        .as_bytes(),
    )
    .unwrap();
    std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
    let output = Command::new(BIN)
        .args(["import", "--data-dir"])
        .arg(&data)
        .arg(&gz)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(
        said.contains("1 lines, 1 imported, 0 unchanged, 0 bad in ") && said.contains(" rows/s)"),
        "{said}"
    );
}

#[test]
fn outbox_prints_the_mail_a_claim_request_queued() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let hub = start_hub(&data);
    let key_file = dir.path().join("agent.json");
    let (ok, reply, stderr) = agent(&hub, &key_file, &["new", "--name", "Mailing Agent"]);
    assert!(ok, "{reply} {stderr}");
    let (ok, claimed, stderr) = agent(
        &hub,
        &key_file,
        &[
            "call",
            "request_claim",
            "--args",
            r#"{"email": "person@example.org"}"#,
        ],
    );
    assert!(ok, "{claimed} {stderr}");
    drop(hub);
    let output = Command::new(BIN)
        .args(["outbox", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(output.status.success());
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(printed.contains("To: person@example.org"), "{printed}");
    assert!(
        printed.contains("Subject: An agent asks you to claim it on KarmaDue"),
        "{printed}"
    );
    assert!(printed.ends_with("1 mail(s)\n"), "{printed}");
}

#[test]
fn tiers_prints_the_default_table_that_serve_reads_back_and_a_bad_table_is_refused() {
    let output = Command::new(BIN).arg("tiers").output().unwrap();
    assert!(output.status.success());
    let table: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(table["tiers"][0]["tier"], "anonymous");
    assert_eq!(table["tiers"][0]["reads_per_minute"], 30);
    assert_eq!(table["tiers"][3]["writes_per_minute"], 60);

    let dir = tempfile::tempdir().unwrap();
    let mut edited = table.clone();
    edited["tiers"][0]["reads_per_minute"] = 5.into();
    let good = dir.path().join("tiers.json");
    std::fs::write(&good, edited.to_string()).unwrap();
    let hub = start_hub_with(
        &dir.path().join("data"),
        &["--access-tiers".as_ref(), good.as_os_str()],
    );
    let text = ureq::get(&format!("{}/functions/v1/public-api/v1/tiers", hub.url))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    let served: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(served["data"]["tiers"][0]["reads_per_minute"], 5);
    drop(hub);

    let mut broken = table;
    broken["tiers"][0]["tier"] = "everyone".into();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, broken.to_string()).unwrap();
    let refused = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path().join("data2"))
        .arg("--access-tiers")
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("tiers must be anonymous, registered"),
        "{stderr}"
    );
}

#[test]
fn printing_into_a_closed_pipe_is_no_panic_and_keeps_the_command_s_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let made = Command::new(BIN)
        .args(["import", "--data-dir"])
        .arg(&data)
        .arg(&empty)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let closed_stdout = |args: &[&std::ffi::OsStr]| {
        // A pipe whose reader is gone before the command writes: every write is EPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        Command::new(BIN)
            .args(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap()
    };
    for args in [
        vec!["tiers".as_ref()],
        vec![
            "ledger".as_ref(),
            "verify".as_ref(),
            "--data-dir".as_ref(),
            data.as_os_str(),
        ],
    ] {
        let output = closed_stdout(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(output.status.success(), "{args:?}: {output:?}");
    }
}

#[test]
fn linkdbots_categories_lists_the_waiting_proposals_and_the_operator_decides_one() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let run = |args: &[&str]| {
        let output = Command::new(BIN)
            .args(["linkdbots", "categories", "--data-dir"])
            .arg(&data)
            .args(args)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stdout).into_owned();
        (output.status.code(), said)
    };
    assert_eq!(
        run(&[]),
        (
            Some(0),
            "No category proposal waits for a decision.\n".to_owned()
        )
    );
    let store = kd_core::store::Store::open_at(
        &kd_core::db::Location::Sqlite(data.join("karmadue.sqlite")),
        std::sync::Arc::new(kd_core::clock::SystemClock),
        kd_core::store::StoreMetrics::default(),
    )
    .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let proposed = runtime
        .block_on(kd_linkdbots::categories::propose(
            &store,
            &kd_core::random::SeededRandom::new(3),
            kd_core::clock::Clock::now_ms(&kd_core::clock::SystemClock),
            "per_someone",
            "code.lint",
            "Run linters and fix what they flag",
        ))
        .unwrap();
    store.close();
    let id = proposed["id"].as_str().unwrap();
    let (code, said) = run(&[]);
    assert_eq!(code, Some(0));
    assert!(
        said.starts_with(&format!(
            "{id}  code.lint  Run linters and fix what they flag  (proposed 20"
        )),
        "{said}"
    );
    assert_eq!(
        run(&["accept", id]),
        (Some(0), format!("{id}: `code.lint` accepted\n"))
    );
    let (code, said) = run(&["reject", id]);
    assert_eq!(code, Some(2));
    assert!(said.contains("was already decided: accepted"), "{said}");
    let (code, _) = run(&["accept", "cat_unknown"]);
    assert_eq!(code, Some(2));
    // `accept` without an id is a usage error.
    assert_eq!(run(&["accept"]).0, Some(2));
}
