//! The agent client: registering, signing, writing and reading; check, use, report.

use super::*;

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
