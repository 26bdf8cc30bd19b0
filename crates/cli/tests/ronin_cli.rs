//! `karmadue ronin` against a real hub (the built binary, `serve` on a free port): a whole
//! task between two keys with auto-accepted terms, a delivered file, completion, a rating,
//! payment both ways, a key rotation that keeps one agent, a WANTED listing with uploaded
//! attachments, and refusals that exit 1 with the hub's (or the client's) words.

#![allow(missing_docs)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use common::{BIN, Hub, start_hub};

/// Runs `karmadue ronin ARGS` as the key in `home`; (success, the printed JSON, stderr).
fn ronin(hub: &Hub, home: &Path, args: &[&str]) -> (bool, Value, String) {
    let output = Command::new(BIN)
        .arg("ronin")
        .args(args)
        .env("RONIN_URL", format!("{}/ronin", hub.url))
        .env("RONIN_HOME", home)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    let json = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (output.status.success(), json, stderr)
}

fn ok(hub: &Hub, home: &Path, args: &[&str]) -> Value {
    let (success, json, stderr) = ronin(hub, home, args);
    assert!(success, "{args:?}: {stderr}");
    json
}

fn get(hub: &Hub, path: &str) -> Value {
    let mut response = ureq::get(&format!("{}/ronin/api/v1{path}", hub.url))
        .call()
        .unwrap();
    serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap()
}

#[test]
fn ronin_cli_drives_a_whole_task_rotates_and_attaches() {
    let dir = tempfile::tempdir().unwrap();
    let hub = start_hub(&dir.path().join("hub"));
    let (alice, bob) = (dir.path().join("alice"), dir.path().join("bob"));
    let alice_key = keygen_and_register(&hub, &alice, &bob);
    let task = whole_task(&hub, dir.path(), &alice, &bob, &alice_key);
    rotation(&hub, &alice, &alice_key, &task);
    wanted_with_files(&hub, dir.path(), &alice, &bob);
    bench_run(&hub, &bob);
}

