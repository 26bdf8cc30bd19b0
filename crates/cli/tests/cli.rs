//! The `karmadue` binary as a person uses it: `serve` on a free port, the agent client, and
//! `ledger verify` catching a corrupted row.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::BufReader;
use std::path::Path;
use std::process::{Command, Stdio};

mod common;

use common::{BIN, agent, start_hub, start_hub_as, start_hub_with};

#[test]
fn serve_makes_its_data_folder_and_key_with_owner_only_mode() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("fresh");
    // The modes are the hub's own, not the umask's: a permissive umask changes nothing.
    let permissive = || {
        let mut shell = Command::new("sh");
        shell.args(["-c", "umask 000 && exec \"$0\" \"$@\"", BIN]);
        shell
    };
    let hub = start_hub_as(permissive(), &data, &[]);
    assert!(data.join("karmadue.sqlite").exists());
    let key = data.join("keys").join("kd-passport-1.key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&key), 0o600);
        assert_eq!(mode(&data), 0o700, "the data folder");
        for file in [
            "karmadue.sqlite",
            "karmadue.sqlite-wal",
            "karmadue.sqlite-shm",
        ] {
            assert_eq!(mode(&data.join(file)), 0o600, "{file}");
        }
        // A folder made before (by hand, or by an earlier version) is tightened at start.
        drop(hub);
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(
            data.join("karmadue.sqlite"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let _again = start_hub_as(permissive(), &data, &[]);
        assert_eq!(mode(&data), 0o700);
        assert_eq!(mode(&data.join("karmadue.sqlite")), 0o600);
    }
}

#[test]
fn an_agent_registers_signs_writes_and_reads_itself_through_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let hub = start_hub(&dir.path().join("data"));
    let key_file = dir.path().join("home").join("agent.json");
    let (ok, registered, stderr) = agent(&hub, &key_file, &["new", "--name", "Cli Agent"]);
    assert!(ok, "{registered} {stderr}");
    let agent_id = registered["data"]["agent_id"].as_str().unwrap().to_owned();
    // The reply to a proven agent shows that agent's tier, not Anonymous (issue 16).
    assert_eq!(registered["tier"]["tier"], "registered", "{registered}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&key_file).unwrap()).unwrap();
    assert_eq!(saved["agent_id"], agent_id.as_str());
    let (ok, renamed, stderr) = agent(
        &hub,
        &key_file,
        &[
            "call",
            "rename_agent",
            "--args",
            r#"{"name": "Cli Agent Renamed"}"#,
        ],
    );
    assert!(ok, "{renamed} {stderr}");
    assert_eq!(renamed["data"]["name"], "Cli Agent Renamed");
    let (ok, me, _) = agent(&hub, &key_file, &["whoami"]);
    assert!(ok);
    assert_eq!(me["data"]["display_label"], "Cli Agent Renamed");
    assert_eq!(me["tier"]["tier"], "registered", "{me}");
    let (ok, history, _) = agent(&hub, &key_file, &["call", "get_history", "--args", "{}"]);
    assert!(ok, "{history}");
    assert_eq!(history["data"]["events"][0]["kind"], "agent.renamed");
    let (ok, refused, _) = agent(
        &hub,
        &key_file,
        &["call", "verify_agent", "--args", r#"{"agent_id": "nope"}"#],
    );
    assert!(!ok);
    assert_eq!(refused["error"]["field"], "agent_id");
    let (ok, _, stderr) = agent(&hub, &key_file, &["new", "--name", "Second"]);
    assert!(!ok);
    assert!(stderr.contains("already holds an agent key"), "{stderr}");
}

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

/// The head files in `heads`, waiting up to 10 s for the first to appear.
fn head_files(heads: &Path) -> Vec<std::path::PathBuf> {
    for _ in 0..200 {
        let files: Vec<_> = std::fs::read_dir(heads)
            .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
            .unwrap_or_default();
        if !files.is_empty() {
            return files;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Vec::new()
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

    let verify = || {
        Command::new(BIN)
            .args(["ledger", "verify", "--data-dir"])
            .arg(&data)
            .output()
            .unwrap()
    };
    let sound = verify();
    let said = String::from_utf8_lossy(&sound.stdout).into_owned();
    assert!(sound.status.success(), "{said}");
    assert!(
        said.contains("ok: 1 daily heads match the log; signatures verified"),
        "{said}"
    );
    // The ledger folder is read too: an edited head file is named.
    let verify_with_ledger = || {
        Command::new(BIN)
            .args(["ledger", "verify", "--data-dir"])
            .arg(&data)
            .arg("--ledger-dir")
            .arg(&ledger)
            .output()
            .unwrap()
    };
    let matched = verify_with_ledger();
    let said = String::from_utf8_lossy(&matched.stdout).into_owned();
    assert!(matched.status.success(), "{said}");
    assert!(said.contains("ok: 1 head files in"), "{said}");
    let original = std::fs::read(&files[0]).unwrap();
    std::fs::write(&files[0], b"{}\n").unwrap();
    let edited = verify_with_ledger();
    let said = String::from_utf8_lossy(&edited.stdout).into_owned();
    assert!(!edited.status.success(), "{said}");
    assert!(said.contains("differs from the signed head of"), "{said}");
    std::fs::write(&files[0], original).unwrap();
    // A head whose text and signature no longer agree is named by its day.
    let conn = kd_core::db::Connection::open_sqlite(data.join("karmadue.sqlite")).unwrap();
    conn.execute_batch(
        "DROP TRIGGER log_heads_append_only_update;
         UPDATE log_heads SET signature = 'AAAA' || substr(signature, 5);",
    )
    .unwrap();
    let broken = verify();
    let said = String::from_utf8_lossy(&broken.stdout).into_owned();
    assert!(!broken.status.success(), "{said}");
    let day = file["date"].as_str().unwrap();
    assert!(
        said.contains(&format!(
            "broken: head of {day}: the signature does not verify"
        )),
        "{said}"
    );
}

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
fn serve_names_its_trusted_proxies_and_refuses_one_that_is_not_an_address() {
    let dir = tempfile::tempdir().unwrap();
    let refused = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path().join("data"))
        .args(["--trusted-proxies", "127.0.0.1, proxy.local"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--trusted-proxies") && stderr.contains("\"proxy.local\""),
        "{stderr}"
    );
    assert!(
        !dir.path().join("data").exists(),
        "a refused flag starts nothing"
    );
    let hub = start_hub_with(
        &dir.path().join("data"),
        &["--trusted-proxies".as_ref(), "10.0.0.0/8,::1".as_ref()],
    );
    assert!(
        hub.banner
            .iter()
            .any(|line| line.contains("trusted proxies 10.0.0.0/8, ::1/128")),
        "{:?}",
        hub.banner
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
fn a_connection_cap_below_one_is_refused_by_flag_and_by_environment_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let flag = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--max-connections", "0"])
        .arg("--data-dir")
        .arg(&data)
        .output()
        .unwrap();
    let env = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .env("KARMADUE_MAX_CONNECTIONS", "none")
        .output()
        .unwrap();
    for output in [flag, env] {
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("--max-connections") && stderr.contains("1 or more"),
            "{stderr}"
        );
    }
    assert!(!data.exists(), "nothing was made");
}

/// With a key loaded, `agent call` signs reads too: a check's receipt names the agent, so the
/// report on it is accepted (check, use, report), and get_standing reads the agent's own
/// standing. `--anonymous` calls without signing: that receipt cannot be reported on.
#[test]
fn the_client_signs_reads_so_check_use_report_works_and_anonymous_opts_out() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rows.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"id":"kd:res:npm:check-report-cli","locator":"npm:check-report-cli","title":"check-report-cli","type":"package","version":"1.0.0","downloads_a_month":12,"description":"a package to check","selection":"sample"}"#,
            "\n"
        ),
    )
    .unwrap();
    let data = dir.path().join("data");
    let imported = Command::new(BIN)
        .args(["import", "--data-dir"])
        .arg(&data)
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stdout)
    );
    let hub = start_hub(&data);
    let key_file = dir.path().join("home").join("agent.json");
    let (ok, registered, stderr) = agent(&hub, &key_file, &["new", "--name", "Check Reporter"]);
    assert!(ok, "{registered} {stderr}");
    let check = |extra: &[&str]| {
        let mut args = vec![
            "call",
            "check_before_acting",
            "--args",
            r#"{"target": "npm:check-report-cli"}"#,
        ];
        args.extend_from_slice(extra);
        let (ok, reply, stderr) = agent(&hub, &key_file, &args);
        assert!(ok, "{reply} {stderr}");
        reply
    };
    let signed = check(&[]);
    assert_eq!(signed["tier"]["tier"], "registered", "{signed}");
    assert_eq!(signed["data"]["receipt"]["reportable"], true, "{signed}");
    let receipt = signed["data"]["receipt"]["receipt_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let report = format!(r#"{{"receipt_id": "{receipt}", "result": "worked"}}"#);
    let (ok, reported, stderr) = agent(
        &hub,
        &key_file,
        &["call", "report_outcome", "--args", &report],
    );
    assert!(ok, "{reported} {stderr}");
    let (ok, standing, stderr) = agent(&hub, &key_file, &["call", "get_standing"]);
    assert!(ok, "{standing} {stderr}");
    assert_eq!(
        standing["data"]["subject_id"], registered["data"]["agent_id"],
        "{standing}"
    );
    let (ok, whoami, _) = agent(&hub, &key_file, &["whoami"]);
    assert!(ok);
    assert_eq!(whoami["tier"]["tier"], "registered", "{whoami}");
    let anonymous = check(&["--anonymous"]);
    assert_eq!(anonymous["tier"]["tier"], "anonymous", "{anonymous}");
    assert_eq!(
        anonymous["data"]["receipt"]["reportable"], false,
        "{anonymous}"
    );
}

/// A log written to a pipe or a file carries no ANSI colour codes, and SIGTERM ends the hub
/// with a shutdown line.
#[test]
fn logs_to_a_pipe_are_plain_text_and_sigterm_says_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--bundled-catalog",
            "false",
            "--data-dir",
        ])
        .arg(dir.path().join("data"))
        .env("KARMADUE_LOG", "info")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut BufReader::new(stdout), &mut text).unwrap();
        text
    });
    std::thread::sleep(std::time::Duration::from_secs(2));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    let text = reader.join().unwrap();
    assert!(status.success(), "{status:?}: {text}");
    assert!(text.contains("KarmaDue hub listening on"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "colour codes in a piped log: {text:?}"
    );
    assert!(
        text.contains("shutting down") && text.contains("stopped"),
        "{text}"
    );
}