/// Alice's key (mode 0600) and her auto-accepting listing; Bob's profile.
fn keygen_and_register(hub: &Hub, alice: &Path, bob: &Path) -> String {
    let made = ok(hub, alice, &["keygen"]);
    assert_eq!(made["made"], true);
    let key: Value =
        serde_json::from_str(&std::fs::read_to_string(alice.join("key.json")).unwrap()).unwrap();
    assert_eq!(key["pubkey"], made["pubkey"]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(alice.join("key.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let folder = std::fs::metadata(alice).unwrap().permissions().mode();
        assert_eq!(folder & 0o777, 0o700);
    }
    let alice_key = made["pubkey"].as_str().unwrap().to_owned();
    let registered = ok(
        hub,
        alice,
        &[
            "register",
            "Alice",
            "--skill",
            "summaries",
            "--title",
            "Summaries",
            "--price",
            "2",
            "--currency",
            "USDC",
            "--auto-accept",
        ],
    );
    assert_eq!(
        registered["kinds"],
        serde_json::json!([0, 31100]),
        "{registered}"
    );
    ok(hub, bob, &["register", "Bob"]);
    alice_key
}

/// Offer, auto-accept, work, deliver a file, complete, rate, paid, received.
fn whole_task(hub: &Hub, dir: &Path, alice: &Path, bob: &Path, alice_key: &str) -> String {
    // Bob's offer meets the terms: accepted on arrival.
    let offered = ok(
        hub,
        bob,
        &[
            "offer",
            &format!("31100:{alice_key}:summaries"),
            "--scope",
            "Summarise the attached notes.",
            "--price",
            "2",
            "--currency",
            "USDC",
        ],
    );
    let task = offered["id"].as_str().unwrap().to_owned();
    assert_eq!(offered["task"]["status"], "accepted", "{offered}");
    assert_eq!(offered["task"]["accept"]["by_terms"], true, "{offered}");

    // Alice's work loop sees it.
    let waited = ok(hub, alice, &["work", "--once", "--timeout", "5"]);
    assert_eq!(waited["task"], task.as_str(), "{waited}");
    assert!(waited["next"][0]["kind"] == 1102, "{waited}");
    // Nothing new: one empty answer, then it returns (nothing printed).
    let started = std::time::Instant::now();
    let (success, quiet, stderr) = ronin(hub, alice, &["work", "--once", "--timeout", "1"]);
    assert!(success && quiet.is_null(), "{quiet} {stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));

    let file = dir.join("summary.txt");
    std::fs::write(&file, "Five bullets.\n").unwrap();
    let delivered = ok(
        hub,
        alice,
        &[
            "deliver",
            &task,
            "--note",
            "done",
            "--file",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(delivered["task"]["status"], "delivered", "{delivered}");
    ok(hub, bob, &["complete", &task]);
    ok(hub, bob, &["rate", &task, "5", "--text", "Exactly right."]);
    ok(hub, bob, &["paid", &task]);
    ok(hub, alice, &["received", &task]);

    let view = get(hub, &format!("/tasks/{task}"));
    assert_eq!(view["task"]["status"], "completed", "{view}");
    assert_eq!(view["task"]["rating"], 5, "{view}");
    assert_eq!(view["task"]["deliver"]["note"], "done");
    assert_eq!(view["task"]["artifact"]["bytes"], 14, "{view}");
    let url = view["task"]["deliver"]["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{}/ronin/api/v1/artifacts/", hub.url)),
        "{url}"
    );
    assert_eq!(view["task"]["settlement"]["state"], "received", "{view}");
    task
}

/// The new key writes, both keys are one agent with the rating's trust.
fn rotation(hub: &Hub, alice: &Path, alice_key: &str, task: &str) {
    assert!(!task.is_empty());

    // Rotation: the new key writes, both keys are one agent with the rating's trust.
    let rotated = ok(hub, alice, &["rotate"]);
    let new_key = rotated["pubkey"].as_str().unwrap().to_owned();
    assert_ne!(new_key, alice_key);
    let kept: Value =
        serde_json::from_str(&std::fs::read_to_string(alice.join("key.json")).unwrap()).unwrap();
    assert_eq!(kept["pubkey"], new_key.as_str());
    assert!(alice.join(format!("retired-{alice_key}.json")).exists());
    let agent = get(hub, &format!("/agents/{alice_key}"));
    assert_eq!(agent["agent"]["pubkey"], new_key.as_str(), "{agent}");
    assert_eq!(
        agent["agent"]["keys"].as_array().unwrap().len(),
        2,
        "{agent}"
    );
    assert_eq!(agent["agent"]["trust"]["score"], 3.5, "{agent}");
    ok(
        hub,
        alice,
        &["list", "summaries", "--title", "Summaries again"],
    );
}

/// A bench run started and submitted by the client (what it scores is the bench's tests').
fn bench_run(hub: &Hub, bob: &Path) {
    let started = ok(hub, bob, &["bench"]);
    let tasks = started["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 10, "{started}");
    let run = started["run_id"].as_str().unwrap();
    let answers = serde_json::to_string(&vec!["0"; 10]).unwrap();
    let scored = ok(hub, bob, &["submit", run, "--answers", &answers]);
    assert_eq!(scored["total"], 10, "{scored}");
    assert_eq!(scored["results"].as_array().unwrap().len(), 10, "{scored}");
    // A second start within 6 hours: the hub's words, exit 1.
    let (success, _, stderr) = ronin(hub, bob, &["bench"]);
    assert!(!success);
    assert!(stderr.starts_with("rate-limited:"), "{stderr}");
}

/// A WANTED listing with a skill file and an input, uploaded by the client.
fn wanted_with_files(hub: &Hub, dir: &Path, alice: &Path, bob: &Path) {
    // A WANTED listing with a skill file and an input, uploaded by the client.
    let skill = dir.join("SKILL.md");
    std::fs::write(&skill, "---\nname: tally\n---\nCount the rows.\n").unwrap();
    let input = dir.join("notes.csv");
    std::fs::write(&input, "a,b\n1,2\n").unwrap();
    ok(
        hub,
        bob,
        &[
            "list",
            "tally",
            "--type",
            "wanted",
            "--title",
            "Tally my notes",
            "--skill-file",
            skill.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
        ],
    );
    let wanted = get(hub, "/wanted");
    let attachments = &wanted["listings"][0]["attachments"];
    assert_eq!(attachments[0]["role"], "skill", "{wanted}");
    assert_eq!(attachments[1]["name"], "notes.csv", "{wanted}");
    // Alice answers it; Bob, the buyer, accepts with the CLI. The price stays as typed.
    let bob_key = wanted["listings"][0]["owner"].as_str().unwrap().to_owned();
    let offered = ok(
        hub,
        alice,
        &[
            "offer",
            &format!("31100:{bob_key}:tally"),
            "--scope",
            "I will run it.",
            "--price",
            "2.50",
            "--currency",
            "USDC",
        ],
    );
    let task = offered["id"].as_str().unwrap();
    let accepted = ok(hub, bob, &["accept", task]);
    assert_eq!(accepted["task"]["status"], "accepted", "{accepted}");
    let view = get(hub, &format!("/tasks/{task}"));
    assert_eq!(view["task"]["price"].to_string(), "2.50", "{view}");
}

#[test]
fn ronin_cli_refusals_exit_1_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let hub = start_hub(&dir.path().join("hub"));
    let home = dir.path().join("carol");
    // No key yet.
    let (success, _, stderr) = ronin(&hub, &home, &["me"]);
    assert!(!success);
    assert!(stderr.contains("karmadue ronin keygen"), "{stderr}");
    // A key file keygen cannot read is never replaced.
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("key.json"), "nsec1notakeyfile").unwrap();
    let (success, _, stderr) = ronin(&hub, &home, &["keygen"]);
    assert!(
        !success && stderr.contains("keygen never replaces a key"),
        "{stderr}"
    );
    let (success, _, _) = ronin(&hub, &home, &["register", "Carol"]);
    assert!(!success);
    assert_eq!(
        std::fs::read_to_string(home.join("key.json")).unwrap(),
        "nsec1notakeyfile"
    );
    std::fs::remove_file(home.join("key.json")).unwrap();
    ok(&hub, &home, &["keygen"]);
    // A listing before a profile: the hub's words.
    let (success, _, stderr) = ronin(&hub, &home, &["list", "early"]);
    assert!(!success);
    assert!(stderr.contains("invalid: publish a PROFILE"), "{stderr}");
    let (success, _, stderr) = ronin(
        &hub,
        &home,
        &[
            "offer",
            "nonsense",
            "--scope",
            "x",
            "--price",
            "1",
            "--currency",
            "USDC",
        ],
    );
    assert!(!success);
    assert!(stderr.contains("31100:<owner pubkey>:<slug>"), "{stderr}");
    let (success, _, stderr) = ronin(&hub, &home, &["revoke"]);
    assert!(!success);
    assert!(stderr.contains("--yes"), "{stderr}");
    let (success, _, stderr) = ronin(&hub, &home, &["complete", &"ab".repeat(32)]);
    assert!(!success, "{stderr}");
}
